#!/usr/bin/env bash
# Module signatures verified against the kernel's keys (tests/data/sig, made by its gen.sh):
# info's signer/key id/hash/verification, check's outcomes per kernel, enforced and not.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
sd=$top/tests/data/sig
. "$top/tests/lib/tap.sh"
tap_tmpdir

json() { python3 -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }
kern() { # version: the fixture kernel's options
	local fx=$top/fixtures/ko/$1
	echo "-k $fx/Module.symvers.gz --kernel-config $fx/config.gz --kernel-release" \
		"$(sed -n 's/^release=//p' "$fx/kernel.txt")"
}
# check one module: version, module, extra options...; writes $tmp/c.json
chk() {
	local v=$1 m=$2
	shift 2
	# shellcheck disable=SC2046
	"$kp" check -f json --fail-on never $(kern "$v") "$@" "$sd/$v/$m.ko" > "$tmp/c.json"
}
# the one module's outcome: loads, errno, taint, finding ids
is() { json "$tmp/c.json" \
	"[(m['loads'],m['errno'],m['taint'],[f['id'] for f in m['findings']]) for m in d['modules']]==[$1]"; }

# info: signer, key id, hash, verification against which key
"$kp" info --json --trusted-cert "$sd/test-cert.pem" "$sd/6.12/kp_sig_sha256.ko" \
	"$sd/6.12/kp_sig_sha512_skid.ko" "$sd/6.12/kp_sig_unknown_key.ko" \
	"$sd/6.12/kp_sig_corrupted.ko" "$sd/6.12/kp_sig_garbled.ko" \
	"$sd/6.12/kp_sig_authattrs.ko" "$sd/6.12/kp_sig_unsigned.ko" > "$tmp/i.json"
ok "info --trusted-cert exits 0" $?
json "$tmp/i.json" \
	"[m['signature']['verification']['result'] for m in d['modules'][:6]]==['verified','verified','no-trusted-key','bad-signature','malformed','malformed'] and d['modules'][6]['signature'] is None"
ok "info: verified, verified, no key, bad signature, malformed x2, unsigned" $?
json "$tmp/i.json" \
	"(lambda s: (s['signer'],s['key_id'],s['hash_algo'],s['pkey_algo'],s['verification']['key'],s['verification']['key_source'],s['verification']['keyring']))(d['modules'][0]['signature'])==('kopolicy throwaway test key','serial:697afe2721f9ee94740b0507ffe6075ba77400ec','sha256','rsa','kopolicy throwaway test key','$sd/test-cert.pem','--trusted-cert')"
ok "info: signer, issuer+serial key id, sha256/rsa, the verifying key and its source" $?
json "$tmp/i.json" \
	"(lambda s: (s['signer'],s['key_id'],s['hash_algo']))(d['modules'][1]['signature'])==(None,'skid:6759b7f66244e26283c0ec1047f9ccd226be9ac8','sha512')"
ok "info: a SKID signer (sign-file -k), sha512" $?
json "$tmp/i.json" \
	"[(m['signature']['pkcs7_error'],m['signature']['pkcs7_note']) for m in d['modules'][4:6]]==[('EBADMSG','the PKCS#7 message cannot be parsed'),('EKEYREJECTED','PKCS7: S/MIME Caps only allowed with Authenticode')]"
ok "info: malformed messages say why, with the kernel's errno" $?
json "$tmp/i.json" "d['key_sources']==['--trusted-cert $sd/test-cert.pem: 1 certificate']"
ok "info --json names the key source" $?
"$kp" info --trusted-cert "$sd/test-cert.der" "$sd/6.12/kp_sig_sha512_skid.ko" > "$tmp/i.txt"
[ "$(head -1 "$tmp/i.txt")" = "trusted keys: --trusted-cert $sd/test-cert.der: 1 certificate" ]
ok "info text names the key source first" $?
grep -q "^  verifies:        yes, against 'kopolicy throwaway test key' 6759b7f66244e26283c0ec1047f9ccd226be9ac8 ($sd/test-cert.der)$" "$tmp/i.txt"
ok "info text, DER certificate" $?
"$kp" info "$sd/6.12/kp_sig_sha256.ko" > "$tmp/i.txt"
grep -q "^  verifies:        not checked: no key source" "$tmp/i.txt" &&
	grep -q "^  hash:            sha256, rsa$" "$tmp/i.txt"
