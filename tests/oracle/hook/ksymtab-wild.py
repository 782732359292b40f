#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""ksymtab-wild.py IN.ko OUT.ko [ADDEND]

A copy of IN.ko (x86-64, ELF64 little endian) whose first export's name points into unmapped
kernel address space: the addend of the R_X86_64_PC32 relocation of __ksymtab's first
name_offset (r_offset 4, against a __kstrtab_ symbol) becomes ADDEND (default -0x60000000).
struct kernel_symbol's name is offset_to_ptr(&name_offset) (PREL32 on x86-64), so after
apply_relocate_add() the name is the string's address + ADDEND: from the module mapping space
(0xffffffffc0000000 up with KASLR, Documentation/arch/x86/x86_64/mm.rst) 1.5 GB down, into the
unused hole below the kernel text. complete_formation() takes module_mutex, then
verify_exported_symbols() looks that name up with find_symbol(): strcmp() faults on it and
the loader dies holding the lock (kernel/module/main.c in 6.1-7.2, kernel/module.c in 5.10).
Booted on 7.2.13 (tests/oracle/hook/README.md): nothing earlier in load_module() read the name
or refused the module. The file keeps its size; only the eight addend bytes change.
"""
import struct
import sys


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.split("\n\n")[0])
    src, dst = sys.argv[1], sys.argv[2]
    addend = int(sys.argv[3], 0) if len(sys.argv) == 4 else -0x60000000
    data = bytearray(open(src, "rb").read())
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit(f"{src}: not an ELF64 little-endian file")
    e_shoff, = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    secs = []
    for i in range(e_shnum):
        f = struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize)
        secs.append(f)  # name type flags addr offset size link info align entsize
    shstr = secs[e_shstrndx]

    def name(off, strsec):
        start = strsec[4] + off
        return bytes(data[start:data.index(b"\0", start)]).decode()

    rela = [s for s in secs if name(s[0], shstr) == ".rela__ksymtab"]
    if len(rela) != 1:
        sys.exit(f"{src}: {len(rela)} .rela__ksymtab sections, expected one")
    rela = rela[0]
    symtab = secs[rela[6]]
    strtab = secs[symtab[6]]
    for off in range(rela[4], rela[4] + rela[5], 24):
        r_offset, r_info, _ = struct.unpack_from("<QQq", data, off)
        if r_offset != 4:
            continue
        sym = symtab[4] + (r_info >> 32) * 24
        st_name, = struct.unpack_from("<I", data, sym)
        sname = name(st_name, strtab)
        if (r_info & 0xFFFFFFFF) != 2 or not sname.startswith("__kstrtab_"):
            sys.exit(f"{src}: __ksymtab+4 is relocated against {sname}, type "
                     f"{r_info & 0xFFFFFFFF}: not a PC32 export name")
        struct.pack_into("<q", data, off + 16, addend)
        open(dst, "wb").write(data)
        print(f"{dst}: {sname[len('__kstrtab_'):]}'s name at its string {addend:+#x}")
        return
    sys.exit(f"{src}: no relocation of __ksymtab+4 (the first export's name_offset)")


if __name__ == "__main__":
    main()
