#!/usr/bin/env bash
# Exports whose names point outside __ksymtab_strings beyond one x86-64 entry
# (lib/read/exports.c, lib/sim/rules/export-name.c): armhf's absolute-pointer __ksymtab
# (tests/data/ksymtab-wild/armhf-6.12/libarc4.ko, R_ARM_ABS32 REL), more than one wild entry
# (the first in the order verify_exported_symbols() reads them is the one reported), arm64's
# PREL32 (tests/data/ksymtab-wild/arm64-6.12/libarc4.ko: reloc_data()'s s32 check), and the
# CRCs and __kflagstab bytes of the other entries, matched by their index in the table. Made by
# tests/lib/ksymtab-wild-arch.py (only relocation addends change). Before, the reader refused
# all of these but the x86-64 single entry ("fits no struct kernel_symbol layout", exit 2) and
# gave the entry after a wild one the wild one's CRC; arm64's overflow was reported only when
# no relocation of an unsupported type came anywhere (the kernel stops at the first refused one),
# and a name relocated against another symbol (undefined, or in another section) was exit 2.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
. "$top/tests/lib/tap.sh"
tap_tmpdir
tap_own_cache

wild() { python3 "$top/tests/lib/ksymtab-wild-arch.py" "$@" > /dev/null; }
. "$top/tests/lib/fixture-check.sh"

# --- armhf 6.12: absolute pointers, no overflow check: a warning, the module loads
fx=$top/tests/data/ksymtab-wild/armhf-6.12
rel=6.12.117+deb13-armmp
check_arm() { # OUT MODULE: check against the $fx set (Module.symvers is not gzipped)
	"$kp" check -f json --fail-on never -k "$fx/Module.symvers" --kernel-config "$fx/config.gz" \
		--kernel-release "$rel" "$2" > "$1" 2> "$1.err"
}
warn="m['loads'] and not m['oops'] and ids == ['kernel-oops']"
warn+=" and m['findings'][0]['severity'] == 'warning'"
warn+=" and 'an absolute pointer (R_ARM_ABS32)' in m['findings'][0]['message']"
warn+=" and 'not predicted' in m['findings'][0]['message']"

wild "$fx/libarc4.ko" "$tmp/a0.ko" __ksymtab 4=0x10000000
check_arm "$tmp/a0.json" "$tmp/a0.ko"
[ ! -s "$tmp/a0.json.err" ] && verdict "$tmp/a0.json" libarc4 "$warn and \
'the name of __ksymtab entry 0 points 0x10000000 bytes past the start of __ksymtab_strings' \
in m['findings'][0]['message']"
ok "armhf: entry 0 past its strings: a kernel-oops warning naming R_ARM_ABS32, it loads" $?

"$kp" info "$tmp/a0.ko" > "$tmp/a0.info" 2>&1
grep -q "^  exports (1):" "$tmp/a0.info" &&
	grep -q "^    arc4_setkey  plain  crc 0x2bb32ad1$" "$tmp/a0.info"
ok "armhf: the other export keeps its own CRC (__kcrctab entry 1)" $?

wild "$fx/libarc4.ko" "$tmp/a1.ko" __ksymtab 16=-0x20000000
check_arm "$tmp/a1.json" "$tmp/a1.ko"
verdict "$tmp/a1.json" libarc4 "$warn and \
'the name of __ksymtab entry 1 points 0x20000000 bytes before __ksymtab_strings' \
in m['findings'][0]['message']" &&
	"$kp" info "$tmp/a1.ko" | grep "^    arc4_crypt  plain  crc 0xcd47fcc4$" >/dev/null
ok "armhf: entry 1 before its strings: the warning names entry 1, arc4_crypt keeps its CRC" $?

wild "$fx/libarc4.ko" "$tmp/a01.ko" __ksymtab 4=-0x100 16=0x100
check_arm "$tmp/a01.json" "$tmp/a01.ko"
verdict "$tmp/a01.json" libarc4 "$warn and \
'the name of __ksymtab entry 0 points 0x100 bytes before __ksymtab_strings' \
in m['findings'][0]['message']" &&
	"$kp" info "$tmp/a01.ko" | grep "^  exports (0):" >/dev/null
ok "armhf: both entries wild: one warning, for entry 0 (read first), no exports" $?

"$kp" check -k "$fx/Module.symvers" --kernel-config "$fx/config.gz" --kernel-release "$rel" \
	"$tmp/a01.ko" > "$tmp/a01.txt" 2> "$tmp/a01.err"
