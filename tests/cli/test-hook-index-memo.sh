#!/usr/bin/env bash
# The hook's depmod index memo (issue 28, cache/index-memo.h): an index that passed the walk
# in a file state that names its bytes is not walked (nor mapped) again; a changed index
# (depmod again, or a byte corrupted with its size and mtime put back: ctime moves) is
# walked again and a corrupt one refused exactly as without the cache; a group-writable
# index (libkmod then reads a private copy) is walked on every call; a memo file that is
# another user's or whose CRC does not match is not believed.
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/hook-root.sh"
PATH=$PATH:/sbin:/usr/sbin
if ! command -v depmod >/dev/null; then
	echo "1..0 # SKIP depmod (kmod) is not installed"
	exit 0
fi
tap_fixture 6.12
export KOPOLICY_CACHE_DIR=$tmp/cache KOPOLICY_RUN_CACHE=off
unset KOPOLICY_CACHE KOPOLICY_CACHE_STATS

r=$tmp/root
md=$r/lib/modules/$rel
hook_root "$r" kp_gpl_prov kp_plain
alias=$md/modules.alias.bin
sigs=$tmp/cache/facts-v7/sigs

# hook NAME ARGS...: kopolicy hook, its status, stdout, stderr and the index counts line
hook() {
	local name=$1
	shift
	KOPOLICY_CACHE_STATS=1 "$kp" hook "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
	sed -n 's/^kopolicy: depmod indexes: //p' "$tmp/$name.err" >"$tmp/$name.idx"
	grep -v '^kopolicy: \(cache\|signatures\|base cache\|module BTF\|depmod indexes\|libkmod\)' \
		"$tmp/$name.err" >"$tmp/$name.msg"
}
same() { # NAME NAME: the same status, stdout and messages
	cmp -s "$tmp/$1.rc" "$tmp/$2.rc" && cmp -s "$tmp/$1.out" "$tmp/$2.out" &&
		cmp -s "$tmp/$1.msg" "$tmp/$2.msg"
}
idx() { cat "$tmp/$1.idx"; }
# the memo file of the index @1 (by its device and inode, as index-memo.c names it)
memo_of() {
	printf '%s/index-%016x-%016x.memo' "$sigs" "$(stat -c %d "$1")" "$(stat -c %i "$1")"
}

sleep 1.1 # a state changed less than a second before a run is not stored (fs-trust.h)
# an alias (no such module): libkmod can reach modules.symbols.bin and modules.alias.bin
KOPOLICY_CACHE=off hook ref --root "$r" kp_plain
KOPOLICY_CACHE=off hook aref --root "$r" --on-error fail-closed some-alias
hook cold --root "$r" kp_plain
# modules.dep.bin, modules.builtin.bin, modules.builtin.alias.bin at open
is "cold: the three indexes libkmod opens walked, stored" "$(idx cold)" \
	"3 checked (3 to the cache), 0 from the cache"
hook warm --root "$r" kp_plain
is "warm: from the memo, not walked" "$(idx warm)" \
	"0 checked (0 to the cache), 3 from the cache"
same ref cold && same ref warm
ok "... the same answer as without the cache" $?
hook acold --root "$r" --on-error fail-closed some-alias
is "an alias, cold: modules.symbols.bin and modules.alias.bin walked and stored" \
	"$(idx acold)" "2 checked (2 to the cache), 3 from the cache"
hook awarm --root "$r" --on-error fail-closed some-alias
is "an alias, warm: all five from the memo" "$(idx awarm)" \
	"0 checked (0 to the cache), 5 from the cache"
same aref acold && same aref awarm
ok "... the same answer as without the cache" $?
if command -v strace >/dev/null; then
	KOPOLICY_CACHE_STATS=1 strace -f -y -e trace=mmap,read,pread64 -o "$tmp/strace" \
		"$kp" hook --root "$r" --on-error fail-closed some-alias >/dev/null 2>&1
	# the walk maps the index, libkmod reads it by name (read()): neither, warm (libkmod's
	# answer replayed from its own memo, cache/kmod-memo.h)
	! grep -q 'mmap(.*modules\.\(alias\|symbols\)\.bin>' "$tmp/strace" &&
		! grep -q 'read(.*modules\.alias\.bin>' "$tmp/strace"
	ok "warm (strace): modules.alias.bin and modules.symbols.bin neither mapped nor read" $?
else
	skip "warm (strace): modules.alias.bin not mapped" "strace is not installed"
fi
[ "$(find "$sigs" -name 'index-*.memo' | wc -l)" = 5 ] &&
	[ "$(stat -c %a "$(memo_of "$alias")")" = 644 ]
ok "one memo file per index, index-<dev>-<ino>.memo, mode 0644" $?

