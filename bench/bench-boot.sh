#!/usr/bin/env bash
# bench/bench-boot.sh [-o OUTDIR] [-w WORKDIR [-R]] [-N] [-G] [-P] [-K KINDS] KOPOLICY_BIN [BOOTS]
#
# Boot storm: what `kopolicy hook` costs a real boot. Debian's stock 6.12 kernel boots under
# QEMU (TCG) a Debian 12 root file system on a virtio disk — systemd, udev, kmod, the 6.12
# corpus tree's modules under /lib/modules, KOPOLICY_BIN as /usr/bin/kopolicy — which
# coldplugs a virtual machine's devices (q35 with virtio, e1000e, HD audio, xHCI/USB HID,
# watchdog, SATA, ...) and loads the modules-load.d list bench/boot/modules-load.conf (100
# modules that load without their hardware). Each boot is made either without install rules
# or with the hook's rule for every module (bench/boot/zz-kopolicy.conf, switched on by
# kpbench.hook=1 on the kernel command line), BOOTS of each (default 3), alternating (off on,
# on off, off on, ...), every boot from the same disk image (snapshot=on), after one writable
# warm-up boot with the hook that makes the machine id and fills the hook's facts cache
# (/var/cache/kopolicy) with every module the boots load, as on a system booted before.
# -N adds BOOTS boots with a null hook (bench/boot/zz-null.conf, kpbench.hook=null: the same
# install rule with /bin/true in place of kopolicy): the install-rule mechanism's own cost.
# The image also holds out-of-tree modules (bench/boot/out-of-tree.conf: fixtures/ko/6.12's
# kbuild modules in /lib/modules/RELEASE/updates/dkms/, loaded by every kind of boot through
# /etc/modules-load.d/kpbench-oot.conf). -G adds BOOTS boots with the recommended deployment
# (kpbench.hook=rules): the install lines `kopolicy hook --print-install-rules` prints in the
# root when the image is built (chroot, /proc mounted, --kernel-release), one per
# out-of-tree module, with hook-timer put in front of kopolicy (/usr/local/lib/kpbench/
# zz-rules.conf; the lines as printed are in OUTDIR/print-install-rules.conf).
# -K KINDS picks the kinds of measured boot instead, a comma list of off, rules, null and
# on (`install *`), e.g. -K off,rules; -N and -G add null and rules to the default off,on.
# -P (kinds off and rules only) deploys the rules as kopolicy recommends, persistent: the
# image's /etc/modprobe.d/zz-kopolicy.conf holds them (an off boot bind-mounts zz-off.conf
# over it), and the warm-up is a rules boot with the measured rules boots' very kernel command
# line; without -P the rules are copied into /run/modprobe.d at every boot and the warm-up
# has another command line, so that libkmod's answers (kopolicy's kmod memo, keyed by the
# state of every modprobe.d directory and by /proc/cmdline) are never replayed in a measured
# boot, as on no installed system.
# Each round boots the kinds in the order off, rules, null, on, the next round backwards.
# Every kind runs the same setup service before systemd-modules-load (kpbench-off, -rules,
# -nullhook, -hook.service: mkdir and a copy into /run/modprobe.d; zz-off.conf has no rule).
# The guest (bench/boot/report.sh) reports on the serial console: when `udevadm settle`
# returned, the kernel's module_load trace events (the last module loaded), systemd's unit
# timestamps, `systemd-analyze time`, and with the hook hook-timer's line for every hook run
# (wall and CPU time). bench/boot/parse-boot.py prints the medians, spreads, ratios and the
# hook's latency distribution.
#
# Needs root (the root file system's owners, mkfs.ext4 -d), mmdebstrap (the root is built
# once from the Debian archive this machine's apt sources name, with mmdebstrap's own apt
# configuration, and cached as $KOPOLICY_CACHE/bootstorm/root-<hash>.tar), qemu-system-x86,
# busybox-static, e2fsprogs, gcc, python3, kmod; the 6.12 kernel from
# tests/kernel/fetch-kernel.sh and the amd64-6.12 corpus tree from tests/corpus/fetch-trees.sh
# (both cached). A boot takes 4-11 minutes under TCG on a 2-CPU host at load 15-20 (a boot with
# the hook about twice one without), BOOTS=3 with the warm-up about 1.5 hours.
#
# Output: OUTDIR (default bench-boot-<UTC time> in the current directory) holds serial-*.log
# for every boot, boots.tsv (one line per boot), summary.txt (what parse-boot.py printed),
# print-install-rules.conf and oot-check.txt (the rules as printed, kopolicy check of the
# out-of-tree modules) and raw.txt (all of it with every boot's report, the file to keep).
# Exit status: 0 done, 1 a boot failed or gave no report, 2 usage or setup error.
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "bench-boot: error: line $LINENO: exit status $?" >&2' ERR

