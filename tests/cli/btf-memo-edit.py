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
    if how in ("forge", "flip"):
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
