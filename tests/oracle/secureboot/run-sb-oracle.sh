#!/bin/bash
# run-sb-oracle.sh - the Secure Boot oracle: boots Debian's signed 6.12 kernel the way a
# Secure Boot machine does (OVMF with Secure Boot on and Microsoft's keys, Debian's signed
# shim and grub, the signed vmlinuz), with test certificates put into db, dbx or MOK by
# virt-fw-vars, and loads the committed signature modules (fixtures/ko/6.12/sig/) with
# finit_module(2): what the kernel did goes to observed/<scenario>.json, replayed by
# tests/cli/sb-oracle-replay.sh in `make check`.
#
# usage: tests/oracle/secureboot/run-sb-oracle.sh [-o OUTDIR] SERIES [SCENARIO...]
#   SERIES: 6.12 (bookworm's 6.12.118+deb12-amd64) or 7.2 (sid's 7.2.13+deb14-amd64)
#
# Scenarios (scenarios.txt: name | varstore edits | extra command line | modules):
#   the varstore is a copy of OVMF_VARS_4M.ms.fd (Secure Boot on) or OVMF_VARS_4M.fd (off)
#   edited with virt-fw-vars: db=CERT (--add-db), mok=CERT (--add-mok), dbx-cert=CERT
#   (--add-dbx-cert), dbx-hash=MODULE (--add-dbx-hash of the module file's SHA-256).
# CERT is a file of tests/data/sig/; MODULE one of fixtures/ko/SERIES/sig/. A scenario may name
# the series it applies to after its name ("name@7.2"); without, it runs on every series.
#
# Needs root, qemu-system-x86, ovmf, shim-signed, grub-efi-amd64-signed, mtools, dosfstools,
# busybox-static, gcc, python3 and virt-fw-vars (python3-virt-firmware from trixie/sid:
# $VIRT_FW_VARS may name the script, $VIRT_FW_PYTHONPATH its library when only extracted).
# One TCG boot takes about a minute.
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "run-sb-oracle: error: line $LINENO: exit status $?" >&2' ERR

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
OUTDIR=
[ "${1:-}" = -o ] && { OUTDIR=$2; shift 2; }
SERIES=${1:?usage: run-sb-oracle.sh [-o OUTDIR] SERIES [SCENARIO...]}
shift
OUTDIR=${OUTDIR:-$HERE/observed/$SERIES}
FIX=$ROOT/fixtures/ko/$SERIES/sig
SIGDATA=$ROOT/tests/data/sig
TIMEOUT=${KP_ORACLE_TIMEOUT:-400}
VFW=${VIRT_FW_VARS:-virt-fw-vars}
die() { echo "run-sb-oracle: error: $*" >&2; exit 1; }
log() { echo "run-sb-oracle: $*" >&2; }

[ "$(id -u)" = 0 ] || die "must run as root"
for f in /usr/share/OVMF/OVMF_CODE_4M.ms.fd /usr/share/OVMF/OVMF_VARS_4M.ms.fd \
	/usr/share/OVMF/OVMF_VARS_4M.fd /usr/lib/shim/shimx64.efi.signed \
	/usr/lib/shim/mmx64.efi.signed /usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed; do
	[ -f "$f" ] || die "$f missing (apt-get install ovmf shim-signed grub-efi-amd64-signed)"
done
for t in qemu-system-x86_64 mkfs.vfat mcopy mmd cpio gcc python3; do
	command -v "$t" >/dev/null || die "$t not found"
done
eval "$("$ROOT/tests/kernel/fetch-kernel.sh" "$SERIES")"
grep -q "^release=$KP_ABI$" "$ROOT/fixtures/ko/$SERIES/kernel.txt" ||
	die "fixtures/ko/$SERIES was built for another ABI than $KP_ABI"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUTDIR"

