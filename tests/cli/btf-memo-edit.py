#!/usr/bin/env python3
# tests/cli/btf-memo-edit.py HOW MEMO: reads or changes a module BTF verdict memo
# (sigs/btf-<scope>.memo; lib/cache/btf-memo.h describes the layout) for
# tests/cli/test-btf.sh and tests/cli/test-hook-caches.sh.
#   count     prints the number of records and the errno of each, "N errno,errno,..."
#   forge     every verdict made "validates" (errno 0, no reason), each record's CRC made
#             again: a well-formed file whose verdicts are wrong
#   flip      every verdict turned (a failure made "validates", "validates" made EPERM)
#             without fixing the records' CRCs (the header's CRC, which does not cover the
#             records, stays good): damaged records that would each give a wrong verdict
#   grow N    N made-up verdicts (errno -1, EPERM) added beside the real ones, the file
#             written again well formed (sorted, fanout, CRCs): with N large, the records of
#             one first byte exceed what the hook reads at once and it bisects them
import hashlib
import struct
import sys
import zlib

MAGIC = b"KPBTFV2\n"
HDR, REC = 16 + 32 + 8 + 256 * 4, 48


def parse(b):
    assert b[:8] == MAGIC, "not a KPBTFV2 memo"
    n = struct.unpack_from("<I", b, 8)[0]
    return n, b[16:48], HDR + n * REC


def main():
    how, path = sys.argv[1], sys.argv[2]
    b = bytearray(open(path, "rb").read())
    n, scope, text = parse(b)
    recs = [HDR + i * REC for i in range(n)]
    if how == "count":
        errs = [struct.unpack_from("<i", b, r + 32)[0] for r in recs]
        print(n, ",".join(str(e) for e in errs))
        return
    if how == "grow":
        text = bytes(b[text:])
        rows = []
        for r in recs:
            off, wl = struct.unpack_from("<IH", b, r + 36)
            rows.append((bytes(b[r:r + 32]), struct.unpack_from("<i", b, r + 32)[0],
                         text[off:off + wl]))
        for i in range(int(sys.argv[3])):
            rows.append((hashlib.sha256(b"made-up %d" % i).digest(), -1, b""))
        rows.sort()
        out, reasons, fan = bytearray(), bytearray(), [0] * 256
        scrc = zlib.crc32(bytes(scope))
        for digest, err, why in rows:
            rec = digest + struct.pack("<iIHH", err, len(reasons), len(why), 0)
            out += rec + struct.pack("<I", zlib.crc32(why, zlib.crc32(rec, scrc)))
            reasons += why
            fan[digest[0]] += 1
        head = bytearray(MAGIC + struct.pack("<II", len(rows), 0) + bytes(scope) +
                         struct.pack("<II", len(reasons), 0))
        total = 0
        for c in fan:
            total += c
            head += struct.pack("<I", total)
        struct.pack_into("<I", head, 12, zlib.crc32(bytes(head[16:])))
        b = head + out + reasons
    elif how in ("forge", "flip"):
        for r in recs:
            err = 0
            if how == "flip" and struct.unpack_from("<i", b, r + 32)[0] == 0:
                err = -1
            struct.pack_into("<iIHH", b, r + 32, err, 0, 0, 0)
            if how == "forge":
                crc = zlib.crc32(bytes(b[r:r + 44]), zlib.crc32(bytes(scope)))
                struct.pack_into("<I", b, r + 44, crc)
    else:
        sys.exit("btf-memo-edit.py: unknown HOW " + how)
    open(path, "wb").write(b)


main()