die() { echo "bench-boot: $*" >&2; exit 2; }
usage() {
	echo "usage: bench-boot.sh [-o OUTDIR] [-w WORKDIR [-R]] [-N] [-G] [-P] [-K KINDS]" \
		"KOPOLICY_BIN [BOOTS]" >&2
	echo "  KINDS: a comma list of off (no install rules), rules (kopolicy hook" \
		"--print-install-rules)," >&2
	echo "  null (install * with /bin/true), on (install * with kopolicy hook);" \
		"default off,on; -N adds null, -G rules" >&2
	exit 2
}

outdir="" work="" reuse=0 kinds="" null=0 rules=0 persist=0
while getopts "o:w:RNGPK:h" opt; do
	case $opt in
	o) outdir=$OPTARG ;;
	w) work=$OPTARG ;;
	R) reuse=1 ;;
	N) null=1 ;;
	G) rules=1 ;;
	P) persist=1 ;;
	K) kinds=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
kinds=${kinds:-off,on}
[ "$null" = 0 ] || kinds+=,null
[ "$rules" = 0 ] || kinds+=,rules
# the kinds in their fixed order (off first, its neighbour rules), each once
order=()
for k in off rules null on; do
	[[ ,$kinds, == *,$k,* ]] && order+=("$k")
done
for k in ${kinds//,/ }; do
	[[ $k =~ ^(off|rules|null|on)$ ]] || die "-K: unknown kind of boot '$k' (off, rules, null, on)"
done
[ ${#order[@]} -ge 1 ] || die "-K: no kind of boot"
[ "$persist" = 0 ] || [ "${order[*]}" = "off rules" ] ||
	die "-P: kinds off and rules only (-K off,rules), not ${order[*]}"
[ $# -ge 1 ] && [ $# -le 2 ] || usage
kp=$1
boots=${2:-3}
[[ $boots =~ ^[1-9][0-9]*$ ]] || die "BOOTS must be a positive number, not '$boots'"
[ -x "$kp" ] || die "$kp is not executable"
top=$(cd "$(dirname "$0")/.." && pwd)
here=$top/bench/boot
[ "$(id -u)" = 0 ] || die "must run as root (file owners of the root file system, mkfs.ext4 -d)"
for tool in mmdebstrap qemu-system-x86_64 mkfs.ext4 depmod modprobe gcc python3 cpio xz \
	timeout strip readelf tar sha256sum; do
	command -v "$tool" >/dev/null ||
		die "$tool not found (apt-get install mmdebstrap qemu-system-x86 e2fsprogs" \
			"kmod gcc python3 cpio xz-utils)"
done
[ -x /usr/bin/time ] || die "GNU time is not installed (apt-get install time)"
BUSYBOX=/bin/busybox
if ! "$BUSYBOX" --list >/dev/null 2>&1 ||
	readelf -l "$BUSYBOX" | grep 'program interpreter' >/dev/null; then
	die "$BUSYBOX is not a static busybox (apt-get install busybox-static)"
fi
TIMEOUT=${KPBENCH_BOOT_TIMEOUT:-1200}
MEM=${KPBENCH_BOOT_MEM:-3072}
SMP=${KPBENCH_BOOT_SMP:-2}

eval "$("$top/tests/kernel/fetch-kernel.sh" 6.12)" || die "fetch-kernel.sh 6.12 failed"
tree_line=$("$top/tests/corpus/fetch-trees.sh" --offline amd64-6.12) ||
	die "no amd64-6.12 corpus tree (tests/corpus/fetch-trees.sh amd64-6.12)"
tree_root=$(sed -n 's/.*\troot=\([^\t]*\).*/\1/p' <<<"$tree_line")
tree_rel=$(sed -n 's/.*\trelease=\([^\t]*\).*/\1/p' <<<"$tree_line")
tree_symvers=$(sed -n 's/.*\tsymvers=\([^\t]*\).*/\1/p' <<<"$tree_line")
[ "$tree_rel" = "$KP_RELEASE" ] ||
	die "the amd64-6.12 tree is $tree_rel, the kernel $KP_RELEASE: not the same build"
rel=$KP_RELEASE
mods=$tree_root/lib/modules/$rel
[ -d "$mods/kernel" ] || die "no $mods/kernel"

cache=${KOPOLICY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kopolicy}/bootstorm
mkdir -p "$cache"
outdir=${outdir:-$PWD/bench-boot-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
if [ -z "$work" ]; then
	work=$(mktemp -d /var/tmp/kpbench-boot.XXXXXX)
	trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

img=$work/root.img
initrd=$work/initrd.cpio
if [ "$reuse" = 1 ]; then
	[ -s "$img" ] && [ -s "$initrd" ] ||
		die "-R: no root.img and initrd.cpio of an earlier run in $work"
	[[ " ${order[*]} " != *" rules "* ]] || [ -s "$work/print-install-rules.conf" ] ||
		die "-R: the image in $work has no out-of-tree modules or rules (built before -G)"
	[ "$persist" = "$([ -e "$work/persistent" ] && echo 1 || echo 0)" ] ||
		die "-R: the image in $work was built $([ "$persist" = 1 ] && echo without ||
			echo with) -P"
	[ -e "$work/off-service" ] || echo "bench-boot: warning: the image in $work predates" \
		"kpbench-off.service: its boots without a hook skip the setup service" >&2
	nmods=$(($(grep -cv '^#' "$here/modules-load.conf") +
		$(cat "$work/oot.list" 2>/dev/null | wc -l)))
else
	# 1. The Debian 12 root, built once. The packages: systemd as init, udev, kmod, and
	# kopolicy's runtime libraries, linked or dlopen()ed (the host build is for the same
	# userland).
	pkgs=systemd,systemd-sysv,udev,kmod
	pkgs+=,libelf1,libkmod2,libzstd1,liblzma5,zlib1g,libjson-c5,libssl3,libdeflate0,libhogweed6
	# shellcheck source=../tests/kernel/debian-mirror.sh
	. "$top/tests/kernel/debian-mirror.sh"
	main_uri=$(debian_mirror main) || die "no Debian mirror in this machine's apt sources"
	sec_uri=$(debian_mirror security 2>/dev/null) || sec_uri=""
	key=$(printf '%s\n' bookworm minbase "$pkgs" "$main_uri" "$sec_uri" | sha256sum |
		cut -c1-16)
	root_tar=$cache/root-$key.tar
	if [ ! -s "$root_tar" ]; then
		echo "bench-boot: building the bookworm root ($pkgs) with mmdebstrap ..." >&2
		srcs=("deb $main_uri bookworm main" "deb $main_uri bookworm-updates main")
		[ -n "$sec_uri" ] && srcs+=("deb $sec_uri bookworm-security main")
		mmdebstrap --quiet --format=tar --variant=minbase --include="$pkgs" bookworm \
			"$root_tar.tmp" \
			"${srcs[@]}" || die "mmdebstrap failed"
		mv "$root_tar.tmp" "$root_tar"
	fi

	# 2. The root file system: the packages, the corpus modules, the kernel's config, System.map
	# and Module.symvers where an installed Debian kernel and its headers put them, kopolicy
	# (stripped, as a package installs it) with /etc/kopolicy/hook.conf from contrib/, the
	# bench's units, the modules-load.d list and hook-timer.
	root=$work/root
	rm -rf "$root"
	mkdir -p "$root"
	tar -C "$root" -xf "$root_tar"
	mkdir -p "$root/lib/modules/$rel" "$root/boot" "$root/usr/src/linux-headers-$rel"
	cp -a "$mods/kernel" "$root/lib/modules/$rel/"
	for f in modules.builtin modules.builtin.modinfo modules.order; do
		cp "$mods/$f" "$root/lib/modules/$rel/"
	done
	# the out-of-tree modules, where DKMS installs them (Debian: updates/dkms/)
	oot=$root/lib/modules/$rel/updates/dkms
	mkdir -p "$oot"
	sed 's/[[:space:]]*#.*//; /^$/d' "$here/out-of-tree.conf" >"$work/oot.list"
	while read -r m; do
		f=$top/fixtures/ko/$(cut -d. -f1-2 <<<"$rel")/$m.ko
		[ -s "$f" ] || die "out-of-tree.conf: no $f"
		[ "$(modinfo -F vermagic "$f" | cut -d' ' -f1)" = "$rel" ] ||
			die "out-of-tree.conf: $f is not built for $rel"
		install -m 644 "$f" "$oot/"
	done <"$work/oot.list"
	depmod -b "$root" "$rel"
	cp "$KP_CONFIG" "$root/boot/config-$rel"
	cp "$KP_SYSTEMMAP" "$root/boot/System.map-$rel"
	cp "$tree_symvers" "$root/usr/src/linux-headers-$rel/Module.symvers"
	strip -o "$root/usr/bin/kopolicy" "$kp"
	chmod 755 "$root/usr/bin/kopolicy"
	missing=$(chroot "$root" /usr/bin/ldd /usr/bin/kopolicy 2>&1 | grep 'not found' || true)
	[ -z "$missing" ] || die "kopolicy's libraries are missing in the root: $missing"
	# ... and those it dlopen()s on first use, which ldd does not see (its .note.dlopen)
	cached=$(chroot "$root" /sbin/ldconfig -p)
	for so in $("$top/tests/lib/dlopen-sonames.py" "$kp"); do
		grep -q "^[[:space:]]*$so " <<<"$cached" ||
			die "kopolicy dlopen()s $so: not in the root's ld.so.cache"
	done
	chroot "$root" /usr/bin/kopolicy --version >/dev/null ||
		die "kopolicy does not run in the root"
	mkdir -p "$root/etc/kopolicy" "$root/usr/local/lib/kpbench" "$root/var/cache/kopolicy"
	cp "$top/contrib/hook.conf" "$root/etc/kopolicy/hook.conf"
	gcc -O2 -Wall -Wextra -o "$root/usr/local/lib/kpbench/hook-timer" "$here/hook-timer.c"
	install -m 755 "$here/report.sh" "$root/usr/local/lib/kpbench/report.sh"
	install -m 644 "$here/zz-kopolicy.conf" "$here/zz-null.conf" "$here/zz-off.conf" \
		"$root/usr/local/lib/kpbench/"
	install -m 644 "$here/kpbench-hook.service" "$here/kpbench-nullhook.service" \
		"$here/kpbench-rules.service" "$here/kpbench-off.service" \
		"$here/kpbench-report.service" \
		"$root/etc/systemd/system/"
	mkdir -p "$root/etc/systemd/system/sysinit.target.wants" \
		"$root/etc/systemd/system/multi-user.target.wants"
	ln -sf ../kpbench-hook.service "$root/etc/systemd/system/sysinit.target.wants/"
	ln -sf ../kpbench-nullhook.service "$root/etc/systemd/system/sysinit.target.wants/"
	ln -sf ../kpbench-rules.service "$root/etc/systemd/system/sysinit.target.wants/"
	ln -sf ../kpbench-off.service "$root/etc/systemd/system/sysinit.target.wants/"
	ln -sf ../kpbench-report.service "$root/etc/systemd/system/multi-user.target.wants/"
	# the report owns the serial console: no login prompt on it
	ln -sf /dev/null "$root/etc/systemd/system/serial-getty@ttyS0.service"
	ln -sf /dev/null "$root/etc/systemd/system/getty@tty1.service"
	grep -v '^#' "$here/modules-load.conf" >"$root/etc/modules-load.d/kpbench.conf"
	cp "$work/oot.list" "$root/etc/modules-load.d/kpbench-oot.conf"
	mkdir -p "$root/etc/systemd/system/systemd-modules-load.service.d"
	install -m 644 "$here/timeouts.conf" \
		"$root/etc/systemd/system/systemd-modules-load.service.d/kpbench-timeouts.conf"
	echo "/dev/vda / ext4 rw,relatime 0 0" >"$root/etc/fstab"
	echo kpbench >"$root/etc/hostname"
	nmods=$(cat "$root"/etc/modules-load.d/kpbench*.conf | wc -l)
	while read -r m; do
		modprobe -d "$root" -S "$rel" -n -q "$m" 2>/dev/null ||
			die "modules-load.conf: $m is not a module of $rel"
	done < <(cat "$root"/etc/modules-load.d/kpbench*.conf)
	# The recommended deployment's rules, printed by the image's kopolicy for the image:
	# in the root (chroot: kopolicy names its own path, /proc/self/exe, in the lines), for
	# the guest's release (not the host's uname). hook-timer goes in front of kopolicy.
	mkdir -p "$root/proc"
	mount -t proc proc "$root/proc" || die "cannot mount proc in $root for the chroot"
	rc=0
	chroot "$root" /usr/bin/kopolicy hook --print-install-rules --kernel-release "$rel" \
		>"$work/print-install-rules.conf" 2>"$work/print-install-rules.err" || rc=$?
	umount "$root/proc"
	[ $rc = 0 ] || die "kopolicy hook --print-install-rules failed in the root (exit $rc):" \
		"$(cat "$work/print-install-rules.err")"
	timed='/usr/local/lib/kpbench/hook-timer /run/kpbench/hook.log /usr/bin/kopolicy hook '
	sed "s|^\\(install [^ ]* \\)/usr/bin/kopolicy hook |\\1$timed|" \
		"$work/print-install-rules.conf" >"$root/usr/local/lib/kpbench/zz-rules.conf"
	nrules=$(grep -c '^install ' "$work/print-install-rules.conf" || true)
	ntimed=$(grep -c "^install [^ ]* $timed" "$root/usr/local/lib/kpbench/zz-rules.conf" ||
		true)
	[ "$nrules" -ge 1 ] && [ "$nrules" = "$ntimed" ] ||
		die "kopolicy hook --print-install-rules printed $nrules install lines, not all of" \
			"the form 'install M /usr/bin/kopolicy hook ...': $work/print-install-rules.conf"
	cp "$work/print-install-rules.conf" "$root/usr/local/lib/kpbench/print-install-rules.conf"
	rm -f "$work/persistent"
	if [ "$persist" = 1 ]; then
		# -P: the rules where an installed system keeps them; the services only make
		# /run/kpbench (hook-timer's log), an off boot hides the rules under zz-off.conf
		install -m 644 "$root/usr/local/lib/kpbench/zz-rules.conf" \
			"$root/etc/modprobe.d/zz-kopolicy.conf"
		for unit in kpbench-rules kpbench-off; do
			mkdir -p "$root/etc/systemd/system/$unit.service.d"
			{
				printf '[Service]\nExecStart=\nExecStart=/bin/mkdir -p /run/kpbench\n'
				[ "$unit" = kpbench-rules ] || printf '%s %s %s\n' \
					'ExecStart=/bin/mount --bind' /usr/local/lib/kpbench/zz-off.conf \
					/etc/modprobe.d/zz-kopolicy.conf
			} >"$root/etc/systemd/system/$unit.service.d/persistent.conf"
		done
		: >"$work/persistent"
	fi
	: >"$work/off-service"
	# kopolicy's prediction for the out-of-tree modules loaded in the list's order into a
	# kernel with nothing of them loaded (the guest's hook judges each load against what is
	# loaded then, with /etc/kopolicy/hook.conf: its lines are the report's "hookmsg")
	rc=0
	# shellcheck disable=SC2046 # one word per module name
	"$kp" check -b "$root" --kernel-release "$rel" $(cat "$work/oot.list") \
		>"$work/oot-check.txt" 2>&1 || rc=$?
	echo "exit $rc" >>"$work/oot-check.txt"
	img=$work/root.img
	rm -f "$img"
	mkfs.ext4 -q -F -L kpbench -d "$root" "$img" 3G >/dev/null || die "mkfs.ext4 -d failed"

	# 3. The initramfs: static busybox, virtio_blk and ext4 with their dependencies
	# (decompressed), bench/boot/init.
	ird=$work/initramfs
	rm -rf "$ird"
	mkdir -p "$ird/bin" "$ird/dev" "$ird/proc" "$ird/sys" "$ird/newroot" "$ird/lib/modules"
	cp "$BUSYBOX" "$ird/bin/busybox"
	install -m 755 "$here/init" "$ird/init"
	mknod -m 600 "$ird/dev/console" c 5 1
	: >"$ird/modules.list"
	for m in virtio_blk ext4; do
		modprobe -d "$root" -S "$rel" --show-depends "$m" |
			awk '$1 == "insmod" { print $2 }'
	done | awk '!seen[$0]++' | while read -r ko; do
		b=$(basename "$ko")
		b=${b%.xz}
		xz -dc "$ko" >"$ird/lib/modules/$b" # --show-depends names the path under -d
		echo "$b" >>"$ird/modules.list"
	done
	initrd=$work/initrd.cpio
	(cd "$ird" && find . | LC_ALL=C sort | cpio --quiet -o -H newc) >"$initrd"
fi

# 4. The boots.
# shellcheck disable=SC2054 # the commas are QEMU's
qemu=(qemu-system-x86_64 -machine q35 -accel tcg -cpu max -smp "$SMP" -m "$MEM" -nographic
	-no-reboot -kernel "$KP_VMLINUZ" -initrd "$initrd"
	-netdev user,id=n0,restrict=on -device virtio-net-pci,netdev=n0,romfile=
	-netdev user,id=n1,restrict=on -device e1000e,netdev=n1,romfile=
	-device virtio-rng-pci -device virtio-balloon-pci -device virtio-serial-pci
	-device virtio-scsi-pci -device i6300esb
	-audiodev none,id=snd0 -device ich9-intel-hda -device hda-duplex,audiodev=snd0
	-device qemu-xhci -device usb-tablet -device usb-kbd
	-drive if=none,id=cd0,media=cdrom -device ide-cd,drive=cd0)
cmdline="console=ttyS0 root=/dev/vda rw quiet loglevel=4 systemd.show_status=0 panic=-1"
cmdline+=" trace_event=module:module_load trace_clock=mono"
# udevd kills an event's programs after udev.event_timeout (default 180 s): a TCG boot with
# hooked modprobes can come near that, both kinds of boot get the longer limit
cmdline+=" udev.event_timeout=1200"

tsv=$outdir/boots.tsv
printf 'boot\thook\twall_s\tqemu_user_s\tqemu_sys_s\tload1_before\tload1_after\tlog\n' >"$tsv"
failed=0
boot() { # NAME HOOK(0|1|null|rules) SNAPSHOT(on|off) [KERNEL ARGUMENT]
	local name=$1 hook=$2 snap=$3 extra=${4:-} log=$outdir/serial-$1.log w u y la0 la1 rc=0
	la0=$(cut -d' ' -f1 /proc/loadavg)
	echo "bench-boot: $(date -u +%H:%M:%S) boot $name (hook=$hook, load $la0) ..." >&2
	rm -f "$work/time"
	/usr/bin/time -o "$work/time" -f '%e %U %S' timeout --foreground -k 10 "$TIMEOUT" \
		"${qemu[@]}" -drive "file=$img,format=raw,if=virtio,snapshot=$snap" \
		-append "$cmdline kpbench.hook=$hook${extra:+ $extra}" </dev/null >"$log" 2>&1 ||
		rc=$?
	la1=$(cut -d' ' -f1 /proc/loadavg)
	w=nan u=nan y=nan
	[ -s "$work/time" ] && read -r w u y < <(tail -1 "$work/time")
	if [ $rc != 0 ] || ! grep -q KPBENCH-END "$log"; then
		echo "bench-boot: boot $name failed (exit $rc, no complete report in $log)" >&2
		failed=1
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$hook" "$w" "$u" "$y" "$la0" "$la1" \
		"serial-$name.log" >>"$tsv"
}
{
	echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host $(nproc) CPUs, $(uname -r), $(qemu-system-x86_64 --version | head -1)"
	echo "guest $rel, -smp $SMP -m $MEM, TCG, $nmods modules-load.d entries"
	echo "kinds ${order[*]}"
	echo "kopolicy $("$kp" --version | head -1)"
	echo "uptime $(uptime)"
} >"$outdir/setup.txt"

if [ "$reuse" = 0 ] || [ ! -e "$work/warmed" ]; then
	rm -f "$work/warmed"
	if [ "$persist" = 1 ]; then
		boot warmup rules off # the measured rules boots' command line, byte for byte
	else
		boot warmup 1 off kpbench.warmup=1
	fi
	[ "$failed" = 0 ] || die "the warm-up boot failed: $outdir/serial-warmup.log"
	: >"$work/warmed"
fi
# the rules the image's kopolicy printed, and its prediction for the out-of-tree modules
for f in print-install-rules.conf oot-check.txt; do
	if [ -e "$work/$f" ]; then cp "$work/$f" "$outdir/"; fi
done
declare -A hookarg=([off]=0 [on]=1 [null]=null [rules]=rules)
for i in $(seq 1 "$boots"); do
	if [ $((i % 2)) = 1 ]; then
		round=("${order[@]}")
	else
		round=()
		for ((j = ${#order[@]} - 1; j >= 0; j--)); do round+=("${order[j]}"); done
	fi
	for k in "${round[@]}"; do
		boot "$k-$i" "${hookarg[$k]}" on
	done
done
echo "uptime-after $(uptime)" >>"$outdir/setup.txt"
python3 "$here/parse-boot.py" "$outdir" | tee "$outdir/summary.txt" || failed=1
# raw.txt: the run in one file — setup, boots.tsv, the summary and every boot's report
{
	cat "$outdir/setup.txt"
	for f in print-install-rules.conf oot-check.txt; do
		[ -e "$outdir/$f" ] || continue
		echo
		echo "== $f"
		cat "$outdir/$f"
	done
	echo
	cat "$tsv"
	echo
	cat "$outdir/summary.txt"
	for log in "$outdir"/serial-*.log; do
		echo
		echo "== $(basename "$log")"
		tr -d '\r' <"$log" | sed -n '/KPBENCH-BEGIN/,/KPBENCH-END/p' |
			sed 's/^.*KPBENCH-BEGIN/KPBENCH-BEGIN/'
	done
} >"$outdir/raw.txt"
exit $failed
