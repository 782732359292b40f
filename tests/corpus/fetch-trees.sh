#!/bin/bash
# Fetch real Debian kernel module trees (image/modules + headers, optionally -dbg)
# without installing them: a private apt state per suite and architecture,
# `apt-get download`, `dpkg -x`.  See shared docs/corpus.md.
#
# usage: tests/corpus/fetch-trees.sh [--with-dbg] [--refresh] [--offline] [--list] [TREE...]
#   TREE: amd64-6.12 amd64-6.1 arm64 i386 s390x (bookworm),
#         amd64-5.10 (bullseye point release), amd64-5.10s (newest bullseye-security),
#         amd64-6.12t armhf-6.12t arm64-6.12t riscv64-6.12t ppc64el-6.12t s390x-6.12t
#         (trixie, the same 6.12.x on every architecture; the newest ABI the mirror
#         serves: the index can list packages whose files are gone, as ppc64el's,
#         s390x's and armel's 6.12.117 images are on 2026-12-03..07, HTTP 404, when
#         6.12.107 is there),
#         amd64-7.2 (sid, split linux-modules/linux-base/linux-binary packages),
#         mips64el-6.1 armel-6.1 (bookworm mips64r2el and marvell/ARMv5; not default),
#         arm64-7.2 ppc64el-7.2 riscv64-7.2 s390x-7.2 loong64-7.2 armhf-7.2
#         (sid, as amd64-7.2; not default),
#         arm64-5.10 armhf-5.10 (bullseye point release; not default),
#         amd64-rt-6.12t arm64-rt-6.12t amd64-rt-6.1 (PREEMPT_RT flavours; not default)
#         i386-5.10 (bullseye 686-pae), armel-6.12t (trixie rpi, ARMv6; not default)
#         amd64-rt-7.2 amd64-cloud-7.2 arm64-16k-7.2 ppc64el-64k-7.2 (sid's other
#         flavours: PREEMPT_RT, the small cloud config, 16K and 64K pages; not default)
#         arm64-rt-7.2 armhf-lpae-7.2 (sid rt-arm64, armmp-lpae), arm64-16k-6.12t
#         armhf-rt-6.12t ppc64el-64k-6.12t (trixie), mips64el-ls3-6.1
#         mips64el-octeon-6.1 i386-686-6.1 (bookworm loongson-3 with 16K pages,
#         octeon, 686 without PAE), armhf-rt-5.10 i386-rt-5.10 (bullseye rt-armmp,
#         rt-686-pae), amd64-6.1b (bullseye-security's linux-6.1 backport,
#         6.1.0-0.deb11.N), amd64-7.3x arm64-7.3x (experimental's 7.3 release
#         candidates, split as sid; ABI 7.3-<flavour>), amd64-6.12ts (trixie with
#         trixie-security: its newest 6.12.x) (all not default)
#         (default: all but amd64-5.10s and the non-amd64 -6.12t trees)
#         or a derived tree BASE-zst / BASE-gz (e.g. amd64-6.1-zst): BASE's
#         modules decompressed and recompressed as `make modules_install` with
#         CONFIG_MODULE_COMPRESS_ZSTD/GZIP would (zstd -T0 / gzip -n), since no
#         Debian tree ships .ko.zst or .ko.gz (not part of the default list)
#   --with-dbg  also fetch linux-image-<abi>-dbg (~1 GB) and extract only its
#               System.map (the packaged System.map is a stub)
#   --refresh   run `apt-get update` even if the private lists are fresh (once per
#               suite and architecture in a run, however many trees share it)
#   --offline   no network: reuse the trees already extracted in the cache
#   --list      download nothing: print, per tree, the complete package sets its
#               suite's index lists, newest first (one line per tree:
#               list=T  abis=ABI=VERSION,...  extracted=ABI=VERSION or none);
#               an ABI listed may still answer 404 (see above)
#
# The archive mirror is the one this machine's /etc/apt/sources.list(.d) names
# (tests/kernel/debian-mirror.sh); the machine's apt configuration is not changed.
#
# Output, one line per tree on stdout (TAB-separated key=value):
#   tree=T  root=DIR  release=R  symvers=FILE  modules=DIR  arch=A  apt=DIR
#   [config=FILE]  [system_map=FILE]
# (apt: the tree's private apt state; system_map only for the real one from the
# -dbg package).  Progress goes to
# stderr.  Idempotent: packages are cached in $KOPOLICY_CACHE/debs/<arch>/, trees
# in $KOPOLICY_CACHE/trees/<TREE>/, and a tree is re-extracted only when the
# newest packages changed.  Superseded packages are not deleted: the package
# cache is shared with other scripts and users that may pin older versions.
# Exit: 0 ok, 2 setup error.
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "fetch-trees: error: line $LINENO: exit status $?" >&2' ERR

