#!/usr/bin/env python3
# tests/cli/damage-pack.py HOW PACK...: damages facts cache packs (lib/cache/facts-cache.c
# describes the layout) for tests/cli/test-cache.sh and tests/corpus/check-cache.sh.
#   flip_payload  one bit in the middle of every entry's payload (its CRC no longer matches)
#   other_format  every entry's header says another format version
#   other_build   every entry's header says another build
#   foreign       every record (CRC recomputed: a well-formed index) points at the entry of
#                 another record: another module's facts under this module's state and key
#   flip_record   one byte of every index record (its CRC no longer matches)
#   truncate_half, empty: the whole file
import struct
import sys
import zlib

REC, FOOT, HDR = 128, 64, 72


def records(data):
    nrec, off = struct.unpack_from("<QQ", data, len(data) - FOOT + 16)
    return [off + i * REC for i in range(nrec)]


def entry(data, r):
    return struct.unpack_from("<QI", data, r + 104)


def damage(how, path):
    with open(path, "rb") as f:
        data = bytearray(f.read())
    if how == "truncate_half":
        data = data[: len(data) // 2]
    elif how == "empty":
        data = bytearray()
    else:
        recs = records(data)
        ents = [entry(data, r) for r in recs]
        for i, r in enumerate(recs):
            off, ln = ents[i]
            if how == "flip_payload":
                data[off + HDR + (ln - HDR) // 2] ^= 4
            elif how == "other_format":
                data[off + 8] ^= 0x63
            elif how == "other_build":
                data[off + 68 : off + 72] = b"\x01\x02\x03\x04"
            elif how == "flip_record":
                data[r + 8] ^= 1
            elif how == "foreign":
                o2, l2 = ents[(i + 1) % len(ents)]
                struct.pack_into("<QI", data, r + 104, o2, l2)
                struct.pack_into("<I", data, r + 124, zlib.crc32(bytes(data[r : r + 124])))
            else:
                sys.exit("damage-pack: unknown damage " + how)
    with open(path, "wb") as f:
        f.write(data)


for p in sys.argv[2:]:
    damage(sys.argv[1], p)
