#!/bin/bash
# tests/oracle/hook/run-hook-oracle.sh [SERIES] [KOPOLICY_BIN]
#
# `kopolicy hook` end to end on a real kernel: a stock Debian kernel (tests/kernel/fetch-kernel.sh)
# boots under QEMU (TCG) with an initramfs holding busybox, kmod's own modprobe (from Debian's
# kmod package), the kopolicy binary with its shared libraries and ld.so, the fixture modules
# (built with fixtures/build.sh against that kernel's headers) in /lib/modules/<release>/extra
# with depmod indexes, the kernel's Module.symvers and config, SYSCONFDIR/kopolicy/hook.conf
# ("block load-failure") and the install lines kopolicy itself prints
# (--print-install-rules > /etc/modprobe.d/zz-kopolicy.conf). In one boot, in order:
#
#   clean    modprobe kp_gpl_prov           loads through the hook, no word from kopolicy
#   inherit  modprobe kp_use_prop           kp_prop_prov (own install line) then kp_use_prop:
#                                           both load, with kopolicy's warnings; P inherited
#   blocked  modprobe kp_gplonly_then_prop  the 2020 rule: kopolicy blocks it with its message,
#                                           modprobe fails, the module is not loaded and the
#                                           kernel never saw it
#   bypass   modprobe --ignore-install kp_gplonly_then_prop
#                                           what the kernel does without the hook: it refuses
#                                           the module with the lines kopolicy predicted (-v)
#   symget   modprobe kp_symget             loads with kopolicy's symbol_get() warnings, which
#                                           must be exactly the kernel's "failing symbol_get"
#   softdep  modprobe kp_gplonly_then_prop  with a softdep line (pre: kp_plain) and the
#                                           overrides --update-install-rules writes: the hook
#                                           runs and blocks it before kp_plain loads
#   softload modprobe kp_symget             (removed first) with a softdep line: judged, its
#                                           soft dependency loaded before it
#   softcycle modprobe kp_symget            (both removed first) kp_symget pre: kp_plain and
#                                           kp_plain (in tree) pre: kp_symget: modprobe ends,
#                                           both loaded, the hook judged kp_symget; then the
#                                           overrides removed once no softdep line is left
#   mutex    (last) an oops leaves module_mutex held; modprobe kp_gplonly_then_prop, failing
#            closed: the hook answers at --timeout, its /proc/modules reader left in D
#
# The serial log is checked on the host (check-hook-serial.sh); output is TAP, exit 0 only if every check passes.
# Needs root (dev/console node), qemu-system-x86, busybox-static, cpio, kmod (depmod), python3
# and what fixtures/build.sh needs. Environment: KOPOLICY_CACHE (default ~/.cache/kopolicy),
# KP_ORACLE_TIMEOUT (seconds, default 300), KP_ORACLE_KEEP=1 (keep the serial log and initrd).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
SERIES=${1:-6.12}
KP=${2:-$ROOT/src/kopolicy}
CACHE=${KOPOLICY_CACHE:-$HOME/.cache/kopolicy}
TIMEOUT=${KP_ORACLE_TIMEOUT:-300}
FIXTURES=(kp_gpl_prov kp_prop_prov kp_use_prop kp_gplonly_then_prop kp_symget)
# in kernel/ (in tree to kopolicy: no install line of its own), a soft dependency of the softdep
# steps
SOFT=kp_plain

die() { echo "run-hook-oracle: error: $*" >&2; exit 2; }
log() { echo "run-hook-oracle: $*" >&2; }
# set -e ends the script at a failing command: say where, never silently
trap 'echo "run-hook-oracle: error: line $LINENO: exit status $?" >&2' ERR

[ -x "$KP" ] || die "$KP is not an executable kopolicy"
for tool in qemu-system-x86_64 cpio depmod ldd gzip python3 timeout sha256sum; do
	command -v "$tool" >/dev/null || die "$tool not found"
done
BUSYBOX=/bin/busybox
if ! "$BUSYBOX" --list >/dev/null 2>&1 || readelf -l "$BUSYBOX" | grep 'program interpreter' >/dev/null; then
	die "$BUSYBOX is not a static busybox (apt-get install busybox-static)"
