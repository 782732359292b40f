#!/usr/bin/env bash
# check -b ROOT reads the tree's compressed kernel image on a thread of its own beside the
# modules (lib/ctx/context-image.c): the same bytes on stdout and stderr and the same exit
# status as with -j 1 (the image read first), for an image with a system and a revocation
# list, one with certificates outside any list (the warning said in its place), one without
# certificates (the "no key source" assumption), one with a certificate far after its lists
# (found: the payload is decoded to its end), and a corrupt and a truncated one (the
# image's one-line error, no module said); cold and warm with the caches, and without.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
sd=$top/tests/data/sig
. "$top/tests/lib/tap.sh"
tap_tmpdir
export KOPOLICY_RUN_CACHE=off

json() { python3 -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }

rel=6.1.0-57-amd64
r=$tmp/root
mkdir -p "$r/lib/modules/$rel/kernel" "$r/boot"
for m in kp_sig_sha256 kp_sig_unknown_key kp_sig_unsigned kp_sig_sha512_skid; do
	cp "$sd/6.1/$m.ko" "$r/lib/modules/$rel/kernel/"
done
printf 'not an ELF file\n' > "$r/lib/modules/$rel/kernel/kp_broken.ko"
: > "$r/lib/modules/$rel/modules.builtin"
: > "$r/lib/modules/$rel/modules.builtin.modinfo"
cp "$top/fixtures/ko/6.1/Module.symvers.gz" "$r/boot/symvers-$rel.gz"
zcat "$top/fixtures/ko/6.1/config.gz" > "$tmp/config"
sed 's/^# CONFIG_SYSTEM_REVOCATION_LIST is not set$/CONFIG_SYSTEM_REVOCATION_LIST=y/' \
	"$tmp/config" > "$tmp/config-revoke"