[ $? -eq 0 ] && [ ! -s "$tmp/a01.err" ] &&
	grep -q "^  libarc4: W: kernel-oops: the name of __ksymtab entry 0 points" "$tmp/a01.txt"
ok "armhf text: the warning, exit status 0, nothing on stderr (was exit 2)" $?

# a name relocated against another symbol than __ksymtab_strings (symbol indices of the armhf
# file's .symtab: 35 __this_module, 40 the undefined __gnu_mcount_nc, 5 a .modinfo string):
# simplify_symbols() gives it that symbol's address, where verify_exported_symbols() and
# later lookups read the name. Before, all three were exit 2 ("fits no struct kernel_symbol")
wild "$fx/libarc4.ko" "$tmp/s0.ko" __ksymtab 4=12@35
check_arm "$tmp/s0.json" "$tmp/s0.ko"
[ ! -s "$tmp/s0.json.err" ] && verdict "$tmp/s0.json" libarc4 "m['loads'] and ids == []" &&
	"$kp" info "$tmp/s0.ko" > "$tmp/s0.info" 2>&1 && grep -q "^  exports (2):" "$tmp/s0.info" &&
	grep -q "^    libarc4  plain  crc 0xcd47fcc4$" "$tmp/s0.info" &&
	grep -q "^    arc4_setkey  plain  crc 0x2bb32ad1$" "$tmp/s0.info"
ok "armhf: entry 0's name in struct module's name (its own loaded bytes): export libarc4, loads" $?

wild "$fx/libarc4.ko" "$tmp/s1.ko" __ksymtab 16=0@40
check_arm "$tmp/s1.json" "$tmp/s1.ko"
[ ! -s "$tmp/s1.json.err" ] && verdict "$tmp/s1.json" libarc4 "m['loads'] and not m['oops'] \
and ids == ['kernel-oops'] and m['findings'][0]['severity'] == 'warning' and \
'; not predicted' in m['findings'][0]['message'] and \
'the name of __ksymtab entry 1 is relocated against the undefined symbol __gnu_mcount_nc, \
not into __ksymtab_strings' in m['findings'][0]['message']" &&
	"$kp" info "$tmp/s1.ko" | grep "^  exports (1):" >/dev/null
ok "armhf: entry 1's name an undefined symbol: a not-predicted warning naming it, one export" $?

wild "$fx/libarc4.ko" "$tmp/s2.ko" __ksymtab 4=0@5
"$kp" check -k "$fx/Module.symvers" --kernel-config "$fx/config.gz" --kernel-release "$rel" \
	"$tmp/s2.ko" > "$tmp/s2.txt" 2> "$tmp/s2.err"
[ $? -eq 0 ] && [ ! -s "$tmp/s2.err" ] && grep -q "^  libarc4: W: kernel-oops: the name of \
__ksymtab entry 0 is relocated against __UNIQUE_ID_license326 in .modinfo+0x0 (not copied \
into the module: read in the load-time copy, freed after the load)" "$tmp/s2.txt"
ok "armhf text: entry 0's name in .modinfo (not copied): the warning, exit status 0" $?

# a name in .text, which kopolicy does not read from every file (an uncompressed module is
# read sparse, a compressed one whole): the same warning both ways (was an export named by
# the code bytes when compressed)
wild "$fx/libarc4.ko" "$tmp/s3.ko" __ksymtab 4=0x40@1
xz -C crc32 -c "$tmp/s3.ko" > "$tmp/s3x.ko.xz"
sr=0
for f in s3.ko s3x.ko.xz; do
	check_arm "$tmp/$f.json" "$tmp/$f" && verdict "$tmp/$f.json" libarc4 "m['loads'] and \
ids == ['kernel-oops'] and m['findings'][0]['severity'] == 'warning' and 'the name of \
__ksymtab entry 0 is relocated against .text+0x40 (a section kopolicy does not read)' in \
m['findings'][0]['message']" && "$kp" info "$tmp/$f" | grep "^  exports (1):" >/dev/null || sr=1
done
ok "armhf: entry 0's name in .text: the same warning read sparse (.ko) and whole (.ko.xz)" $sr

# --- arm64 6.12: PREL32 (R_AARCH64_PREL32), reloc_data()'s s32 check in apply_relocate_add()
fx=$top/tests/data/ksymtab-wild/arm64-6.12
rel=6.12.117+deb13-arm64
wild "$fx/libarc4.ko" "$tmp/b0.ko" __ksymtab 4=0x10000000
check_arm "$tmp/b0.json" "$tmp/b0.ko"
[ ! -s "$tmp/b0.json.err" ] && verdict "$tmp/b0.json" libarc4 "m['loads'] and not m['oops'] \
and ids == ['kernel-oops'] and m['findings'][0]['severity'] == 'warning' and \
'entry 0 points 0x1000000d bytes past the start of __ksymtab_strings' in \
m['findings'][0]['message'] and 'a PREL32 offset (R_AARCH64_PREL32)' in \
m['findings'][0]['message'] and 'fits s32' not in m['findings'][0]['message']"
ok "arm64: 0x10000000 past its string: a kernel-oops warning naming R_AARCH64_PREL32, it loads" $?

