#!/usr/bin/env bash
# The hook's caches (issue 28): the vmlinux BTF mapped where it lies or from the base cache's
# checked copy, never read whole on a warm call, a damaged entry never changing the answer;
# signature verdicts and kernel-image certificates from the facts cache's memo (as check -b
# uses them); a relative --root taken from the current directory, as `modprobe -d` does.
# Every answer is compared byte for byte (status, stdout, stderr) with the uncached one.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
fx=$top/fixtures/ko/7.2
bx=$fx/btf
sd=$top/tests/data/sig
rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
. "$top/tests/lib/tap.sh"
PATH=$PATH:/sbin:/usr/sbin
if ! command -v depmod >/dev/null; then
	echo "1..0 # SKIP depmod (kmod) is not installed"
	exit 0
fi
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
export KOPOLICY_CACHE_DIR=$tmp/cache KOPOLICY_RUN_CACHE=off

# hook NAME ARGS...: kopolicy hook, its status, stdout and stderr kept as $tmp/NAME.*
hook() {
	local name=$1
	shift
	KOPOLICY_CACHE_STATS=1 "$kp" hook "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"
	echo $? > "$tmp/$name.rc"
	grep -v '^kopolicy: \(cache\|signatures\|base cache\|module BTF\|depmod indexes\|libkmod\)' \
		"$tmp/$name.err" > "$tmp/$name.msg"
}
same() { # NAME NAME: the same status, stdout and messages
	cmp -s "$tmp/$1.rc" "$tmp/$2.rc" && cmp -s "$tmp/$1.out" "$tmp/$2.out" &&
		cmp -s "$tmp/$1.msg" "$tmp/$2.msg"
}

# mkroot DIR FIXTURES RELEASE: a running system's root for the hook (as test-btf.sh)
mkroot() {
	local r=$1 f=$2 v=$3
	mkdir -p "$r/proc/sys/kernel" "$r/sys/kernel/btf" "$r/sys/module/module/parameters" \
		"$r/lib/modules/$v/build" "$r/lib/modules/$v/kernel"
	echo "$v" > "$r/proc/sys/kernel/osrelease"
	: > "$r/proc/modules"
	echo 0 > "$r/proc/sys/kernel/tainted"
	echo "root=/dev/sda1" > "$r/proc/cmdline"
	echo N > "$r/sys/module/module/parameters/sig_enforce"
	zcat "$f/config.gz" > "$r/lib/modules/$v/config"
	zcat "$f/Module.symvers.gz" > "$r/lib/modules/$v/build/Module.symvers"
}
# the 7.2 kernel with BTF: veth's .BTF does not match
r=$tmp/live
mkroot "$r" "$fx" "$rel"
xz -dc "$bx/vmlinux.btf.xz" > "$r/sys/kernel/btf/vmlinux"
mkdir -p "$r/lib/modules/$rel/kernel/drivers/net"
cp "$bx/btf_veth_shift.ko" "$r/lib/modules/$rel/kernel/drivers/net/veth.ko"
cp "$bx/btf_dummy_shift.ko" "$r/lib/modules/$rel/kernel/drivers/net/dummy.ko"
depmod -b "$r" "$rel" 2> /dev/null
# the 6.12 kernel, the signed fixtures
rel6=$(sed -n 's/^release=//p' "$top/fixtures/ko/6.12/kernel.txt")
r6=$tmp/sig
mkroot "$r6" "$top/fixtures/ko/6.12" "$rel6"
mkdir -p "$r6/lib/modules/$rel6/kernel/sig"
for f in kp_sig_sha256 kp_sig_corrupted; do
	cp "$sd/6.12/$f.ko" "$r6/lib/modules/$rel6/kernel/sig/"
done
depmod -b "$r6" "$rel6" 2> /dev/null
btf_len=$(stat -c %s "$r/sys/kernel/btf/vmlinux")
sleep 1.1 # states changed within the last second are not trusted (base-cache.h)

# 1. the vmlinux BTF
KOPOLICY_BASE_CACHE=off hook btf-off --root "$r" veth
grep -q "veth: warning: would fail to load with EINVAL: the module's .BTF does not validate" \
	"$tmp/btf-off.err"
