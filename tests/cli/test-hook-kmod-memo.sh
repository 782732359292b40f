#!/usr/bin/env bash
# The hook's memo of libkmod's answers (cache/kmod-memo.h): a warm hook makes no libkmod call
# (KOPOLICY_CACHE_STATS: "opened 0 time(s)") and answers exactly as libkmod does (status,
# stdout, messages of -v: the chain, the blacklist, aliases, an install command, a name that
# resolves to nothing, symbol_get() owners); a changed input (a modprobe.d file changed, added
# or removed, depmod again, another kernel command line) is a miss with libkmod's new answer;
# a damaged, truncated, another user's or group-writable memo file is not believed.
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
conf=$r/etc/modprobe.d
hook_root "$r" kp_plain kp_nolicense kp_prop_prov kp_use_prop kp_gpl_prov kp_symget
# an install command for a module and for a name that is nothing else
printf 'install kp_plain /bin/true\ninstall kp-only-install /bin/true\n' >"$conf/install.conf"
# kp_symget's symbol_get() owner is loaded: libkmod is asked for its owner and its path
printf 'kp_gpl_prov 16384 0 - Live 0x0000000000000000\n' >"$r/proc/modules"
sigs=$tmp/cache/facts-v7/sigs

# hook NAME ARGS...: kopolicy hook -v, its status, stdout, messages and the libkmod counts
hook() {
	local name=$1
	shift
	KOPOLICY_CACHE_STATS=1 "$kp" hook -v --on-error fail-closed "$@" >"$tmp/$name.out" \
		2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
	sed -n 's/^kopolicy: libkmod: //p' "$tmp/$name.err" >"$tmp/$name.kmod"
	grep -v '^kopolicy: \(cache\|signatures\|base cache\|module BTF\|depmod indexes\|libkmod\):' \
		"$tmp/$name.err" >"$tmp/$name.msg"
}
ref() { KOPOLICY_CACHE=off hook "$@"; } # libkmod asked, nothing remembered
same() { # NAME NAME: the same status, stdout and messages
	cmp -s "$tmp/$1.rc" "$tmp/$2.rc" && cmp -s "$tmp/$1.out" "$tmp/$2.out" &&
		cmp -s "$tmp/$1.msg" "$tmp/$2.msg"
}
kmod() { cat "$tmp/$1.kmod"; }
opened() { sed -n 's/.*opened \([0-9]*\) time.*/\1/p' "$tmp/$1.kmod"; }
memos() { find "$sigs" -name 'kmod-*.memo' 2>/dev/null | sort; }

sleep 1.1 # a state changed less than a second before a run is not stored (fs-trust.h)
# name (what it shows): the chain with a dependency; an alias; an alias of a blacklisted
# module; a blacklisted module by name; an install command; a name with only one; nothing;
# a symbol_get() whose owner is loaded
cases="kp_use_prop kp-test-alias kp-bl-alias kp_nolicense kp_plain kp-only-install nothing-here
kp_symget"
for m in $cases; do
	ref "ref-$m" --root "$r" "$m"
	hook "cold-$m" --root "$r" "$m"
	hook "warm-$m" --root "$r" "$m"
	[ "$(opened "cold-$m")" -ge 1 ] && [ "$(opened "warm-$m")" = 0 ] &&
		same "ref-$m" "cold-$m" && same "ref-$m" "warm-$m"
	st=$?
	ok "$m: warm, no libkmod call ($(kmod "warm-$m")); the same answer as libkmod's" $st
done
grep -q "kp_nolicense.*blacklisted in modprobe.d" "$tmp/warm-kp_nolicense.err" &&
	grep -q "every module it names is blacklisted" "$tmp/warm-kp-bl-alias.err" &&
	grep -q "module kp_only_install has no file and is not built in" "$tmp/warm-kp-only-install.err" &&
	grep -q "module nothing-here not found" "$tmp/warm-nothing-here.err" &&
	[ "$(cat "$tmp/warm-nothing-here.rc")" = 2 ] &&
	grep -q "kp_plain kp-test-alias\|kp_plain extra/kp_plain.ko" "$tmp/warm-kp-test-alias.err"