# depmod again: new files (new inodes), walked again
depmod -b "$r" "$rel" 2>/dev/null
sleep 1.1
hook dep --root "$r" --on-error fail-closed some-alias
is "depmod again: every index walked and stored again" "$(idx dep)" \
	"5 checked (5 to the cache), 0 from the cache"
same aref dep
ok "... the same answer" $?

# a corrupt modules.alias.bin, its size and mtime as before: ctime moved, walked, refused
cp -p "$alias" "$tmp/alias.good"
mtime=$(stat -c %y "$alias")
python3 - "$alias" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read()); d[8:12] = struct.pack('>I', 0x7ffffff0)
open(sys.argv[1], 'r+b').write(d)
PY
touch -d "$mtime" "$alias"
sleep 1.1
[ "$(stat -c '%s %y' "$alias")" = "$(stat -c '%s %y' "$tmp/alias.good")" ]
ok "the corrupt index has the good one's size and mtime" $?
KOPOLICY_CACHE=off hook bad-ref --root "$r" --on-error fail-closed some-alias
hook bad --root "$r" --on-error fail-closed some-alias
is "corrupt, same size and mtime: walked again, not from the memo" \
	"$(idx bad)" "1 checked (0 to the cache), 4 from the cache"
same bad-ref bad && [ "$(cat "$tmp/bad.rc")" = 2 ] &&
	grep -q "modules.alias.bin: corrupt depmod index: node offset 0x7ffffff0 out of the file" \
		"$tmp/bad.err"
ok "... refused as without the cache (fail-closed: exit 2, the reason)" $?
hook bad2 --root "$r" --on-error fail-closed some-alias
same bad-ref bad2
ok "... and on the next call (a failure is never stored)" $?

# forge INDEX: a memo file for INDEX's state as index-memo.c writes one (root's, intact)
forge() {
	python3 - "$1" "$(memo_of "$1")" "$("$kp" --version | cut -d' ' -f2)" <<'PY'
import os, struct, sys, zlib
st = os.stat(sys.argv[1])
tag = ("kopolicy depmod index state 1 " + sys.argv[3]).encode().ljust(48, b"\0")
state = struct.pack("<8Q", st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns // 10**9,
                    st.st_mtime_ns % 10**9, st.st_ctime_ns // 10**9, st.st_ctime_ns % 10**9,
                    st.st_mode)
body = tag + state
with open(sys.argv[2] + ".new", "wb") as f:
    f.write(b"KPIDXOK1" + struct.pack("<II", 1, zlib.crc32(body)) + body)
os.chmod(sys.argv[2] + ".new", 0o644)
os.replace(sys.argv[2] + ".new", sys.argv[2])
PY
}
# a forged memo for the corrupt state: believed only when it is root's (or ours) and intact
forge "$alias"
memo=$(memo_of "$alias")
cp "$memo" "$tmp/forged"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	chown nobody "$memo"
	hook nobody --root "$r" --on-error fail-closed some-alias
	same bad-ref nobody && [ "$(idx nobody)" = "1 checked (0 to the cache), 4 from the cache" ]
	ok "a memo file owned by another user: not believed, the corrupt index refused" $?
else
	skip "a memo file owned by another user: not believed" "needs root to chown"
fi
rm -f "$memo" && cp "$tmp/forged" "$memo" # root's again
python3 - "$memo" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read()); d[12] ^= 1
open(sys.argv[1], 'wb').write(d)
PY
hook badcrc --root "$r" --on-error fail-closed some-alias
same bad-ref badcrc && [ "$(idx badcrc)" = "1 checked (0 to the cache), 4 from the cache" ]
ok "a memo file whose CRC does not match: not believed, the corrupt index refused" $?
# what the owner and CRC alone keep out: the same forgery, root's and intact, is believed
# (shown on the good index: believed for the corrupt one, libkmod would read it)
cp -p "$tmp/alias.good" "$alias"
sleep 1.1
forge "$alias"
hook forged --root "$r" --on-error fail-closed some-alias
is "(the forgery is well-formed: root's and intact, believed; the index not walked)" \
	"$(idx forged)" "0 checked (0 to the cache), 5 from the cache"

# group-writable indexes: libkmod reads a private copy, walked on every call, never stored
depmod -b "$r" "$rel" 2>/dev/null
chmod g+w "$md"/modules.*.bin
sleep 1.1
hook gw1 --root "$r" --on-error fail-closed some-alias
hook gw2 --root "$r" --on-error fail-closed some-alias
[ "$(idx gw1)" = "5 checked (0 to the cache), 0 from the cache" ] &&
	[ "$(idx gw2)" = "5 checked (0 to the cache), 0 from the cache" ] && same aref gw2
ok "group-writable indexes: walked on every call, nothing stored, the same answer" $?

tap_done