ok "hook, no base cache: veth's .BTF judged against sys/kernel/btf/vmlinux" $?
hook btf-cold --root "$r" veth
hook btf-warm --root "$r" veth
same btf-off btf-cold && same btf-off btf-warm
ok "hook, base cache cold and warm: the same answer byte for byte" $?
grep -qE '^kopolicy: base cache: [3-9] hits, 0 misses, 0 stored, 0 refused$' "$tmp/btf-warm.err"
ok "... warm: every base from the cache, the BTF's entry used" $?
big=$(find "$tmp/cache/base-v1" -name '*.base' -size +$((btf_len / 1024))k | wc -l)
[ "$big" -eq 0 ]
ok "a raw BTF file: the entry keeps its index, not its $btf_len bytes (mapped where it lies)" $?
# KOPOLICY_CACHE_STATS of a hook whose module's BTF verdict was searched in the memo file
hit='^kopolicy: module BTF: 0 checked, 1 from the cache (1 searched in the memo file, not loaded)$'
# ... and of one that checked it (not in the file)
miss='^kopolicy: module BTF: 1 checked, 0 from the cache (0 searched in the memo file, not loaded)$'
# the module's own .BTF: judged once, then its verdict searched in the facts cache's memo
# file (cache/btf-memo.h: sorted records, not read whole), whose scope the BTF's entry holds
# (the 4.9 MB not hashed on a warm call)
grep -q "$miss" "$tmp/btf-cold.err"
ok "... cold: veth's .BTF checked, its verdict remembered" $?
grep -q "$hit" "$tmp/btf-warm.err"
ok "... warm: no module BTF checked, its verdict searched in the memo file" $?
KOPOLICY_CACHE=off hook btf-nofacts --root "$r" veth
same btf-off btf-nofacts && ! grep -q 'module BTF' "$tmp/btf-nofacts.err"
ok "... no facts cache: checked in the simulation, the same answer" $?
memo=$(find "$tmp/cache" -path '*/sigs/btf-*.memo' | head -1)
memocount() { python3 "$top/tests/cli/btf-memo-edit.py" count "$memo"; }
# check writes the memo, the hook searches check's verdicts: veth (its .BTF does not
# validate: EINVAL) and dummy (its shifted names still valid: loads), each hook answer byte
# for byte the uncached hook's, and a hook whose verdicts all came from the file writes nothing
rm -f "$memo"
KOPOLICY_CACHE_STATS=1 "$kp" check -f json --fail-on never --running --root "$r" \
	"$r/lib/modules/$rel/kernel/drivers/net/veth.ko" \
	"$r/lib/modules/$rel/kernel/drivers/net/dummy.ko" > "$tmp/chk.json" 2> "$tmp/chk.err"
python3 - "$tmp/chk.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = {x["name"]: x for x in d["modules"]}
sys.exit(not (not m["veth"]["loads"] and [f["id"] for f in m["veth"]["findings"]] ==
	      ["btf-mismatch"] and m["dummy"]["loads"]))
PY
st=$?
[ $st -eq 0 ] && grep -q '^kopolicy: module BTF: 2 checked, 0 from the cache$' "$tmp/chk.err" &&
	[ "$(memocount | tr ' ,' '\n\n' | sort -n | tr '\n' ' ')" = "-22 0 2 " ]
ok "check: veth fails (btf-mismatch), dummy loads, both verdicts in the memo (errno -22, 0)" $?
memo_was=$(stat -c '%i %Y' "$memo")
sleep 1.1
for m in veth dummy; do
	KOPOLICY_CACHE=off hook $m-fresh --root "$r" $m
	hook $m-memo --root "$r" $m
done
same veth-fresh veth-memo && same dummy-fresh dummy-memo &&
	grep -q "would fail to load with EINVAL: the module's .BTF does not validate" \
		"$tmp/veth-memo.err" && ! grep -q 'BTF' "$tmp/dummy-memo.msg" &&
	grep -q "$hit" "$tmp/veth-memo.err" &&
	grep -q "$hit" "$tmp/dummy-memo.err"
ok "hook: check's verdicts searched in the memo file, as uncached (veth EINVAL, dummy loads)" $?
[ "$(stat -c '%i %Y' "$memo")" = "$memo_was" ]
ok "... verdicts from the file only: the memo not written again" $?
# a memo of 80,000 verdicts (made up beside check's two): veth's first byte has ~300 records,
# more than one read takes, and the hook bisects them; still one verdict found, none loaded
cp "$memo" "$tmp/memo.small"
python3 "$top/tests/cli/btf-memo-edit.py" grow "$memo" 80000
hook veth-big --root "$r" veth
hook dummy-big --root "$r" dummy
same veth-fresh veth-big && same dummy-fresh dummy-big && grep -q "$hit" "$tmp/veth-big.err" &&
	grep -q "$hit" "$tmp/dummy-big.err" && [ "$(memocount | cut -d' ' -f1)" = 80002 ]
