#!/usr/bin/env python3
# The SONAMEs an ELF program names in its dlopen metadata notes (lib/dl/dlopen-note.c: section
# .note.dlopen, owner "FDO", type 0x407c0c0a, a JSON array of {feature, description, priority,
# soname[]}), one per line in the notes' order; with --json, the entries themselves (a JSON
# array). ELF32/64, either byte order; every SHT_NOTE section is read, by type, not by name.
# Exit status 1 with a message when the file is no ELF or a note is malformed.
import json
import struct
import sys

SHT_NOTE = 7
NT_FDO_DLOPEN = 0x407C0C0A


def die(msg):
    sys.stderr.write("dlopen-sonames: %s\n" % msg)
    sys.exit(1)


def entries(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or len(data) < 64:
        die("%s: not an ELF file" % path)
    cls, order = data[4], data[5]
    if cls not in (1, 2) or order not in (1, 2):
        die("%s: unknown ELF class or byte order" % path)
    e = "<" if order == 1 else ">"
    if cls == 2:
        shoff, = struct.unpack_from(e + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(e + "HH", data, 0x3A)
        sh = e + "IIQQQQIIQQ"
    else:
        shoff, = struct.unpack_from(e + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(e + "HH", data, 0x2E)
        sh = e + "IIIIIIIIII"
    if shentsize < struct.calcsize(sh) or shoff + shnum * shentsize > len(data):
        die("%s: section headers out of the file" % path)
    out = []
    for i in range(shnum):
        f = struct.unpack_from(sh, data, shoff + i * shentsize)
        if f[1] != SHT_NOTE:
            continue
        off, size = f[4], f[5]
        if off + size > len(data):
            die("%s: note section %d out of the file" % (path, i))
        pos, end = off, off + size
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from(e + "III", data, pos)
            name_at = pos + 12
            desc_at = name_at + ((namesz + 3) & ~3)
            nxt = desc_at + ((descsz + 3) & ~3)
            if nxt > end:
                die("%s: note overruns section %d" % (path, i))
            owner = data[name_at:name_at + namesz].rstrip(b"\0")
            if owner == b"FDO" and ntype == NT_FDO_DLOPEN:
                desc = data[desc_at:desc_at + descsz].rstrip(b"\0")
                try:
                    got = json.loads(desc.decode("utf-8"))
                except ValueError as err:
                    die("%s: dlopen note is not JSON: %s" % (path, err))
                if not isinstance(got, list):
                    die("%s: dlopen note is not a JSON array" % path)
                out.extend(got)
            pos = nxt
    return out


def main():
    args = sys.argv[1:]
    as_json = bool(args) and args[0] == "--json"
    if as_json:
        args = args[1:]
    if len(args) != 1:
        die("usage: dlopen-sonames.py [--json] ELF-FILE")
    got = entries(args[0])
    if as_json:
        print(json.dumps(got, indent=1))
        return
    for entry in got:
        for soname in entry.get("soname", []):
            print(soname)


main()
