#!/bin/bash
# run-dkms-oracle.sh - boot the dkms_ scenarios (tests/dkms/scenarios.txt) on a stock Debian
# kernel: Debian's *-dkms packages built by the real dkms tool (build-dkms.sh), loaded under
# QEMU the way modprobe loads them, their in-tree dependencies first (from the kernel's own
# linux-image package), by tests/oracle/run-oracle.sh.
#
# usage: tests/dkms/run-dkms-oracle.sh [-o OUTDIR] [--check KOPOLICY_BIN] [--update-ko]
#                                      [SCENARIO...]
#
#   -o OUTDIR     where the JSON goes (default tests/dkms/observed/<series>)
#   --check BIN   after booting, compare BIN's predictions (tests/oracle/check-oracle.sh)
#   --observed    with --check: compare against OUTDIR's JSON, boot nothing
#   --update-ko   copy every module the scenarios load into tests/dkms/ko/<series>/ (xz), for
#                 the offline replay of `make check` (tests/cli/dkms-replay.sh)
#   --prepare-only  build, make the root and the module set, print WORK=<dir>; boot nothing
#
# Series: $KP_DKMS_SERIES (default 6.1; bookworm's dkms packages target bookworm's kernel).
# KP_DKMS_PACKAGES: another package list than tests/dkms/packages.txt. A scenario whose
# modules did not build is skipped (said on stderr).
# Scenario format: as tests/oracle/scenarios.txt, but the modules are built dkms modules
# (file names without .ko, a license-patched variant as <module>+<patch>); before each one
# the in-tree modules `modprobe --show-depends` names for it are inserted (once per
# scenario), resolved in a copy of the kernel's tree with the dkms modules in updates/dkms/
# and depmod run on it (what `dkms install` leaves on a system).
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "run-dkms-oracle: error: line $LINENO: exit status $?" >&2' ERR

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${KOPOLICY_CACHE:-$HOME/.cache/kopolicy}
SERIES=${KP_DKMS_SERIES:-6.1}
die() { echo "run-dkms-oracle: error: $*" >&2; exit 1; }
log() { echo "run-dkms-oracle: $*" >&2; }
OUTDIR=
CHECK=
OBSERVED=0
UPDATE_KO=0
PREPARE_ONLY=0
while [ $# -gt 0 ]; do
	case $1 in
	-o) OUTDIR=$2; shift 2 ;;
	--check) CHECK=$2; shift 2 ;;
	--observed) OBSERVED=1; shift ;;
	--update-ko) UPDATE_KO=1; shift ;;
	--prepare-only) PREPARE_ONLY=1; shift ;;
	-h|--help) sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
OUTDIR=${OUTDIR:-$HERE/observed/$SERIES}
command -v depmod >/dev/null && command -v modprobe >/dev/null ||
	die "depmod/modprobe missing (apt-get install kmod)"

eval "$("$ROOT/tests/kernel/fetch-kernel.sh" "$SERIES")"
WORK=$CACHE/dkms/$KP_ABI
mkdir -p "$WORK"
exec 9>"$WORK/.oracle-lock"
flock 9

# 1. the dkms modules (cached per package)
mapfile -t PKGS < <(sed "s/#.*//" "${KP_DKMS_PACKAGES:-$HERE/packages.txt}" | awk "NF {print \$1}")
"$HERE/build-dkms.sh" "$WORK/out" "${PKGS[@]}"

# 2. the kernel's own modules, and a root as `dkms install` + depmod leave it
IMG=$WORK/image
if [ ! -f "$IMG/.complete" ]; then
	rm -rf "$IMG"
	mkdir -p "$IMG"
	dpkg -x "$KP_IMAGE_DEB" "$IMG"
	touch "$IMG/.complete"