# surely outside s32 (farther than 2 GiB + the module's size): -ENOEXEC with arm64's line
line="Modules: module libarc4: overflow in relocation type 261 val (__ksymtab_strings"
line+=" 0x90000000 bytes before)"
wild "$fx/libarc4.ko" "$tmp/b1.ko" __ksymtab 16=-0x90000000
check_arm "$tmp/b1.json" "$tmp/b1.ko"
verdict "$tmp/b1.json" libarc4 "not m['loads'] and not m['oops'] and m['errno'] == 'ENOEXEC' \
and ids == ['relocation-overflow'] and m['findings'][0]['severity'] == 'error' and \
'the name of __ksymtab entry 1 points 0x90000000 bytes before' in m['findings'][0]['message'] \
and m['messages'][-1] == '$line'"
ok "arm64: entry 1 0x90000000 before: relocation-overflow, ENOEXEC, arm64's line" $?

# apply_relocate_add() stops at the first relocation it refuses, of a type or a value, in
# apply_relocations()' order (relocation sections by index, entries in order): arm64's
# R_AARCH64_COPY (1024) is an unsupported type. Before, the overflow came after every type check.
retype() { # IN OUT RELSECTION INDEX TYPE: entry INDEX of the ELF64 LE RELA section gets TYPE
	python3 - "$@" <<'PY'
import struct, sys
src, dst, sec, idx, typ = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
d = bytearray(open(src, "rb").read())
shoff, = struct.unpack_from("<Q", d, 0x28)
ent, num, strndx = struct.unpack_from("<HHH", d, 0x3A)
secs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * ent) for i in range(num)]
names = secs[strndx][4]
s = [s for s in secs if d[names + s[0]:d.index(b"\0", names + s[0])] == sec.encode()][0]
off = s[4] + 24 * idx + 8
info, = struct.unpack_from("<Q", d, off)
struct.pack_into("<Q", d, off, (info >> 32) << 32 | typ)
open(dst, "wb").write(d)
PY
}
unsup="Modules: module libarc4: unsupported RELA relocation: 1024"
retype "$tmp/b1.ko" "$tmp/o1.ko" .rela__patchable_function_entries 0 1024
check_arm "$tmp/o1.json" "$tmp/o1.ko"
verdict "$tmp/o1.json" libarc4 "not m['loads'] and m['errno'] == 'ENOEXEC' \
and ids == ['relocation-overflow'] and m['messages'][-1] == '$line'"
ok "arm64: an unsupported type in a later relocation section: the name's overflow decides" $?

retype "$tmp/b1.ko" "$tmp/o2.ko" .rela__ksymtab 5 1024
check_arm "$tmp/o2.json" "$tmp/o2.ko"
verdict "$tmp/o2.json" libarc4 "not m['loads'] and m['errno'] == 'ENOEXEC' \
and ids == ['relocation-overflow'] and m['messages'][-1] == '$line'"
ok "arm64: an unsupported type after the name's relocation in .rela__ksymtab: the overflow" $?

retype "$tmp/b1.ko" "$tmp/o3.ko" .rela__ksymtab 3 1024
check_arm "$tmp/o3.json" "$tmp/o3.ko"
verdict "$tmp/o3.json" libarc4 "not m['loads'] and m['errno'] == 'ENOEXEC' \
and ids == ['unsupported-relocation'] and m['messages'][-1] == '$unsup' \
and 'entry 3 of .rela__ksymtab' in m['findings'][0]['message']"
ok "arm64: an unsupported type before the name's relocation: unsupported-relocation, its line" $?

