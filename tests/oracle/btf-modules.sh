#!/bin/bash
# btf-modules.sh - derive the module BTF oracle's modules from Debian's in-tree modules.
#
# usage: tests/oracle/btf-modules.sh MODULES_DEB ABI VMLINUX OUTDIR
#
#   MODULES_DEB  the package holding lib/modules/ABI/kernel/ (fetch-kernel.sh's KP_MODULES_DEB)
#   ABI          the kernel ABI (7.2.13+deb14-amd64)
#   VMLINUX      a vmlinux of that kernel with its .BTF (the headers' usr/src/linux-headers-ABI/
#                vmlinux)
#   OUTDIR       receives the modules, vmlinux.btf.xz (the kernel's BTF, raw, for replays) and
#                btf-source.txt (provenance); created, files replaced
#
# From kernel/drivers/net/veth.ko and dummy.ko (no dependencies, decompressed, Debian's
# signature removed: the kernel loads them unsigned with E) and tests/oracle/btf-shift.py:
#
#   btf_veth_unsigned.ko   veth as built: its .BTF matches the kernel's BTF
#   btf_veth_shift.ko      veth's own BTF name offsets moved by 8, as if it had been built
#                          against a vmlinux whose BTF strings were 8 bytes longer (a module
#                          of another build of the same kernel)
#   btf_dummy_shift.ko     the same for dummy: its shifted names still pass the kernel's checks
#
# Needs dpkg-deb, tar, xz, zstd, objcopy, python3.
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "btf-modules: error: line $LINENO: exit status $?" >&2' ERR

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { echo "btf-modules: error: $*" >&2; exit 1; }
[ $# -eq 4 ] || { sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
deb=$1 abi=$2 vmlinux=$3 out=$4
[ -f "$deb" ] || die "no package $deb"
[ -f "$vmlinux" ] || die "no vmlinux $vmlinux"
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for m in veth dummy; do
	rel=
	for p in usr/lib lib; do
		for ext in .ko.xz .ko.zst .ko; do
			f=./$p/modules/$abi/kernel/drivers/net/$m$ext
			if dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" "$f" 2>/dev/null; then
				rel=$f
				break 2
			fi
		done
	done
	[ -n "$rel" ] || die "$m.ko not in $deb"
	case $rel in
	*.xz) xz -dc "$tmp/$rel" >"$tmp/$m.ko" ;;
	*.zst) zstd -qdc "$tmp/$rel" >"$tmp/$m.ko" ;;
	*) cp "$tmp/$rel" "$tmp/$m.ko" ;;
	esac
done

objcopy -O binary --only-section=.BTF "$vmlinux" "$tmp/vmlinux.btf"
# struct btf_header: str_len at byte 20 (little-endian)
str_len=$(python3 -c 'import struct,sys; print(struct.unpack_from("<I", open(sys.argv[1],"rb").read(), 20)[0])' "$tmp/vmlinux.btf")
python3 "$here/btf-shift.py" "$tmp/veth.ko" "$out/btf_veth_unsigned.ko" "$str_len" 0 >/dev/null
python3 "$here/btf-shift.py" "$tmp/veth.ko" "$out/btf_veth_shift.ko" "$str_len" 8 >/dev/null
python3 "$here/btf-shift.py" "$tmp/dummy.ko" "$out/btf_dummy_shift.ko" "$str_len" 8 >/dev/null
xz -9 -c "$tmp/vmlinux.btf" >"$out/vmlinux.btf.xz"
{
	echo "package=${deb##*/}"
	echo "abi=$abi"
	echo "vmlinux_btf_str_len=$str_len"
	sha256sum "$out"/btf_*.ko "$out/vmlinux.btf.xz" | sed "s|$out/||"
} >"$out/btf-source.txt"