fi
[ "$(id -u)" = 0 ] || die "must run as root (the initramfs needs a dev/console device node)"

# ---- kernel and fixtures -----------------------------------------------------------------------
KENV=$("$ROOT/tests/kernel/fetch-kernel.sh" "$SERIES") || die "fetch-kernel.sh $SERIES failed"
eval "$KENV"
REL=$KP_RELEASE
WORK=$CACHE/oracle/$KP_ABI
mkdir -p "$WORK"
hash=$( { for f in "${FIXTURES[@]}" "$SOFT"; do find "$ROOT/fixtures/src/$f" -type f -print0; done \
	| LC_ALL=C sort -z | xargs -0 sha256sum | sed "s@$ROOT/@@"
	sha256sum "$ROOT/fixtures/build.sh" "$ROOT/fixtures/edit-ko.py" | sed "s@$ROOT/@@"
	echo "$KP_ABI"; } | sha256sum | cut -c1-16)
FIX=$WORK/hook-fixtures-$hash
# the committed fixtures (fixtures/ko/SERIES, built in the kernel's own suite's chroot by
# fixtures/ko/update.sh) when they were built for this ABI: 5.10 and 7.2 need an older or newer
# compiler than the host's
committed=$ROOT/fixtures/ko/$SERIES
if grep -qx "abi=$KP_ABI" "$committed/kernel.txt" 2>/dev/null &&
	(for f in "${FIXTURES[@]}" "$SOFT"; do [ -f "$committed/$f.ko" ] || exit 1; done); then
	FIX=$committed
	log "the committed fixtures of $committed (built for $KP_ABI)"
elif [ ! -f "$FIX/.complete" ]; then
	log "building ${FIXTURES[*]} $SOFT for $KP_ABI into $FIX"
	rm -rf "$FIX"
	mkdir -p "$FIX"
	"$ROOT/fixtures/build.sh" "$KP_KDIR" "$FIX" "${FIXTURES[@]}" "$SOFT" >"$FIX.build.log" 2>&1 ||
		{ tail -n 30 "$FIX.build.log" >&2; die "fixtures/build.sh failed (log: $FIX.build.log)"; }
	touch "$FIX/.complete"
fi

# ---- kmod's modprobe: the binary of Debian's kmod package ----------------------------------------
KMOD=""
for c in /usr/bin/kmod /bin/kmod; do
	if [ -x "$c" ] && dpkg -S "$c" 2>/dev/null | grep '^kmod:' >/dev/null; then KMOD=$c; break; fi
done
if [ -z "$KMOD" ]; then
	mkdir -p "$CACHE/hook-kmod"
	(cd "$CACHE/hook-kmod" && apt-get download kmod >/dev/null) || die "apt-get download kmod failed"
	rm -rf "$CACHE/hook-kmod/x"
	dpkg -x "$(ls -t "$CACHE"/hook-kmod/kmod_*.deb | sed -n 1p)" "$CACHE/hook-kmod/x"
	KMOD=$(ls "$CACHE"/hook-kmod/x/{usr/,}bin/kmod 2>/dev/null | sed -n 1p)
	[ -x "$KMOD" ] || die "no kmod binary in Debian's kmod package"
fi
KMOD_VERSION=$(dpkg-query -W -f '${Version}' kmod 2>/dev/null || echo "?")

# ---- initramfs ---------------------------------------------------------------------------------
run=$(mktemp -d "${TMPDIR:-/tmp}/hook-oracle.XXXXXX")
stage=$run/stage
keep() { [ "${KP_ORACLE_KEEP:-0}" = 1 ]; }
trap 'if keep; then log "kept $run"; else rm -rf "$run"; fi' EXIT
mkdir -p "$stage"/{bin,sbin,usr/bin,dev,proc,sys,tmp,etc/modprobe.d,etc/kopolicy,boot} \
	"$stage/lib/modules/$REL/extra"
cp "$BUSYBOX" "$stage/bin/busybox"
for applet in $("$BUSYBOX" --list); do
	case $applet in
	busybox | modprobe | insmod | rmmod | depmod | modinfo | lsmod) ;; # kmod's, not busybox's
	*) ln -s busybox "$stage/bin/$applet" ;;
	esac