# the same from the facts cache (the positions are cached with the module's facts): copies
# changed more than a second before the run (mtime and ctime), so that the first run stores
# their facts and the second reads them back
mkdir -p "$tmp/fc" && cp "$tmp/o2.ko" "$tmp/o3.ko" "$tmp/fc/" && touch -d @1700000000 "$tmp"/fc/*
sleep 1.2
fcr=0
for o in o2 o3; do
	KOPOLICY_CACHE_DIR=$tmp/fc/cache KOPOLICY_RUN_CACHE=off \
		check_arm "$tmp/fc/$o.cold" "$tmp/fc/$o.ko" &&
		KOPOLICY_CACHE_DIR=$tmp/fc/cache KOPOLICY_RUN_CACHE=off KOPOLICY_CACHE_STATS=1 \
			check_arm "$tmp/fc/$o.warm" "$tmp/fc/$o.ko" &&
		grep -q "^kopolicy: cache: 1 hits" "$tmp/fc/$o.warm.err" &&
		cmp -s "$tmp/fc/$o.cold" "$tmp/fc/$o.warm" || fcr=1
done
verdict "$tmp/fc/o3.warm" libarc4 "ids == ['unsupported-relocation']" &&
	verdict "$tmp/fc/o2.warm" libarc4 "ids == ['relocation-overflow']" || fcr=1
ok "arm64: the same two verdicts with the facts read back from the cache" $fcr

# within 2 GiB +- the module's size of the limit: a warning that says it may overflow
wild "$fx/libarc4.ko" "$tmp/b2.ko" __ksymtab 4=-0x80000000
check_arm "$tmp/b2.json" "$tmp/b2.ko"
verdict "$tmp/b2.json" libarc4 "m['loads'] and ids == ['kernel-oops'] \
and m['findings'][0]['severity'] == 'warning' and 'fits s32' in m['findings'][0]['message']"
ok "arm64: 0x7ffffff3 before (fits or not by the layout): a warning naming both outcomes" $?

# --- x86-64: two wild entries, the first in table order decides
use() { # SERIES
	fx=$top/fixtures/ko/$1
	rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
}
oops="not m['loads'] and m['oops'] and ids == ['kernel-oops']"
oops+=" and m['findings'][0]['severity'] == 'error'"

use 7.2
wild "$fx/kp_absent_prov.ko" "$tmp/x01.ko" __ksymtab 4=-0x60000000 16=-0x100
check "$tmp/x01.json" "$tmp/x01.ko"
[ ! -s "$tmp/x01.json.err" ] && verdict "$tmp/x01.json" kp_absent_prov "$oops and \
'the name of __ksymtab entry 0 points 0x60000000 bytes before' in m['findings'][0]['message']"
ok "7.2 x86-64: entry 0 in the hole, entry 1 near: the oops at entry 0" $?

wild "$fx/kp_absent_prov.ko" "$tmp/x10.ko" __ksymtab 4=-0x10 16=-0x60000000
check "$tmp/x10.json" "$tmp/x10.ko"
verdict "$tmp/x10.json" kp_absent_prov "m['loads'] and not m['oops'] and ids == ['kernel-oops'] \
and m['findings'][0]['severity'] == 'warning' and \
'the name of __ksymtab entry 0 points 0x10 bytes before' in m['findings'][0]['message']"
ok "7.2 x86-64: entry 0 near (read first, not predicted), entry 1 in the hole: a warning" $?

# __kflagstab (7.2): entry 1's flag byte stays entry 1's when entry 0 is wild (as before)
python3 - "$fx/kp_absent_prov.ko" "$tmp/f.ko" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
shoff, = struct.unpack_from("<Q", d, 0x28)
ent, num, strndx = struct.unpack_from("<HHH", d, 0x3A)
secs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * ent) for i in range(num)]
names = secs[strndx][4]
for s in secs:
    if d[names + s[0]:d.index(b"\0", names + s[0])] == b"__kflagstab":
        d[s[4] + 1] = 1  # entry 1 (kp_absent_last) GPL-only
open(sys.argv[2], "wb").write(d)
PY
wild "$tmp/f.ko" "$tmp/f0.ko" __ksymtab 4=-0x10
"$kp" info "$tmp/f.ko" | grep "^    kp_absent_last  GPL-only$" >/dev/null &&
	"$kp" info "$tmp/f0.ko" > "$tmp/f0.info" 2>&1 && grep -q "^  exports (1):" "$tmp/f0.info" &&
	grep -q "^    kp_absent_last  GPL-only$" "$tmp/f0.info"
ok "7.2 x86-64: entry 0 wild, entry 1's __kflagstab GPL bit kept" $?

# __kcrctab (6.12): the entry after a wild one keeps its own CRC (was the wild one's)
use 6.12
wild "$fx/kp_absent_prov.ko" "$tmp/c0.ko" __ksymtab 4=-0x60000000
"$kp" info "$tmp/c0.ko" | grep "^    kp_absent_last  plain  crc 0xd1bc9059$" >/dev/null
ok "6.12 x86-64: entry 0 wild, kp_absent_last keeps its CRC 0xd1bc9059" $?

tap_done
