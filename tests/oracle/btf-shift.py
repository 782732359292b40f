#!/usr/bin/env python3
"""btf-shift.py IN.ko OUT.ko BASE_STR_LEN DELTA

Rewrites IN.ko's split .BTF in place as if the module had been built against a vmlinux
whose BTF string table was DELTA bytes longer (DELTA may be negative): every name offset
at or past BASE_STR_LEN (the running kernel's vmlinux BTF str_len, i.e. the module's own
strings) moves by DELTA. The section keeps its size; nothing else in the file changes.
An appended module signature is removed (it would no longer match). Little-endian ELF64
only (x86_64 modules). Exit status 0, or 1 with a message.
"""
import struct
import sys

MARKER = b"~Module signature appended~\n"

# bytes after struct btf_type per kind, as f(vlen); and where names sit in them
KIND_EXTRA = {
    1: lambda v: 4,  # INT
    3: lambda v: 12,  # ARRAY
    4: lambda v: 12 * v,  # STRUCT
    5: lambda v: 12 * v,  # UNION
    6: lambda v: 8 * v,  # ENUM
    13: lambda v: 8 * v,  # FUNC_PROTO
    14: lambda v: 4,  # VAR
    15: lambda v: 12 * v,  # DATASEC
    17: lambda v: 4,  # DECL_TAG
    19: lambda v: 12 * v,  # ENUM64
}
# member/value/param records whose first u32 is a name offset: kind -> record size
NAMED_RECORDS = {4: 12, 5: 12, 6: 8, 13: 8, 19: 12}


def die(msg):
    sys.stderr.write("btf-shift: error: %s\n" % msg)
    sys.exit(1)


def strip_signature(data):
    if not data.endswith(MARKER):
        return data
    end = len(data) - len(MARKER)
    sig_len = struct.unpack_from(">I", data, end - 4)[0]
    start = end - 12 - sig_len
    if start < 0:
        die("malformed signature trailer")
    return data[:start]


def btf_section(data):
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        die("not a little-endian ELF64 file")
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    secs = []
    for i in range(shnum):
        name, _typ, _fl, _addr, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        secs.append((name, off, size))
    stroff = secs[shstrndx][1]
    for name, off, size in secs:
        end = data.index(b"\0", stroff + name)
        if data[stroff + name:end] == b".BTF":
            return off, size
    die("no .BTF section")


def main():
    if len(sys.argv) != 5:
        sys.stderr.write(__doc__)
        sys.exit(2)
    data = bytearray(strip_signature(open(sys.argv[1], "rb").read()))
    base_len, delta = int(sys.argv[3]), int(sys.argv[4])
    off, size = btf_section(data)
    magic, _ver, _flags, hdr_len = struct.unpack_from("<HBBI", data, off)
    if magic != 0xEB9F:
        die(".BTF has no BTF magic")
    type_off, type_len = struct.unpack_from("<II", data, off + 8)
    cur = off + hdr_len + type_off
    end = cur + type_len

    def shift(pos):
        v = struct.unpack_from("<I", data, pos)[0]
        if v >= base_len:
            struct.pack_into("<I", data, pos, v + delta)

    n = 0
    while cur < end:
        info = struct.unpack_from("<I", data, cur + 4)[0]
        kind, vlen = (info >> 24) & 0x1F, info & 0xFFFF
        shift(cur)
        extra = KIND_EXTRA.get(kind, lambda v: 0)(vlen)
        rec = NAMED_RECORDS.get(kind)
        if rec:
            for i in range(vlen):
                shift(cur + 12 + rec * i)
        cur += 12 + extra
        n += 1
    if cur != end:
        die("type section walk ended at %d, not %d" % (cur, end))
    open(sys.argv[2], "wb").write(data)
    print("%d types, own name offsets moved by %d" % (n, delta))


main()