ok "... replayed: the blacklist, an alias, an install command, a name that resolves to nothing" $?
# in a directory of their own (sigs/kmod/): what lists sigs/ on every run does not list them;
# `cache prune --max-size` and `cache clear` reach them there
[ -n "$(memos)" ] && [ -z "$(find "$sigs" -maxdepth 1 -name 'kmod-*.memo')" ] &&
	[ "$(memos | wc -l)" = "$(find "$sigs/kmod" -maxdepth 1 -name 'kmod-*.memo' | wc -l)" ]
st=$?
ok "the memo files in sigs/kmod/, none beside the verdict files ($(memos | wc -l))" $st
# the blacklist, the chain, five symbols' owners, one owner's path (one owner asked twice)
# (and what kmod_new() printed, for the tree and the chain)
is "kp_symget: its symbols' owners and a path asked of libkmod" "$(kmod cold-kp_symget)" \
	"1 answer(s) from the cache, 10 asked, opened 2 time(s); 1 stored, 0 refused"
is "... and replayed" "$(kmod warm-kp_symget)" \
	"11 answer(s) from the cache, 0 asked, opened 0 time(s); 0 stored, 0 refused"
[ "$(memos | wc -l)" = 8 ] && [ "$(stat -c %a "$(memos | head -1)")" = 644 ]
ok "one memo file per name asked, mode 0644" $?

# what libkmod prints when it parses modprobe.d (a bad line: once for the tree, once for the
# chain) printed on replay too
echo 'frobnicate kp_plain' >"$conf/bad.conf"
sleep 1.1
ref ref-bad --root "$r" kp_plain
hook cold-bad --root "$r" kp_plain
hook warm-bad --root "$r" kp_plain
[ "$(opened warm-bad)" = 0 ] && same ref-bad cold-bad && same ref-bad warm-bad &&
	[ "$(grep -c "bad.conf line 1: ignoring bad line starting with 'frobnicate'" \
		"$tmp/warm-bad.err")" = 2 ]
ok "libkmod's messages about a bad modprobe.d line: printed on replay as libkmod prints them" $?
rm "$conf/bad.conf"
# KMOD_LOG raises libkmod's log level (its info lines print pointers): never replayed
KMOD_LOG=info hook klog --root "$r" kp_plain
[ "$(opened klog)" -ge 1 ] && grep -q "^libkmod: .*ctx 0x" "$tmp/klog.err"
ok "KMOD_LOG set: libkmod asked, its own messages as it prints them" $?

# changed inputs: each a miss, libkmod's new answer, stored for the next call
# change NAME: after a change, libkmod asked again (cold) and the answer its own (ref), then
# replayed (warm)
change() {
	sleep 1.1
	ref "ref-$1" --root "$r" "${2:-kp_use_prop}"
	hook "miss-$1" --root "$r" "${2:-kp_use_prop}"
	hook "hit-$1" --root "$r" "${2:-kp_use_prop}"
	[ "$(opened "miss-$1")" -ge 1 ] && [ "$(opened "hit-$1")" = 0 ] &&
		same "ref-$1" "miss-$1" && same "ref-$1" "hit-$1"
}
echo 'blacklist kp_use_prop' >>"$conf/install.conf"
change edit
st=$?
ok "a modprobe.d file changed: a miss, libkmod's new answer ($(kmod miss-edit))" $st
grep -q "kp_use_prop.*blacklisted in modprobe.d" "$tmp/hit-edit.err" &&
	! grep -q "blacklisted in modprobe.d" "$tmp/warm-kp_use_prop.err"