ok "a memo of 80,002 verdicts: veth's and dummy's found by bisection, the uncached answers" $?
cp "$tmp/memo.small" "$memo"
# damaged records (every verdict turned: veth's made "validates", dummy's EPERM; the records'
# CRCs not fixed): a miss, the module checked again, never the damaged verdict; the run's
# verdict stored, the damaged records dropped
python3 "$top/tests/cli/btf-memo-edit.py" flip "$memo"
hook veth-flip --root "$r" veth
same veth-fresh veth-flip &&
	grep -q "$miss" "$tmp/veth-flip.err"
ok "a damaged record (CRC mismatch): a miss, veth checked again, the uncached answer" $?
hook veth-flip2 --root "$r" veth
same veth-fresh veth-flip2 && grep -q '^kopolicy: module BTF: 0 checked, 1 from the cache' \
	"$tmp/veth-flip2.err" && [ "$(memocount)" = "1 -22" ]
ok "... the memo rewritten with veth's verdict (dummy's damaged record dropped), found next time" $?
hook dummy-flip --root "$r" dummy
same dummy-fresh dummy-flip &&
	grep -q "$miss" "$tmp/dummy-flip.err" &&
	[ "$(memocount | tr ' ,' '\n\n' | sort -n | tr '\n' ' ')" = "-22 0 2 " ]
ok "... dummy's damaged record (EPERM) a miss too: checked, loads, its verdict stored again" $?
# a forged memo: every verdict made "validates", the records' CRCs made again (a well-formed
# file). Owned by the cache's owner it is believed (the forgery works); owned by another
# user (as root) or writable by others (as a user), it is not: veth checked again
python3 "$top/tests/cli/btf-memo-edit.py" forge "$memo"
hook forged-own --root "$r" veth
! same btf-off forged-own && grep -q '^kopolicy: module BTF: 0 checked, 1 from the cache' \
	"$tmp/forged-own.err"
ok "a forged memo owned by the cache's owner: believed (the forgery is well formed)" $?
# a memo in a directory that is not trusted: as root, a cache owned by another user; as a
# user, a memo directory writable by others. The forged memo is never read
cp -a "$tmp/cache" "$tmp/ucache"
if [ "$(id -u)" -eq 0 ] && id nobody > /dev/null 2>&1; then
	chown -R nobody "$tmp/ucache"
else
	chmod 0777 "$tmp"/ucache/facts-v*/sigs
fi
KOPOLICY_CACHE_DIR=$tmp/ucache hook forged-dir --root "$r" veth
cmp -s "$tmp/btf-off.rc" "$tmp/forged-dir.rc" && cmp -s "$tmp/btf-off.out" "$tmp/forged-dir.out" &&
	grep -q "would fail to load with EINVAL: the module's .BTF does not validate" \
		"$tmp/forged-dir.err" && ! grep -q \
			'from the cache (1 searched' "$tmp/forged-dir.err"
ok "... in a directory not trusted (another user's cache, or writable by others): not read" $?
if [ "$(id -u)" -eq 0 ] && id nobody > /dev/null 2>&1; then
	chown nobody "$memo"
else
	chmod 0666 "$memo"
fi
hook forged --root "$r" veth
same btf-off forged && grep -q '^kopolicy: module BTF: 1 checked, 0 from the cache' \
	"$tmp/forged.err"