fi
KTREE=$IMG/lib/modules/$KP_ABI
[ -d "$KTREE/kernel" ] || die "$KP_IMAGE_DEB has no lib/modules/$KP_ABI/kernel"
SYSROOT=$WORK/root
rm -rf "$SYSROOT"
mkdir -p "$SYSROOT/lib/modules/$KP_ABI/updates/dkms"
cp -al "$KTREE/kernel" "$SYSROOT/lib/modules/$KP_ABI/kernel"
cp "$KTREE"/modules.builtin* "$KTREE"/modules.order "$SYSROOT/lib/modules/$KP_ABI/"
for k in "$WORK/out"/*.ko; do
	case $k in *+*) continue ;; esac # license-patched variants are not installed
	cp "$k" "$SYSROOT/lib/modules/$KP_ABI/updates/dkms/"
done
# what kopolicy check -b reads besides the modules (depmod does not need them)
mkdir -p "$SYSROOT/lib/modules/$KP_ABI/build" "$SYSROOT/boot"
cp "$KP_SYMVERS" "$SYSROOT/lib/modules/$KP_ABI/build/Module.symvers"
cp "$KP_CONFIG" "$SYSROOT/boot/config-$KP_ABI"
depmod -b "$SYSROOT" "$KP_ABI" || die "depmod -b $SYSROOT failed"

# 3. the module set the guest gets and the expanded scenarios
KODIR=$WORK/ko
rm -rf "$KODIR"
mkdir -p "$KODIR"
GEN=$WORK/scenarios.txt
: >"$GEN"
while IFS= read -r line || [ -n "$line" ]; do
	line=${line%%#*}
	[ -n "${line//[[:space:]]/}" ] || continue
	IFS='|' read -r name kernels cmdline mods <<<"$line"
	notbuilt=
	for t in $mods; do [ -f "$WORK/out/$t.ko" ] || notbuilt="$notbuilt $t.ko"; done
	if [ -n "$notbuilt" ]; then
		log "scenario $(echo $name): skipped, not built:$notbuilt (see $WORK/out/build.txt)"
		continue
	fi
	list=()
	have() { local x; for x in "${list[@]+"${list[@]}"}"; do [ "$x" = "$1" ] &&
		return 0; done; return 1; }
	for t in $mods; do
		modname=${t%%+*}
		deps=$(modprobe -d "$SYSROOT" -S "$KP_ABI" --show-depends "$modname") ||
			die "modprobe --show-depends $modname failed"
		while read -r kind path _; do
			[ "$kind" = insmod ] || continue
			b=$(basename "$path" .ko)
			case $path in
			*/updates/dkms/*)
				# another dkms module: the scenario names it (or a variant) itself
				[ "$b" = "$modname" ] && continue
				have "$b" || [ -n "$(for x in "${list[@]+"${list[@]}"}"; do [ \
					"${x%%+*}" = "$b" ] && echo y; done)" ] ||
					die "scenario $(echo $name): $t needs $b, load it first"
				;;
			*)
				have "$b" && continue
				[ -f "$KODIR/$b.ko" ] || cp "$path" "$KODIR/$b.ko"
				list+=("$b")
				;;
			esac
		done <<<"$deps"
		cp "$WORK/out/$t.ko" "$KODIR/$t.ko"
		list+=("$t")
	done
	echo "$name|$kernels|$cmdline|${list[*]}" >>"$GEN"
done <"$HERE/scenarios.txt"
touch "$KODIR/.complete"

if [ $UPDATE_KO = 1 ]; then
	dst=$HERE/ko/$SERIES
	rm -rf "$dst"
	mkdir -p "$dst"
	for k in "$KODIR"/*.ko; do xz -9e -T1 -c "$k" >"$dst/$(basename "$k").xz"; done
	{
		echo "abi=$KP_ABI"
		echo "release=$KP_RELEASE"
		echo "kernel=$(basename "$KP_IMAGE_DEB")"
		echo "# package version status detail (tests/dkms/build-dkms.sh)"
		cat "$WORK/out/build.txt"
	} >"$dst/build.txt"
	log "wrote $(ls "$dst" | wc -l) files, $(du -sk "$dst" | cut -f1) KiB to $dst"
fi

if [ $PREPARE_ONLY = 1 ]; then
	echo "WORK=$WORK"
	exit 0
fi
export KP_ORACLE_SCENARIOS=$GEN
if [ -z "$CHECK" ]; then
	exec "$ROOT/tests/oracle/run-oracle.sh" -j "${KP_DKMS_JOBS:-2}" --fixtures "dir:$KODIR" -o \
		"$OUTDIR" "$SERIES" "$@"
fi
if [ $OBSERVED = 1 ]; then
	exec "$ROOT/tests/oracle/check-oracle.sh" --fixtures "dir:$KODIR" --observed \
		"$OUTDIR" "$SERIES" "$CHECK" "$@"
fi
exec "$ROOT/tests/oracle/check-oracle.sh" -j "${KP_DKMS_JOBS:-2}" --fixtures \
	"dir:$KODIR" "$SERIES" "$CHECK" "$@"