CACHE=${KOPOLICY_CACHE:-$HOME/.cache/kopolicy}
ALL_TREES=(amd64-6.12 amd64-6.1 arm64 i386 s390x amd64-5.10 amd64-6.12t amd64-7.2)
KNOWN_TREES=("${ALL_TREES[@]}" amd64-5.10s armhf-6.12t arm64-6.12t riscv64-6.12t ppc64el-6.12t
	s390x-6.12t mips64el-6.1 armel-6.1 arm64-7.2 ppc64el-7.2 arm64-5.10 armhf-5.10 amd64-rt-6.12t
	amd64-rt-6.1 arm64-rt-6.12t riscv64-7.2 s390x-7.2 loong64-7.2 armhf-7.2 i386-5.10
	armel-6.12t amd64-rt-7.2 amd64-cloud-7.2 arm64-16k-7.2 ppc64el-64k-7.2 mips64el-ls3-6.1
	mips64el-octeon-6.1 amd64-6.1b ppc64el-64k-6.12t armhf-lpae-7.2 i386-rt-5.10 armhf-rt-5.10
	i386-686-6.1 arm64-16k-6.12t armhf-rt-6.12t arm64-rt-7.2 amd64-7.3x arm64-7.3x amd64-6.12ts)
MAX_LIST_AGE_MIN=${KOPOLICY_APT_MAX_AGE_MIN:-360}
HERE=$(cd "$(dirname "$0")" && pwd)

die() { printf 'fetch-trees: error: %s\n' "$*" >&2; exit 2; }
log() { printf 'fetch-trees: %s\n' "$*" >&2; }

