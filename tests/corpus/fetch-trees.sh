#!/bin/bash
# Fetch real Debian kernel module trees (image + headers, optionally -dbg)
# without installing them: a private apt state per architecture,
# `apt-get download`, `dpkg -x`.  See shared docs/corpus.md.
#
# usage: tests/corpus/fetch-trees.sh [--with-dbg] [--refresh] [--offline] [TREE...]
#   TREE: amd64-6.12 amd64-6.1 arm64 i386 s390x (default: all)
#         or a derived tree BASE-zst / BASE-gz (e.g. amd64-6.1-zst): BASE's
#         modules decompressed and recompressed as `make modules_install` with
#         CONFIG_MODULE_COMPRESS_ZSTD/GZIP would (zstd -T0 / gzip -n), since no
#         Debian tree ships .ko.zst or .ko.gz (not part of the default list)
#   --with-dbg  also fetch linux-image-<abi>-dbg (~1 GB) and extract only its
#               System.map (the image's boot/System.map-* is a stub)
#   --refresh   run `apt-get update` even if the private lists are fresh
#   --offline   no network: reuse the trees already extracted in the cache
#
# Output, one line per tree on stdout (TAB-separated key=value):
#   tree=T  root=DIR  release=R  symvers=FILE  modules=DIR  [system_map=FILE]
# Progress goes to stderr.  Idempotent: packages are cached in
# $KOPOLICY_CACHE/debs/<arch>/, trees in $KOPOLICY_CACHE/trees/<TREE>/, and a
# tree is re-extracted only when the newest packages changed.
# Exit: 0 ok, 2 setup error.
set -euo pipefail

CACHE=${KOPOLICY_CACHE:-$HOME/.cache/kopolicy}
ALL_TREES=(amd64-6.12 amd64-6.1 arm64 i386 s390x)
MAX_LIST_AGE_MIN=${KOPOLICY_APT_MAX_AGE_MIN:-360}

die() { printf 'fetch-trees: error: %s\n' "$*" >&2; exit 2; }
log() { printf 'fetch-trees: %s\n' "$*" >&2; }

# tree -> "arch abi-regex" (the regex matches the whole image package name and
# captures the ABI name, e.g. 6.12.118+deb12-amd64)
tree_spec() {
	case $1 in
	amd64-6.12) echo 'amd64 ^linux-image-(6\.12\.[0-9]+\+deb12-amd64)$' ;;
	amd64-6.1)  echo 'amd64 ^linux-image-(6\.1\.0-[0-9]+-amd64)$' ;;
	arm64)      echo 'arm64 ^linux-image-(6\.12\.[0-9]+\+deb12-arm64)$' ;;
	i386)       echo 'i386 ^linux-image-(6\.1\.0-[0-9]+-686-pae)$' ;;
	s390x)      echo 's390x ^linux-image-(6\.1\.0-[0-9]+-s390x)$' ;;
	*) return 1 ;;
	esac
}

with_dbg=0 refresh=0 offline=0
trees=()
for arg in "$@"; do
	case $arg in
	--with-dbg) with_dbg=1 ;;
	--refresh) refresh=1 ;;
	--offline) offline=1 ;;
	-h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option $arg" ;;
	*) case $arg in *-zst|*-gz) base=${arg%-*} ;; *) base=$arg ;; esac
	   tree_spec "$base" >/dev/null ||
		die "unknown tree '$arg' (known: ${ALL_TREES[*]}, or BASE-zst, BASE-gz)"
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

APT_OPTS=()
# set up (once) and select the private apt state of one architecture
apt_setup() {
	local arch=$1 d="$CACHE/apt/$1"
	mkdir -p "$d/sources" "$d/lists/partial" "$d/cache/archives/partial" "$d/state" "$d/prefs"
	[ -e "$d/state/status" ] || : >"$d/state/status"
	cat >"$d/sources/debian.sources" <<-'EOF'
	Types: deb
	URIs: http://deb.debian.org/debian
	Suites: bookworm bookworm-updates
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

	Types: deb
	URIs: http://deb.debian.org/debian-security
	Suites: bookworm-security
	Components: main
	Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
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
	if [ "$refresh" = 1 ] || [ ! -e "$stamp" ] ||
	   [ -n "$(find "$stamp" -mmin +"$MAX_LIST_AGE_MIN" -print)" ]; then
		log "apt-get update ($arch)"
		apt-get "${APT_OPTS[@]}" -qq update >&2 || die "apt-get update failed for $arch"
		touch "$stamp"
	fi
}

pkg_field() { # pkg field -> value of the candidate version
	apt-cache "${APT_OPTS[@]}" show --no-all-versions "$1" 2>/dev/null |
		sed -n "s/^$2: //p" | head -n 1
}

