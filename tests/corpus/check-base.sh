#!/bin/bash
# Cross-check the kernel export base on real Debian kernels: the vmlinux
# exports read from (1) the vmlinux ELF and (2) the real System.map of
# linux-image-<abi>-dbg must equal the vmlinux lines of the same ABI's
# Module.symvers (linux-headers-<abi>): name and export table for both,
# namespace and CRC too for the vmlinux ELF. Also checks that the tree is
# found under its root (kp_tree_open) and that loading everything into one
# base reports no disagreement.
#
# usage: tests/corpus/check-base.sh [--offline] [TREE...]
#   TREE: amd64-6.12 (default) amd64-6.1 arm64 i386 s390x amd64-5.10 amd64-6.12t
#         amd64-7.2 ... (any tree of fetch-trees.sh)
#   --offline  use only what is in the cache
#
# Needs ~1 GB download and ~1 GB disk per tree for the -dbg package (cached in
# $KOPOLICY_CACHE/debs/<arch>/; vmlinux and System.map are extracted to
# $KOPOLICY_CACHE/dbg/<tree>/). Run from a configured build tree (BUILDDIR,
# default: the source tree). Prints one line per check and a closing
# "N passed, N failed". Exit: 0 all passed, 1 a check failed, 2 setup error.
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "check-base: error: line $LINENO: exit status $?" >&2' ERR

HERE=$(cd "$(dirname "$0")" && pwd)
SRCDIR=$(cd "$HERE/../.." && pwd)
BUILDDIR=${BUILDDIR:-$SRCDIR}
CACHE=${KOPOLICY_CACHE:-$HOME/.cache/kopolicy}

die() { printf 'check-base: error: %s\n' "$*" >&2; exit 2; }
log() { printf 'check-base: %s\n' "$*" >&2; }

offline=0
trees=()
for arg in "$@"; do
	case $arg in
	--offline) offline=1 ;;
	-h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option $arg" ;;
	*) trees+=("$arg") ;;
	esac