ok "... the new blacklist line shows" $?
echo 'alias kp-new-alias kp_use_prop' >"$conf/new.conf"
change add kp-new-alias
ok "a modprobe.d file added: a miss, the new alias resolves" $?
echo 'alias kp-new-alias kp_plain' >"$r/etc/modprobe.d/a-first.alias" # *.alias: read too
change alias kp-new-alias
ok "a *.alias file added (kmod 30 reads them): a miss, libkmod's answer" $?
rm "$conf/new.conf" "$r/etc/modprobe.d/a-first.alias"
change remove kp-new-alias
st=$?
ok "modprobe.d files removed: a miss, the alias gone ($(cat "$tmp/hit-remove.rc"))" $st
mv "$conf/install.conf" "$conf/install.conf.off"
change rename
ok "a modprobe.d file renamed away: a miss" $?
mv "$conf/install.conf.off" "$conf/install.conf"
# a dependency's file gone without depmod (libkmod stat()s it by name: not in the key): the
# replay is refused, libkmod asked (its message names its context's address: masked)
sleep 1.1
hook dep-warm --root "$r" kp_use_prop
hook dep-warm2 --root "$r" kp_use_prop
mv "$md/extra/kp_prop_prov.ko" "$tmp/"
ref ref-gone --root "$r" kp_use_prop
hook gone --root "$r" kp_use_prop
mask() { sed 's/0x[0-9a-f]*/0x/g' "$tmp/$1.msg"; }
[ "$(opened dep-warm2)" = 0 ] && [ "$(opened gone)" -ge 1 ] &&
	cmp -s "$tmp/ref-gone.rc" "$tmp/gone.rc" && [ "$(mask ref-gone)" = "$(mask gone)" ] &&
	grep -q "dependencies of kp_use_prop" "$tmp/gone.err"
st=$?
ok "a dependency's file removed without depmod: not replayed, libkmod's answer ($(cat "$tmp/gone.rc"))" $st
# said as the missing file, without libkmod's "ctx=0x..." (an address, another every run)
gone="dependencies of kp_use_prop: $md/extra/kp_prop_prov.ko: no such module file inside"
gone="$gone the root (modules.dep names it; depmod again?)"
grep -qF "$gone" "$tmp/gone.err" && ! grep -q "ctx=0x" "$tmp/gone.err"
ok "... the line names the missing file, not libkmod's context address" $?
mv "$tmp/kp_prop_prov.ko" "$md/extra/"
hook back --root "$r" kp_use_prop
hook back2 --root "$r" kp_use_prop
[ "$(opened back)" -ge 1 ] && [ "$(opened back2)" = 0 ] && same dep-warm2 back &&
	same dep-warm2 back2
ok "... and back: libkmod asked (a failure recorded is never replayed), then replayed" $?
# depmod again: modules.dep.bin and modules.alias.bin replaced (a new module listed)
cp "$fx/kp_test.ko" "$md/extra/"
depmod -b "$r" "$rel" 2>/dev/null
change depmod kp_test
ok "depmod again (modules.dep.bin, modules.alias.bin replaced): a miss, the new module" $?
grep -q "kp_test extra/kp_test.ko" "$tmp/hit-depmod.err"
ok "... found" $?
# modules.dep.bin rewritten in place with the same bytes: its ctime moves, a miss
cp "$md/modules.dep.bin" "$tmp/dep.bin" && cat "$tmp/dep.bin" >"$md/modules.dep.bin"
change inplace kp_test
ok "modules.dep.bin written in place: a miss" $?

# the kernel command line libkmod parses is the host's /proc/cmdline, whatever the root
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null &&
	unshare -m true 2>/dev/null; then
	printf '%s modprobe.blacklist=kp_test\n' "$(cat /proc/cmdline)" >"$tmp/cmdline"
	cat >"$tmp/with-cmdline.sh" <<-'EOF'
		mount --bind "$1" /proc/cmdline || exit 99
		shift
		"$@"
	EOF
	sleep 1.1
	for t in ref-cl miss-cl hit-cl; do
		[ "$t" = ref-cl ] && export KOPOLICY_CACHE=off || unset KOPOLICY_CACHE
		KOPOLICY_CACHE_STATS=1 unshare -m bash "$tmp/with-cmdline.sh" "$tmp/cmdline" \
			"$kp" hook -v --on-error fail-closed --root "$r" kp_test \
			>"$tmp/$t.out" 2>"$tmp/$t.err"
		echo $? >"$tmp/$t.rc"
		sed -n 's/^kopolicy: libkmod: //p' "$tmp/$t.err" >"$tmp/$t.kmod"
		grep -v '^kopolicy: \(cache\|signatures\|base cache\|module BTF\|depmod indexes\|libkmod\):' \
			"$tmp/$t.err" >"$tmp/$t.msg"
	done
	unset KOPOLICY_CACHE
	[ "$(opened miss-cl)" -ge 1 ] && [ "$(opened hit-cl)" = 0 ] && same ref-cl miss-cl &&
		same ref-cl hit-cl && grep -q "kp_test.*blacklisted in modprobe.d" "$tmp/hit-cl.err"
	ok "another kernel command line (modprobe.blacklist=): a miss, libkmod's blacklist" $?
	hook back-cl --root "$r" kp_test
	same hit-depmod back-cl && [ "$(opened back-cl)" -ge 1 ]
	ok "... and back to the host's: a miss, not blacklisted" $?
