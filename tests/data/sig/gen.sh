#!/bin/bash
# Regenerates the signed test modules of this directory from fixtures/ko (committed
# outputs; run by hand after a fixture changes). Signs the way kbuild's scripts/sign-file
# does (openssl cms -sign -binary -noattr -nocerts, DER, detached; -keyid for sign-file -k)
# and appends struct module_signature + "~Module signature appended~\n"
# (include/linux/module_signature.h). The keys are throwaway test keys, committed on
# purpose: test-key.pem signs, test-cert.pem is the certificate a test trusts;
# other-key.pem/other-cert.pem stand for a key the kernel does not know; distro-cert.pem
# (no key kept) for the kernel image's own key in tests/cli/test-secureboot.sh.
#
# One set per fixture kernel: 6.1/ and 6.12/ from fixtures/ko/<v>/kp_plain.ko.
#
# usage: tests/data/sig/gen.sh [--new-keys]
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "sig/gen: error: line $LINENO: exit status $?" >&2' ERR
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here"

newkey() { # name, subject
	openssl req -new -x509 -newkey rsa:2048 -nodes -days 36500 -sha256 \
		-subj "/CN=$2" -addext "subjectKeyIdentifier=hash" \
		-addext "extendedKeyUsage=codeSigning" \
		-keyout "$1-key.pem" -out "$1-cert.pem" 2>/dev/null
}
if [ "${1:-}" = --new-keys ] || [ ! -e test-key.pem ]; then
	newkey test "kopolicy throwaway test key"
	newkey other "kopolicy unknown test key"
	# the "distribution's" key of the Secure Boot tests: only its certificate is kept
	newkey distro "kopolicy distro test key"
	rm distro-key.pem
fi
openssl x509 -in test-cert.pem -outform DER -out test-cert.der

trailer() { # body, pkcs7 DER, out
	python3 - "$1" "$2" "$3" <<'PY'
import struct, sys
body = open(sys.argv[1], 'rb').read()
sig = open(sys.argv[2], 'rb').read()
info = struct.pack('>BBBBB3xI', 0, 0, 2, 0, 0, len(sig))
open(sys.argv[3], 'wb').write(body + sig + info + b'~Module signature appended~\n')
PY
}
sign() { # body, md, key name, out, extra cms options...
	local body=$1 md=$2 key=$3 out=$4
	shift 4
	openssl cms -sign -binary -nocerts -outform DER -md "$md" -in "$body" \
		-signer "$here/$key-cert.pem" -inkey "$here/$key-key.pem" -out "$tmp/p7" "$@"
	trailer "$body" "$tmp/p7" "$out"
}

for v in 6.1 6.12; do
src=$top/fixtures/ko/$v/kp_plain.ko
mkdir -p "$v"
cd "$here/$v"
# the module without any signature it may have
python3 - "$src" "$tmp/body" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
m = b'~Module signature appended~\n'
if d.endswith(m):
    n = struct.unpack('>I', d[-len(m) - 4:-len(m)])[0]
    d = d[:-len(m) - 12 - n]
open(sys.argv[2], 'wb').write(d)
PY

cp "$tmp/body" kp_sig_unsigned.ko
sign "$tmp/body" sha256 test kp_sig_sha256.ko -noattr
sign "$tmp/body" sha512 test kp_sig_sha512_skid.ko -noattr -keyid
sign "$tmp/body" sha256 other kp_sig_unknown_key.ko -noattr
sign "$tmp/body" md5 test kp_sig_md5.ko -noattr
sign "$tmp/body" sha256 test kp_sig_authattrs.ko
# a flipped bit in the signature value (its last byte, just before the trailer)
python3 - kp_sig_sha256.ko kp_sig_corrupted.ko <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
d[-28 - 12 - 1] ^= 0x01
open(sys.argv[2], 'wb').write(d)
PY
# the module changed after signing: the digest no longer matches ("GCC:" -> "GCD:")
python3 - kp_sig_sha256.ko kp_sig_wrong_hash.ko <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
i = d.index(b'GCC:')
d[i + 2] = ord('D')
open(sys.argv[2], 'wb').write(d)
PY
# trailers whose sig_len is 64 bytes too large: the "signature" starts inside the ELF
# (PKCS#7: EBADMSG before the kernel reads the ELF; id_type 1 (PGP): -ENOPKG, loads unsigned)
python3 - kp_sig_sha256.ko kp_sig_long_siglen.ko kp_sig_pgp_long_siglen.ko <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
i = len(d) - 28 - 12
n = struct.unpack('>I', d[i + 8:i + 12])[0]
d[i + 8:i + 12] = struct.pack('>I', n + 64)
open(sys.argv[2], 'wb').write(d)
d[i + 2] = 1
open(sys.argv[3], 'wb').write(d)
PY
# a well-formed trailer around a blob that is one DER SEQUENCE but no PKCS#7 message
python3 - "$tmp/garbled" <<'PY'
import sys
open(sys.argv[1], 'wb').write(bytes([0x30, 0x20]) + bytes(range(0x20)))
PY
trailer "$tmp/body" "$tmp/garbled" kp_sig_garbled.ko
ls -l "$here/$v"/kp_sig_*.ko
cd "$here"
done