# the base initramfs: static busybox, the loader
mkdir -p "$WORK/base/bin" "$WORK/base/dev" "$WORK/base/proc" "$WORK/base/sys" "$WORK/base/m"
cp /bin/busybox "$WORK/base/bin/busybox"
for a in sh mount cat echo dmesg poweroff ls; do ln -s busybox "$WORK/base/bin/$a"; done
gcc -static -O2 -o "$WORK/base/bin/loader" "$ROOT/tests/oracle/loader.c"
mknod -m 600 "$WORK/base/dev/console" c 5 1
cp "$FIX"/*.ko "$WORK/base/m/"

run_one() { # name edits cmdline modules
	local s=$1 edits=$2 cmdline=$3 mods=$4
	local vars=$WORK/$1.vars esp=$WORK/$1.esp st=$WORK/$1.stage
	local base=/usr/share/OVMF/OVMF_VARS_4M.ms.fd args=() e n=0 m
	for e in $edits; do
		case $e in
		sb=off) base=/usr/share/OVMF/OVMF_VARS_4M.fd ;;
		db=*) args+=(--add-db 605dab50-e046-4300-abb6-3dd810dd8b23 "$SIGDATA/${e#db=}") ;;
		mok=*) args+=(--add-mok 605dab50-e046-4300-abb6-3dd810dd8b23 "$SIGDATA/${e#mok=}") ;;
		dbx-cert=*) args+=(--add-dbx-cert 605dab50-e046-4300-abb6-3dd810dd8b23 "$SIGDATA/${e#dbx-cert=}") ;;
		dbx-hash=*) args+=(--add-dbx-hash 605dab50-e046-4300-abb6-3dd810dd8b23
			"$(sha256sum "$FIX/${e#dbx-hash=}" | cut -d' ' -f1)") ;;
		*) die "scenario $s: unknown varstore edit $e" ;;
		esac
	done
	if [ ${#args[@]} -gt 0 ]; then
		"$VFW" -i "$base" -o "$vars" "${args[@]}" >/dev/null
	else
		cp "$base" "$vars"
	fi
	# /init
	rm -rf "$st"
	cp -a "$WORK/base" "$st"
	{
		echo '#!/bin/busybox sh'
		echo 'export PATH=/bin'
		echo 'mount -t proc proc /proc; mount -t sysfs sysfs /sys'
		echo 'mount -t efivarfs efivarfs /sys/firmware/efi/efivars 2>/dev/null'
		echo "echo \"KPORACLE-BEGIN $s\""
		echo 'echo "KPUNAME $(uname -r)"'
		echo 'echo "KPCMDLINE $(cat /proc/cmdline)"'
		echo 'echo "KPSIGENFORCE $(cat /sys/module/module/parameters/sig_enforce)"'
		echo 'echo "KPLOCKDOWN $(cat /sys/kernel/security/lockdown 2>/dev/null)"'
		echo 'echo "KPEFIVARS $(ls /sys/firmware/efi/efivars 2>/dev/null | grep -c .)"'
		echo 'echo "KPGTAINT0 $(cat /proc/sys/kernel/tainted)"'
		echo 'dmesg | grep -iE "secure ?boot|Lockdown|MODSIGN|UEFI:|Loaded X.509|machine|platform|blacklist" | sed "s/^/KPBOOTLOG /"'
		echo 'ls /sys/firmware/efi/mok-variables 2>/dev/null | sed "s/^/KPMOKVAR /"'
		echo 'grep -E " keyring +\.| asymmetri " /proc/keys | sed "s/^[^ ]* [^ ]* *[^ ]* [^ ]* [^ ]* *[^ ]* *[^ ]* //; s/^/KPKEY /"'
		echo 'dmesg -c >/dev/null'
		for m in $mods; do
			n=$((n + 1))
			echo "echo \"KPSTEP-BEGIN $n $m.ko\""
			echo "/bin/loader /m/$m.ko"
			echo 'echo KPDMESG-BEGIN; dmesg -r -c; echo KPDMESG-END'
			echo 'for d in /sys/module/*; do [ -r "$d/taint" ] && echo "KPTAINT ${d##*/} $(cat "$d/taint")"; done'
			echo 'echo "KPGTAINT $(cat /proc/sys/kernel/tainted)"'
			echo "echo \"KPSTEP-END $n\""
		done
		echo 'echo KPORACLE-END'
		echo 'poweroff -f'
	} > "$st/init"
	chmod 755 "$st/init"
	(cd "$st" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) > "$WORK/$s.initrd"
	# the EFI system partition: shim as the removable-media loader, grub beside it, its config
	# where Debian's signed grub looks (EFI/debian/grub.cfg)
	rm -f "$esp"
	mkfs.vfat -C "$esp" 65536 >/dev/null
	mmd -i "$esp" ::/EFI ::/EFI/BOOT ::/EFI/debian
	mcopy -i "$esp" /usr/lib/shim/shimx64.efi.signed ::/EFI/BOOT/BOOTX64.EFI
	mcopy -i "$esp" /usr/lib/shim/mmx64.efi.signed ::/EFI/BOOT/mmx64.efi
	mcopy -i "$esp" /usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed ::/EFI/BOOT/grubx64.efi
	mcopy -i "$esp" "$KP_VMLINUZ" ::/vmlinuz
	mcopy -i "$esp" "$WORK/$s.initrd" ::/initrd
	printf 'set timeout=0\nmenuentry k {\n linux /vmlinuz console=ttyS0 panic=-1 loglevel=4 %s\n initrd /initrd\n}\n' \
		"$cmdline" > "$WORK/$s.cfg"
	mcopy -i "$esp" "$WORK/$s.cfg" ::/EFI/debian/grub.cfg
	mcopy -i "$esp" "$WORK/$s.cfg" ::/EFI/BOOT/grub.cfg
	log "booting $s"
	timeout --foreground -k 5 "$TIMEOUT" qemu-system-x86_64 -nographic -m 1024M -smp 1 -nic none \
		-no-reboot -accel tcg -cpu max -machine q35,smm=on \
		-global driver=cfi.pflash01,property=secure,value=on \
		-drive if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.ms.fd \
		-drive if=pflash,format=raw,unit=1,file="$vars" \
		-drive if=virtio,format=raw,file="$esp" </dev/null > "$WORK/$s.serial" 2>&1 || true
	python3 "$HERE/parse-sb-serial.py" "$WORK/$s.serial" "$s" "$edits" "$cmdline" "$mods" \
		> "$OUTDIR/$s.json" || { tail -40 "$WORK/$s.serial" >&2; return 1; }
	cp "$WORK/$s.serial" "${KP_SB_SERIAL_DIR:-$WORK}/$s.serial" 2>/dev/null || true
	log "$s -> $OUTDIR/$s.json"
}

while IFS='|' read -r name edits cmdline mods; do
	name=$(echo $name)
	case $name in '' | '#'*) continue ;; esac
	case $name in
	*@*) [ "${name#*@}" = "$SERIES" ] || continue; name=${name%@*} ;;
	esac
	if [ $# -gt 0 ]; then
		want=0
		for a in "$@"; do [ "$a" = "$name" ] && want=1; done
		[ $want = 1 ] || continue
	fi
	run_one "$name" "$(echo $edits)" "$(echo $cmdline)" "$(echo $mods)"
done < "$HERE/scenarios.txt"
