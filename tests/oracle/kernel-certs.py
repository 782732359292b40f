#!/usr/bin/env python3
"""Write the X.509 certificates compiled into an x86 bzImage as PEM (the kernel's
system_certificate_list: the keys .builtin_trusted_keys gets at boot).

Usage: kernel-certs.py VMLINUZ OUT.pem

The payload (boot protocol header: setup_sects at 0x1f1, payload_offset/payload_length at
0x248/0x24c) is decompressed with xz, zstd or gzip (the 4-byte decompressed size kbuild appends
is dropped) and scanned for DER certificates (SEQUENCE { SEQUENCE { [0] version 3 ...); each
candidate is kept only if `openssl x509 -inform DER` parses it. Used by the signature oracle to
commit the few kilobytes of certificates the replay needs instead of the kernel image.
Exits 1 with a message when the image is no bzImage or holds no certificate.
"""
import struct
import subprocess
import sys


def die(msg):
    sys.stderr.write("kernel-certs: %s\n" % msg)
    sys.exit(1)


def payload(img):
    if len(img) < 0x250 or img[0x202:0x206] != b"HdrS":
        die("not an x86 bzImage (no HdrS header)")
    setup_sects = img[0x1f1] or 4
    off, length = struct.unpack_from("<II", img, 0x248)
    start = (setup_sects + 1) * 512 + off
    data = img[start:start + length]
    if data.startswith(b"\xfd7zXZ\x00"):
        cmd = ["xz", "-dc", "--single-stream"]
    elif data.startswith(b"\x28\xb5\x2f\xfd"):
        cmd = ["zstd", "-q", "-dc"]
        data = data[:-4]
    elif data.startswith(b"\x1f\x8b"):
        cmd = ["gzip", "-dc"]
    else:
        die("unsupported payload compression %s" % data[:6].hex())
    p = subprocess.run(cmd, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if not p.stdout:
        die("%s failed: %s" % (cmd[0], p.stderr.decode(errors="replace").strip()))
    return p.stdout


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        sys.exit(2)
    with open(sys.argv[1], "rb") as f:
        vmlinux = payload(f.read())
    pems = []
    seen = set()
    i = vmlinux.find(b"\x30\x82")
    while i >= 0:
        if vmlinux[i + 4:i + 6] == b"\x30\x82" and vmlinux[i + 8:i + 13] == b"\xa0\x03\x02\x01\x02":
            der = vmlinux[i:i + 4 + struct.unpack_from(">H", vmlinux, i + 2)[0]]
            p = subprocess.run(["openssl", "x509", "-inform", "DER", "-outform", "PEM"],
                               input=der, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            if p.returncode == 0 and der not in seen:
                seen.add(der)
                pems.append(p.stdout)
        i = vmlinux.find(b"\x30\x82", i + 1)
    if not pems:
        die("%s: no certificate found" % sys.argv[1])
    with open(sys.argv[2], "wb") as f:
        f.write(b"".join(pems))


main()