ok "... owned by another user or writable by others: not believed, veth checked again" $?
rm -f "$memo"
# a packed (xz) --vmlinux-btf cannot be mapped: the entry holds a checked copy
cp "$bx/vmlinux.btf.xz" "$tmp/vmlinux.btf.xz"
chmod 0644 "$tmp/vmlinux.btf.xz"
sleep 1.1
KOPOLICY_BASE_CACHE=off hook xz-off --root "$r" --vmlinux-btf "$tmp/vmlinux.btf.xz" veth
hook xz-cold --root "$r" --vmlinux-btf "$tmp/vmlinux.btf.xz" veth
hook xz-warm --root "$r" --vmlinux-btf "$tmp/vmlinux.btf.xz" veth
same xz-off xz-cold && same xz-off xz-warm
ok "--vmlinux-btf FILE.xz through the cache: the same answer" $?
copy=$(find "$tmp/cache/base-v1" -name '*.base' -size +$((btf_len / 1024))k | head -1)
[ -n "$copy" ]
ok "... its entry holds the BTF's bytes" $?
# veth's verdict in the memo: the kernel's BTF is not loaded at all, only its entry's header
# read for the memo's scope (kp_vmlinux_btf_peek_cached()): damage in the entry's copy is not
# even seen (nothing refused), the answer the same
flip() { python3 -c 'import sys
p, off = sys.argv[1], int(sys.argv[2])
with open(p, "r+b") as f:
    f.seek(off); b = f.read(1); f.seek(off); f.write(bytes([b[0] ^ 0x20]))' "$@"; }
flip "$copy" $(($(stat -c %s "$copy") / 2))
hook xz-lazy --root "$r" --vmlinux-btf "$tmp/vmlinux.btf.xz" veth
same xz-off xz-lazy && grep -q '^kopolicy: base cache: 3 hits, 0 misses, 0 stored, 0 refused$' \
	"$tmp/xz-lazy.err" && grep -q "$hit" "$tmp/xz-lazy.err"
ok "every verdict from the memo: the kernel's BTF not loaded (its damaged copy not seen)" $?
flip "$copy" $(($(stat -c %s "$copy") / 2))
# damage in the copy, the index and the header: refused (parsed again), the same answer. The
# module BTF memo removed before each call: with veth's verdict in it the BTF is not loaded
wrong=0
size=$(stat -c %s "$copy")
for off in 400 600 $((size / 3)) $((size / 2)) $((size - 9)); do
	[ -f "$copy" ] || break
	flip "$copy" "$off"
	rm -f "$tmp"/cache/facts-v*/sigs/btf-*.memo
	hook xz-damaged --root "$r" --vmlinux-btf "$tmp/vmlinux.btf.xz" veth
	same xz-off xz-damaged || wrong=$((wrong + 1))
	grep -q 'base cache:.* [1-9][0-9]* refused' "$tmp/xz-damaged.err" || wrong=$((wrong + 1))
	copy=$(find "$tmp/cache/base-v1" -name '*.base' -size +$((btf_len / 1024))k | head -1)
done
[ "$wrong" -eq 0 ]
ok "a damaged BTF entry (copy, index, header) is refused, the answer unchanged ($wrong wrong)" $?

# 2. signatures: --kernel-image holding the test key; the verdicts from the memo when warm
{ head -c 4096 /dev/zero; cat "$sd/test-cert.der"; head -c 4096 /dev/zero; } > "$tmp/vmlinux"
sleep 1.1
img=(-v --root "$r6" --kernel-image "$tmp/vmlinux")
KOPOLICY_CACHE=off hook sig-off "${img[@]}" kp_sig_sha256
hook sig-cold "${img[@]}" kp_sig_sha256
hook sig-warm "${img[@]}" kp_sig_sha256
grep -q '^kopolicy: signatures: 1 verified, 0 from the cache, 1 to store' "$tmp/sig-cold.err"
ok "hook, cold: the signature verified, its verdict stored" $?
grep -q '^kopolicy: signatures: 0 verified, 1 from the cache, 0 to store; 1 kernel image(s) from' \
	"$tmp/sig-warm.err"
ok "hook, warm: nothing verified, the image's key from the memo" $?
same sig-off sig-cold && same sig-off sig-warm
ok "... the same answer as without a cache" $?
KOPOLICY_CACHE=off hook bad-off -v --root "$r6" --kernel-image "$tmp/vmlinux" kp_sig_corrupted
hook bad-1 -v --root "$r6" --kernel-image "$tmp/vmlinux" kp_sig_corrupted
hook bad-2 -v --root "$r6" --kernel-image "$tmp/vmlinux" kp_sig_corrupted
grep -q '^kopolicy: signatures: 1 verified, 0 from the cache, 0 to store' "$tmp/bad-2.err" &&
	same bad-off bad-1 && same bad-off bad-2
ok "a signature that fails is verified again on every call, never stored" $?
# another key in the image: the module is not trusted any more (trust applied fresh)
openssl x509 -in "$sd/other-cert.pem" -outform DER -out "$tmp/other.der" 2> /dev/null
{ head -c 4096 /dev/zero; cat "$tmp/other.der"; head -c 4096 /dev/zero; } > "$tmp/vmlinux"
sleep 1.1
KOPOLICY_CACHE=off hook rekey-off -v --root "$r6" --kernel-image "$tmp/vmlinux" kp_sig_sha256
hook rekey -v --root "$r6" --kernel-image "$tmp/vmlinux" kp_sig_sha256
same rekey-off rekey && ! same sig-off rekey &&
	grep -q "kp_plain: loads, module taint OE$" "$tmp/rekey.err" &&
	grep -q "kp_plain: loads, module taint O$" "$tmp/sig-warm.err"
ok "a changed kernel key: the new key decides, as without a cache" $?

# 3. a relative --root, as modprobe -d: from the current directory, once
hook abs --root "$r" veth
(cd "$tmp" && KOPOLICY_CACHE_STATS=1 "$kp" hook --root live veth > rel.out 2> rel.err
	echo $? > rel.rc)
grep -v '^kopolicy: \(cache\|signatures\|base cache\|module BTF\|depmod indexes\|libkmod\)' "$tmp/rel.err" > "$tmp/rel.msg"
same abs rel && ! grep -q "no such module file" "$tmp/rel.err"
ok "--root live (relative): the same answer as --root $r" $?
(cd "$tmp/live/lib" && "$kp" hook -v --root ../../live veth > /dev/null 2> "$tmp/rel2.err")
grep -q "veth: warning: would fail to load with EINVAL" "$tmp/rel2.err"
ok "--root ../../live from a subdirectory: the modules found" $?

# 4. cache show / prune / clear account for the signature verdicts and the kernel bases
"$kp" cache show > "$tmp/show.out" 2>&1
grep -qE '^signature verdicts: [1-9][0-9]* \([1-9][0-9]* files, [1-9] kernel image\(s\)\)$' \
	"$tmp/show.out" &&
	grep -qE '^signature verdicts disk use: [1-9][0-9]* bytes' "$tmp/show.out" &&
	grep -qE '^memo files by kind: verdicts [1-9][0-9]*, kernel images [1-9][0-9]*, image states [0-9]+, module BTF [0-9]+, depmod indexes [1-9][0-9]*, libkmod answers [1-9][0-9]*$' "$tmp/show.out" &&
	grep -qE '^kernel bases: ([4-9]|[1-9][0-9]+)$' "$tmp/show.out" &&
	grep -qE '^kernel bases disk use: [1-9][0-9]{6,} bytes' "$tmp/show.out"
ok "cache show: the signature verdicts, the memo files by kind and kernel bases, counted with their disk use" $?
sed 's/^/#   /' "$tmp/show.out"
# a hit refreshes an entry's time (hourly at most): an entry used now outlives an older one
for e in "$tmp/cache"/base-v1/*.base; do touch -d '-3 hours' "$e"; done
hook lru --root "$r" veth
fresh=$(find "$tmp/cache/base-v1" -name '*.base' -mmin -60 | wc -l)
stale=$(find "$tmp/cache/base-v1" -name '*.base' -mmin +120 | wc -l)
[ "$fresh" -ge 2 ] && [ "$stale" -ge 1 ]
ok "a base cache hit refreshes its entry's time ($fresh used now, $stale not)" $?
"$kp" cache prune --max-size 8M > "$tmp/prune.out" 2>&1
bases=$(sed -n 's/^kernel bases: //p' "$tmp/prune.out")
bbytes=$(sed -n 's/^kernel bases disk use: \([0-9]*\) .*/\1/p' "$tmp/prune.out")
left=$(find "$tmp/cache/base-v1" -name '*.base' | wc -l)
[ "$bbytes" -le $((2 * 1024 * 1024)) ] && [ "$bases" = "$left" ] && [ "$left" -ge 1 ] &&
	[ "$(find "$tmp/cache/base-v1" -name '*.base' -mmin +120 | wc -l)" -eq 0 ] &&
	grep -qE '^signature verdicts: [1-9]' "$tmp/prune.out"
ok "cache prune --max-size 8M: kernel bases within 2M, least recently used first; verdicts kept" $?
sed 's/^/#   /' "$tmp/prune.out"
"$kp" cache prune --max-size 1K > "$tmp/prune2.out" 2>&1
grep -q '^signature verdicts: 0 (0 files, 0 kernel image(s))$' "$tmp/prune2.out" &&
	grep -q '^kernel bases: 0$' "$tmp/prune2.out" &&
	[ -z "$(ls "$tmp"/cache/facts-v*/sigs/ 2> /dev/null)" ]
ok "cache prune --max-size 1K: no verdict, no kernel base left" $?
hook sig-again --root "$r6" --kernel-image "$tmp/vmlinux" kp_sig_sha256
"$kp" cache clear > "$tmp/clear.out" 2>&1
grep -q '^signature verdicts: 0 (0 files, 0 kernel image(s))$' "$tmp/clear.out" &&
	grep -q '^kernel bases: 0$' "$tmp/clear.out" && [ ! -e "$tmp/cache/base-v1" ]
ok "cache clear: verdicts and kernel bases gone" $?

tap_done
