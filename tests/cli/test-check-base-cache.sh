#!/usr/bin/env bash
# check's kernel base through the base cache (lib/kernel/kernel-base-cached.h, issue 28): the
# -k Module.symvers and the --kernel-config parsed once, then mapped; the answer is the one
# --no-cache gives, byte for byte; an entry another user could have written, a damaged one, one
# whose index is forged (its CRC made to match), one renamed to another key and one of a file
# that changed since are refused or missed, never used.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
kp=$(cd "$(dirname "$kp")" && pwd)/$(basename "$kp")
. "$top/tests/lib/tap.sh"
tap_tmpdir
unset KOPOLICY_CACHE KOPOLICY_CACHE_MAX_SIZE KOPOLICY_BASE_CACHE XDG_CACHE_HOME
export KOPOLICY_RUN_CACHE=off KOPOLICY_CACHE_STATS=1 KOPOLICY_CACHE_DIR=$tmp/cache

mkdir -p "$tmp/fx" && cp "$top/fixtures/ko/6.1/"{Module.symvers.gz,config.gz,kp_plain.ko} "$tmp/fx/"
chmod -R go-w "$tmp/fx"
fx=$tmp/fx
rel=$(sed -n 's/^release=//p' "$top/fixtures/ko/6.1/kernel.txt")
sleep 1.1 # a file changed less than a second before a run is not trusted by its state
C=(check --format json -j1 -k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz"
	--kernel-release "$rel" "$fx/kp_plain.ko")
# run NAME ARGS...: stdout, stderr without the cache's counts, status, and the base cache's
# counts line in $tmp/NAME.{out,msg,rc,base}
run() {
	local name=$1
	shift
	"$kp" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
	grep -v '^kopolicy: \(cache\|signatures\|base cache\|module BTF\|depmod indexes\|libkmod\)' "$tmp/$name.err" \
		>"$tmp/$name.msg"
	grep '^kopolicy: base cache:' "$tmp/$name.err" >"$tmp/$name.base"
}
same() { # NAME REF: the same output, messages and status
	cmp -s "$tmp/$1.out" "$tmp/$2.out" && cmp -s "$tmp/$1.msg" "$tmp/$2.msg" &&
		cmp -s "$tmp/$1.rc" "$tmp/$2.rc"
}
base() { # NAME: the base cache's counts
	sed 's/^kopolicy: base cache: //' "$tmp/$1.base"
}
# entry KIND: the entry file whose key is of KIND (symvers-any, kconfig)
entry() {
	python3 - "$tmp/cache/base-v1" "$1" <<'EOF'
import os, sys
d, kind = sys.argv[1], sys.argv[2].encode()
for n in sorted(os.listdir(d)):
    if n.endswith('.base'):
        with open(os.path.join(d, n), 'rb') as f:
            if f.read(24 + 16)[24:].rstrip(b'\0') == kind:
                print(os.path.join(d, n))
EOF
}

run ref --no-cache "${C[@]}"
is "the reference run passes kp_plain (exit 0)" "$(cat "$tmp/ref.rc")" 0
[ ! -e "$tmp/cache/base-v1" ]
ok "--no-cache: no base cache made" $?

run cold "${C[@]}"
same cold ref
ok "cold: the reference's answer" $?
is "cold: Module.symvers and the config parsed and stored" "$(base cold)" \
	"0 hits, 2 misses, 2 stored, 0 refused"
sym=$(entry symvers-any)
[ -n "$sym" ] && [ -n "$(entry kconfig)" ]
ok "one entry for the symvers (kind symvers-any), one for the config" $?

run warm "${C[@]}"
same warm ref
ok "warm: the reference's answer byte for byte" $?
is "warm: both from the cache, nothing parsed" "$(base warm)" \
	"2 hits, 0 misses, 0 stored, 0 refused"

KOPOLICY_BASE_CACHE=off run off "${C[@]}"
same off ref && [ ! -s "$tmp/off.base" ]
ok "KOPOLICY_BASE_CACHE=off: not used, the same answer" $?

# an entry another user could have written is never believed (base-cache.h)
chmod g+w "$sym"
run gw "${C[@]}"
same gw ref
ok "a group-writable symvers entry: the reference's answer" $?
is "... refused and parsed again (stored anew)" "$(base gw)" "1 hits, 1 misses, 1 stored, 1 refused"
[ "$(stat -c %a "$sym")" = 644 ]
ok "... the entry written anew 0644" $?

if [ "$(id -u)" -eq 0 ]; then
	chown 65534 "$sym"
	run foreign "${C[@]}"
	same foreign ref
	ok "as root, an entry owned by another user: the reference's answer" $?
	is "... refused" "$(base foreign)" "1 hits, 1 misses, 1 stored, 1 refused"
else
	skip "as root, an entry owned by another user: the reference's answer" "not root"
	skip "... refused" "not root"
fi

# a damaged table (a name's bytes changed): found by its own checks, dropped, parsed again
python3 - "$sym" <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
i = b.find(b'msleep\0')
assert i > 0
b[i] ^= 0x20
open(p, 'wb').write(b)
EOF
run damaged "${C[@]}"
same damaged ref
ok "a damaged symvers entry: the reference's answer" $?
grep -qE '^kopolicy: base cache: 1 hits, 1 misses, 1 stored, 1 refused$' "$tmp/damaged.base"
ok "... refused, parsed and stored again" $?