done
[ ${#trees[@]} -gt 0 ] || trees=(amd64-6.12)

# the dump tool, built against the library of this build tree
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s -C "$BUILDDIR" lib/libkopolicy.a >&2 || die "cannot build lib/libkopolicy.a in $BUILDDIR"
# the libraries libkopolicy.a needs, as configure found them (DEP_LIBS: libcrypto too)
dep_libs=$(printf 'kp-print-dep-libs:\n\t@echo $(DEP_LIBS)\n' |
	make -s -C "$BUILDDIR" -f Makefile -f - kp-print-dep-libs) ||
	die "cannot read DEP_LIBS from $BUILDDIR/Makefile"
# shellcheck disable=SC2046,SC2086
cc -O2 -include "$BUILDDIR/config.h" -I"$SRCDIR/lib" $(pkg-config --cflags libelf) \
	-o "$tmp/dump-base" "$SRCDIR/tests/unit/system/dump-base.c" "$BUILDDIR/lib/libkopolicy.a" \
	$dep_libs -pthread ||
	die "cannot build dump-base"
DUMP=$tmp/dump-base

APT_OPTS=()
apt_opts() { # arch apt-dir: the private apt state fetch-trees.sh set up for the tree
	local d=$2
	[ -d "$d/lists" ] || die "no apt state in $d (run tests/corpus/fetch-trees.sh first)"
	APT_OPTS=(
		-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$d/sources"
		-o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=$d/prefs"
		-o "Dir::State=$d/state" -o "Dir::State::Lists=$d/lists"
		-o "Dir::State::status=$d/state/status" -o "Dir::Cache=$d/cache"
		-o "APT::Architecture=$1" -o "APT::Architectures::=$1"
		-o "Acquire::Languages=none" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root"
	)
}

# vmlinux and System.map of linux-image-<release>-dbg into $CACHE/dbg/<tree>/:
# usr/lib/debug/boot/{vmlinux,System.map}-<release> up to trixie; sid (7.x) has
# usr/lib/debug/lib/modules/<release>/{vmlinux,System.map} (boot/vmlinux-* a link)
DBG_VMLINUX="" DBG_SYSMAP=""
dbg_files() { # dir release: sets DBG_VMLINUX DBG_SYSMAP to the files present
	local f
	DBG_VMLINUX="" DBG_SYSMAP=""
	for f in "$1/usr/lib/debug/boot/vmlinux-$2" "$1/usr/lib/debug/lib/modules/$2/vmlinux"; do
		if [ -z "$DBG_VMLINUX" ] && [ -f "$f" ]; then DBG_VMLINUX=$f; fi
	done
	for f in "$1/usr/lib/debug/boot/System.map-$2" "$1/usr/lib/debug/lib/modules/$2/System.map"; do
		if [ -z "$DBG_SYSMAP" ] && [ -f "$f" ]; then DBG_SYSMAP=$f; fi
	done
	[ -n "$DBG_VMLINUX" ] && [ -n "$DBG_SYSMAP" ]
}

fetch_dbg() { # tree arch apt-dir release
	local tree=$1 arch=$2 aptdir=$3 release=$4 out="$CACHE/dbg/$1" pkg="linux-image-$4-dbg"
	local deb file sha stamp
	stamp="$out/.kopolicy-stamp"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$pkg" ] && dbg_files "$out" "$release"; then
		return
	fi
	[ "$offline" = 0 ] || die "$tree: --offline but $pkg is not extracted in $out"
	apt_opts "$arch" "$aptdir"
	file=$(apt-cache "${APT_OPTS[@]}" show --no-all-versions "$pkg" 2>/dev/null |
		sed -n 's/^Filename: //p' | sed -n 1p)
	sha=$(apt-cache "${APT_OPTS[@]}" show --no-all-versions "$pkg" 2>/dev/null |
		sed -n 's/^SHA256: //p' | sed -n 1p)
	if [ -z "$file" ] || [ -z "$sha" ]; then die "$tree: no candidate for $pkg"; fi
	deb="$CACHE/debs/$arch/${file##*/}"
	mkdir -p "$CACHE/debs/$arch"
	if ! { [ -f "$deb" ] && printf '%s  %s\n' "$sha" "$deb" | sha256sum -c --status; }; then
		log "$tree: downloading $pkg (~1 GB)"
		(cd "$CACHE/debs/$arch" && apt-get "${APT_OPTS[@]}" -qq download "$pkg" >&2) ||
			die "download of $pkg failed"
		printf '%s  %s\n' "$sha" "$deb" | sha256sum -c --status || die "checksum mismatch: $deb"
	fi
	log "$tree: extracting vmlinux and System.map from $pkg"
	rm -rf "$out"; mkdir -p "$out"
	dpkg-deb --fsys-tarfile "$deb" |
		tar -x -C "$out" --wildcards "./usr/lib/debug/boot/vmlinux-$release" \
			"./usr/lib/debug/boot/System.map-$release" \
			"./usr/lib/debug/lib/modules/$release/vmlinux" \
			"./usr/lib/debug/lib/modules/$release/System.map" 2>/dev/null || true
	dbg_files "$out" "$release" || die "$tree: vmlinux/System.map not in $pkg"
	printf '%s\n' "$pkg" >"$stamp"
}

passed=0 failed=0
check() { # description, then the command: 0 = pass
	local what=$1; shift
	if "$@"; then
		printf 'PASS %s\n' "$what"; passed=$((passed + 1))
	else
		printf 'FAIL %s\n' "$what"; failed=$((failed + 1))
	fi
}

refused() { # map log: dump-base fails on it, naming the reason
	if "$DUMP" --system-map "$1" >/dev/null 2>"$2"; then return 1; fi
	grep -q "which exports are GPL-only is not in" "$2" || { head -n 3 "$2"; return 1; }
}

same() { # file-a file-b label: identical, else show the start of the difference
	if cmp -s "$1" "$2"; then return 0; fi
	diff "$1" "$2" | sed -n "1,10s/^/  $3: /p"
	return 1
}

field() { printf '%s\n' "$1" | tr '\t' '\n' | sed -n "s/^$2=//p"; }

for tree in "${trees[@]}"; do
	fetch_args=("$tree"); [ "$offline" = 1 ] && fetch_args=(--offline "$tree")
	info=$("$HERE/fetch-trees.sh" "${fetch_args[@]}") || die "$tree: fetch-trees.sh failed"
	root=$(field "$info" root)
	release=$(field "$info" release)
	symvers=$(field "$info" symvers)
	fetch_dbg "$tree" "$(field "$info" arch)" "$(field "$info" apt)" "$release"
	vmlinux=$DBG_VMLINUX sysmap=$DBG_SYSMAP
	d="$tmp/$tree"; mkdir -p "$d"

	"$DUMP" --symvers "$symvers" >"$d/symvers" 2>"$d/symvers.log" ||
		die "$tree: $(cat "$d/symvers.log")"
	"$DUMP" --vmlinux "$vmlinux" >"$d/vmlinux" 2>"$d/vmlinux.log" ||
		die "$tree: $(cat "$d/vmlinux.log")"
	# v7.1+ (__kflagstab): the map cannot tell GPL-only exports and must be refused
	kflags=0
	if grep -q ' __start___kflagstab$' "$sysmap"; then kflags=1; fi
	if [ "$kflags" = 1 ]; then
		check "$tree: System.map of a __kflagstab kernel is refused (GPL class not in it)" \
			refused "$sysmap" "$d/sysmap.log"
	else
		"$DUMP" --system-map "$sysmap" >"$d/sysmap" 2>"$d/sysmap.log" ||
			die "$tree: $(cat "$d/sysmap.log")"
		cut -f1-3 "$d/sysmap" >"$d/sysmap.cls"
	fi
	cut -f1-3 "$d/symvers" >"$d/symvers.cls"
	n=$(wc -l <"$d/symvers")
	ngpl=$(grep -c $'\t__ksymtab_gpl\t' "$d/symvers" || true)
	nns=$(awk -F'\t' '$4 != "-"' "$d/symvers" | wc -l)
	log "$tree ($release): Module.symvers has $n vmlinux exports ($ngpl GPL-only, $nns namespaced)"

	check "$tree: vmlinux ELF == Module.symvers (name, table, namespace, CRC; $n exports)" \
		same "$d/symvers" "$d/vmlinux" vmlinux
	if [ "$kflags" = 0 ]; then
		check "$tree: System.map == Module.symvers (name, table; $n exports)" \
			same "$d/symvers.cls" "$d/sysmap.cls" System.map
	fi
	check "$tree: vmlinux banner gives release $release" \
		grep -q "release $release:" "$d/vmlinux.log"

	# Everything into one base, found through the tree: no disagreement allowed.
	map_args=(--system-map "$sysmap") what="symvers + vmlinux + System.map"
	if [ "$kflags" = 1 ]; then map_args=() what="symvers + vmlinux"; fi
	"$DUMP" --tree "$root" --vmlinux "$vmlinux" "${map_args[@]}" >"$d/all" 2>"$d/all.log" ||
		die "$tree: $(tail -n 1 "$d/all.log")"
	check "$tree: $what merged without conflicts" \
		grep -q ' 0 conflicts$' "$d/all.log"
	check "$tree: kp_tree_open finds release and Module.symvers under $root" \
		grep -q "^  symvers $symvers\$" "$d/all.log"
	sed "s/^/  /" "$d/all.log" >&2
done

printf '%d passed, %d failed\n' "$passed" "$failed"
[ "$failed" = 0 ] || exit 1 # a failed count, not an error: no ERR trap line
