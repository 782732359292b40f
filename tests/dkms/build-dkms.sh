#!/bin/bash
# build-dkms.sh - build Debian's *-dkms packages with the real dkms tool against an oracle
# kernel's headers, without installing anything on the host.
#
# usage: tests/dkms/build-dkms.sh [-f] OUTDIR [PACKAGE...]
#
#   OUTDIR    receives <module>.ko (debug info stripped) of every package that built, and
#             build.txt: one line per package "package version status reason"
#   PACKAGE   Debian binary package names (default: the list in tests/dkms/packages.txt)
#   -f        rebuild even when the cache has a build of that package
#
# Kernel: tests/kernel/fetch-kernel.sh $KP_DKMS_SERIES (default 6.1) gives the headers
# (KP_KDIR). The .deb files come from this machine's apt sources (`apt-get download`, cached
# in $KOPOLICY_CACHE/dkms/debs), are unpacked with dpkg -x, and dkms itself runs from the
# unpacked dkms package with private trees ($KOPOLICY_CACHE/dkms/<abi>/{tree,src}):
#   dkms build -m NAME -v VERSION -k ABI --kernelsourcedir KP_KDIR --dkmstree ... --sourcetree ...
# Nothing is written under /var/lib/dkms or /lib/modules; no key is generated (dkms finds no
# sign-file on the host and leaves the modules unsigned, as the oracle wants).
# License variants: tests/dkms/patches/<package>/*.patch are applied to a copy of the source
# named <package>+<patchname>; its modules are written as <module>+<patchname>.ko.
#
# Builds run under nice -n 10 with -j2 at most; each package is time-boxed
# ($KP_DKMS_TIMEOUT seconds, default 900).
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "build-dkms: error: line $LINENO: exit status $?" >&2' ERR

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${KOPOLICY_CACHE:-$HOME/.cache/kopolicy}
SERIES=${KP_DKMS_SERIES:-6.1}
TIMEOUT=${KP_DKMS_TIMEOUT:-900}
FORCE=0
die() { echo "build-dkms: error: $*" >&2; exit 1; }
log() { echo "build-dkms: $*" >&2; }
[ "${1:-}" = -f ] && { FORCE=1; shift; }
[ $# -ge 1 ] || { sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
shift
if [ $# -gt 0 ]; then
	PKGS=("$@")
else
	mapfile -t PKGS < <(sed 's/#.*//' "$HERE/packages.txt" | awk 'NF {print $1}')
fi

eval "$("$ROOT/tests/kernel/fetch-kernel.sh" "$SERIES")"
DK=$CACHE/dkms
DEBS=$DK/debs
mkdir -p "$DEBS" "$DK/$KP_ABI"
WORK=$DK/$KP_ABI
fetch() { # package -> path of its .deb (cached)
	local p=$1 f
	f=$(ls "$DEBS/${p}_"*.deb 2>/dev/null | tail -n1 || true)
	if [ -z "$f" ]; then
		(cd "$DEBS" && apt-get download -q "$p" >/dev/null 2>&1) || return 1
		f=$(ls "$DEBS/${p}_"*.deb | tail -n1)
	fi
	echo "$f"
}
DKMS_DEB=$(fetch dkms) || die "cannot download the dkms package"
rm -rf "$WORK/dkms-tool" && mkdir -p "$WORK/dkms-tool" && dpkg -x "$DKMS_DEB" "$WORK/dkms-tool"
DKMS=$WORK/dkms-tool/usr/sbin/dkms
# never sign (and never create /var/lib/dkms/mok.key): the oracle loads unsigned modules
sed -i 's/^prepare_signing()$/prepare_signing() { echo "signing disabled by build-dkms.sh"; }\nprepare_signing_unused()/' "$DKMS"
grep -q 'signing disabled by build-dkms.sh' "$DKMS" || die "cannot disable signing in $DKMS"

: >"$OUT/build.txt.new"
[ -f "$OUT/build.txt" ] && cp "$OUT/build.txt" "$OUT/build.txt.new"
record() { # package version status reason
	grep -v "^$1 " "$OUT/build.txt.new" >"$OUT/build.txt.tmp" || true
	echo "$*" >>"$OUT/build.txt.tmp"
	LC_ALL=C sort "$OUT/build.txt.tmp" >"$OUT/build.txt.new"
	rm -f "$OUT/build.txt.tmp"
}

for pkg in "${PKGS[@]}"; do
	base=${pkg%%+*}
	variant=
	[ "$base" = "$pkg" ] || variant=${pkg#*+}
	deb=$(fetch "$base") || { record "$pkg" - failed "apt-get download failed"; continue; }
	ver=$(dpkg-deb -f "$deb" Version)
	x=$WORK/x/$base
	if [ ! -d "$x" ]; then mkdir -p "$x" && dpkg -x "$deb" "$x"; fi
	srcdir=$(find "$x/usr/src" -mindepth 2 -maxdepth 2 -name dkms.conf \
		-printf '%h\n' | sed -n 1p)
	[ -n "$srcdir" ] || { record "$pkg" "$ver" failed "no dkms.conf in the package"; continue; }
	name=$(sed -n 's/^PACKAGE_NAME="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' \
		"$srcdir/dkms.conf" | sed -n 1p)
	mver=$(sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' \
		"$srcdir/dkms.conf" | sed -n 1p)
	stamp=$WORK/built/$pkg
	# one build of a package (all its variants) at a time: they share its dkms and source trees
	exec 7>"$WORK/.build-lock-$base"
	[ $FORCE = 0 ] && [ -f "$stamp/.complete" ] || flock 7
	if [ $FORCE = 0 ] && [ -f "$stamp/.complete" ]; then
		log "$pkg: cached ($stamp)"
	else
		rm -rf "$stamp" "$WORK/tree/$name" "$WORK/src/$name-$mver"
		mkdir -p "$stamp" "$WORK/tree" "$WORK/src"
		cp -a "$srcdir" "$WORK/src/$name-$mver"
		if [ -n "$variant" ]; then
			p=$HERE/patches/$base/$variant.patch
			[ -f "$p" ] || die "$pkg: no patch $p"
			patch -s -d "$WORK/src/$name-$mver" -p1 <"$p" ||
				{ record "$pkg" "$ver" failed \
				"patch $variant does not apply"; flock -u 7; continue; }
		fi
		log "$pkg: dkms build $name/$mver for $KP_ABI"
		t0=$(date +%s)
		rc=0
		# -ffile-prefix-map: the private tree's path must not end up in the modules
		# Some packages' Makefiles look for /lib/modules/<abi>/build, which this host does
		# not have: their own variables point them at the headers instead (make command-line
		# variables in MAKEFLAGS reach every sub-make).
		mkdir -p "$WORK/lib-modules/$KP_ABI"
		ln -sfn "$KP_KDIR" "$WORK/lib-modules/$KP_ABI/build"
		KCFLAGS="-ffile-prefix-map=$WORK/=" \
		MAKEFLAGS="-j2 LIB_MODULES_PATH=$WORK/lib-modules KSRC=$KP_KDIR KERNEL_SRC=$KP_KDIR" timeout -k 10 "$TIMEOUT" nice -n 10 \
			"$DKMS" build -m "$name" -v "$mver" -k "$KP_ABI" \
				--kernelsourcedir "$KP_KDIR" \
			--dkmstree "$WORK/tree" --sourcetree "$WORK/src" \
				--installtree "$WORK/install" \
			>"$stamp/dkms.log" 2>&1 || rc=$?
		t1=$(date +%s)
		mlog=$(find "$WORK/tree/$name/$mver" -name make.log 2>/dev/null | sed -n 1p)
		[ -z "$mlog" ] || cp "$mlog" "$stamp/make.log"
		kos=$(find "$WORK/tree/$name/$mver/$KP_ABI" -name '*.ko*' 2>/dev/null || true)
		if [ $rc != 0 ] || [ -z "$kos" ]; then
			why=$(grep -m1 -E \
				'error:|Error|BUILD_EXCLUSIVE|not supported|does not meet' \
				"$stamp/make.log" "$stamp/dkms.log" 2>/dev/null |
				sed 's/^[^:]*://' | cut -c1-160 || true)
			[ $rc = 124 ] && why="timed out after ${TIMEOUT}s"
			record "$pkg" "$ver" failed \
				"dkms rc=$rc ($((t1 - t0))s): ${why:-see $stamp/dkms.log}"
			log "$pkg: FAILED rc=$rc: $why"
			flock -u 7
			continue
		fi
		for k in $kos; do
			case $k in
			*.ko.xz) xz -dc "$k" >"$stamp/$(basename "${k%.xz}")" ;;
			*.ko.zst) zstd -qdc "$k" >"$stamp/$(basename "${k%.zst}")" ;;
			*.ko) cp "$k" "$stamp/" ;;
			esac
		done
		strip --strip-debug "$stamp"/*.ko
		echo "$((t1 - t0))" >"$stamp/seconds"
		touch "$stamp/.complete"
	fi
	flock -u 7
	n=0
	for k in "$stamp"/*.ko; do
		b=$(basename "$k" .ko)
		cp "$k" "$OUT/$b${variant:++$variant}.ko"
		n=$((n + 1))
	done
	record "$pkg" "$ver" built "$n modules, $(cat "$stamp/seconds")s, abi $KP_ABI"
	log "$pkg: built $n modules"
done
mv "$OUT/build.txt.new" "$OUT/build.txt"
