#!/usr/bin/env python3
"""Small in-place edits of a relocatable ELF for the loader tests (no dependencies).

  elf-poke.py FILE shndx SYMBOL VALUE   set SYMBOL's st_shndx (decimal or 0x...; 'common',
                                        'shnum+N' = e_shnum + N)
  elf-poke.py FILE weak SYMBOL          make SYMBOL's binding STB_WEAK
  elf-poke.py FILE strtab-first BYTE    set the first byte of .symtab's string table
  elf-poke.py FILE strtab-last BYTE     set the last byte of .symtab's string table
  elf-poke.py FILE replace OLD NEW      replace the NUL-terminated string OLD (anywhere in the
                                        file, once) by NEW, padded with NULs (NEW <= OLD)
"""
import struct
import sys


def main():
    path, op = sys.argv[1], sys.argv[2]
    data = bytearray(open(path, "rb").read())
    if data[:4] != b"\x7fELF":
        sys.exit("not ELF")
    is64 = data[4] == 2
    end = "<" if data[5] == 1 else ">"
    if is64:
        shoff, = struct.unpack_from(end + "Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data, 0x3A)
    else:
        shoff, = struct.unpack_from(end + "I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data, 0x2E)

    def shdr(i):
        off = shoff + i * shentsize
        if is64:
            name, typ, _fl, _ad, sh_off, size, link = struct.unpack_from(end + "IIQQQQI", data, off)
        else:
            name, typ, _fl, _ad, sh_off, size, link = struct.unpack_from(end + "IIIIIII", data, off)
        return typ, sh_off, size, link

    symtab = next(i for i in range(shnum) if shdr(i)[0] == 2)
    _t, sym_off, sym_size, strndx = shdr(symtab)
    _t, str_off, str_size, _l = shdr(strndx)
    if op in ("shndx", "weak"):
        name, value = sys.argv[3].encode(), sys.argv[4] if op == "shndx" else ""
        if op == "weak":
            v = 0
        elif value == "common":
            v = 0xFFF2
        elif value.startswith("shnum+"):
            v = shnum + int(value[6:])
        else:
            v = int(value, 0)
        entsize = 24 if is64 else 16
        for k in range(sym_size // entsize):
            off = sym_off + k * entsize
            st_name, = struct.unpack_from(end + "I", data, off)
            nm = data[str_off + st_name:data.index(b"\0", str_off + st_name)]
            if nm == name and op == "weak":
                info = off + (4 if is64 else 12)
                data[info] = (2 << 4) | (data[info] & 0xF)
                break
            if nm == name:
                struct.pack_into(end + "H", data, off + (6 if is64 else 14), v)
                break
        else:
            sys.exit("no symbol %s" % name.decode())
    elif op == "strtab-first":
        data[str_off] = int(sys.argv[3], 0)
    elif op == "strtab-last":
        data[str_off + str_size - 1] = int(sys.argv[3], 0)
    elif op == "replace":
        old, new = sys.argv[3].encode() + b"\0", sys.argv[4].encode()
        at = data.find(old)
        if at < 0 or len(new) >= len(old):
            sys.exit("cannot replace %r" % sys.argv[3])
        data[at:at + len(old)] = new + b"\0" * (len(old) - len(new))
    else:
        sys.exit("unknown operation " + op)
    open(path, "wb").write(data)


if __name__ == "__main__":
    main()
