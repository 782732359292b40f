#!/usr/bin/env bash
# A kernel image's revocation certificate list (CONFIG_SYSTEM_REVOCATION_LIST, certs/
# revocation_certificates.S): its certificates are revocations, not trusted keys. Synthetic
# images laid out as the kernel's .S files (each list, .align 8, its size; the system list then
# module_cert_size); a module signed by the revoked key is refused with EKEYREJECTED where
# is_key_on_revocation_list() is asked (before every keyring since 6.7, before Debian's platform
# retry in 6.1), and only lacks a key (E, or EKEYREJECTED enforced) where it is not asked.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
sd=$top/tests/data/sig
. "$top/tests/lib/tap.sh"
tap_tmpdir
export KOPOLICY_RUN_CACHE=off KOPOLICY_CACHE_DIR=$tmp/nocache

json() { python3 -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }
kern() { # version: the fixture kernel's options
	local fx=$top/fixtures/ko/$1
	echo "-k $fx/Module.symvers.gz --kernel-config $fx/config.gz --kernel-release" \
		"$(sed -n 's/^release=//p' "$fx/kernel.txt")"
}
chk() { # version module extra options...: $tmp/c.json, stderr in $tmp/e.txt
	local v=$1 m=$2
	shift 2
	# shellcheck disable=SC2046
	"$kp" check -f json --fail-on never --no-cache $(kern "$v") "$@" "$sd/$v/$m.ko" \
		> "$tmp/c.json" 2> "$tmp/e.txt"
}
is() { json "$tmp/c.json" \
	"[(m['loads'],m['errno'],m['taint'],[f['id'] for f in m['findings']]) for m in d['modules']]==[$1]"; }
msg() { json "$tmp/c.json" "any($1 in f['message'] for f in d['modules'][0]['findings'])"; }
dmesg() { json "$tmp/c.json" "$1 in d['modules'][0]['messages']"; }

# vmlinux (system list: the test key; revocation list: the "unknown" key that signs
# kp_sig_unknown_key), and one whose certificates have no list around them
python3 - "$sd" "$tmp" <<'PY'
import os, ssl, struct, sys
sd, out = sys.argv[1], sys.argv[2]
der = lambda name: ssl.PEM_cert_to_DER_cert(open(os.path.join(sd, name)).read())
sysc, rev = der('test-cert.pem'), der('other-cert.pem')
def align(b, a=8):
    return b + bytes(-len(b) % a)
img = b'\x7fELF' + bytes(2044)
img = align(img) + sysc
img = align(img) + struct.pack('<Q', len(sysc))                  # system_certificate_list_size
img = align(img) + struct.pack('<Q', len(sysc))                  # module_cert_size
img += bytes(range(40))                                          # blacklist_hashes[] pointers
img = align(img) + rev
img = align(img) + struct.pack('<Q', len(rev)) + bytes(4096)     # revocation_certificate_list_size
open(os.path.join(out, 'vmlinux'), 'wb').write(img)
loose = b'\x7fELF' + bytes(1000) + sysc + b'\x01' * 64 + rev + b'\x02' * 64
open(os.path.join(out, 'vmlinux.loose'), 'wb').write(loose)
PY
I=(--kernel-image "$tmp/vmlinux")

# 6.12 (is_key_on_revocation_list() before every keyring)
chk 6.12 kp_sig_sha256 "${I[@]}" --sig-enforce; is "(True,None,'O',[])"
ok "6.12: the system list's key verifies" $?
json "$tmp/c.json" \
	"d['kernel']['key_sources']==['kernel image $tmp/vmlinux: 1 certificate, 1 in its revocation list']"
ok "... the key source counts the revocation list" $?
chk 6.12 kp_sig_unknown_key "${I[@]}"; is "(False,'EKEYREJECTED','',['bad-signature'])"
ok "6.12: signed by a revoked key: EKEYREJECTED even unenforced (was: trusted)" $?
msg "'the signer (kopolicy unknown test key) is on the kernel\\'s revocation list (a certificate of the revocation_certificate_list of $tmp/vmlinux)'"
ok "... said as the image's revocation list" $?
json "$tmp/c.json" "d['modules'][0]['messages']==[]"
ok "... and no kernel line (verify_pkcs7_message_sig()'s is pr_devel(); module_sig_check() returns it)" $?
chk 6.12 kp_sig_unknown_key "${I[@]}" --sig-enforce; is \
	"(False,'EKEYREJECTED','',['bad-signature'])"