done
cp "$KMOD" "$stage/bin/kmod"
for t in modprobe insmod lsmod depmod; do ln -s /bin/kmod "$stage/sbin/$t"; done
cp "$KP" "$stage/usr/bin/kopolicy"
# the shared libraries of both and the dynamic loader, at the paths ldd names, with those
# kopolicy dlopen()s on first use (no NEEDED entry: its .note.dlopen names them, lib/dl/) and
# theirs, where the host's dynamic linker cache has them
# (the cache read once, whole: under pipefail, awk leaving early would kill a writer with more
# than a pipe's worth left, SIGPIPE, and set -e this script without a word)
LDCONFIG=$(command -v ldconfig || echo /sbin/ldconfig)
ldcache=$("$LDCONFIG" -p) || die "$LDCONFIG -p failed"
lazy=()
for so in $("$ROOT/tests/lib/dlopen-sonames.py" "$KP"); do
	p=$(awk -v so="$so" '$1 == so && /x86-64/ && !p { p = $NF } END { print p }' <<<"$ldcache")
	[ -n "$p" ] || die "kopolicy dlopen()s $so: not in the host's ld.so.cache"
	lazy+=("$p")
done
[ ${#lazy[@]} -gt 0 ] || die "no .note.dlopen in $KP (tests/lib/dlopen-sonames.py)"
for lib in $(ldd "$KMOD" "$KP" "${lazy[@]}" |
	awk '/=> \// { print $3 } /^\t\/[^ ]* \(/ { print $1 }' | sort -u) "${lazy[@]}"; do
	mkdir -p "$stage$(dirname "$lib")"
	cp -L "$lib" "$stage$lib"
done
for f in "${FIXTURES[@]}"; do cp "$FIX/$f.ko" "$stage/lib/modules/$REL/extra/"; done
mkdir -p "$stage/lib/modules/$REL/kernel/misc"
cp "$FIX/$SOFT.ko" "$stage/lib/modules/$REL/kernel/misc/"
: >"$stage/lib/modules/$REL/modules.builtin"
: >"$stage/lib/modules/$REL/modules.order"
depmod -b "$stage" "$REL" 2>/dev/null
cp "$KP_CONFIG" "$stage/boot/config-$REL"
gzip -9n <"$KP_SYMVERS" >"$stage/boot/symvers-$REL.gz"
# the binary's default policy file (configure's sysconfdir, as `kopolicy hook --help` says)
policy=$("$KP" hook --help | sed -n 's|^.*(default ROOT\(/[^;]*/kopolicy/hook\.conf\);$|\1|p')
[ -n "$policy" ] || die "no default policy path in '$KP hook --help'"
mkdir -p "$stage${policy%/*}"
echo "block load-failure" >"$stage$policy"
# the last step's module, which oopses in find_symbol() under module_mutex, outside the module
# tree: kp_strtab_guard.ko (tests/oracle/strtab-modules.py; kernel name kp_plain), an import name
# running into the guard page, when the committed one was built for this ABI (5.10 to 6.12:
# 7.2 refuses it with ENOEXEC, "symbol name out of bounds in string table"); or, on 7.2 or
# with KP_HOOK_MUTEX=ksymtab, kp_absent_prov.ko with its first export's name pointing into
# unmapped space (ksymtab-wild.py: verify_exported_symbols() in complete_formation())
MUTEX_VIA=${KP_HOOK_MUTEX:-$([ "$SERIES" = 7.2 ] && echo ksymtab || echo guard)}
GUARD=$ROOT/fixtures/ko/$SERIES/strtab/kp_strtab_guard.ko
[ "$MUTEX_VIA" = ksymtab ] && GUARD=$ROOT/fixtures/ko/$SERIES/kp_absent_prov.ko
if [ -f "$GUARD" ] && grep -qx "abi=$KP_ABI" "$ROOT/fixtures/ko/$SERIES/kernel.txt"; then
	mkdir -p "$stage/guard"
	if [ "$MUTEX_VIA" = ksymtab ]; then
		python3 "$HERE/ksymtab-wild.py" "$GUARD" "$stage/guard/mutex.ko" >&2 ||
			die "ksymtab-wild.py $GUARD failed"
	else
		cp "$GUARD" "$stage/guard/mutex.ko"
	fi
	echo "${GUARD##*/}" >"$stage/guard/what"
	echo "$policy" >"$stage/guard/policy-path"
fi
mknod "$stage/dev/console" c 5 1
mknod "$stage/dev/null" c 1 3
cat >"$stage/init" <<'EOF'
#!/bin/sh
export PATH=/sbin:/bin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
dmesg -c >/dev/null
echo "KPHOOK-BEGIN $(uname -r)"
kopolicy hook --print-install-rules >/etc/modprobe.d/zz-kopolicy.conf
echo "KPRULES $(grep -c '^install ' /etc/modprobe.d/zz-kopolicy.conf)"
sed 's/^/KPRULE /' /etc/modprobe.d/zz-kopolicy.conf
step() { # name, modprobe arguments
	n=$1
	shift
	echo "KPSTEP-BEGIN $n"
	# a bare "modprobe" would be busybox's applet; $KPT: seconds at most, when set
	${KPT:+timeout "$KPT"} /sbin/modprobe "$@" >/tmp/out 2>/tmp/err
	echo "KPRC $n $?"
	sed "s/^/KPERR $n /" /tmp/err
	sed "s/^/KPOUT $n /" /tmp/out
	dmesg -c | sed "s/^/KPDMESG $n /"
	for d in /sys/module/kp_*; do
		[ -r "$d/taint" ] && echo "KPTAINT $n ${d##*/} $(cat "$d/taint")"
	done
	echo "KPSTEP-END $n"
}
step clean kp_gpl_prov
step inherit kp_use_prop
kopolicy hook -v kp_gplonly_then_prop 2>&1 | sed 's/^/KPPRED /'
step blocked kp_gplonly_then_prop
step bypass --ignore-install kp_gplonly_then_prop
step symget kp_symget
# Soft dependencies: libkmod never runs the install line of a module that has some; the
# overrides --update-install-rules writes (0-kopolicy-softdeps.conf) make it run it, and the
# line loads them itself once the hook let the module load. kp_gplonly_then_prop with a pre
# kp_plain: the hook blocks it before kp_plain loads (without the override: kp_plain loaded,
# then the kernel refused the module). kp_symget (removed first) with a pre kp_plain: judged
# (its symbol_get() warnings), kp_plain loaded before it. Then no softdep line: the overrides go.
echo "softdep kp_gplonly_then_prop pre: kp_plain" >/etc/modprobe.d/sd.conf
kopolicy hook --update-install-rules 2>&1 | sed 's/^/KPSDUPD /'
sed 's/^/KPSDFILE /' /etc/modprobe.d/0-kopolicy-softdeps.conf
grep '^install kp_gplonly_then_prop ' /etc/modprobe.d/zz-kopolicy.conf | sed 's/^/KPSDLINE /'
step softdep kp_gplonly_then_prop
/sbin/modprobe -r kp_symget
echo "KPSDRM $?"
echo "softdep kp_symget pre: kp_plain" >/etc/modprobe.d/sd.conf
kopolicy hook --update-install-rules 2>&1 | sed 's/^/KPSDUPD /'
step softload kp_symget
echo "KPORDER $(cut -d' ' -f1 /proc/modules | grep -E '^kp_(plain|symget)$' | tr '\n' ' ')"
# Soft dependencies that lead back through a module kopolicy does not gate: kp_plain (in tree)
# with a pre kp_symget, kp_symget with a pre kp_plain. kp_symget's line names it in
# KOPOLICY_CHAIN; run again from kp_plain's probe list, it loads kp_symget alone, after the
# hook, and modprobe ends (lines without that guard ran each other without end). Both removed
# first, both loaded after, as before; the timeout only bounds a regression.
/sbin/modprobe -r kp_symget && /sbin/modprobe -r kp_plain
echo "KPCYRM $?"
printf 'softdep kp_symget pre: kp_plain\nsoftdep kp_plain pre: kp_symget\n' >/etc/modprobe.d/sd.conf
kopolicy hook --update-install-rules 2>&1 | sed 's/^/KPSDUPD /'
KPT=60
step softcycle kp_symget
KPT=
echo "KPCYORDER $(cut -d' ' -f1 /proc/modules | grep -E '^kp_(plain|symget)$' | tr '\n' ' ')"
echo "softdep kp_symget pre: kp_plain" >/etc/modprobe.d/sd.conf
# kp_plain goes again: the mutex step's kp_strtab_guard.ko is named kp_plain to the kernel
/sbin/modprobe -r kp_plain
rm /etc/modprobe.d/sd.conf
kopolicy hook --update-install-rules 2>&1 | sed 's/^/KPSDUPD /'
[ -e /etc/modprobe.d/0-kopolicy-softdeps.conf ] && echo "KPSDAFTER there" || echo "KPSDAFTER gone"
# Last (nothing loads after it): the hook on a machine whose module_mutex an oops left held.
# kp_strtab_guard's import name starts in the guard page (resolve_symbol()), or kp_absent_prov's
# export name is a wild pointer (complete_formation()): find_symbol() faults holding the lock
# (insmod killed). Then, the policy failing closed ("on-error fail-closed" added: a
# fail-open answer would hand the load to the kernel, which sleeps on the same lock), modprobe
# with the hook of kp_gplonly_then_prop (the one fixture not loaded), in the background;
# after 40 s its exit status and seconds if it ended, and the state (stat field 3), wchan
# and kernel stack of every modprobe, sh, kopolicy and kmod process.
if [ -f /guard/mutex.ko ]; then
	echo "KPSTEP-BEGIN mutex"
	echo "KPMUTEXKO $(cat /guard/what)"
	/sbin/insmod /guard/mutex.ko >/tmp/out 2>/tmp/err
	echo "KPINSMOD $?"
	dmesg -c | grep -E 'BUG: unable|general protection|RIP: |find_symbol|resolve_symbol|verify_exported|complete_formation' | sed 's/^/KPDMESG mutex /'
	echo "on-error fail-closed" >>"$(cat /guard/policy-path)"
	t0=$(cut -d. -f1 /proc/uptime)
	(/sbin/modprobe kp_gplonly_then_prop >/tmp/out 2>/tmp/err
		echo "KPRC mutex $? after $(($(cut -d. -f1 /proc/uptime) - t0)) s") &
	sleep 40
	for p in /proc/[0-9]*; do
		c=$(cat "$p/comm" 2>/dev/null) || continue
		case $c in modprobe | kopolicy | kmod | sh) ;; *) continue ;; esac
		[ "${p#/proc/}" = $$ ] && continue
		echo "KPPROC mutex ${p#/proc/} $c $(cut -d' ' -f3 "$p/stat") $(cat "$p/wchan")"
		sed "s/^\[<[0-9a-f]*>\] //; s/^/KPSTACK mutex ${p#/proc/} /" "$p/stack"
	done
	sed "s/^/KPERR mutex /" /tmp/err
	dmesg -c | sed "s/^/KPDMESG mutex /"
	echo "KPSTEP-END mutex"