# tree -> "arch suites layout abi-regex"
#   suites: the private apt sources (see apt_sources)
#   layout: image = linux-image-<abi> holds the modules (+ boot/ or usr/lib/modules/<rel>/)
#           split = sid's linux-modules-<abi> (modules), linux-base-<abi> (config,
#                   stub System.map), linux-binary-<abi> (vmlinuz); linux-image-<abi>
#                   is an empty metapackage there
#   the regex matches the whole package name (image, or modules for split) and
#   captures the ABI name, e.g. 6.12.118+deb12-amd64
tree_spec() {
	case $1 in
	amd64-6.12)  echo 'amd64 bookworm image ^linux-image-(6\.12\.[0-9]+\+deb12-amd64)$' ;;
	amd64-6.1)   echo 'amd64 bookworm image ^linux-image-(6\.1\.0-[0-9]+-amd64)$' ;;
	arm64)       echo 'arm64 bookworm image ^linux-image-(6\.12\.[0-9]+\+deb12-arm64)$' ;;
	i386)        echo 'i386 bookworm image ^linux-image-(6\.1\.0-[0-9]+-686-pae)$' ;;
	i386-686-6.1) echo 'i386 bookworm image ^linux-image-(6\.1\.0-[0-9]+-686)$' ;;
	s390x)       echo 's390x bookworm image ^linux-image-(6\.1\.0-[0-9]+-s390x)$' ;;
	mips64el-6.1) echo 'mips64el bookworm image ^linux-image-(6\.1\.0-[0-9]+-mips64r2el)$' ;;
	armel-6.1)   echo 'armel bookworm image ^linux-image-(6\.1\.0-[0-9]+-marvell)$' ;;
	mips64el-ls3-6.1) echo 'mips64el bookworm image ^linux-image-(6\.1\.0-[0-9]+-loongson-3)$' ;;
	mips64el-octeon-6.1) echo 'mips64el bookworm image ^linux-image-(6\.1\.0-[0-9]+-octeon)$' ;;
	amd64-6.1b)  echo 'amd64 bullseye-security image ^linux-image-(6\.1\.0-0\.deb11\.[0-9]+-amd64)$' ;;
	amd64-5.10)  echo 'amd64 bullseye image ^linux-image-(5\.10\.0-[0-9]+-amd64)$' ;;
	armhf-5.10)  echo 'armhf bullseye image ^linux-image-(5\.10\.0-[0-9]+-armmp)$' ;;
	arm64-5.10)  echo 'arm64 bullseye image ^linux-image-(5\.10\.0-[0-9]+-arm64)$' ;;
	i386-5.10)   echo 'i386 bullseye image ^linux-image-(5\.10\.0-[0-9]+-686-pae)$' ;;
	i386-rt-5.10) echo 'i386 bullseye image ^linux-image-(5\.10\.0-[0-9]+-rt-686-pae)$' ;;
	armhf-rt-5.10) echo 'armhf bullseye image ^linux-image-(5\.10\.0-[0-9]+-rt-armmp)$' ;;
	amd64-5.10s) echo 'amd64 bullseye-security image ^linux-image-(5\.10\.0-[0-9]+-amd64)$' ;;
	amd64-6.12t) echo 'amd64 trixie image ^linux-image-(6\.12\.[0-9]+\+deb13-amd64)$' ;;
	amd64-rt-6.1) echo 'amd64 bookworm image ^linux-image-(6\.1\.0-[0-9]+-rt-amd64)$' ;;
	arm64-rt-6.12t) echo 'arm64 trixie image ^linux-image-(6\.12\.[0-9]+\+deb13-rt-arm64)$' ;;
	amd64-rt-6.12t) echo 'amd64 trixie image ^linux-image-(6\.12\.[0-9]+\+deb13-rt-amd64)$' ;;
	armel-6.12t) echo 'armel trixie image ^linux-image-(6\.12\.[0-9]+\+deb13-rpi)$' ;;
	armhf-6.12t) echo 'armhf trixie image ^linux-image-(6\.12\.[0-9]+\+deb13-armmp)$' ;;
	arm64-6.12t) echo 'arm64 trixie image ^linux-image-(6\.12\.[0-9]+\+deb13-arm64)$' ;;
	arm64-16k-6.12t) echo 'arm64 trixie image ^linux-image-(6\.12\.[0-9]+\+deb13-arm64-16k)$' ;;
	armhf-rt-6.12t) echo 'armhf trixie image ^linux-image-(6\.12\.[0-9]+\+deb13-rt-armmp)$' ;;
	riscv64-6.12t) echo 'riscv64 trixie image ^linux-image-(6\.12\.[0-9]+\+deb13-riscv64)$' ;;
	ppc64el-64k-6.12t) echo 'ppc64el trixie image ^linux-image-(6\.12\.[0-9]+\+deb13-powerpc64le-64k)$' ;;
	ppc64el-6.12t) echo 'ppc64el trixie image ^linux-image-(6\.12\.[0-9]+\+deb13-powerpc64le)$' ;;
	s390x-6.12t) echo 's390x trixie image ^linux-image-(6\.12\.[0-9]+\+deb13-s390x)$' ;;
	amd64-7.2)   echo 'amd64 sid split ^linux-modules-(7\.2\.[0-9]+\+deb14-amd64)$' ;;
	arm64-7.2)   echo 'arm64 sid split ^linux-modules-(7\.2\.[0-9]+\+deb14-arm64)$' ;;
	ppc64el-7.2) echo 'ppc64el sid split ^linux-modules-(7\.2\.[0-9]+\+deb14-powerpc64le)$' ;;
	riscv64-7.2) echo 'riscv64 sid split ^linux-modules-(7\.2\.[0-9]+\+deb14-riscv64)$' ;;
	s390x-7.2)   echo 's390x sid split ^linux-modules-(7\.2\.[0-9]+\+deb14-s390x)$' ;;
	loong64-7.2) echo 'loong64 sid split ^linux-modules-(7\.2\.[0-9]+\+deb14-loong64)$' ;;
	armhf-7.2)   echo 'armhf sid split ^linux-modules-(7\.2\.[0-9]+\+deb14-armmp)$' ;;
	armhf-lpae-7.2) echo 'armhf sid split ^linux-modules-(7\.2\.[0-9]+\+deb14-armmp-lpae)$' ;;
	amd64-rt-7.2) echo 'amd64 sid split ^linux-modules-(7\.2\.[0-9]+\+deb14-rt-amd64)$' ;;
	arm64-rt-7.2) echo 'arm64 sid split ^linux-modules-(7\.2\.[0-9]+\+deb14-rt-arm64)$' ;;
	amd64-cloud-7.2) echo 'amd64 sid split ^linux-modules-(7\.2\.[0-9]+\+deb14-cloud-amd64)$' ;;
	arm64-16k-7.2) echo 'arm64 sid split ^linux-modules-(7\.2\.[0-9]+\+deb14-arm64-16k)$' ;;
	ppc64el-64k-7.2) echo 'ppc64el sid split ^linux-modules-(7\.2\.[0-9]+\+deb14-powerpc64le-64k)$' ;;
	amd64-7.3x)  echo 'amd64 experimental split ^linux-modules-(7\.3(\.[0-9]+)?(\+deb14)?-amd64)$' ;;
	arm64-7.3x)  echo 'arm64 experimental split ^linux-modules-(7\.3(\.[0-9]+)?(\+deb14)?-arm64)$' ;;
	amd64-6.12ts) echo 'amd64 trixie-security image ^linux-image-(6\.12\.[0-9]+\+deb13-amd64)$' ;;
	*) return 1 ;;
	esac
}