# the images: xz bzImages as Debian's 5.10 and 6.1 (kbuild's 4-byte size after the payload)
python3 - "$sd" "$tmp" "$top/fixtures/ko/6.1/sig/kernel-certs.pem" <<'PY'
import lzma, os, ssl, struct, sys
sd, out = sys.argv[1], sys.argv[2]
der = lambda name: ssl.PEM_cert_to_DER_cert(open(os.path.join(sd, name)).read())
def bz(raw, name, cut=0, flip=False):
    xz = bytearray(lzma.compress(raw, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC32))
    if flip:
        for i in range(len(xz) // 2, len(xz) // 2 + 64):
            xz[i] ^= 0x5a
    if cut:
        xz = xz[:-cut]
    hdr = bytearray(1024)
    hdr[0x1f1] = 1
    hdr[0x202:0x206] = b'HdrS'
    payload = bytes(xz) + struct.pack('<I', len(raw))
    hdr[0x248:0x250] = struct.pack('<II', 0, len(payload))
    open(os.path.join(out, name), 'wb').write(bytes(hdr) + payload)
# certs/*.S linked in kbuild's order (tests/data/sig/revoke/gen.sh): 2 system, 1 revoked;
# 16 MiB of text-like bytes after them, so that the modules are read while it decodes
lists = open(os.path.join(sd, 'revoke', 'vmlinux'), 'rb').read()
tail = bytes((i * 7919 >> 3) & 0xff for i in range(1 << 16)) * 256
bz(lists + tail, 'lists')
# the same with a certificate 16 MiB after the lists, at the end of the payload (as
# crypto/asymmetric_keys/selftest.c's __initconst one with FIPS_SIGNATURE_SELFTEST): the
# decode is never stopped at the lists, so it is found
# (the first certificate of the 6.1 fixtures' kernel-certs.pem: none of the lists' three)
later = ssl.PEM_cert_to_DER_cert(open(sys.argv[3]).read().split('-----END CERTIFICATE-----')[0]
                                 + '-----END CERTIFICATE-----\n')
bz(lists + tail + later + bytes(64), 'later')
bz(b'\x7fELF' + bytes(1000) + der('test-cert.pem') + b'\x01' * 64 + der('other-cert.pem')
   + tail, 'loose')
bz(b'\x7fELF' + tail, 'none')
bz(lists + tail, 'corrupt', flip=True)
bz(lists + tail, 'cut', cut=100)
PY

# one run: $tmp/j$1.{out,err,rc}
run() { # jobs, extra options...
	local j=$1
	shift
	"$kp" check -f json --fail-on never -j "$j" -b "$r" "$@" > "$tmp/j$j.out" 2> "$tmp/j$j.err"
	echo $? > "$tmp/j$j.rc"
}
same() { # what: -j 1 and -j 2 byte-identical
	cmp -s "$tmp/j1.out" "$tmp/j2.out" && cmp -s "$tmp/j1.err" "$tmp/j2.err" &&
		cmp -s "$tmp/j1.rc" "$tmp/j2.rc"
	ok "$1: -j 2 (the image beside the modules) gives the bytes and status of -j 1" $?
}
both() { # what, extra options...: -j 1 then -j 2, compared
	local what=$1
	shift
	run 1 "$@"
	run 2 "$@"
	same "$what"
}
setup() { # image, config
	cp "$tmp/$1" "$r/boot/vmlinuz-$rel"
	cp "$2" "$r/boot/config-$rel"
	rm -rf "$tmp/cache"
}
img=$r/boot/vmlinuz-$rel

for mode in nocache cold warm; do
	case $mode in
	nocache) C=(--no-cache) ;;
	*) C=() ;;
	esac
	export KOPOLICY_CACHE_DIR=$tmp/cache-$mode
	[ "$mode" = cold ] && rm -rf "$tmp/cache-cold" "$tmp/cache-warm"
	[ "$mode" = warm ] && { run 1 "${C[@]}"; } # fill the cache: the image's certificates too

	setup lists "$tmp/config"
	[ "$mode" = warm ] && run 1
	both "$mode, system and revocation lists" "${C[@]}"
	json "$tmp/j2.out" \
		"d['kernel']['key_sources']==['kernel image $img: 2 certificates, 1 in its revocation list'] and {m['path'].split('/')[-1]:(m['loads'],m['errno']) for m in d['modules']}=={'kp_sig_sha256.ko':(True,None),'kp_sig_unknown_key.ko':(False,'EKEYREJECTED'),'kp_sig_unsigned.ko':(False,'EEXIST'),'kp_sig_sha512_skid.ko':(False,'EEXIST')}"
	# (every fixture module is named kp_plain: the ones after the first are already loaded)
	ok "... the image's keys and revocation used: sha256 verifies, the revoked signer refused" $?
	grep -q "kp_broken.ko: " "$tmp/j2.err" && [ "$(cat "$tmp/j2.rc")" = 2 ]
	ok "... the broken module said, exit 2" $?

	setup later "$tmp/config"
	[ "$mode" = warm ] && run 1
	both "$mode, a certificate 16 MiB after the lists" "${C[@]}"
	json "$tmp/j2.out" \
		"d['kernel']['key_sources']==['kernel image $img: 2 certificates, 1 in its revocation list, 1 outside its certificate lists (not trusted)']"
	ok "... found at the end of the payload: outside the lists" $?

	setup loose "$tmp/config-revoke"
	[ "$mode" = warm ] && run 1
	both "$mode, certificates outside the lists" "${C[@]}"
	[ "$(grep -c \
		"warning: 2 certificates of the kernel image outside its system certificate list" \
		"$tmp/j2.err")" = 1 ]
	ok "... the warning said once" $?
	[ "$(head -n 1 "$tmp/j2.err")" = \
		"kopolicy: $img: warning: 2 certificates of the kernel image outside its system certificate list (the kernel may have a revocation list): not trusted; give a trusted one with --trusted-cert" ]
	ok "... first, before the modules' errors, as with the image read first" $?

	setup none "$tmp/config"
	[ "$mode" = warm ] && run 1
	both "$mode, no certificate" "${C[@]}"
	json "$tmp/j2.out" \
		"d['kernel']['key_sources']==['kernel image $img: 0 certificates'] and any(a.startswith('no key source (kernel image, /proc/keys, --trusted-cert)') for a in d['kernel']['assumptions'])"
	ok "... '0 certificates' and the no-key-source assumption" $?
done

export KOPOLICY_CACHE_DIR=$tmp/cache-bad
for bad in corrupt cut; do
	setup "$bad" "$tmp/config"
	both "$bad xz payload" --no-cache
	[ "$(cat "$tmp/j2.rc")" = 2 ] && [ "$(wc -l < "$tmp/j2.err")" = 1 ] &&
		grep -q "^kopolicy: .*xz: " "$tmp/j2.err" && [ ! -s "$tmp/j2.out" ]
	_st=$?
	ok "... one line, the xz error, exit 2, nothing on stdout ($(cat "$tmp/j2.err"))" $_st
	grep -q "^kopolicy: $img: xz: " "$tmp/j2.err"
	ok "... the line names the image" $?
	both "$bad xz payload, cold cache"
	[ "$(cat "$tmp/j2.rc")" = 2 ] && ! grep -q kp_broken "$tmp/j2.err"
	ok "... no module said after the image's error" $?
done

tap_done