fi
echo KPHOOK-END
poweroff -f
EOF
chmod 755 "$stage/init"
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$run/initrd"
log "kernel $REL, kmod $KMOD_VERSION ($KMOD), initrd $(du -h "$run/initrd" | cut -f1); booting"

serial=$run/serial.log
rc=0
timeout --foreground -k 5 "$TIMEOUT" qemu-system-x86_64 -nographic -m 512M -smp 1 -nic none \
	-no-reboot -accel tcg -cpu max -kernel "$KP_VMLINUZ" -initrd "$run/initrd" \
	-append "console=ttyS0 panic=-1 loglevel=1" </dev/null >"$serial" 2>&1 || rc=$?
sed -i -e 's/\r$//' -e 's/\x1b[[0-9;?]*[A-Za-z]//g' "$serial"
if [ $rc != 0 ] || ! grep -q '^KPHOOK-END' "$serial"; then
	tail -n 30 "$serial" >&2
	KP_ORACLE_KEEP=1
	die "the guest did not finish (qemu exit $rc); serial log in $serial"
fi
keep && cp "$serial" "$run/serial.kept"

# ---- checks (check-hook-serial.sh; make check replays the committed log with it) -----------
rc=0
"$HERE/check-hook-serial.sh" "$serial" "$REL" "${#FIXTURES[@]}" || rc=$?
if [ $rc != 0 ]; then
	KP_ORACLE_KEEP=1
	cp "$serial" "$run/serial.kept"
	exit 1
fi