# suites -> deb822 sources on the machine's own mirror.  bullseye is its point
# release (5.10.223 when this was written, the kernel the loader docs cite);
# bullseye-security adds the LTS security suite; trixie is the release build
# without trixie-security, so that every architecture has the same 6.12.x.
apt_sources() {
	local suites=$1 main sec s=() ss=()
	# shellcheck source=tests/kernel/debian-mirror.sh
	. "$HERE/../kernel/debian-mirror.sh"
	main=$(debian_mirror main) || die "no Debian archive in this machine's apt sources"
	sec=$(debian_mirror security 2>/dev/null) || sec=${main%/debian}/debian-security
	case $suites in
	bookworm) s=(bookworm bookworm-updates) ss=(bookworm-security) ;;
	bullseye) s=(bullseye bullseye-updates) ;;
	bullseye-security) s=(bullseye bullseye-updates) ss=(bullseye-security) ;;
	trixie) s=(trixie trixie-updates) ;;
	sid) s=(sid) ;;
	experimental) s=(experimental) ;;
	trixie-security) s=(trixie trixie-updates) ss=(trixie-security) ;;
	*) die "internal: unknown suite set $suites" ;;
	esac
	printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\n' "$main" "${s[*]}"
	printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
	if [ ${#ss[@]} -gt 0 ]; then
		printf '\nTypes: deb\nURIs: %s\nSuites: %s\nComponents: main\n' "$sec" "${ss[*]}"
		printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
	fi
}

with_dbg=0 refresh=0 offline=0 list=0
trees=()
for arg in "$@"; do
	case $arg in
	--with-dbg) with_dbg=1 ;;
	--refresh) refresh=1 ;;
	--offline) offline=1 ;;
	--list) list=1 ;;
	-h|--help) sed -n '2,/^# Exit:/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option $arg" ;;
	*) case $arg in *-zst|*-gz) base=${arg%-*} ;; *) base=$arg ;; esac
	   tree_spec "$base" >/dev/null ||
		die "unknown tree '$arg' (known: ${KNOWN_TREES[*]}, or BASE-zst, BASE-gz)"
	   trees+=("$arg") ;;
	esac