ok "info without keys: hash shown, not checked" $?
"$kp" info --trusted-cert "$sd/6.12/kp_sig_sha256.ko" "$sd/6.12/kp_sig_sha256.ko" \
	2> "$tmp/e.txt" >/dev/null
ok "a --trusted-cert that holds no certificate exits 2" $(( $? == 2 ? 0 : 1 ))
grep -q "^kopolicy: $sd/6.12/kp_sig_sha256.ko: no X.509 certificate (PEM or DER) in this file$" \
	"$tmp/e.txt"
ok "... with one line naming the file" $?

"$kp" check $(kern 6.12) --trusted-cert "$tmp/none.pem" "$sd/6.12/kp_sig_sha256.ko" \
	> /dev/null 2> "$tmp/e.txt"
ok "check: a missing --trusted-cert exits 2" $(( $? == 2 ? 0 : 1 ))
grep -q "^kopolicy: $tmp/none.pem: cannot open: No such file or directory$" "$tmp/e.txt"
ok "... naming the file" $?

# check, 6.12, not enforced: E for an unknown key and unsupported crypto (md5 in 6.12)
T=(--trusted-cert "$sd/test-cert.pem")
chk 6.12 kp_sig_sha256 "${T[@]}"; is "(True,None,'O',[])"
ok "6.12: a module signed by a trusted key loads without E" $?
json "$tmp/c.json" \
	"d['kernel']['key_sources']==['--trusted-cert $sd/test-cert.pem: 1 certificate'] and not any('no key source' in a for a in d['kernel']['assumptions'])"
ok "6.12: the key source is named, nothing assumed about signatures" $?
chk 6.12 kp_sig_sha512_skid "${T[@]}"; is "(True,None,'O',[])"
ok "6.12: SKID signer, sha512: verifies" $?
chk 6.12 kp_sig_unknown_key "${T[@]}"; is "(True,None,'OE',['signature-untrusted-key'])"
ok "6.12: unknown key, unenforced: loads with E" $?
json "$tmp/c.json" \
	"(lambda f: (f['severity'],f['consequence']))(d['modules'][0]['findings'][0])==('warning','taint') and 'kp_plain: module verification failed: signature and/or required key missing - tainting kernel' in d['modules'][0]['messages']"
ok "6.12: ... a taint warning and the kernel's E line" $?
chk 6.12 kp_sig_md5 "${T[@]}"; is "(True,None,'OE',[])"
ok "6.12: md5 is unsupported crypto (ENOPKG): E" $?
chk 6.12 kp_sig_unsigned "${T[@]}"; is "(True,None,'OE',[])"
ok "6.12: unsigned: E" $?
chk 6.12 kp_sig_corrupted "${T[@]}"; is "(False,'EKEYREJECTED','',['bad-signature'])"
ok "6.12: corrupted signature: EKEYREJECTED even unenforced" $?
chk 6.12 kp_sig_wrong_hash "${T[@]}"; is "(False,'EKEYREJECTED','',['bad-signature'])"
ok "6.12: module changed after signing (digest mismatch): EKEYREJECTED" $?
chk 6.12 kp_sig_garbled "${T[@]}"; is "(False,'EBADMSG','',['bad-signature'])"
ok "6.12: unparsable PKCS#7: EBADMSG" $?
# sig_len 64 bytes too large: the blob starts inside the ELF (oracle sig_dummy_long_siglen)
chk 6.12 kp_sig_long_siglen "${T[@]}"; is "(False,'EBADMSG','',['bad-signature'])"
ok "6.12: a sig_len reaching into the ELF: EBADMSG, under the module's name (not an input error)" $?
chk 6.12 kp_sig_long_siglen "${T[@]}" --sig-enforce; is "(False,'EBADMSG','',['bad-signature'])"
ok "6.12: ... the same enforced" $?
chk 6.12 kp_sig_pgp_long_siglen "${T[@]}"; is "(True,None,'OE',[])"
ok "6.12: the same with id_type PGP: -ENOPKG, loads unsigned with E" $?
json "$tmp/c.json" \
	"d['modules'][0]['messages'][0]=='module: not signed with expected PKCS#7 message'"
