#!/bin/bash
# run-oracle.sh - load kbuild-built fixture modules into a stock Debian kernel under QEMU (TCG)
# and record exactly what the kernel did: tests/oracle/observed/<series>/<scenario>.json.
#
# usage: tests/oracle/run-oracle.sh [-j JOBS] [-o OUTDIR] [--env-out FILE] [--prepare-only]
#                                   [--fixtures auto|build|prebuilt|dir:PATH] [--record-hang]
#                                   SERIES [SCENARIO...]
#
#   SERIES      5.10 | 6.1 | 6.12 | 7.2 (passed to tests/kernel/fetch-kernel.sh)
#   SCENARIO    names from tests/oracle/scenarios.txt (default: all that apply to SERIES)
#   -j JOBS     QEMU guests run in parallel (default: number of CPUs)
#   -o OUTDIR   where the JSON goes (default: tests/oracle/observed/<series>)
#   --env-out F write KP_* of the kernel and KP_ORACLE_FIXTURES=<dir of the built .ko> to F
#   --prepare-only  fetch the kernel and build the fixtures (and --env-out), boot nothing
#   --fixtures  build: fixtures/build.sh (in a chroot of the kernel's suite when the host cannot
#               build for it); prebuilt: the committed fixtures/ko/<series>/ (5.10, 7.2);
#               auto (default, or $KP_ORACLE_FIXTURES_FROM): build when the host can or the
#               chroot already exists, else prebuilt when committed, else build;
#               dir:PATH: the .ko files of PATH as they are (it must hold a .complete marker)
#   --record-hang  also boot the scenarios scenarios.txt marks SERIES=hang (the guest hangs):
#               console loglevel=8, KP_ORACLE_HANG_TIMEOUT (default 150) seconds, then the log
#               is parsed with parse-serial.py --hang. Without it they are not booted: their
#               committed observed/<series>/<scenario>.json is copied to OUTDIR (replayed)
#
# Environment: KOPOLICY_CACHE (default ~/.cache/kopolicy), KP_ORACLE_TIMEOUT (seconds per boot,
# default 180), KP_ORACLE_BLOCK_TIMEOUT (seconds a finit_module() call may take before the
# guest reports it blocked, KPLOADBLOCKED, and goes on; default 30), KP_ORACLE_LOGLEVEL (guest
# console loglevel, default 1), KP_ORACLE_KEEP=1 (keep
# the serial logs and initrds of a successful run; a failed run always keeps them), KP_FETCH_KERNEL and
# KP_BUILD_FIXTURES (override the two helper scripts), KP_ORACLE_SCENARIOS (another scenario
# file); the overrides serve bring-up and tests.
# See tests/oracle/README.md.
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "run-oracle: error: line $LINENO: exit status $?" >&2' ERR

ORACLE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$ORACLE_DIR/../.." && pwd)
CACHE=${KOPOLICY_CACHE:-$HOME/.cache/kopolicy}
FETCH=${KP_FETCH_KERNEL:-$ROOT/tests/kernel/fetch-kernel.sh}
BUILD=${KP_BUILD_FIXTURES:-$ROOT/fixtures/build.sh}
TIMEOUT=${KP_ORACLE_TIMEOUT:-180}
LOGLEVEL=${KP_ORACLE_LOGLEVEL:-1}
SCENARIOS_FILE=${KP_ORACLE_SCENARIOS:-$ORACLE_DIR/scenarios.txt}
# Bump when the layout of the base initramfs (busybox, loader, /dev) changes.
BASE_LAYOUT=1

elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
die() { echo "run-oracle: error: $*" >&2; exit 1; }
log() { echo "run-oracle: $*" >&2; }
usage() { sed -n '2,36p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

JOBS=$(nproc 2>/dev/null || echo 1)
OUTDIR=
ENV_OUT=
PREPARE_ONLY=0
FIXTURES_FROM=${KP_ORACLE_FIXTURES_FROM:-auto}
RECORD_HANG=0
HANG_TIMEOUT=${KP_ORACLE_HANG_TIMEOUT:-150}
BLOCK_TIMEOUT=${KP_ORACLE_BLOCK_TIMEOUT:-30}
while [ $# -gt 0 ]; do
	case $1 in
	-j) [ $# -ge 2 ] || usage; JOBS=$2; shift 2 ;;
	-o) [ $# -ge 2 ] || usage; OUTDIR=$2; shift 2 ;;
	--env-out) [ $# -ge 2 ] || usage; ENV_OUT=$2; shift 2 ;;
	--prepare-only) PREPARE_ONLY=1; shift ;;
	--record-hang) RECORD_HANG=1; shift ;;
	--fixtures) [ $# -ge 2 ] || usage; FIXTURES_FROM=$2; shift 2 ;;
	-h|--help) usage ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage
case $FIXTURES_FROM in auto | build | prebuilt | dir:?*) ;; *) usage ;; esac
SERIES=$1
shift
OUTDIR=${OUTDIR:-$ORACLE_DIR/observed/$SERIES}

for tool in qemu-system-x86_64 cpio gcc strip readelf python3 timeout sha256sum awk flock; do
	command -v "$tool" >/dev/null || die "$tool not found (apt-get install qemu-system-x86 cpio gcc python3 coreutils)"
done
BUSYBOX=/bin/busybox
if ! "$BUSYBOX" --list >/dev/null 2>&1 || readelf -l "$BUSYBOX" | grep 'program interpreter' >/dev/null; then
	die "$BUSYBOX is not a static busybox (apt-get install busybox-static)"
fi
[ "$(id -u)" = 0 ] || die "must run as root (the initramfs needs a dev/console device node)"
[ -x "$FETCH" ] || die "kernel fetch script $FETCH missing or not executable"
[ -x "$BUILD" ] || die "fixture build script $BUILD missing or not executable"