# fetch one package into $CACHE/debs/<arch>/, verified; prints the .deb path
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
	(cd "$dir" && apt-get "${APT_OPTS[@]}" -qq download "$pkg" >&2) || die "download of $pkg failed"
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
	local tree=$1 root=$2 base release symvers sysmap line
	base=$(modules_base "$root") || die "$tree: no lib/modules in $root"
	release=$(find "$base" -mindepth 1 -maxdepth 1 -type d -printf '%f\n')
	if [ -z "$release" ] || [ "$(printf '%s\n' "$release" | wc -l)" != 1 ]; then
		die "$tree: expected exactly one release in $base"
	fi
	symvers=$(find "$root/usr/src" -mindepth 2 -maxdepth 2 -name Module.symvers -print -quit 2>/dev/null || true)
	[ -n "$symvers" ] || die "$tree: no Module.symvers under $root/usr/src"
	line=$(printf 'tree=%s\troot=%s\trelease=%s\tsymvers=%s\tmodules=%s' \
		"$tree" "$root" "$release" "$symvers" "$root/lib/modules/$release")
	sysmap="$root/usr/lib/debug/boot/System.map-$release"
	if [ -f "$sysmap" ]; then line+=$(printf '\tsystem_map=%s' "$sysmap"); fi
	printf '%s\n' "$line"
}

# remove cached packages of this tree's family that are not the current ABI
prune_debs() {
	local arch=$1 regex=$2 img=$3 hdr=$4 f name
	for f in "$CACHE/debs/$arch"/*.deb; do
		[ -e "$f" ] || continue
		name=${f##*/}; name=${name%%_*}
		case $name in "$img"|"$hdr"|"$img-dbg") continue ;; esac
		name=${name%-dbg}; name=linux-image-${name#linux-*-}
		if printf '%s\n' "$name" | grep -Eq "$regex"; then
			log "removing superseded ${f##*/}"; rm -f "$f"
		fi
	done
}

do_tree() {
	local tree=$1 spec arch regex root="$CACHE/trees/$1" stamp abi="" img hdr ver hver want got
	spec=$(tree_spec "$tree"); arch=${spec%% *}; regex=${spec#* }
	stamp="$root/.kopolicy-stamp"

	if [ "$offline" = 1 ]; then
		[ -f "$stamp" ] || die "$tree: --offline but no tree in $root"
		if [ "$with_dbg" = 1 ] && ! grep -q '^dbg ' "$stamp"; then
			die "$tree: --offline --with-dbg but no -dbg extracted"
		fi
		report "$tree" "$root"; return
	fi

	apt_setup "$arch"
	# newest ABI whose image and headers exist with the same version
	local cand
	while read -r cand; do
		[ -n "$cand" ] || continue
		ver=$(pkg_field "linux-image-$cand" Version)
		hver=$(pkg_field "linux-headers-$cand" Version)
		if [ -n "$ver" ] && [ "$ver" = "$hver" ]; then abi=$cand; break; fi
		log "$tree: skipping $cand (image '$ver', headers '$hver')"
	done < <(apt-cache "${APT_OPTS[@]}" pkgnames linux-image- | sed -En "s/$regex/\\1/p" | sort -rV)
	[ -n "$abi" ] || die "$tree: no linux-image/linux-headers pair matches $regex ($arch)"
	img="linux-image-$abi" hdr="linux-headers-$abi"
	want=$(printf 'image %s %s\nheaders %s %s\n' "$img" "$ver" "$hdr" "$ver")

	got=""; [ -f "$stamp" ] && got=$(grep -v '^dbg ' "$stamp" || true)
	if [ "$got" != "$want" ]; then
		local img_deb hdr_deb tmp="$root.tmp.$$"
		img_deb=$(fetch_deb "$arch" "$img")
		hdr_deb=$(fetch_deb "$arch" "$hdr")
		log "$tree: extracting $img $ver"
		rm -rf "$tmp"; mkdir -p "$tmp"
		dpkg -x "$img_deb" "$tmp"
		dpkg -x "$hdr_deb" "$tmp"
		# merged-/usr trees: make ROOT/lib/modules valid (depmod -b, compare-info)
		if [ ! -e "$tmp/lib" ] && [ -d "$tmp/usr/lib/modules" ]; then ln -s usr/lib "$tmp/lib"; fi
		printf '%s\n' "$want" >"$tmp/.kopolicy-stamp"
		rm -rf "$root"; mv "$tmp" "$root"
		prune_debs "$arch" "$regex" "$img" "$hdr"
	else
		log "$tree: up to date ($img $ver)"
	fi

	if [ "$with_dbg" = 1 ] && ! grep -q "^dbg $img-dbg $ver\$" "$stamp"; then
		local dbg_deb release
		dbg_deb=$(fetch_deb "$arch" "$img-dbg")
		release=$(find "$(modules_base "$root")" -mindepth 1 -maxdepth 1 -type d -printf '%f\n')
		log "$tree: extracting System.map from $img-dbg (reads the whole package)"
		dpkg-deb --fsys-tarfile "$dbg_deb" |
			tar -x -C "$root" --wildcards "*/System.map-$release" ||
			die "$tree: no System.map-$release in $img-dbg"
		[ -f "$root/usr/lib/debug/boot/System.map-$release" ] ||
			die "$tree: System.map not at usr/lib/debug/boot/ in $img-dbg"
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
	*-zst|*-gz) do_derived "$t" ;;
	*) do_tree "$t" ;;
	esac
done