ok "6.12: ... after the kernel's PKCS#7 line" $?
chk 6.1 kp_sig_long_siglen "${T[@]}"; is "(False,'EBADMSG','',['bad-signature'])"
ok "6.1: a sig_len reaching into the ELF: EBADMSG" $?
xz -c "$sd/6.12/kp_sig_long_siglen.ko" > "$tmp/long.ko.xz"
# shellcheck disable=SC2046
"$kp" check -f json --fail-on never $(kern 6.12) "${T[@]}" "$tmp/long.ko.xz" > "$tmp/c.json"
is "(False,'EBADMSG','',['bad-signature'])"
ok "6.12: ... the same read from a .ko.xz (whole image in memory)" $?
chk 6.12 kp_sig_authattrs "${T[@]}"; is "(False,'EKEYREJECTED','',['bad-signature'])"
ok "6.12: authenticated attributes: EKEYREJECTED" $?
json "$tmp/c.json" \
	"'PKCS7: S/MIME Caps only allowed with Authenticode' in d['modules'][0]['messages']"
ok "6.12: ... with the kernel's warning (openssl cms adds S/MIME capabilities; oracle sig_dummy_authattrs)" $?
chk 6.12 kp_sig_corrupted
is "(True,None,'O',[])"
ok "6.12 without keys: today's assumption (a corrupted signature is not noticed)" $?
json "$tmp/c.json" \
	"any('no key source' in a for a in d['kernel']['assumptions']) and d['kernel']['key_sources']==[]"
ok "... and it says so" $?

# enforced
chk 6.12 kp_sig_sha256 "${T[@]}" --sig-enforce; is "(True,None,'O',[])"
ok "6.12 enforced: trusted key loads" $?
chk 6.12 kp_sig_unknown_key "${T[@]}" --sig-enforce; is \
	"(False,'EKEYREJECTED','',['signature-untrusted-key'])"
ok "6.12 enforced: unknown key refused (EKEYREJECTED)" $?
json "$tmp/c.json" \
	"d['modules'][0]['messages']==['Loading of module with unavailable key is rejected']"
ok "6.12 enforced: ... with the kernel's line" $?
chk 6.12 kp_sig_unsigned "${T[@]}" --sig-enforce; is \
	"(False,'EKEYREJECTED','',['signature-required'])"
ok "6.12 enforced: unsigned refused" $?
chk 6.12 kp_sig_md5 "${T[@]}" --sig-enforce; is "(False,'EKEYREJECTED','',['signature-required'])"
ok "6.12 enforced: unsupported crypto refused" $?
chk 6.12 kp_sig_unknown_key "${T[@]}" --lockdown; is "(False,'EPERM','',['lockdown'])"
ok "6.12 lockdown: unknown key refused (EPERM)" $?

# 6.1: md5 still parsed and verified
chk 6.1 kp_sig_md5 "${T[@]}"; is "(True,None,'O',[])"
ok "6.1: md5 verifies (the 6.1 parser knows md5)" $?
chk 6.1 kp_sig_unknown_key "${T[@]}" --sig-enforce; is \
	"(False,'EKEYREJECTED','',['signature-untrusted-key'])"
ok "6.1 enforced: unknown key refused" $?
chk 6.1 kp_sig_unknown_key "${T[@]}"; is "(True,None,'OE',['signature-untrusted-key'])"
ok "6.1: unknown key loads with E" $?

# kernel images: the certificates compiled in (a vmlinux-like blob, a bzImage with xz payload)
python3 - "$sd/test-cert.der" "$tmp" <<'PY'
import lzma, os, struct, sys
cert = open(sys.argv[1], 'rb').read()
raw = b'\x7fELF' + bytes(4096) + b'\x30\x82junk' + cert + bytes(1000)
open(os.path.join(sys.argv[2], 'vmlinux'), 'wb').write(raw)
xz = lzma.compress(raw, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32)
hdr = bytearray(1024)
hdr[0x1f1] = 1  # setup_sects: the payload starts after 2 * 512 bytes
hdr[0x202:0x206] = b'HdrS'
payload = xz + struct.pack('<I', len(raw))
hdr[0x248:0x250] = struct.pack('<II', 0, len(payload))
open(os.path.join(sys.argv[2], 'vmlinuz'), 'wb').write(bytes(hdr) + payload)
PY
chk 6.12 kp_sig_sha256 --kernel-image "$tmp/vmlinux" --sig-enforce; is "(True,None,'O',[])"
ok "--kernel-image vmlinux: the certificate in it verifies" $?
json "$tmp/c.json" "d['kernel']['key_sources']==['kernel image $tmp/vmlinux: 1 certificate']"
ok "... named as the key source" $?
chk 6.12 kp_sig_unknown_key --kernel-image "$tmp/vmlinuz" --sig-enforce
is "(False,'EKEYREJECTED','',['signature-untrusted-key'])"
ok "--kernel-image bzImage (xz payload): an unknown key is refused" $?
json "$tmp/c.json" "d['kernel']['key_sources']==['kernel image $tmp/vmlinuz: 1 certificate']"
ok "... the certificate was found in the decompressed payload" $?
head -c $(( $(stat -c %s "$tmp/vmlinuz") - 100 )) "$tmp/vmlinuz" > "$tmp/vmlinuz.trunc"
"$kp" info --kernel-image "$tmp/vmlinuz.trunc" "$sd/6.12/kp_sig_sha256.ko" \
	> /dev/null 2> "$tmp/e.txt"