# ---- scenarios -------------------------------------------------------------------------------
# Each non-comment line: name | kernels | extra cmdline | module module ...
# kernels: all, a comma list of series, or "built" (every kernel for which fixtures/build.sh
# builds all of the scenario's modules; decided after the fixture build)
# A module may carry a force prefix: force:M, force-modversion:M, force-vermagic:M load M with
# the finit_module() flags of modprobe --force (3), --force-modversion (1), --force-vermagic (2).
tok_mod() { printf '%s' "${1#*:}"; }
tok_flags() { # module token -> finit_module() flags
	case $1 in
	force:*) echo 3 ;;
	force-modversion:*) echo 1 ;;
	force-vermagic:*) echo 2 ;;
	*) echo 0 ;;
	esac
}
declare -A SC_CMDLINE=() SC_MODULES=() SC_BUILT=() SC_HANG=()
SC_ORDER=()
trim() { local s=$1; s=${s#"${s%%[![:space:]]*}"}; s=${s%"${s##*[![:space:]]}"}; printf '%s' "$s"; }
while IFS= read -r line || [ -n "$line" ]; do
	line=$(trim "${line%%#*}")
	[ -n "$line" ] || continue
	IFS='|' read -r f_name f_kernels f_cmdline f_modules f_extra <<<"$line"
	[ -z "${f_extra:-}" ] || die "scenarios.txt: too many fields: $line"
	f_name=$(trim "$f_name"); f_kernels=$(trim "${f_kernels:-}")
	f_cmdline=$(trim "${f_cmdline:-}"); f_modules=$(trim "${f_modules:-}")
	[[ $f_name =~ ^[A-Za-z0-9_.-]+$ ]] || die "scenarios.txt: bad scenario name '$f_name'"
	[ -n "$f_modules" ] || die "scenarios.txt: scenario $f_name loads no module"
	for t in $f_modules; do
		[[ $t =~ ^((force|force-modversion|force-vermagic):)?[A-Za-z0-9_.-]+$ ]] ||
			die "scenarios.txt: scenario $f_name: bad module '$t' ([force|force-modversion|force-vermagic:]NAME)"
	done
	[ -z "${SC_MODULES[$f_name]+x}" ] || die "scenarios.txt: duplicate scenario $f_name"
	applies=0
	if [ "$f_kernels" = all ]; then
		applies=1
	elif [ "$f_kernels" = built ]; then
		applies=1
		SC_BUILT[$f_name]=1
	else
		IFS=',' read -r -a ks <<<"$f_kernels"
		for k in "${ks[@]}"; do
			k=$(trim "$k")
			[ "$k" = "$SERIES" ] && applies=1
			# SERIES=hang: the guest hangs in this scenario (booted only by --record-hang)
			if [ "$k" = "$SERIES=hang" ]; then applies=1; SC_HANG[$f_name]=1; fi
		done
	fi
	SC_MODULES[$f_name]=$f_modules
	SC_CMDLINE[$f_name]=$f_cmdline
	if [ $applies = 1 ]; then SC_ORDER+=("$f_name"); fi
done <"$SCENARIOS_FILE"

if [ $# -gt 0 ]; then
	SELECTED=()
	for s in "$@"; do
		[ -n "${SC_MODULES[$s]+x}" ] || die "unknown scenario '$s' (see $SCENARIOS_FILE)"
		SELECTED+=("$s")
	done
else
	SELECTED=("${SC_ORDER[@]}")
fi
[ ${#SELECTED[@]} -gt 0 ] || die "no scenario applies to series $SERIES"

# ---- kernel ----------------------------------------------------------------------------------
T0=$(date +%s.%N)
log "fetching kernel series $SERIES"
KENV=$(KP_FETCH_MODULES=1 "$FETCH" "$SERIES") || die "$FETCH $SERIES failed"
KP_ABI='' KP_RELEASE='' KP_KDIR='' KP_VMLINUZ='' KP_CONFIG='' KP_SYMVERS='' KP_MODULES_DEB=''
eval "$KENV"
for v in KP_ABI KP_RELEASE KP_KDIR KP_VMLINUZ KP_CONFIG KP_SYMVERS; do
	[ -n "${!v}" ] || die "$FETCH did not print $v"
done
[ -f "$KP_VMLINUZ" ] || die "vmlinuz $KP_VMLINUZ missing"
WORK=$CACHE/oracle/$KP_ABI
mkdir -p "$WORK" "$CACHE/oracle/base"
# One lock per kernel ABI serialises the cache updates below (fixture build, cpio archives)
# between concurrent runs; the boots themselves run outside it, in a private runs directory.
exec 8>"$WORK/.lock"
flock 8

# ---- fixtures (cached on the content of fixtures/ and the kernel ABI) ------------------------
fixtures_hash() { # inputs of build.sh: fixtures/src/** and the top-level scripts of fixtures/
	(cd "$ROOT" && { find fixtures/src -type f -print0
		find fixtures -maxdepth 1 -type f \( -name '*.sh' -o -name '*.py' \) -print0; } \
		| LC_ALL=C sort -z | xargs -0 -r sha256sum; sha256sum "$BUILD"; echo "$KP_ABI") \
		| sha256sum | cut -c1-16
}
PREBUILT=$ROOT/fixtures/ko/$SERIES
HANG_COPY=()
if [ "$FIXTURES_FROM" = auto ]; then
	FIXTURES_FROM=build
	if [ -f "$PREBUILT/kernel.txt" ] && grep -q '^oracle=complete$' "$PREBUILT/kernel.txt"; then
		probe=$("$BUILD" --probe "$KP_KDIR" 2>/dev/null || echo unknown)
		case $probe in host | chroot-ready*) ;; *) FIXTURES_FROM=prebuilt ;; esac
	fi
fi
if [[ $FIXTURES_FROM == dir:* ]]; then
	# modules built elsewhere (tests/dkms/run-dkms-oracle.sh): boot them as they are
	FIXDIR=$(cd "${FIXTURES_FROM#dir:}" && pwd) || die "no directory ${FIXTURES_FROM#dir:}"
	[ -f "$FIXDIR/.complete" ] || die "$FIXDIR: no .complete marker (not a finished module set)"
elif [ "$FIXTURES_FROM" = prebuilt ]; then
	[ -f "$PREBUILT/kernel.txt" ] || die "no prebuilt fixtures in $PREBUILT"
	grep -qx "abi=$KP_ABI" "$PREBUILT/kernel.txt" ||
		die "$PREBUILT was built for $(sed -n 's/^abi=//p' "$PREBUILT/kernel.txt"), the archive's kernel is $KP_ABI: run fixtures/ko/update.sh $SERIES"
	want=$("$ROOT/fixtures/sources-hash.sh")
	got=$(sed -n 's/^sources=//p' "$PREBUILT/kernel.txt")
	if [ "$got" != "$want" ]; then
		log "warning: $PREBUILT was built from other fixture sources ($got, now $want): run fixtures/ko/update.sh $SERIES"
	fi
	FIXDIR=$WORK/prebuilt-$( (cd "$PREBUILT" && sha256sum ./*.ko) | sha256sum | cut -c1-16)
	if [ ! -f "$FIXDIR/.complete" ]; then
		log "using the prebuilt fixtures of $PREBUILT"
		rm -rf "$FIXDIR"
		mkdir -p "$FIXDIR"
		cp "$PREBUILT"/*.ko "$FIXDIR/"
		touch "$FIXDIR/.complete"
	fi
else
	FIXDIR=$WORK/fixtures-$(fixtures_hash)
fi
if [ ! -f "$FIXDIR/.complete" ]; then
	log "building fixtures for $KP_ABI into $FIXDIR"
	rm -rf "$FIXDIR"
	mkdir -p "$FIXDIR"
	if ! "$BUILD" "$KP_KDIR" "$FIXDIR" >"$FIXDIR.build.log" 2>&1; then
		tail -n 40 "$FIXDIR.build.log" >&2
		die "$BUILD failed (full log: $FIXDIR.build.log)"
	fi
	touch "$FIXDIR/.complete"
	# keep the three newest fixture builds of this ABI
	find "$WORK" -maxdepth 1 -name 'fixtures-*' -type d -printf '%T@ %p\n' | sort -rn | tail -n +4 \
		| cut -d' ' -f2- | while IFS= read -r old; do rm -rf "$old" "$old.build.log"; done
fi

# same_as_committed SCRIPT FILE...: the committed copies FILE (fixtures/ko/<series>/*/, what
# make check replays) equal what SCRIPT derived into $FIXDIR now, else a warning for each
same_as_committed() {
	local script=$1 f
	shift
	for f in "$@"; do
		cmp -s "$f" "$FIXDIR/${f##*/}" ||
			log "warning: $f differs from what $script derives now ($FIXDIR/${f##*/}): update the committed copy"
	done
}

# ---- signature modules: sig_dummy_*.ko derived from the kernel package's own dummy.ko -------
# (sig-modules.sh) next to the fixtures, and the image's certificates (kernel-certs.py);
# regenerated when the script, the throwaway keys or the package change. The committed copies
# in fixtures/ko/<series>/sig/ (what make check replays) must be identical.
SIG_KEY=$( { sha256sum "$ORACLE_DIR/sig-modules.sh" "$ORACLE_DIR/kernel-certs.py" \
	"$ROOT"/tests/data/sig/other-*; echo "${KP_MODULES_DEB##*/}"; } | sha256sum | cut -c1-16)
if [ ! -f "$FIXDIR/.sig-$SIG_KEY" ]; then
	if [ -n "$KP_MODULES_DEB" ]; then
		log "deriving the signature modules from ${KP_MODULES_DEB##*/}"
		"$ORACLE_DIR/sig-modules.sh" "$KP_MODULES_DEB" "$KP_ABI" "$FIXDIR" ||
			die "sig-modules.sh failed"
		python3 "$ORACLE_DIR/kernel-certs.py" "$KP_VMLINUZ" "$FIXDIR/kernel-certs.pem" ||
			die "kernel-certs.py $KP_VMLINUZ failed"
		rm -f "$FIXDIR"/.sig-* "$FIXDIR/modules.cpio"
		touch "$FIXDIR/.sig-$SIG_KEY"
	else
		log "warning: $FETCH named no module package: no sig_dummy_* modules"
	fi
fi
if [ -d "$PREBUILT/sig" ] && [ -f "$FIXDIR/.sig-$SIG_KEY" ]; then
	same_as_committed sig-modules.sh "$PREBUILT"/sig/*.ko "$PREBUILT/sig/kernel-certs.pem"
fi

# ---- module BTF modules: btf_*.ko derived from the package's veth.ko/dummy.ko and the kernel's
# BTF (btf-modules.sh), for kernels whose headers ship a vmlinux with .BTF (sid 7.2). The
# committed copies in fixtures/ko/<series>/btf/ (what make check replays) must be identical.
BTF_KEY=$( { sha256sum "$ORACLE_DIR/btf-modules.sh" "$ORACLE_DIR/btf-shift.py"; \
	echo "${KP_MODULES_DEB##*/}"; } | sha256sum | cut -c1-16)
if [ ! -f "$FIXDIR/.btf-$BTF_KEY" ] && [ -n "$KP_MODULES_DEB" ] && [ -f "$KP_KDIR/vmlinux" ]; then
	log "deriving the module BTF modules from ${KP_MODULES_DEB##*/}"
	"$ORACLE_DIR/btf-modules.sh" "$KP_MODULES_DEB" "$KP_ABI" "$KP_KDIR/vmlinux" "$FIXDIR" ||
		die "btf-modules.sh failed"
	rm -f "$FIXDIR"/.btf-* "$FIXDIR/modules.cpio"
	touch "$FIXDIR/.btf-$BTF_KEY"
fi
if [ -d "$PREBUILT/btf" ] && [ -f "$FIXDIR/.btf-$BTF_KEY" ]; then
	same_as_committed btf-modules.sh "$PREBUILT"/btf/*.ko
fi

# ---- symbol-table modules: kp_strtab_*.ko derived from the fixtures' own kp_plain.ko,
# kp_strtab_weak*.ko from kp_weak_gplonly_then_prop.ko, kp_bad_shndx_guard.ko from
# kp_bad_shndx.ko (strtab-modules.py, amd64). The committed copies in fixtures/ko/<series>/strtab/
# (what make check replays) must be identical.
STRTAB_KEY=none
if [[ $FIXTURES_FROM != dir:* ]] && [ -f "$FIXDIR/kp_plain.ko" ] &&
	[ -f "$FIXDIR/kp_bad_shndx.ko" ] && [ -f "$FIXDIR/kp_weak_gplonly_then_prop.ko" ]; then
	STRTAB_KEY=$(cat "$ORACLE_DIR/strtab-modules.py" "$FIXDIR/kp_plain.ko" \
		"$FIXDIR/kp_bad_shndx.ko" "$FIXDIR/kp_weak_gplonly_then_prop.ko" |
		sha256sum | cut -c1-16)
fi
if [ "$STRTAB_KEY" != none ] && [ ! -f "$FIXDIR/.strtab-$STRTAB_KEY" ]; then
	python3 "$ORACLE_DIR/strtab-modules.py" "$FIXDIR/kp_plain.ko" "$FIXDIR" ||
		die "strtab-modules.py failed"
	rm -f "$FIXDIR"/.strtab-* "$FIXDIR/modules.cpio"
	touch "$FIXDIR/.strtab-$STRTAB_KEY"
fi
if [ -d "$PREBUILT/strtab" ] && [ -f "$FIXDIR/.strtab-$STRTAB_KEY" ]; then
	same_as_committed strtab-modules.py "$PREBUILT"/strtab/*.ko
fi

if [ -n "$ENV_OUT" ]; then
	{
		printf 'KP_SERIES=%q\nKP_ABI=%q\nKP_RELEASE=%q\nKP_KDIR=%q\nKP_VMLINUZ=%q\nKP_CONFIG=%q\nKP_SYMVERS=%q\n' \
			"$SERIES" "$KP_ABI" "$KP_RELEASE" "$KP_KDIR" "$KP_VMLINUZ" "$KP_CONFIG" "$KP_SYMVERS"
		printf 'KP_ORACLE_FIXTURES=%q\nKP_ORACLE_OUTDIR=%q\n' "$FIXDIR" "$OUTDIR"
	} >"$ENV_OUT"
fi
if [ $PREPARE_ONLY = 1 ]; then
	log "prepared $KP_ABI: fixtures in $FIXDIR (no boot: --prepare-only)"
	exit 0
fi

# "built" scenarios apply when every module was built for this kernel; every module of the
# other selected scenarios must exist
KEPT=()
for s in "${SELECTED[@]}"; do
	missing=""
	for t in ${SC_MODULES[$s]}; do
		m=$(tok_mod "$t")
		[ -f "$FIXDIR/$m.ko" ] || missing="$missing $m.ko"
	done
	if [ -z "$missing" ]; then
		KEPT+=("$s")
	elif [ -n "${SC_BUILT[$s]:-}" ]; then
		log "scenario $s: not for $KP_ABI (not built:$missing)"
	else
		die "scenario $s needs$missing, which $BUILD did not produce in $FIXDIR"
	fi
done
SELECTED=("${KEPT[@]+"${KEPT[@]}"}")
[ ${#SELECTED[@]} -gt 0 ] || die "no scenario applies to series $SERIES"
# scenarios that hang this kernel: booted by --record-hang only; otherwise the committed
# observation stands in for the boot
APPLIES=("${SELECTED[@]}")
if [ $RECORD_HANG = 0 ]; then
	KEPT=()
	COMMITTED=$ORACLE_DIR/observed/$SERIES
	for s in "${SELECTED[@]}"; do
		if [ -z "${SC_HANG[$s]:-}" ]; then
			KEPT+=("$s")
			continue
		fi
		[ -f "$COMMITTED/$s.json" ] ||
			die "scenario $s hangs $SERIES and has no recorded observation $COMMITTED/$s.json (run-oracle.sh --record-hang $SERIES $s)"
		log "scenario $s: hangs $SERIES, not booted: the recorded $COMMITTED/$s.json is used"
		HANG_COPY+=("$s")
	done
	SELECTED=("${KEPT[@]+"${KEPT[@]}"}")
fi

# ---- base initramfs: busybox + applet links + loader + dev/console ---------------------------
BASE_KEY=$( { echo "layout $BASE_LAYOUT"; sha256sum "$ORACLE_DIR/loader.c" "$BUSYBOX"; gcc --version | head -n1; } \
	| sha256sum | cut -c1-16)
BASE_CPIO=$CACHE/oracle/base/base-$BASE_KEY.cpio
if [ ! -f "$BASE_CPIO" ]; then
	log "building base initramfs $BASE_CPIO"
	stage=$(mktemp -d)
	mkdir -p "$stage/bin" "$stage/dev" "$stage/proc" "$stage/sys" "$stage/m"
	cp "$BUSYBOX" "$stage/bin/busybox"
	gcc -static -O2 -Wall -Wextra -Werror -o "$stage/bin/loader" "$ORACLE_DIR/loader.c"
	strip "$stage/bin/loader"
	for applet in $("$BUSYBOX" --list); do
		case $applet in
		busybox|modprobe|insmod|rmmod|depmod|modinfo|lsmod) ;; # keep request_module() quiet and deterministic
		*) ln -s busybox "$stage/bin/$applet" ;;
		esac
	done
	mknod "$stage/dev/console" c 5 1
	mknod "$stage/dev/null" c 1 3
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 --reproducible) >"$BASE_CPIO.$$"
	rm -rf "$stage"
	mv "$BASE_CPIO.$$" "$BASE_CPIO"
fi

# ---- modules initramfs: every fixture .ko under /m --------------------------------------------
MOD_CPIO=$FIXDIR/modules.cpio
if [ ! -f "$MOD_CPIO" ]; then
	stage=$(mktemp -d)
	mkdir -p "$stage/m"
	cp "$FIXDIR"/*.ko "$stage/m/"
	(cd "$stage" && find m -type f | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 --reproducible) >"$MOD_CPIO.tmp"
	rm -rf "$stage"
	mv "$MOD_CPIO.tmp" "$MOD_CPIO"
fi

# ---- per scenario: /init, initrd = base + modules + init (concatenated newc archives) --------
write_init() { # scenario -> /init on stdout
	local s=$1 n=0 t
	cat <<EOF
#!/bin/busybox sh
# generated by tests/oracle/run-oracle.sh for scenario $s
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
dmesg -c >/dev/null
echo "KPORACLE-BEGIN $s"
echo "KPUNAME \$(uname -r)"
echo "KPCMDLINE \$(cat /proc/cmdline)"
echo "KPGTAINT0 \$(cat /proc/sys/kernel/tainted)"
step() { # N FILE FLAGS
	echo "KPSTEP-BEGIN \$1 \$2 flags=\$3"
	# -t: a call that has not returned after $BLOCK_TIMEOUT s is reported (KPLOADBLOCKED)
	/bin/loader -t $BLOCK_TIMEOUT -f "\$3" "/m/\$2"
	rc=\$?
	# killed (an oops in finit_module kills the caller): no KPLOAD line
	[ \$rc -lt 128 ] || echo "KPLOADKILLED \$2 \$((rc - 128))"
	echo KPDMESG-BEGIN
	dmesg -r -c
	echo KPDMESG-END
	for d in /sys/module/*; do
		[ -r "\$d/taint" ] && echo "KPTAINT \${d##*/} \$(cat "\$d/taint")"
	done
	echo "KPGTAINT \$(cat /proc/sys/kernel/tainted)"
	echo "KPSTEP-END \$1"
}
EOF
	for t in ${SC_MODULES[$s]}; do
		n=$((n + 1))
		echo "step $n $(tok_mod "$t").ko $(tok_flags "$t")"
	done
	cat <<'EOF'
echo KPORACLE-END
poweroff -f
EOF
}

modname() { # KO -> the module's name in the kernel (.gnu.linkonce.this_module)
	python3 "$ROOT/fixtures/edit-ko.py" "$1" --show | sed -n 's/^this_module	//p'
}

show_tail() { # serial log: its last lines, without terminal escapes
	tail -n 15 "$1" | sed -e 's/\x1b[[0-9;?]*[A-Za-z]//g' -e 's/\x1bc//g' -e 's/\r$//' -e 's/^/    | /' >&2
}

run_one() { # scenario
	local s=$1 stage initrd serial t0 t1 rc=0 extra files=() m t
	stage=$(mktemp -d)
	initrd=$RUNS/$s.initrd
	serial=$RUNS/$s.serial
	write_init "$s" >"$stage/init"
	chmod 755 "$stage/init"
	(cd "$stage" && echo init | cpio --quiet -o -H newc -R 0:0 --reproducible) >"$stage/init.cpio"
	cat "$BASE_CPIO" "$MOD_CPIO" "$stage/init.cpio" >"$initrd"
	rm -rf "$stage"
	extra=${SC_CMDLINE[$s]}
	# a hanging guest leaves only its console: every level but debug, until the timeout
	local tmo=$TIMEOUT lvl=$LOGLEVEL hang=()
	if [ -n "${SC_HANG[$s]:-}" ]; then tmo=$HANG_TIMEOUT lvl=8 hang=(--hang); fi
	t0=$(date +%s.%N)
	for attempt in 1 2 3; do
		rc=0
		timeout --foreground -k 5 "$tmo" qemu-system-x86_64 -nographic -m 512M -smp 1 -nic none \
			-no-reboot -accel tcg -cpu max -kernel "$KP_VMLINUZ" -initrd "$initrd" \
			-append "console=ttyS0 panic=-1 loglevel=$lvl${extra:+ $extra}" \
			</dev/null >"$serial" 2>&1 || rc=$?
		# On a heavily loaded host the emulated guest can miss check_timer()'s window and
		# panic before /init ("IO-APIC + timer doesn't work!"): nothing of the scenario ran,
		# so boot again (at most three times) instead of failing it.
		if [ $rc = 0 ] && ! grep -q "KPORACLE-BEGIN $s" "$serial" &&
			grep -q "IO-APIC + timer doesn't work" "$serial"; then
			echo "run-oracle: scenario $s: early boot timer panic (host overloaded), boot $attempt of 3" >&2
			cp "$serial" "$serial.boot$attempt"
			continue
		fi
		break
	done
	t1=$(date +%s.%N)
	if [ ${#hang[@]} -gt 0 ] && { [ $rc = 124 ] || [ $rc = 137 ]; }; then
		rc=0 # the expected end of a hanging guest (parse-serial.py --hang checks the log)
	elif [ ${#hang[@]} -gt 0 ] && [ $rc = 0 ]; then
		echo "run-oracle: error: scenario $s: marked $SERIES=hang, but the guest did not hang (serial log: $serial)" >&2
		show_tail "$serial"
		return 1
	fi
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "run-oracle: error: scenario $s: guest timed out after ${TIMEOUT}s (serial log: $serial)" >&2
		show_tail "$serial"
		return 1
	elif [ $rc != 0 ]; then
		echo "run-oracle: error: scenario $s: qemu exited with $rc (serial log: $serial)" >&2
		show_tail "$serial"
		return 1
	fi
	for t in ${SC_MODULES[$s]}; do
		m=$(tok_mod "$t")
		files+=("$m.ko=$(modname "$FIXDIR/$m.ko")")
	done
	if ! python3 "$ORACLE_DIR/parse-serial.py" --log "$serial" --scenario "$s" --series "$SERIES" \
		--abi "$KP_ABI" --extra-cmdline "$extra" --out "$OUTDIR/$s.json" \
		"${hang[@]+"${hang[@]}"}" "${files[@]}"; then
		show_tail "$serial"
		return 1
	fi
	printf 'run-oracle: %-32s %5ss  %s\n' "$s" "$(elapsed "$t0" "$t1")" "$OUTDIR/$s.json" >&2
}

flock -u 8
exec 8>&-

mkdir -p "$OUTDIR"
find "$WORK" -maxdepth 1 -name 'runs.*' -type d -mmin +1440 -exec rm -rf {} +
RUNS=$(mktemp -d "$WORK/runs.XXXXXX")
if [ $# -eq 0 ]; then # a full run: drop results of scenarios that no longer exist or apply
	for f in "$OUTDIR"/*.json; do
		[ -f "$f" ] || continue
		n=${f##*/}
		n=${n%.json}
		keep=0
		for s in "${APPLIES[@]}"; do [ "$s" = "$n" ] && keep=1; done
		[ $keep = 1 ] || rm -f "$f"
	done
fi
for s in "${HANG_COPY[@]+"${HANG_COPY[@]}"}"; do
	[ "$COMMITTED/$s.json" -ef "$OUTDIR/$s.json" ] || cp "$COMMITTED/$s.json" "$OUTDIR/$s.json"
done
T1=$(date +%s.%N)
log "booting ${#SELECTED[@]} scenario(s) on $KP_RELEASE ($KP_ABI), $JOBS in parallel"
FAILED=()
declare -A PIDS=()
for s in "${SELECTED[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n || true
	done
	run_one "$s" &
	PIDS[$s]=$!
done
for s in "${SELECTED[@]}"; do
	wait "${PIDS[$s]}" || FAILED+=("$s")
done
T2=$(date +%s.%N)


log "prepare $(elapsed "$T0" "$T1")s, boots $(elapsed "$T1" "$T2")s (wall), ${#SELECTED[@]} scenario(s) -> $OUTDIR"
if [ ${#FAILED[@]} -gt 0 ]; then
	die "${#FAILED[@]} scenario(s) failed: ${FAILED[*]} (serial logs kept in $RUNS)"
fi
if [ "${KP_ORACLE_KEEP:-0}" = 1 ]; then
	log "serial logs and initrds kept in $RUNS"
else
	rm -rf "$RUNS"
fi
