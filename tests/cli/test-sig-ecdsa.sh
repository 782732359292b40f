#!/usr/bin/env bash
# ECDSA module signatures end to end (issue 28: lib/kernel/ecdsa-nettle.c verifies P-256/P-384
# with nettle, OpenSSL judges what nettle does not verify): the 6.12 fixture module signed at
# test time the way sign-file does (openssl cms -sign -binary -noattr -nocerts, detached DER,
# struct module_signature + "~Module signature appended~\n") with throwaway P-256 and P-384
# keys and SHA-256/384/512: each verifies; the module changed after signing, the signature's
# last byte flipped, and a certificate with the signer's issuer and serial but another key are
# bad signatures (EKEYREJECTED); a key that is not trusted is an untrusted key (E taint).
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
sd=$top/tests/data/sig
. "$top/tests/lib/tap.sh"
tap_tmpdir

json() { python3 -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }
fx=$top/fixtures/ko/6.12
kern=(-k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release
	"$(sed -n 's/^release=//p' "$fx/kernel.txt")")

newkey() { # name, curve, serial: a self-signed certificate, the same subject for every key
	openssl req -new -x509 -newkey ec -pkeyopt "ec_paramgen_curve:$2" -nodes -days 36500 \
		-sha256 -subj "/CN=kopolicy ECDSA test key" -set_serial "$3" \
		-addext "subjectKeyIdentifier=hash" -addext "extendedKeyUsage=codeSigning" \
		-keyout "$tmp/$1-key.pem" -out "$tmp/$1-cert.pem" 2> /dev/null
}
sign() { # key name, md, out: the unsigned fixture module signed
	openssl cms -sign -binary -nocerts -noattr -outform DER -md "$2" \
		-in "$sd/6.12/kp_sig_unsigned.ko" -signer "$tmp/$1-cert.pem" \
		-inkey "$tmp/$1-key.pem" -out "$tmp/p7" 2> /dev/null &&
	python3 - "$sd/6.12/kp_sig_unsigned.ko" "$tmp/p7" "$3" <<'PY'
import struct, sys
body = open(sys.argv[1], 'rb').read()
sig = open(sys.argv[2], 'rb').read()
info = struct.pack('>BBBBB3xI', 0, 0, 2, 0, 0, len(sig))
open(sys.argv[3], 'wb').write(body + sig + info + b'~Module signature appended~\n')
PY
}
flip() { # in, offset from the end, out: one bit flipped
	python3 - "$1" "$2" "$3" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
d[len(d) - int(sys.argv[2])] ^= 0x01
open(sys.argv[3], 'wb').write(d)
PY
}
# one module's outcome and its signature's verification: loads, errno, taint, finding ids
chk() { # cert, module
	"$kp" check -f json --fail-on never "${kern[@]}" --trusted-cert "$1" "$2" > "$tmp/c.json"
}
is() { json "$tmp/c.json" \
	"[(m['loads'],m['errno'],m['taint'],[f['id'] for f in m['findings']]) for m in d['modules']]==[$1]"; }
verification() { # cert, module, result, pkey_algo, hash
	"$kp" info --json --trusted-cert "$1" "$2" > "$tmp/i.json" &&
	json "$tmp/i.json" \
		"(lambda s: (s['verification']['result'],s['pkey_algo'],s['hash_algo']))(d['modules'][0]['signature'])==('$3','ecdsa','$4')"
}

for curve in P-256 P-384; do
	newkey "$curve" "$curve" 7 && newkey "$curve-other" "$curve" 7 &&
		newkey "$curve-unknown" "$curve" 8
	ok "$curve: throwaway keys made" $?
	for md in sha256 sha384 sha512; do
		m=$tmp/$curve-$md.ko
		sign "$curve" "$md" "$m"
		ok "$curve $md: module signed" $?
		verification "$tmp/$curve-cert.pem" "$m" verified "$md"
		ok "$curve $md: info: verified" $?
		chk "$tmp/$curve-cert.pem" "$m"; is "(True,None,'O',[])"
		ok "$curve $md: check: loads without E" $?
	done
	m=$tmp/$curve-sha384.ko
	# a byte of the ELF header changed: the digest no longer matches
	python3 - "$m" "$tmp/changed.ko" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
d[100] ^= 0x01
open(sys.argv[2], 'wb').write(d)
PY
	verification "$tmp/$curve-cert.pem" "$tmp/changed.ko" bad-signature sha384
	ok "$curve: the module changed after signing: bad-signature" $?
	chk "$tmp/$curve-cert.pem" "$tmp/changed.ko"; is \
		"(False,'EKEYREJECTED','',['bad-signature'])"
	ok "$curve: ... EKEYREJECTED even unenforced" $?
	# the signature value's last byte (s's last byte), just before the 40-byte trailer
	flip "$m" 41 "$tmp/flipped.ko"
	verification "$tmp/$curve-cert.pem" "$tmp/flipped.ko" bad-signature sha384
	ok "$curve: a bit of s flipped: bad-signature" $?
	verification "$tmp/$curve-other-cert.pem" "$m" bad-signature sha384
	ok "$curve: the signer's issuer and serial with another key: bad-signature" $?
	chk "$tmp/$curve-unknown-cert.pem" "$m"; is "(True,None,'OE',['signature-untrusted-key'])"
	ok "$curve: a key the kernel does not know: the E taint" $?
done

tap_done