ok "a truncated bzImage exits 2" $(( $? == 2 ? 0 : 1 ))
grep -q "^kopolicy: $tmp/vmlinuz.trunc: truncated bzImage: its payload lies past the end of the file$" "$tmp/e.txt"
ok "... naming the file and the problem" $?
# an image with its xz payload inside (an arm zImage without its header) half written
python3 - "$tmp" <<'PY'
import lzma, os, sys
raw = open(os.path.join(sys.argv[1], 'vmlinux'), 'rb').read() + bytes(range(256)) * 4096
xz = lzma.compress(raw, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32)
img = b'\0\x08\0\0' + bytes(4092) + xz + bytes(4096)
open(os.path.join(sys.argv[1], 'zimage'), 'wb').write(img)
open(os.path.join(sys.argv[1], 'zimage.cut'), 'wb').write(img[:4096 + len(xz) // 2])
PY
chk 6.12 kp_sig_sha256 --kernel-image "$tmp/zimage" --sig-enforce; is "(True,None,'O',[])"
ok "--kernel-image with an xz payload inside: the certificate in it verifies" $?
chk 6.12 kp_sig_sha256 --kernel-image "$tmp/zimage.cut" --sig-enforce 2> "$tmp/e.txt"
ok "... the image cut in its payload: exit 2" $(( $? == 2 ? 0 : 1 ))
[ ! -s "$tmp/c.json" ] && [ "$(wc -l < "$tmp/e.txt")" = 1 ] &&
	grep -q "^kopolicy: $tmp/zimage.cut: truncated image: its xz payload ends with the file (xz: truncated xz stream)$" "$tmp/e.txt"
ok "... one line naming the image and the problem, no module reported (not 0 certificates)" $?
# a zstd payload as kbuild writes it (no content size, the 4-byte size after it): streamed
if command -v zstd > /dev/null; then
	python3 - "$tmp" <<'PY'
import os, struct, sys
raw = open(os.path.join(sys.argv[1], 'vmlinux'), 'rb').read() + bytes(3 << 20)
open(os.path.join(sys.argv[1], 'raw'), 'wb').write(raw)
PY
	zstd -q -19 --no-content-size -c "$tmp/raw" > "$tmp/raw.zst"
	python3 - "$tmp" <<'PY'
import os, struct, sys
d = sys.argv[1]
z = open(os.path.join(d, 'raw.zst'), 'rb').read()
n = os.path.getsize(os.path.join(d, 'raw'))
def image(name, payload):
	hdr = bytearray(1024)
	hdr[0x1f1] = 1
	hdr[0x202:0x206] = b'HdrS'
	payload += struct.pack('<I', n)
	hdr[0x248:0x250] = struct.pack('<II', 0, len(payload))
	open(os.path.join(d, name), 'wb').write(bytes(hdr) + payload)
image('vmlinuz.zst', z)
bad = bytearray(z)
for i in range(len(bad) // 2, len(bad) // 2 + 32):
	bad[i] ^= 0x5a
image('vmlinuz.zst.bad', bytes(bad))
PY
	chk 6.12 kp_sig_sha256 --kernel-image "$tmp/vmlinuz.zst" --sig-enforce
	is "(True,None,'O',[])"
	ok "--kernel-image bzImage (zstd payload): the certificate in it verifies" $?
	json "$tmp/c.json" \
		"d['kernel']['key_sources']==['kernel image $tmp/vmlinuz.zst: 1 certificate']"
	ok "... found in the payload streamed from the file" $?
	"$kp" info --kernel-image "$tmp/vmlinuz.zst.bad" "$sd/6.12/kp_sig_sha256.ko" > /dev/null \
		2> "$tmp/e.txt"
	ok "a corrupt zstd bzImage exits 2" $(( $? == 2 ? 0 : 1 ))
	[ "$(wc -l < "$tmp/e.txt")" = 1 ] && grep -q \
		"^kopolicy: $tmp/vmlinuz.zst.bad: zstd: " "$tmp/e.txt"
	_st=$?
	ok "... one line naming the file and the problem ($(cat "$tmp/e.txt"))" $_st
else
	for i in 1 2 3 4; do echo "ok $((n + i)) # SKIP no zstd command"; done
	n=$((n + 4))
fi
chk 6.12 kp_sig_sha256 --kernel-image "$sd/6.12/kp_sig_unsigned.ko"; is "(True,None,'O',[])"
ok "an image without certificates: no keys, today's assumption" $?
json "$tmp/c.json" \
	"d['kernel']['key_sources']==['kernel image $sd/6.12/kp_sig_unsigned.ko: 0 certificates'] and any('no key source' in a for a in d['kernel']['assumptions'])"
ok "... and both are said" $?

# the running kernel's keyrings as /proc/keys lists them (descriptions only)
mkdir -p "$tmp/root/proc"
cat > "$tmp/root/proc/keys" <<'KEYS'
06dea733 I------     1 perm 1f0b0000     0     0 keyring   .builtin_trusted_keys: 1
1a2b3c4d I------     1 perm 1f010000     0     0 asymmetri kopolicy throwaway test key: 6759b7f66244e26283c0ec1047f9ccd226be9ac8 X509.rsa 26be9ac8 []
3aca7501 I------     1 perm 0f0b0000     0     0 keyring   .blacklist: empty
KEYS
mkdir -p "$tmp/root/proc/sys/kernel"
echo 6.12.118+deb12-amd64 > "$tmp/root/proc/sys/kernel/osrelease"
: > "$tmp/root/proc/modules"
# shellcheck disable=SC2046
run() { "$kp" check -f json --fail-on never $(kern 6.12) --running --root \
	"$tmp/root" "$@" > "$tmp/c.json"; }
run --sig-enforce "$sd/6.12/kp_sig_sha512_skid.ko"; is "(True,None,'O',['signature-assumed'])"
ok "/proc/keys: a SKID signer matching a listed key id is assumed to verify (no certificate)" $?
json "$tmp/c.json" \
	"d['kernel']['key_sources']==['$tmp/root/proc/keys: 1 asymmetric key (descriptions only: key ids, no certificates), 0 blacklisted module hashes']"
ok "... /proc/keys is named as the key source" $?
run --sig-enforce "$sd/6.12/kp_sig_unknown_key.ko"; is \
	"(False,'EKEYREJECTED','',['signature-untrusted-key'])"
ok "/proc/keys: a signer no listed key matches is refused enforced" $?
run --sig-enforce --trusted-cert "$sd/test-cert.pem" "$sd/6.12/kp_sig_corrupted.ko"
is "(False,'EKEYREJECTED','',['bad-signature'])"
ok "/proc/keys plus the certificate: the certificate verifies (and rejects)" $?
run --sig-enforce --no-kernel-keys "$sd/6.12/kp_sig_unknown_key.ko"; is "(True,None,'O',[])"
ok "--no-kernel-keys: /proc/keys is not read, today's assumption" $?
# Debian's module-hash blacklist (mod_is_hash_blacklisted()): the whole file's SHA-256
h=$(sha256sum "$sd/6.12/kp_sig_sha256.ko" | cut -d' ' -f1)
echo "2b3c4d5e I------     1 perm 1f010000     0     0 blacklist bin:$h" >> "$tmp/root/proc/keys"
run --trusted-cert "$sd/test-cert.pem" "$sd/6.12/kp_sig_sha256.ko"
is "(False,'EKEYREJECTED','',['bad-signature'])"
ok "Debian: a blacklisted module hash is refused (EKEYREJECTED)" $?
json "$tmp/c.json" "'Module hash $h is blacklisted' in d['modules'][0]['messages']"
ok "... with the kernel's line" $?

tap_done