done
[ ${#trees[@]} -gt 0 ] || trees=("${ALL_TREES[@]}")

for tool in apt-get apt-cache dpkg dpkg-deb sha256sum flock tar; do
	command -v "$tool" >/dev/null || die "$tool not found"
done

mkdir -p "$CACHE/trees" "$CACHE/debs" "$CACHE/apt"
exec 9>"$CACHE/.fetch-trees.lock"
flock 9 || die "cannot lock $CACHE/.fetch-trees.lock"

# a half-extracted tree is removed when the script fails
TMP_TREE=""
trap 'if [ -n "$TMP_TREE" ]; then rm -rf "$TMP_TREE"; fi' EXIT

apt_dir() { # arch suites
	if [ "$2" = bookworm ]; then echo "$CACHE/apt/$1"; else echo "$CACHE/apt/$2-$1"; fi
}

APT_OPTS=()
# the apt states updated by this run: --refresh updates each suite and architecture once,
# not once per tree (the 44 known trees share 25 states)
declare -A UPDATED=()
# set up (once) and select the private apt state of one suite set and architecture
# (bookworm keeps its old place $CACHE/apt/<arch>, which check-base.sh also reads)
apt_setup() {
	local arch=$1 suites=$2 d
	d=$(apt_dir "$arch" "$suites")
	mkdir -p "$d/sources" "$d/lists/partial" "$d/cache/archives/partial" "$d/state" "$d/prefs"
	[ -e "$d/state/status" ] || : >"$d/state/status"
	apt_sources "$suites" >"$d/sources/debian.sources.new"
	if cmp -s "$d/sources/debian.sources.new" "$d/sources/debian.sources"; then
		rm -f "$d/sources/debian.sources.new"
	else
		mv "$d/sources/debian.sources.new" "$d/sources/debian.sources"
		rm -f "$d/lists/.updated"
	fi
	APT_OPTS=(
		-o "Dir::Etc::SourceList=/dev/null"
		-o "Dir::Etc::SourceParts=$d/sources"
		-o "Dir::Etc::Preferences=/dev/null"
		-o "Dir::Etc::PreferencesParts=$d/prefs"
		-o "Dir::State=$d/state"
		-o "Dir::State::Lists=$d/lists"
		-o "Dir::State::status=$d/state/status"
		-o "Dir::Cache=$d/cache"
		-o "APT::Architecture=$arch"
		-o "APT::Architectures::=$arch"
		-o "Acquire::Languages=none"
		-o "Debug::NoLocking=1"
		-o "APT::Sandbox::User=root"
	)
	local stamp="$d/lists/.updated"
	if [ -n "${UPDATED[$d]:-}" ]; then
		return
	fi
	UPDATED[$d]=1
	if [ "$refresh" = 1 ] || [ ! -e "$stamp" ] ||
	   [ -n "$(find "$stamp" -mmin +"$MAX_LIST_AGE_MIN" -print)" ]; then
		log "apt-get update ($suites, $arch)"
		if apt-get "${APT_OPTS[@]}" -qq update >&2; then
			touch "$stamp"
		elif [ -n "$(find "$d/lists" -maxdepth 1 \
			-name "*_dists_${suites}_main_binary-${arch}_Packages*" -print -quit)" ]; then
			# one index failed (bookworm-security's i386 Packages.xz had the wrong size on
			# 2026-12-04..06: "Mirror sync in progress?"); apt keeps the others, so the
			# newest ABI the remaining indexes list is used (no stamp: retried next run)
			log "WARNING: apt-get update failed for part of $suites/$arch;" \
				"using the indexes that did download"
		else
			die "apt-get update failed for $suites/$arch"
		fi
	fi
}

pkg_field() { # pkg field -> value of the candidate version ("" when there is none)
	{ apt-cache "${APT_OPTS[@]}" show --no-all-versions "$1" 2>/dev/null || true; } |
		sed -n "s/^$2: //p" | sed -n 1p
}

# fetch one package into $CACHE/debs/<arch>/, verified; prints the .deb path (1: not on the mirror)
fetch_deb() {
	local arch=$1 pkg=$2 dir="$CACHE/debs/$1" file sha
	mkdir -p "$dir"
	file=$(pkg_field "$pkg" Filename); file=${file##*/}
	sha=$(pkg_field "$pkg" SHA256)
	if [ -z "$file" ] || [ -z "$sha" ]; then die "no candidate for $pkg ($arch)"; fi
	if [ -f "$dir/$file" ] && printf '%s  %s\n' "$sha" "$dir/$file" | sha256sum -c --status; then
		printf '%s\n' "$dir/$file"; return
	fi
	log "downloading $pkg ($arch)"
	if ! (cd "$dir" && apt-get "${APT_OPTS[@]}" -qq download "$pkg" >&2); then
		log "download of $pkg failed"; return 1
	fi
	printf '%s  %s\n' "$sha" "$dir/$file" | sha256sum -c --status || die "checksum mismatch for $dir/$file"
	printf '%s\n' "$dir/$file"
}

# the modules directory of an extracted tree (lib/modules or usr/lib/modules)
modules_base() {
	local root=$1
	if [ -d "$root/lib/modules" ]; then echo "$root/lib/modules"
	elif [ -d "$root/usr/lib/modules" ]; then echo "$root/usr/lib/modules"
	else return 1; fi
}

report() { # tree root
	local tree=$1 root=$2 base release symvers sysmap config line
	base=$(modules_base "$root") || die "$tree: no lib/modules in $root"
	release=$(find "$base" -mindepth 1 -maxdepth 1 -type d -printf '%f\n')
	if [ -z "$release" ] || [ "$(printf '%s\n' "$release" | wc -l)" != 1 ]; then
		die "$tree: expected exactly one release in $base"
	fi
	symvers=$(find "$root/usr/src" -mindepth 2 -maxdepth 2 -name Module.symvers -print -quit 2>/dev/null || true)
	[ -n "$symvers" ] || die "$tree: no Module.symvers under $root/usr/src"
	local arch suites layout regex spec_of=$tree
	case $tree in *-zst|*-gz) spec_of=${tree%-*} ;; esac
	read -r arch suites layout regex <<<"$(tree_spec "$spec_of")"
	line=$(printf 'tree=%s\troot=%s\trelease=%s\tsymvers=%s\tmodules=%s\tarch=%s\tapt=%s' \
		"$tree" "$root" "$release" "$symvers" "$base/$release" "$arch" \
		"$(apt_dir "$arch" "$suites")")
	for config in "$root/boot/config-$release" "$base/$release/config" ""; do
		if [ -n "$config" ] && [ -f "$config" ]; then break; fi
	done
	if [ -n "$config" ]; then line+=$(printf '\tconfig=%s' "$config"); fi
	sysmap=$(dbg_system_map "$root" "$release")
	if [ -n "$sysmap" ]; then line+=$(printf '\tsystem_map=%s' "$sysmap"); fi
	printf '%s\n' "$line"
}

# the real System.map extracted from the -dbg package, if any (bookworm..trixie:
# usr/lib/debug/boot/System.map-<rel>; elsewhere wherever -dbg has it)
dbg_system_map() { # root release
	local f
	f="$1/usr/lib/debug/boot/System.map-$2"
	if [ -f "$f" ]; then printf '%s\n' "$f"; return; fi
	find "$1/usr/lib/debug" \( -name "System.map-$2" -o -path "*/$2/System.map" \) \
		-type f -print -quit 2>/dev/null || true
}

# the packages of one ABI in a layout (the first one is the one the regex names)
tree_pkgs() { # layout abi
	case $1 in
	image) printf '%s\n' "linux-image-$2" "linux-headers-$2" ;;
	split) printf '%s\n' "linux-modules-$2" "linux-base-$2" "linux-binary-$2" "linux-headers-$2" ;;
	esac
}

