#!/usr/bin/env bash
# The settle rule of the memos keyed by a file's state (util/fs-trust.h, kp_state_settled();
# man kopolicy, FACTS CACHE): a module or kernel image changed less than a second before the
# run read it is not stored by its state (KOPOLICY_CACHE_STATS, the sigs/ listing), the same
# files a second later are; a kernel image whose state does not name its bytes (group-
# writable) is not stored under the digest of its bytes either (the bytes hashed and the bytes
# read are two reads), and each run still finds its certificates.
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.12
sd=$top/tests/data/sig

# a root: two signed modules, Module.symvers and config, a "vmlinux" holding the test key
r=$tmp/root
m=$r/lib/modules/$rel
mkdir -p "$m/kernel/sig" "$m/build" "$r/boot"
cp "$sd/6.12/kp_sig_sha256.ko" "$m/kernel/sig/"
xz -c --check=crc32 "$sd/6.12/kp_sig_sha512_skid.ko" >"$m/kernel/sig/kp_sig_sha512_skid.ko.xz"
zcat "$fx/Module.symvers.gz" >"$m/build/Module.symvers"
zcat "$fx/config.gz" >"$r/boot/config-$rel"
img=$r/boot/vmlinux-$rel
{ head -c 4096 /dev/zero; cat "$sd/test-cert.der"; head -c 4096 /dev/zero; } >"$img"
chmod 644 "$img"
unset KOPOLICY_CACHE XDG_CACHE_HOME
export KOPOLICY_RUN_CACHE=off KOPOLICY_CACHE_STATS=1

run() { # name cache-dir: check -b, stderr kept
	KOPOLICY_CACHE_DIR=$2 "$kp" check -b "$r" >"$tmp/$1.out" 2>"$tmp/$1.err"
	echo $? >"$tmp/$1.rc"
}
cacheline() { grep '^kopolicy: cache: ' "$tmp/$1.err"; }
memos() { # cache-dir prefix: how many files of sigs/ start with prefix
	find "$1" -path '*/sigs/*' -name "$2*" | wc -l
}

# 1. every input changed now: read, answered, nothing stored by its state
touch "$m"/kernel/sig/* "$img"
run fresh "$tmp/c1"
cacheline fresh | grep '^kopolicy: cache: 0 hits (0 by stat), 2 misses, 0 stored, 0 refused$' >/dev/null
_st=$?
ok "modules changed just before the run: read, not stored ($(cacheline fresh))" $_st
is "kernel image changed just before the run: no certificates stored by its state" \
	"$(memos "$tmp/c1" istate-)" 0
grep -q "trusted keys: kernel image $img: 1 certificate" "$tmp/fresh.out"
ok "... its certificate still found" $?

# 2. the same files a second later: stored, and a warm run finds them
sleep 1.1
run settled "$tmp/c1"
cacheline settled | grep '^kopolicy: cache: 0 hits (0 by stat), 2 misses, 2 stored, 0 refused$' >/dev/null
_st=$?
ok "the same modules a second later: stored ($(cacheline settled))" $_st
is "... the image's certificates stored by its state" "$(memos "$tmp/c1" istate-)" 1
is "... and by its bytes" "$(memos "$tmp/c1" image-)" 1
run warm "$tmp/c1"
cacheline warm | grep '^kopolicy: cache: 2 hits (2 by stat), 0 misses, 0 stored, 0 refused$' >/dev/null &&
	grep -q '1 kernel image(s) from the cache$' "$tmp/warm.err"
ok "warm: the modules and the image from the cache" $?
cmp -s "$tmp/fresh.out" "$tmp/settled.out" && cmp -s "$tmp/fresh.out" "$tmp/warm.out"
ok "the three runs print the same" $?

# 3. a group-writable image: its state names no bytes, so nothing is stored for it, by its
# state or by its bytes (main stored it by the digest of bytes it then read a second time)
chmod 664 "$img"
sleep 1.1
run gw1 "$tmp/c2"
run gw2 "$tmp/c2"
is "group-writable image: nothing stored for it" \
	"$(($(memos "$tmp/c2" istate-) + $(memos "$tmp/c2" image-)))" 0
grep -q "trusted keys: kernel image $img: 1 certificate" "$tmp/gw2.out" &&
	grep -q '0 kernel image(s) from the cache$' "$tmp/gw2.err" &&
	cmp -s "$tmp/fresh.out" "$tmp/gw2.out"
ok "... read again by the next run: the same certificate, the same output" $?

tap_done