# the symvers table's own damage and format (base-symtab.h: KPSYMTB3 after the 384-byte entry
# header): EDIT on the entry, then the reference's answer and the entry refused and stored anew
# symtab EDIT: edits $sym's table in place (python3; t: the table's bytes, n/s: record and slot
# counts, R: the records' start, S: the slots' start, crc32: zlib's, fix(): the slots' CRC
# stored anew)
symtab() {
	python3 - "$sym" "$1" <<'EOF2'
import struct, sys, zlib
p, edit = sys.argv[1], sys.argv[2]
b = bytearray(open(p, 'rb').read())
t = memoryview(b)[384:]
assert bytes(t[:8]) == b'KPSYMTB3'
n, s = struct.unpack_from('=II', t, 8)
R, S = 28, 28 + 36 * n
def fix():
    struct.pack_into("=I", t, 20, zlib.crc32(bytes(t[S:S + 4 * s])))
exec(edit)
open(p, 'wb').write(b)
EOF2
}
refused() { # NAME WHAT: the reference's answer, the symvers entry refused and stored again
	run "$1" "${C[@]}"
	same "$1" ref
	ok "$2: the reference's answer" $?
	is "... refused, parsed and stored again" "$(base "$1")" \
		"1 hits, 1 misses, 1 stored, 1 refused"
}
symtab 'struct.pack_into("=I", t, R + 36 * (n // 2) + 12, 0x12345678)'
refused rec-crc "a record's CRC field changed (the whole table's CRC catches it)"
symtab 't[R + 36 * 7 + 28] ^= 1'
refused rec-hash "a record's stored name hash changed"
symtab 't[0:8] = b"KPSYMTB2"'
refused old-magic "a table of the previous format (KPSYMTB2)"
python3 -c 'import os, sys; os.truncate(sys.argv[1], os.path.getsize(sys.argv[1]) - 100)' "$sym"
refused truncated "a truncated entry"
symtab 'i = next(j for j in range(s) if struct.unpack_from("=I", t, S + 4 * j)[0])
struct.pack_into("=I", t, S + 4 * i, n + 5)'
refused slot-out "a slot pointing past the records (its CRC not fixed)"
# a forged index, the slots' CRC made to match: a whole load answers its lookups from the
# table's index, so the index's structure is checked whole first (kp_bsymtab_check_index())
symtab 'i = next(j for j in range(s) if struct.unpack_from("=I", t, S + 4 * j)[0])
struct.pack_into("=I", t, S + 4 * i, n + 5)
fix()'
refused slot-out2 "a slot pointing past the records, its CRC fixed"
# msleep's slot moved to an empty slot two runs on (its CRC fixed): msleep would be unknown
symtab 'def slot(j): return struct.unpack_from("=I", t, S + 4 * j)
def name(r):
    o = S + 4 * s + struct.unpack_from("=I", t, R + 36 * (r - 1))[0]
    return bytes(t[o:o + 7])
i = next(j for j in range(s) if slot(j)[0] and name(slot(j)[0]) == b"msleep\0")
k = (i + 1) % s
while slot(k)[0]: k = (k + 1) % s
k = (k + 1) % s
while slot(k)[0]: k = (k + 1) % s
t[S + 4 * k:S + 4 * k + 4] = bytes(t[S + 4 * i:S + 4 * i + 4])
t[S + 4 * i:S + 4 * i + 4] = bytes(4)
fix()'
refused slot-moved "msleep's slot moved past an empty slot, its CRC fixed"

# a stale base: Module.symvers changed (msleep's CRC), the old entry renamed to the new key
zcat "$fx/Module.symvers.gz" | sed 's/^0x[0-9a-f]*\tmsleep\t/0x12345678\tmsleep\t/' |
	gzip -n >"$fx/new.gz"
chmod 644 "$fx/new.gz"
mv "$fx/new.gz" "$fx/Module.symvers.gz"
cp "$sym" "$tmp/old.base"
sleep 1.1
run ref2 --no-cache "${C[@]}"
is "the changed Module.symvers fails kp_plain (exit 1)" "$(cat "$tmp/ref2.rc")" 1
run stale "${C[@]}"
same stale ref2
ok "the changed Module.symvers: a miss, the new answer" $?
is "... parsed and stored" "$(base stale)" "1 hits, 1 misses, 1 stored, 0 refused"
new=$(entry symvers-any | grep -v "^$sym\$" | sed -n 1p)
[ -n "$new" ] && cp "$tmp/old.base" "$new"
ok "the old entry copied over the new key's file" $?
run renamed "${C[@]}"
same renamed ref2
ok "an entry renamed to another key: the new answer" $?
is "... refused (its header names another key)" "$(base renamed)" \
	"1 hits, 1 misses, 1 stored, 1 refused"

# a System.map given as -k is not Module.symvers: its start says so, it is not keyed (read and
# hashed whole) nor stored
printf 'ffffffff81000000 T _text\n' >"$fx/System.map"
sleep 1.1
run sysmap --no-cache check --format json -k "$fx/System.map" --kernel-release "$rel" \
	"$fx/kp_plain.ko"
run sysmap2 check --format json -k "$fx/System.map" --kernel-release "$rel" "$fx/kp_plain.ko"
same sysmap2 sysmap
ok "-k System.map through the cache: what --no-cache says" $?
is "... told by its first line: not looked up, nothing stored" "$(base sysmap2)" \
	"0 hits, 0 misses, 0 stored, 0 refused"

tap_done