do_tree() {
	local tree=$1 spec arch suites layout regex root="$CACHE/trees/$1" stamp abi="" ver want got
	local -a pkgs=()
	spec=$(tree_spec "$tree")
	read -r arch suites layout regex <<<"$spec"
	stamp="$root/.kopolicy-stamp"

	if [ "$offline" = 1 ]; then
		[ -f "$stamp" ] || die "$tree: --offline but no tree in $root"
		if [ "$with_dbg" = 1 ] && ! grep -q '^dbg ' "$stamp"; then
			die "$tree: --offline --with-dbg but no -dbg extracted"
		fi
		report "$tree" "$root"; return
	fi

	apt_setup "$arch" "$suites"
	# the ABIs whose packages all exist with the same version, newest first; the newest one
	# the mirror serves (the index can list a version whose files are gone: ppc64el's
	# 6.12.117 image answered 404 on 2026-12-03/04 while 6.12.107 was there)
	local cand p v ok i prefix=linux-image- img="" deb tmp
	local -a cands=() vers=() debs=()
	[ "$layout" = split ] && prefix=linux-modules-
	while read -r cand; do
		[ -n "$cand" ] || continue
		ver="" ok=1
		while read -r p; do
			v=$(pkg_field "$p" Version)
			[ -n "$ver" ] || ver=$v
			if [ -z "$v" ] || [ "$v" != "$ver" ]; then
				log "$tree: skipping $cand ($p '$v', want '$ver')"; ok=0; break
			fi
		done < <(tree_pkgs "$layout" "$cand")
		if [ "$ok" = 1 ]; then cands+=("$cand"); vers+=("$ver"); fi
	done < <(apt-cache "${APT_OPTS[@]}" pkgnames "$prefix" | sed -En "s/$regex/\\1/p" | sort -rV)
	[ ${#cands[@]} -gt 0 ] || die "$tree: no complete package set matches $regex ($suites, $arch)"
	got=""; [ -f "$stamp" ] && got=$(grep -v '^dbg ' "$stamp" || true)
	if [ "$list" = 1 ]; then
		local listed="" have=none
		for i in "${!cands[@]}"; do listed+="${listed:+,}${cands[$i]}=${vers[$i]}"; done
		if [ -n "$got" ]; then
			have=$(printf '%s\n' "$got" | sed -n 1p |
				sed -E 's/^[a-z]+ linux-[a-z]+-([^ ]+) (.*)$/\1=\2/')
		fi
		printf 'list=%s\tabis=%s\textracted=%s\n' "$tree" "$listed" "$have"
		return
	fi
	for i in "${!cands[@]}"; do
		abi=${cands[$i]} ver=${vers[$i]}
		mapfile -t pkgs < <(tree_pkgs "$layout" "$abi")
		want=$(for p in "${pkgs[@]}"; do printf '%s %s %s\n' "${p%%-[0-9]*}" "$p" "$ver"; done |
			sed 's/^linux-//')
		img="linux-image-$abi"
		if [ "$got" = "$want" ]; then
			log "$tree: up to date (${pkgs[0]} $ver)"; debs=(); break
		fi
		debs=() ok=1
		for p in "${pkgs[@]}"; do
			deb=$(fetch_deb "$arch" "$p") || { ok=0; break; }
			debs+=("$deb")
		done
		if [ "$ok" = 1 ]; then break; fi
		log "$tree: $abi is not on the mirror, trying the next older one"
		abi="" debs=()
	done
	[ -n "$abi" ] || die "$tree: none of ${cands[*]} could be downloaded"

	if [ ${#debs[@]} -gt 0 ]; then
		tmp="$root.tmp.$$"
		rm -rf "$tmp"; mkdir -p "$tmp"
		TMP_TREE=$tmp
		for i in "${!debs[@]}"; do
			log "$tree: extracting ${pkgs[$i]} $ver"
			dpkg -x "${debs[$i]}" "$tmp"
		done
		# merged-/usr trees: make ROOT/lib/modules valid (depmod -b, compare-info)
		if [ ! -e "$tmp/lib" ] && [ -d "$tmp/usr/lib/modules" ]; then ln -s usr/lib "$tmp/lib"; fi
		printf '%s\n' "$want" >"$tmp/.kopolicy-stamp"
		rm -rf "$root"; mv "$tmp" "$root"
		TMP_TREE=""
	fi

	if [ "$with_dbg" = 1 ] && ! grep -q "^dbg $img-dbg $ver\$" "$stamp"; then
		local dbg_deb release
		dbg_deb=$(fetch_deb "$arch" "$img-dbg") || die "$tree: $img-dbg is not on the mirror"
		release=$(find "$(modules_base "$root")" -mindepth 1 -maxdepth 1 -type d -printf '%f\n')
		log "$tree: extracting System.map from $img-dbg (reads the whole package)"
		dpkg-deb --fsys-tarfile "$dbg_deb" |
			tar -x -C "$root" --wildcards "*/System.map-$release" "*/$release/System.map" \
				2>/dev/null || true
		[ -n "$(dbg_system_map "$root" "$release")" ] ||
			die "$tree: no System.map for $release in $img-dbg"
		printf 'dbg %s %s\n' "$img-dbg" "$ver" >>"$stamp"
	fi
	report "$tree" "$root"
}

# BASE-zst / BASE-gz: recompress BASE's modules (signature stays inside, as
# modules_install compresses the signed file)
do_derived() {
	local tree=$1 base=${1%-*} comp=${1##*-} root="$CACHE/trees/$1" broot tmp want
	broot="$CACHE/trees/$base"
	case $comp in
	zst) command -v zstd >/dev/null || die "zstd not found" ;;
	gz) command -v gzip >/dev/null || die "gzip not found" ;;
	esac
	if [ "$offline" = 1 ]; then
		[ -f "$root/.kopolicy-stamp" ] || die "$tree: --offline but no tree in $root"
		report "$tree" "$root"; return
	fi
	do_tree "$base" >/dev/null
	want=$(printf 'derived %s\n' "$comp"; grep -v '^dbg ' "$broot/.kopolicy-stamp")
	if [ -f "$root/.kopolicy-stamp" ] && [ "$(cat "$root/.kopolicy-stamp")" = "$want" ]; then
		log "$tree: up to date (from $base)"
	else
		log "$tree: recompressing $base modules with $comp"
		tmp="$root.tmp.$$"; rm -rf "$tmp"
		cp -a --reflink=auto "$broot" "$tmp"
		rm -rf "$tmp/usr/lib/debug"; rm -f "$tmp/.kopolicy-stamp"
		find "$tmp/lib/modules/" -name '*.ko.xz' -print0 | xargs -0 -r -n 64 -P "$(nproc)" xz -d
		find "$tmp/lib/modules/" -name '*.ko.zst' -print0 | xargs -0 -r -n 64 -P "$(nproc)" zstd -d -q --rm
		find "$tmp/lib/modules/" -name '*.ko.gz' -print0 | xargs -0 -r -n 64 -P "$(nproc)" gzip -d
		case $comp in
		zst) find "$tmp/lib/modules/" -name '*.ko' -print0 |
			xargs -0 -r -n 64 -P "$(nproc)" zstd -T0 -q --rm -f ;;
		gz) find "$tmp/lib/modules/" -name '*.ko' -print0 |
			xargs -0 -r -n 64 -P "$(nproc)" gzip -n -f ;;
		esac
		printf '%s\n' "$want" >"$tmp/.kopolicy-stamp"
		rm -rf "$root"; mv "$tmp" "$root"
	fi
	report "$tree" "$root"
}

for t in "${trees[@]}"; do
	case $t in
	*-zst|*-gz) if [ "$list" = 1 ]; then do_tree "${t%-*}"; else do_derived "$t"; fi ;;
	*) do_tree "$t" ;;
	esac
done