else
	skip "another kernel command line: a miss" "needs root and unshare -m"
	skip "... and back" "needs root and unshare -m"
fi

# memo files not believed: a miss each time (counted refused), the same answer
sleep 1.1
ref refm --root "$r" kp_use_prop
hook fresh --root "$r" kp_use_prop
hook fresh2 --root "$r" kp_use_prop # stored by the first when the inputs were settled
# the memo file whose tag asks about NAME (kmod-memo.h: the tag's strings, the question last)
memo_of() {
	python3 - "$1" $(memos) <<'PY'
import struct, sys
for f in sys.argv[2:]:
    d = open(f, 'rb').read()
    off, strs = 20, []
    while True:
        n = struct.unpack('<I', d[off:off + 4])[0]
        off += 4
        if n == 0xffffffff:
            break
        strs.append(d[off:off + n])
        off += n + 1
    n = struct.unpack('<I', d[off:off + 4])[0]
    if d[off + 4:off + 4 + n] == sys.argv[1].encode():
        print(f)
PY
}
memo=$(memo_of kp_use_prop)
[ "$(opened fresh2)" = 0 ] && [ -f "$memo" ]
st=$?
ok "(the memo file of kp_use_prop: $(basename "$memo"))" $st
cp -p "$memo" "$tmp/memo.good"
refused() { # NAME: a miss, refused, libkmod's answer, and the memo written again
	hook "$1" --root "$r" kp_use_prop
	[ "$(opened "$1")" -ge 1 ] && grep -q "[1-9][0-9]* refused" "$tmp/$1.kmod" &&
		same refm "$1"
}
python3 - "$memo" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read()); d[len(d) // 2] ^= 0x20
open(sys.argv[1], 'wb').write(d)
PY
refused crc
ok "a damaged memo file (CRC): refused, libkmod asked, the same answer" $?
cmp -s "$memo" "$tmp/memo.good"
ok "... and written again, whole" $?
head -c 40 "$tmp/memo.good" >"$memo"
refused trunc
ok "a truncated memo file: refused, libkmod asked, the same answer" $?
# a well-formed file (CRC right) whose body is cut short: the parser refuses it
python3 - "$memo" <<'PY'
import struct, sys, zlib
d = open(sys.argv[1], 'rb').read()
body = d[16:-7]
open(sys.argv[1], 'wb').write(d[:8] + d[8:12] + struct.pack('<I', zlib.crc32(body)) + body)
PY
refused short
ok "a memo file cut short with a matching CRC: refused, the same answer" $?
chmod g+w "$memo"
refused gw
ok "a group-writable memo file: not believed" $?
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	cp -p "$tmp/memo.good" "$memo"
	chown nobody "$memo"
	refused nobody
	ok "a memo file owned by another user: not believed" $?
else
	skip "a memo file owned by another user: not believed" "needs root to chown"
fi
# a group-writable modprobe.d file: libkmod reads a private copy (modprobe-snapshot.h), never
# memoized
chmod g+w "$conf/install.conf"
sleep 1.1
hook gw1 --root "$r" kp_use_prop
hook gw2 --root "$r" kp_use_prop
[ "$(opened gw2)" -ge 1 ] && same refm gw2
st=$?
ok "a group-writable modprobe.d file: libkmod asked on every call ($(kmod gw2))" $st
chmod g-w "$conf/install.conf"

tap_done
