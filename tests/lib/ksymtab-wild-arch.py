#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""ksymtab-wild-arch.py IN.ko OUT.ko TABLE OFFSET=ADDEND[@SYM]...

A copy of IN.ko (any ELF class and byte order, REL or RELA) whose export name fields point
outside __ksymtab_strings: for each OFFSET (the byte offset of a name field in section TABLE,
e.g. __ksymtab), the relocation applied there keeps its type and symbol and gets the addend
ADDEND (RELA: r_addend; REL: the implicit addend, the field's bytes). The name is then the
symbol's address + ADDEND, as struct kernel_symbol's name after apply_relocate[_add]().
With @SYM (a .symtab index) the relocation names that symbol instead. The file keeps its
size; only the addends (and those symbols) change.
"""
import struct
import sys


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__.split("\n\n")[0])
    src, dst, table = sys.argv[1:4]
    edits = {}
    for a in sys.argv[4:]:
        off, _, add = a.partition("=")
        add, _, sym = add.partition("@")
        edits[int(off, 0)] = (int(add, 0), int(sym, 0) if sym else None)
    data = bytearray(open(src, "rb").read())
    if data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        sys.exit(f"{src}: not an ELF file")
    is64, bo = data[4] == 2, "<" if data[5] == 1 else ">"
    if is64:
        e_shoff, = struct.unpack_from(bo + "Q", data, 0x28)
        e_shentsize, e_shnum, e_shstrndx = struct.unpack_from(bo + "HHH", data, 0x3A)
        shfmt, relsz, relafmt = "IIQQQQIIQQ", 24, "QQq"
    else:
        e_shoff, = struct.unpack_from(bo + "I", data, 0x20)
        e_shentsize, e_shnum, e_shstrndx = struct.unpack_from(bo + "HHH", data, 0x2E)
        shfmt, relsz, relafmt = "IIIIIIIIII", 12, "IIi"
    secs = [struct.unpack_from(bo + shfmt, data, e_shoff + i * e_shentsize)
            for i in range(e_shnum)]  # name type flags addr offset size link info align entsize
    shstr = secs[e_shstrndx]

    def name(off):
        start = shstr[4] + off
        return bytes(data[start:data.index(b"\0", start)]).decode()

    tab = [i for i, s in enumerate(secs) if name(s[0]) == table]
    if len(tab) != 1:
        sys.exit(f"{src}: {len(tab)} sections named {table}, expected one")
    rels = [s for s in secs if s[1] in (4, 9) and s[7] == tab[0]]
    if len(rels) != 1:
        sys.exit(f"{src}: {len(rels)} relocation sections for {table}, expected one")
    rel = rels[0]
    rela = rel[1] == 4
    esz = relsz if rela else relsz * 2 // 3
    width = 8 if is64 else 4
    for off in range(rel[4], rel[4] + rel[5], esz):
        r_offset = struct.unpack_from(bo + relafmt[0], data, off)[0]
        if r_offset not in edits:
            continue
        add, sym = edits.pop(r_offset)
        if sym is not None:
            info = struct.unpack_from(bo + relafmt[1], data, off + width)[0]
            info = (sym << 32 | (info & 0xffffffff)) if is64 else (sym << 8 | (info & 0xff))
            struct.pack_into(bo + relafmt[1], data, off + width, info)
        if rela:
            struct.pack_into(bo + relafmt[2], data, off + 2 * width, add)
        else:
            field = secs[tab[0]][4] + r_offset
            struct.pack_into(bo + "i", data, field, add)
        print(f"{dst}: {table}+{r_offset:#x} relocated with addend {add:+#x}" +
              (f" against symbol {sym}" if sym is not None else ""))
    if edits:
        sys.exit(f"{src}: no relocation of {table} at " +
                 ", ".join(f"{o:#x}" for o in sorted(edits)))
    open(dst, "wb").write(data)


if __name__ == "__main__":
    main()
