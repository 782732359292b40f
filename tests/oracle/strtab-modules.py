#!/usr/bin/env python3
# strtab-modules.py KP_PLAIN_KO OUTDIR   (kp_bad_shndx.ko and kp_weak_gplonly_then_prop.ko are
#                                        read from KP_PLAIN_KO's directory)
#
# The symbol-name scenarios' modules, derived from a kernel's own build of kp_plain.ko (amd64,
# ELF64 little endian): the undefined symbol msleep gets a name outside .strtab that runs to
# the end of the file (kernels before 6.13 read info->strtab + st_name up to a NUL, in the
# buffer holding the whole file: simplify_symbols(), kernel/module/main.c).
#
#   kp_strtab_page.ko  msleep is named "kp_name_page" with no NUL: the last bytes of a file
#                      that exactly fills its last 4 KiB page (NUL padding before the name).
#                      The loader's vmalloc'd copy ends at the page end and the guard page
#                      follows: the Unknown symbol line reads the name into it.
#   kp_strtab_sig.ko   the ELF image ends with "msl" (no NUL), msleep's name; a signature
#                      trailer follows whose blob begins "eep\0" (id_type 0, PGP: the kernel
#                      says "not signed with expected PKCS#7 message" and loads it unsigned).
#                      The kernel reads the name on into the trailer: "msleep".
#   kp_strtab_defpage.ko the defined function kp_plain_exit (.exit.text: kallsyms keeps it) is
#                      named "kp_name_defpage" with no NUL, the last bytes of a file that fills
#                      its last page: layout_symtab()'s strlen() runs into the guard page.
#   kp_strtab_gap.ko   msleep's name starts 16 bytes past the end of the file, inside the
#                      rest of its last page (zeroed with init_on_alloc): the name "".
#   kp_strtab_guard.ko msleep's name starts 16 bytes into the page after the file's last
#                      page: the guard page after the loader's buffer.
#   kp_strtab_prefix.ko    as kp_strtab_page, the name "msle": it begins vmlinux's msleep, so
#                      find_symbol()'s strcmp() reads it into the guard page (module_mutex
#                      held), before any printk.
#   kp_strtab_modprefix.ko as kp_strtab_page, the name "kp_gpl_prov_pl": it begins
#                      kp_gpl_prov.ko's export kp_gpl_prov_plain, so it faults in find_symbol()
#                      when kp_gpl_prov is loaded, and in the printk (as kp_strtab_page) when not.
#   kp_strtab_weakprefix.ko (from kp_weak_gplonly_then_prop.ko, module name
#                      kp_weak_gplonly_then_prop) its weak undefined kp_gpl_prov_gplonly (the
#                      first import, the init tests it for NULL) is named "msle" as
#                      kp_strtab_prefix: simplify_symbols() calls resolve_symbol() for a weak
#                      symbol too, so find_symbol()'s strcmp() reads it into the guard page.
#   kp_strtab_weakpage.ko  the same weak symbol named "kp_name_weakpage" (no export begins
#                      so): every comparison stops inside the name, find_symbol() finds nothing,
#                      and a weak symbol that is not found is not printed: the module loads.
#   kp_bad_shndx_guard.ko  (from kp_bad_shndx.ko next to KP_PLAIN_KO, module name kp_bad_shndx)
#                      kp_unused_marker's st_shndx is the first index whose sechdrs[].sh_addr
#                      lies in the page after the file's last page: kernels without the
#                      st_shndx check (5.10) oops in simplify_symbols(), after
#                      add_unformed_module(): the module is left in the list, UNFORMED.
# Deterministic: the same input gives the same bytes.
import os
import struct
import sys

EH = struct.Struct("<16sHHIQQQIHHHHHH")  # Elf64_Ehdr
SH = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr
SYM = struct.Struct("<IBBHQQ")  # Elf64_Sym
MARKER = b"~Module signature appended~\n"
PAGE = 4096


def sections(d):
    e = EH.unpack_from(d, 0)
    shoff, shnum, shstrndx = e[6], e[12], e[13]
    hdrs = [SH.unpack_from(d, shoff + i * SH.size) for i in range(shnum)]
    so = hdrs[shstrndx][4]
    return {d[so + h[0]:d.index(b"\0", so + h[0])].decode(): h for h in hdrs}


def rename(d, old, new_off, undefined=True):
    """Points the st_name of symbol @old (undefined, or defined) at file offset @new_off."""
    secs = sections(d)
    st, strt = secs[".symtab"], secs[".strtab"]
    stroff = strt[4]
    for off in range(st[4], st[4] + st[5], SYM.size):
        s = list(SYM.unpack_from(d, off))
        if d[stroff + s[0]:d.index(b"\0", stroff + s[0])] == old:
            assert (s[3] == 0) == undefined, "not an %s symbol" % (
                "undefined" if undefined else "defined")
            s[0] = new_off - stroff
            SYM.pack_into(d, off, *s)
            return
    raise SystemExit("strtab-modules.py: no symbol %s" % old.decode())


