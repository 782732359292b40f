#!/bin/bash
# sig-modules.sh - derive the signature oracle's modules from a Debian-signed in-tree module.
#
# usage: tests/oracle/sig-modules.sh MODULES_DEB ABI OUTDIR
#
#   MODULES_DEB  the Debian package holding lib/modules/ABI/kernel/ (linux-image-ABI up to 6.x,
#                linux-modules-ABI in sid's split packages; fetch-kernel.sh's KP_MODULES_DEB)
#   ABI          the kernel ABI (5.10.0-46-amd64, 6.12.118+deb12-amd64, ...)
#   OUTDIR       receives sig_dummy_*.ko and sig-source.txt (provenance; created, replaced)
#
# The source is kernel/drivers/net/dummy.ko(.xz|.zst) of that package: tiny, no dependencies,
# in-tree, signed by Debian's build with the key whose certificate is compiled into the same
# kernel's vmlinuz. From it (decompressed):
#
#   sig_dummy_debian.ko       unchanged: Debian's valid signature
#   sig_dummy_unsigned.ko     the signature trailer removed
#   sig_dummy_unknown_key.ko  unsigned body re-signed (sha256) with tests/data/sig/other-key.pem,
#                             a throwaway key no kernel knows
#   sig_dummy_md5.ko          the same, digest md5 (parsed up to 6.6, ENOPKG from 6.7)
#   sig_dummy_bad_sig.ko      Debian's signature with the last byte of the signature value
#                             flipped (the last byte of the PKCS#7 message)
#   sig_dummy_bad_hash.ko     Debian's signature kept, one byte of the module body changed
#                             (the first "GCC:" in .comment becomes "GCD:")
#   sig_dummy_long_siglen.ko  Debian's signature with the trailer's sig_len 64 bytes too large:
#                             the "PKCS#7 message" starts inside the ELF
#   sig_dummy_authattrs.ko    unsigned body + tests/data/sig/other-authattrs.p7, a committed
#                             PKCS#7 message with authenticated attributes (openssl cms without
#                             -noattr: its signingTime makes it unreproducible, hence committed;
#                             the kernel refuses authattrs before it computes any digest)
#
# Signing is what kbuild's scripts/sign-file does (openssl cms -sign -binary -noattr -nocerts,
# DER, detached, struct module_signature + "~Module signature appended~\n"); RSA PKCS#1 v1.5
# signatures are deterministic, so the output is byte-for-byte reproducible from the package.
# Needs dpkg-deb, tar, xz, zstd, openssl, python3.
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "sig-modules: error: line $LINENO: exit status $?" >&2' ERR

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
keys=$(cd "$here/../data/sig" && pwd)
die() { echo "sig-modules: error: $*" >&2; exit 1; }
[ $# -eq 3 ] || { sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
DEB=$1 ABI=$2 OUT=$3
[ -f "$DEB" ] || die "$DEB: no such package"
for t in dpkg-deb tar xz zstd openssl python3; do
	command -v "$t" >/dev/null || die "$t not found"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
member=$(dpkg-deb --fsys-tarfile "$DEB" | tar -t |
	grep -E "^\./(usr/)?lib/modules/$(printf '%s' "$ABI" | sed 's/[.+]/\\&/g')/kernel/drivers/net/dummy\.ko(\.xz|\.zst)?\$" |
	sed -n 1p) || true
[ -n "$member" ] || die "$DEB: no kernel/drivers/net/dummy.ko for $ABI"
dpkg-deb --fsys-tarfile "$DEB" | tar -x -C "$tmp" "$member"
case $member in
*.xz) xz -dc "$tmp/$member" >"$tmp/dummy.ko" ;;
*.zst) zstd -q -dc "$tmp/$member" >"$tmp/dummy.ko" ;;
*) cp "$tmp/$member" "$tmp/dummy.ko" ;;
esac

mkdir -p "$OUT"
rm -f "$OUT"/sig_dummy_*.ko
python3 - "$tmp/dummy.ko" "$tmp" "$OUT" <<'PY'
import struct, sys
src, tmp, out = sys.argv[1:4]
MAGIC = b'~Module signature appended~\n'
d = open(src, 'rb').read()
if not d.endswith(MAGIC):
    sys.exit('sig-modules: error: %s is not signed' % src)
info = d[-len(MAGIC) - 12:-len(MAGIC)]
algo, hash_, id_type, signer_len, key_id_len, sig_len = struct.unpack('>BBBBB3xI', info)
if id_type != 2 or sig_len >= len(d):
    sys.exit('sig-modules: error: %s: unexpected signature trailer' % src)
body = d[:-len(MAGIC) - 12 - sig_len]
sig = d[len(body):len(body) + sig_len]

def write(name, data):
    open('%s/%s' % (out, name), 'wb').write(data)

write('sig_dummy_debian.ko', d)
write('sig_dummy_unsigned.ko', body)
open(tmp + '/body', 'wb').write(body)
bad = bytearray(sig)
bad[-1] ^= 0x01
write('sig_dummy_bad_sig.ko', body + bytes(bad) + info + MAGIC)
b = bytearray(body)
i = b.index(b'GCC:')
b[i + 2] = ord('D')
write('sig_dummy_bad_hash.ko', bytes(b) + sig + info + MAGIC)
longinfo = struct.pack('>BBBBB3xI', algo, hash_, id_type, signer_len, key_id_len, sig_len + 64)
write('sig_dummy_long_siglen.ko', body + sig + longinfo + MAGIC)
PY

sign() { # md, out
	openssl cms -sign -binary -noattr -nocerts -outform DER -md "$1" -in "$tmp/body" \
		-signer "$keys/other-cert.pem" -inkey "$keys/other-key.pem" -out "$tmp/p7"
	python3 - "$tmp/body" "$tmp/p7" "$2" <<'PY'
import struct, sys
body = open(sys.argv[1], 'rb').read()
sig = open(sys.argv[2], 'rb').read()
info = struct.pack('>BBBBB3xI', 0, 0, 2, 0, 0, len(sig))
open(sys.argv[3], 'wb').write(body + sig + info + b'~Module signature appended~\n')
PY
}
sign sha256 "$OUT/sig_dummy_unknown_key.ko"
cp "$keys/other-authattrs.p7" "$tmp/p7"
python3 - "$tmp/body" "$tmp/p7" "$OUT/sig_dummy_authattrs.ko" <<'PY'
import struct, sys
body = open(sys.argv[1], 'rb').read()
sig = open(sys.argv[2], 'rb').read()
info = struct.pack('>BBBBB3xI', 0, 0, 2, 0, 0, len(sig))
open(sys.argv[3], 'wb').write(body + sig + info + b'~Module signature appended~\n')
PY
sign md5 "$OUT/sig_dummy_md5.ko"
chmod 0644 "$OUT"/sig_dummy_*.ko
# provenance of the files above (committed with them in fixtures/ko/<series>/sig/)
{
	echo "# derived by tests/oracle/sig-modules.sh from Debian's signed in-tree module (GPL-2.0)"
	echo "package=${DEB##*/}"
	echo "member=${member#./}"
	echo "member_sha256=$(sha256sum <"$tmp/$member" | cut -d' ' -f1)"
	echo "throwaway_key=tests/data/sig/other-key.pem (sig_dummy_unknown_key, sig_dummy_md5, sig_dummy_authattrs: other-authattrs.p7)"
} >"$OUT/sig-source.txt"