ok "6.12 enforced: the same" $?
chk 6.12 kp_sig_unknown_key "${I[@]}" --distro upstream; is \
	"(False,'EKEYREJECTED','',['bad-signature'])"
ok "6.12 upstream (no platform retry): the same" $?
# a revoked key that is also a trusted one: the revocation decides (6.7+)
chk 6.12 kp_sig_unknown_key "${I[@]}" --trusted-cert "$sd/other-cert.pem"
is "(False,'EKEYREJECTED','',['bad-signature'])"
ok "6.12: revoked and also given with --trusted-cert: still refused (revocation first)" $?

# 6.1: the revocation list only before Debian's .platform retry
chk 6.1 kp_sig_unknown_key "${I[@]}"; is "(False,'EKEYREJECTED','',['bad-signature'])"
ok "6.1 Debian (platform retry asks the revocation list): EKEYREJECTED" $?
chk 6.1 kp_sig_unknown_key "${I[@]}" --trusted-cert "$sd/other-cert.pem"; is "(True,None,'O',[])"
ok "6.1: revoked but in the builtin keys: verified (no revocation check before the keyring)" $?
chk 6.1 kp_sig_unknown_key "${I[@]}" --distro upstream; is \
	"(True,None,'OE',['signature-untrusted-key'])"
ok "6.1 upstream (no retry): only no key: loads with E unenforced" $?
dmesg "'kp_plain: module verification failed: signature and/or required key missing - tainting kernel'"
ok "... with the kernel's E line" $?
chk 6.1 kp_sig_unknown_key "${I[@]}" --distro upstream --sig-enforce
is "(False,'EKEYREJECTED','',['signature-untrusted-key'])"
ok "6.1 upstream enforced: EKEYREJECTED" $?
dmesg "'Loading of module with unavailable key is rejected'"
ok "... 'Loading of module with unavailable key is rejected'" $?

# the kernel's own certs/*.S assembled and linked in kbuild's order (tests/data/sig/revoke/
# gen.sh), as a vmlinux and as an xz bzImage's payload (streamed)
python3 - "$sd/revoke/vmlinux" "$tmp/bzImage" <<'PY'
import lzma, struct, sys
raw = open(sys.argv[1], 'rb').read()
xz = lzma.compress(raw, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32)
hdr = bytearray(1024)
hdr[0x1f1] = 1
hdr[0x202:0x206] = b'HdrS'
payload = xz + struct.pack('<I', len(raw))
hdr[0x248:0x250] = struct.pack('<II', 0, len(payload))
open(sys.argv[2], 'wb').write(bytes(hdr) + payload)
PY
for img in "$sd/revoke/vmlinux" "$tmp/bzImage"; do
	chk 6.12 kp_sig_unknown_key --kernel-image "$img"; is \
		"(False,'EKEYREJECTED','',['bad-signature'])"
	_st=$?
	ok "kbuild-linked lists ($(basename "$img")): the revoked signer refused" $_st
	json "$tmp/c.json" \
		"d['kernel']['key_sources']==['kernel image $img: 2 certificates, 1 in its revocation list']"
	ok "... 2 system certificates, 1 revocation" $?
	chk 6.12 kp_sig_sha256 --kernel-image "$img" --sig-enforce; is "(True,None,'O',[])"
	ok "... the signing key (signing_key.x509) verifies" $?
done

# /proc/keys lists the revocation list's certificates too (they are asymmetric keys in
# .blacklist, and /proc/keys does not say which keyring holds a key): not taken as trusted
mkdir -p "$tmp/root/proc/sys/kernel"
cat > "$tmp/root/proc/keys" <<'KEYS'
06dea733 I------     1 perm 1f0b0000     0     0 keyring   .builtin_trusted_keys: 1
1a2b3c4d I------     1 perm 1f010000     0     0 asymmetri kopolicy throwaway test key: 6759b7f66244e26283c0ec1047f9ccd226be9ac8 X509.rsa 26be9ac8 []
3aca7501 I------     1 perm 0f0b0000     0     0 keyring   .blacklist: 1
2b3c4d5e I------     1 perm 1f010000     0     0 asymmetri kopolicy unknown test key: 5d67f105171bcdcf9c7b58c7bb2b57c63bca09cd X509.rsa 3bca09cd []
KEYS
echo 6.1.0-57-amd64 > "$tmp/root/proc/sys/kernel/osrelease"
: > "$tmp/root/proc/modules"
# shellcheck disable=SC2046
"$kp" check -f json --fail-on never --no-cache $(kern 6.1) --distro upstream --running \
	--root "$tmp/root" "${I[@]}" "$sd/6.1/kp_sig_unknown_key.ko" > "$tmp/c.json"