def set_shndx_guard(d, name):
    """Sets st_shndx of defined symbol @name so that sechdrs[st_shndx].sh_addr is read in the
    page after the file's last page; returns the index."""
    e = EH.unpack_from(d, 0)
    shoff = e[6]
    end = -(-len(d) // PAGE) * PAGE
    field = 16  # offsetof(Elf64_Shdr, sh_addr)
    idx = -(-(end - shoff - field) // SH.size)
    off = shoff + idx * SH.size + field
    assert end <= off and off + 8 <= end + PAGE and e[12] <= idx < 0xff00, "no such index"
    secs = sections(d)
    st, strt = secs[".symtab"], secs[".strtab"]
    for o in range(st[4], st[4] + st[5], SYM.size):
        sym = list(SYM.unpack_from(d, o))
        if d[strt[4] + sym[0]:d.index(b"\0", strt[4] + sym[0])] == name:
            assert sym[3] != 0, "not a defined symbol"
            sym[3] = idx
            SYM.pack_into(d, o, *sym)
            return idx
    raise SystemExit("strtab-modules.py: no symbol %s" % name.decode())


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: strtab-modules.py KP_PLAIN_KO OUTDIR")
    plain = open(sys.argv[1], "rb").read()
    if plain[:4] != b"\x7fELF" or plain[4] != 2 or plain[5] != 1:
        raise SystemExit("strtab-modules.py: %s is not an ELF64 little-endian file" % sys.argv[1])
    if plain.endswith(MARKER):
        raise SystemExit("strtab-modules.py: %s is signed" % sys.argv[1])

    tail = b"kp_name_page"
    d = bytearray(plain)
    d += b"\0" * ((-(len(d) + len(tail))) % PAGE)
    rename(d, b"msleep", len(d))
    d += tail
    assert len(d) % PAGE == 0 and d[-1] != 0
    open(sys.argv[2] + "/kp_strtab_page.ko", "wb").write(d)

    d = bytearray(plain)
    rename(d, b"msleep", len(d))
    d += b"msl"
    blob = b"eep\0"
    # struct module_signature: algo, hash, id_type (0: PKEY_ID_PGP), signer_len, key_id_len,
    # pad[3], __be32 sig_len
    d += blob + struct.pack(">BBBBB3xI", 0, 0, 0, 0, 0, len(blob)) + MARKER
    open(sys.argv[2] + "/kp_strtab_sig.ko", "wb").write(d)

    for name, tail in (("kp_strtab_prefix", b"msle"), ("kp_strtab_modprefix", b"kp_gpl_prov_pl")):
        d = bytearray(plain)
        d += b"\0" * ((-(len(d) + len(tail))) % PAGE)
        rename(d, b"msleep", len(d))
        d += tail
        assert len(d) % PAGE == 0 and d[-1] != 0
        open(sys.argv[2] + "/" + name + ".ko", "wb").write(d)

    tail = b"kp_name_defpage"
    d = bytearray(plain)
    d += b"\0" * ((-(len(d) + len(tail))) % PAGE)
    rename(d, b"kp_plain_exit", len(d), undefined=False)
    d += tail
    assert len(d) % PAGE == 0 and d[-1] != 0
    open(sys.argv[2] + "/kp_strtab_defpage.ko", "wb").write(d)

    assert len(plain) % PAGE and len(plain) % PAGE + 16 < PAGE, "kp_plain.ko ends near a page end"
    d = bytearray(plain)
    rename(d, b"msleep", len(d) + 16)
    open(sys.argv[2] + "/kp_strtab_gap.ko", "wb").write(d)

    d = bytearray(plain)
    rename(d, b"msleep", len(d) + (-len(d)) % PAGE + 16)
    open(sys.argv[2] + "/kp_strtab_guard.ko", "wb").write(d)

    weak = open(os.path.join(os.path.dirname(sys.argv[1]), "kp_weak_gplonly_then_prop.ko"),
                "rb").read()
    for name, tail in (("kp_strtab_weakprefix", b"msle"),
                       ("kp_strtab_weakpage", b"kp_name_weakpage")):
        d = bytearray(weak)
        d += b"\0" * ((-(len(d) + len(tail))) % PAGE)
        rename(d, b"kp_gpl_prov_gplonly", len(d))
        d += tail
        assert len(d) % PAGE == 0 and d[-1] != 0
        open(sys.argv[2] + "/" + name + ".ko", "wb").write(d)

    d = bytearray(open(os.path.join(os.path.dirname(sys.argv[1]), "kp_bad_shndx.ko"), "rb").read())
    set_shndx_guard(d, b"kp_unused_marker")
    open(sys.argv[2] + "/kp_bad_shndx_guard.ko", "wb").write(d)


main()
