#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Appends a hand-built PKCS#7 module signature with an ML-DSA signer to a module.

usage: mldsa-p7.py BODY.ko OUT.ko sha256|sha512 mldsa44|mldsa65|mldsa87 yes|no

No ML-DSA signer is available here (OpenSSL 3.0), so the DER is written by hand with the
OIDs the kernel's pkcs7_parser.c reads: SignedData, detached pkcs7-data, one SignerInfo
(issuer "kopolicy ML-DSA test" + serial 1), the digest algorithm, with "yes" the signed
attributes sign-file adds with OpenSSL < 4 (contentType, messageDigest of BODY), the
FIPS 204 signature algorithm OID and a filler signature of ML-DSA-65's size (3309 bytes).
"""
import hashlib, sys
def tlv(tag, body):
    n = len(body)
    if n < 0x80: l = bytes([n])
    else:
        b = n.to_bytes((n.bit_length() + 7) // 8, 'big'); l = bytes([0x80 | len(b)]) + b
    return bytes([tag]) + l + body
def seq(*x): return tlv(0x30, b''.join(x))
def oid(s):
    a = [int(v) for v in s.split('.')]; out = bytes([40 * a[0] + a[1]])
    for v in a[2:]:
        enc = [v & 0x7f]; v >>= 7
        while v: enc.append(0x80 | (v & 0x7f)); v >>= 7
        out += bytes(reversed(enc))
    return tlv(0x06, out)
def alg(o): return seq(oid(o))
HASH = {'sha256': '2.16.840.1.101.3.4.2.1', 'sha512': '2.16.840.1.101.3.4.2.3'}
body_path, out_path, hashname, pkey, attrs = sys.argv[1:6]
body = open(body_path, 'rb').read()
name = seq(tlv(0x31, seq(oid('2.5.4.3'), tlv(0x0c, b'kopolicy ML-DSA test'))))
sid = seq(name, tlv(0x02, b'\x01'))
signed = b''
if attrs == 'yes':
    d = hashlib.new(hashname, body).digest()
    signed = tlv(0xa0, seq(oid('1.2.840.113549.1.9.3'), tlv(0x31, oid('1.2.840.113549.1.7.1'))) +
                 seq(oid('1.2.840.113549.1.9.4'), tlv(0x31, tlv(0x04, d))))
si = seq(tlv(0x02, b'\x01'), sid, alg(HASH[hashname]), signed,
         alg({'mldsa44': '2.16.840.1.101.3.4.3.17', 'mldsa65': '2.16.840.1.101.3.4.3.18',
              'mldsa87': '2.16.840.1.101.3.4.3.19'}[pkey]),
         tlv(0x04, b'\x5a' * 3309))
sd = seq(tlv(0x02, b'\x01'), tlv(0x31, alg(HASH[hashname])), seq(oid('1.2.840.113549.1.7.1')),
         tlv(0x31, si))
p7 = seq(oid('1.2.840.113549.1.7.2'), tlv(0xa0, sd))
info = bytes([0, 0, 2, 0, 0, 0, 0, 0]) + len(p7).to_bytes(4, 'big')
open(out_path, 'wb').write(body + p7 + info + b'~Module signature appended~\n')