is "(True,None,'OE',['signature-untrusted-key'])"
ok "6.1 upstream, /proc/keys lists the revoked key: not trusted by its description (E)" $?
# shellcheck disable=SC2046
"$kp" check -f json --fail-on never --no-cache $(kern 6.1) --distro upstream --running \
	--root "$tmp/root" "$sd/6.1/kp_sig_unknown_key.ko" > "$tmp/c.json"
is "(True,None,'O',['signature-assumed'])"
ok "... without the image, the description is all there is: assumed (as before)" $?

# info: no kernel version: the revocation list first (as 6.7+)
"$kp" info --json "${I[@]}" "$sd/6.12/kp_sig_unknown_key.ko" \
	"$sd/6.12/kp_sig_sha256.ko" > "$tmp/i.json"
json "$tmp/i.json" \
	"[m['signature']['verification']['result'] for m in d['modules']]==['revoked','verified'] and d['key_sources']==['kernel image $tmp/vmlinux: 1 certificate, 1 in its revocation list']"
ok "info: revoked, verified; the key source line" $?
"$kp" info "${I[@]}" "$sd/6.12/kp_sig_unknown_key.ko" > "$tmp/i.txt"
grep -qx "  verifies:        no: the signer is on the revocation list ($tmp/vmlinux's revocation_certificate_list) (-EKEYREJECTED)" "$tmp/i.txt"
ok "info text: the revocation list named" $?

# certificates of no list: trusted while no revocation list can exist (Debian), else not
L=(--kernel-image "$tmp/vmlinux.loose")
chk 6.12 kp_sig_sha256 "${L[@]}" --sig-enforce; is "(True,None,'O',[])"
ok "no list found, no SYSTEM_REVOCATION_LIST: the image's certificates are trusted (as before)" $?
[ ! -s "$tmp/e.txt" ]
ok "... nothing on stderr" $?
zcat "$top/fixtures/ko/6.12/config.gz" |
	sed 's/^# CONFIG_SYSTEM_REVOCATION_LIST is not set$/CONFIG_SYSTEM_REVOCATION_LIST=y/' \
		> "$tmp/config-revoke"
chk 6.12 kp_sig_sha256 "${L[@]}" --kernel-config "$tmp/config-revoke"
is "(True,None,'OE',['signature-untrusted-key'])"
ok "SYSTEM_REVOCATION_LIST=y, no list found: not trusted (it may be revoked): E" $?
[ "$(cat "$tmp/e.txt")" = \
	"kopolicy: $tmp/vmlinux.loose: warning: 2 certificates of the kernel image outside its system certificate list (the kernel may have a revocation list): not trusted; give a trusted one with --trusted-cert" ]
ok "... said once on stderr" $?
chk 6.12 kp_sig_sha256 "${L[@]}" --kernel-config "$tmp/config-revoke" \
	--trusted-cert "$sd/test-cert.pem"
is "(True,None,'O',[])"
ok "... --trusted-cert trusts it" $?

# the facts cache keeps each certificate's list: a warm run says the same
export KOPOLICY_CACHE_DIR=$tmp/cache
for run in cold warm; do
	# shellcheck disable=SC2046
	KOPOLICY_CACHE_STATS=1 "$kp" check -f json --fail-on never $(kern 6.12) "${I[@]}" \
		"$sd/6.12/kp_sig_unknown_key.ko" "$sd/6.12/kp_sig_sha256.ko" \
			> "$tmp/$run.json" 2> "$tmp/$run.err"
done
cmp -s "$tmp/cold.json" "$tmp/warm.json" &&
	json "$tmp/warm.json" \
		"[(m['loads'],m['errno']) for m in d['modules']]==[(False,'EKEYREJECTED'),(True,None)]"
ok "cached image certificates: the warm run refuses the revoked signer too (byte-identical)" $?
grep -q "1 kernel image(s) from the cache" "$tmp/warm.err"
ok "... the image's certificates came from the cache ($(grep -o \
	'[0-9]* kernel image(s) from the cache' "$tmp/warm.err"))" $?

tap_done
