#!/usr/bin/env bash
# Signature verdicts cached with the facts (issue 28 item 1): `check -b ROOT` over a root whose
# kernel image holds the test key and whose tree holds the signed fixtures of tests/data/sig:
# a warm run verifies nothing again (KOPOLICY_CACHE_STATS) and says byte for byte what a run
# without any cache says; a changed kernel key verifies again.
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.12
sd=$top/tests/data/sig

# a root: the modules, Module.symvers and config, and a "vmlinux" holding the test certificate
r=$tmp/root
m=$r/lib/modules/$rel
mkdir -p "$m/kernel/sig" "$m/build" "$r/boot"
for f in kp_sig_sha256 kp_sig_unknown_key kp_sig_corrupted kp_sig_unsigned kp_sig_md5; do
	cp "$sd/6.12/$f.ko" "$m/kernel/sig/"
done
xz -c --check=crc32 "$sd/6.12/kp_sig_sha512_skid.ko" > "$m/kernel/sig/kp_sig_sha512_skid.ko.xz"
zcat "$fx/Module.symvers.gz" > "$m/build/Module.symvers"
zcat "$fx/config.gz" > "$r/boot/config-$rel"
image() { # certificate (DER): a raw image with it among other bytes
	{ head -c 4096 /dev/zero; cat "$1"; head -c 4096 /dev/zero; } > "$r/boot/vmlinux-$rel"
}
image "$sd/test-cert.der"

export KOPOLICY_CACHE_DIR=$tmp/cache KOPOLICY_RUN_CACHE=off
# (the signed fixtures are the same module, kp_plain, signed in different ways: the tree's
# later copies are "already loaded", which does not matter here)
sleep 1.1 # files changed within the last second are not stored (racy states: man FACTS CACHE)
run() { # name: check -b, output and stats kept
	KOPOLICY_CACHE_STATS=1 "$kp" check -b "$r" > "$tmp/$1.out" 2> "$tmp/$1.err"
	echo $? > "$tmp/$1.rc"
}
sigline() { grep '^kopolicy: signatures:' "$tmp/$1.err"; }

KOPOLICY_CACHE=off "$kp" check -b "$r" > "$tmp/nocache.out" 2> "$tmp/nocache.err"
echo $? > "$tmp/nocache.rc"
grep -q "trusted keys: kernel image $r/boot/vmlinux-$rel: 1 certificate" "$tmp/nocache.out" &&
	grep -q "kp_sig_corrupted.ko): E: bad-signature" "$tmp/nocache.out" &&
	! grep -q "kp_sig_sha256.ko): .*signature" "$tmp/nocache.out"
ok "without a cache: the key from the image, the good module clean, the corrupted one rejected" $?

run cold
sigline cold | grep \
	'^kopolicy: signatures: [1-9][0-9]* verified, .* [1-9][0-9]* to store; 0 kernel image(s) from the cache$' \
	>/dev/null
_st=$?
ok "cold: signatures verified with the key, verdicts to store ($(sigline cold))" $_st
run warm
sigline warm | grep \
	'^kopolicy: signatures: 1 verified, [1-9][0-9]* from the cache, 0 to store; 1 kernel image(s) from the cache$' \
	>/dev/null
ok "warm: only the bad signature verified again, the image's key from the cache ($(sigline \
	warm))" $?
grep -q "^kopolicy: cache: 6 hits" "$tmp/warm.err"
ok "warm: every module's facts from the cache" $?
cmp -s "$tmp/nocache.out" "$tmp/cold.out" && cmp -s "$tmp/nocache.out" "$tmp/warm.out" &&
	[ "$(cat "$tmp/nocache.rc")" = "$(cat "$tmp/warm.rc")" ] &&
	[ "$(cat "$tmp/nocache.rc")" = "$(cat "$tmp/cold.rc")" ]
ok "cold and warm output byte-identical to the uncached run, same exit status" $?
ls "$tmp/cache"/facts-v*/sigs/verdicts-*.memo \
	"$tmp/cache"/facts-v*/sigs/image-*.certs > /dev/null 2>&1
ok "verdicts and the image's certificates live in the facts directory" $?

# a changed kernel key: another certificate in the image verifies again (and fails)
openssl x509 -in "$sd/other-cert.pem" -outform DER -out "$tmp/other.der" 2> /dev/null
image "$tmp/other.der"
run rekeyed
sigline rekeyed | grep '^kopolicy: signatures: .* 0 kernel image(s) from the cache$' >/dev/null
ok "a changed image is read again" $?
grep -q "kp_sig_sha256.ko): W: signature-untrusted-key" "$tmp/rekeyed.out" &&
	! grep -q "kp_sig_sha256.ko): .*signature" "$tmp/warm.out"
ok "... and its key decides: the module signed by the old key is untrusted now" $?
KOPOLICY_CACHE=off "$kp" check -b "$r" > "$tmp/rekeyed-nocache.out" 2> /dev/null
cmp -s "$tmp/rekeyed.out" "$tmp/rekeyed-nocache.out"
ok "... byte-identical to the uncached run" $?

# the old key back: its verdicts still hold (the image's certificates, the module verdicts)
image "$sd/test-cert.der"
run back
sigline back | grep '^kopolicy: signatures: 1 verified, .* 1 kernel image(s) from the cache$' >/dev/null &&
	cmp -s "$tmp/nocache.out" "$tmp/back.out"
_st=$?
ok "the old key back: nothing verified again but the bad signature ($(sigline back))" $_st

# `cache clear` removes them with the packs
"$kp" cache clear > /dev/null 2>&1
! ls "$tmp/cache"/facts-v*/sigs > /dev/null 2>&1
ok "cache clear removes the verdicts" $?

tap_done
