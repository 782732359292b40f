#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""objdump call-site references for symbol_get(): an implementation
independent of kopolicy (binutils' disassembly, a linear scan).

Usage: objdump-sites.py MODULES_DIR >SITES.tsv

For every module importing __symbol_get (decompressed with xz/zstd/gzip),
`objdump -dr` (binutils-multiarch) lists the call sites: the instructions
carrying a call relocation against __symbol_get. From each, the disassembly is
walked backwards inside the function (fall through and the direct branches
objdump prints) to the instructions whose first operand is the argument
register (r0, a0, r3, x0, %rdi, %r2; i386's regparm(3) %eax): a register copy continues with its
source; an instruction with an
address relocation (movw/movt, auipc+addi, addis/addi or ld of a .toc slot,
adrp+add, lea, larl, i386's mov $imm with R_386_32) or a literal pool load names the string; anything else
gives "-" (computed at run time), as does the function entry. Output:
module, site ("section+0xOFF", as `kopolicy info --json`), the targets
(comma-separated when paths differ) or "-". No jump tables, no callers of a
local function: where kopolicy follows those, compare-arch.py lists the site.
"""
import gzip
import lzma
import os
import re
import struct
import subprocess
import sys

ARCH = {
    # e_machine: (arg register, copy mnemonics, call relocation types)
    62: ("%rdi", None, ("R_X86_64_PLT32", "R_X86_64_PC32")),
    3: ("%eax", None, ("R_386_PC32", "R_386_PLT32")),
    40: ("r0", ("mov",), ("R_ARM_CALL", "R_ARM_JUMP24", "R_ARM_THM_CALL", "R_ARM_THM_JUMP24")),
    243: ("a0", ("mv", "c.mv"), ("R_RISCV_CALL_PLT", "R_RISCV_CALL", "R_RISCV_JAL")),
    21: ("r3", ("mr",), ("R_PPC64_REL24", "R_PPC64_REL24_NOTOC")),
    183: ("x0", ("mov",), ("R_AARCH64_CALL26", "R_AARCH64_JUMP26")),
    22: ("%r2", ("lgr", "lr"), ("R_390_PLT32DBL", "R_390_PC32DBL")),
}
CALLS = {62: ("call", "callq"), 3: ("call", "calll"), 40: ("bl", "blx"), 243: ("jalr", "jal", "call", "c.jalr"),
         21: ("bl", "bctrl", "bcctrl"), 183: ("bl", "blr"), 22: ("brasl", "basr", "bras")}
SAVED = {62: {"%rbx", "%rbp", "%r12", "%r13", "%r14", "%r15"},
         3: {"%ebx", "%esi", "%edi", "%ebp"},
         40: {"r%d" % i for i in range(4, 12)} | {"fp", "sl", "sb"},
         243: {"s%d" % i for i in range(12)},
         21: {"r%d" % i for i in range(14, 32)},
         183: {"x%d" % i for i in range(19, 29)},
         22: {"%%r%d" % i for i in range(6, 14)}}
HOOKS = ("__fentry__", "mcount", "_mcount", "__gnu_mcount_nc")
NOT_WRITES = re.compile(r"^(st|cmp|tst|teq|cmn|b|c\.s|s[bhwd]$|fs|push|cb|t[bd]|bl|j|call)")


def load(path):
    with open(path, "rb") as f:
        d = f.read()
    if path.endswith(".xz"):
        return lzma.decompress(d)
    if path.endswith(".gz"):
        return gzip.decompress(d)
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dcq", path], stdout=subprocess.PIPE, check=True).stdout
    return d


class Elf:
    """Sections, symbols and relocations of a relocatable ELF file."""

    def __init__(self, d):
        self.d = d
        c64 = d[4] == 2
        e = "<" if d[5] == 1 else ">"
        self.e, self.c64 = e, c64
        self.machine = struct.unpack_from(e + "H", d, 0x12)[0]
        if c64:
            shoff = struct.unpack_from(e + "Q", d, 0x28)[0]
            shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", d, 0x3A)
        else:
            shoff = struct.unpack_from(e + "I", d, 0x20)[0]
            shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", d, 0x2E)
        self.secs = []
        for i in range(shnum):
            o = shoff + i * shentsize
            if c64:
                f = struct.unpack_from(e + "IIQQQQIIQQ", d, o)
            else:
                f = struct.unpack_from(e + "IIIIIIIIII", d, o)
            self.secs.append(dict(nm=f[0], type=f[1], flags=f[2], off=f[4], size=f[5],
                                  link=f[6], info=f[7]))
        sh = self.secs[shstrndx]
        for s in self.secs:
            s["name"] = self.cstr(sh["off"] + s["nm"])
        self.byname = {s["name"]: i for i, s in enumerate(self.secs)}
        self.syms = []
        for s in self.secs:
            if s["type"] != 2:
                continue
            strtab = self.secs[s["link"]]["off"]
            ent = 24 if c64 else 16
            for k in range(s["size"] // ent):
                o = s["off"] + k * ent
                if c64:
                    nm, inf, oth, shn, val, sz = struct.unpack_from(e + "IBBHQQ", d, o)
                else:
                    nm, val, sz, inf, oth, shn = struct.unpack_from(e + "IIIBBH", d, o)
                self.syms.append(dict(name=self.cstr(strtab + nm), value=val, size=sz,
                                      shndx=shn, type=inf & 15))
        self.symbyname = {}
        for s in self.syms:
            self.symbyname.setdefault(s["name"], s)
        # relocations by target section name and offset: [(symbol index, addend)]
        # (local names such as .LC7 repeat in a module linked from several objects)
        self.rel = {}
        for s in self.secs:
            if s["type"] not in (4, 9) or s["info"] >= len(self.secs):
                continue
            tgt = self.rel.setdefault(self.secs[s["info"]]["name"], {})
            ent = (24 if s["type"] == 4 else 16) if c64 else (12 if s["type"] == 4 else 8)
            for k in range(s["size"] // ent):
                o = s["off"] + k * ent
                if c64:
                    ro, ri = struct.unpack_from(e + "QQ", d, o)
                    ra = struct.unpack_from(e + "q", d, o + 16)[0] if s["type"] == 4 else None
                    if self.machine == 8:  # MIPS64: r_sym is the first word
                        ri = struct.unpack_from(e + "I", d, o + 8)[0] << 32
                    sym = ri >> 32
                else:
                    ro, ri = struct.unpack_from(e + "II", d, o)
                    ra = struct.unpack_from(e + "i", d, o + 8)[0] if s["type"] == 4 else None
                    sym = ri >> 8
                tgt.setdefault(ro, []).append((sym, ra))

    def cstr(self, o):
        return self.d[o:self.d.index(b"\0", o)].decode("latin-1")

    def string(self, secname, off):
        """The identifier starting at secname+off, or None."""
        i = self.byname.get(secname)
        if i is None:
            return None
        s = self.secs[i]
        if not (s["flags"] & 0x20) or off < 0 or off >= s["size"]:
            return None
        if off > 0 and self.d[s["off"] + off - 1] != 0:
            return None
        end = self.d.index(b"\0", s["off"] + off)
        name = self.d[s["off"] + off:end].decode("latin-1")
        return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else None

    def where(self, sec, off, addend=None):
        """(section name, offset) named by the relocation at sec+off (+ addend for REL)."""
        for sym, ra in self.rel.get(sec, {}).get(off, []):
            if sym == 0 or sym >= len(self.syms):
                continue
            s = self.syms[sym]
            if s["shndx"] == 0 or s["shndx"] >= len(self.secs):
                return None, None
            a = ra if ra is not None else (addend if addend is not None else 0)
            return self.secs[s["shndx"]]["name"], s["value"] + a
        return None, None

    def word(self, secname, off, size):
        s = self.secs[self.byname[secname]]
        fmt = {4: "i", 8: "q"}[size]
        return struct.unpack_from(self.e + fmt, self.d, s["off"] + off)[0]


INSN = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f ]+)\t(\S+)\s*(.*)$")
RELOC = re.compile(r"^\s*([0-9a-f]+): (R_\w+)\t(.*)$")
SECTION = re.compile(r"^Disassembly of section (\S+):")
FUNC = re.compile(r"^([0-9a-f]+) <(.*)>:$")


def parse(path):
    """Per section: instructions [addr, mnemonic, operands, [relocs]] in order."""
    out = subprocess.run(["objdump", "-dr", path], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, errors="replace").stdout
    secs = {}
    cur = None
    for line in out.splitlines():
        m = SECTION.match(line)
        if m:
            cur = secs.setdefault(m.group(1), [])
            continue
        if cur is None:
            continue
        m = RELOC.match(line)
        if m and cur:
            sym, add = m.group(3).strip(), 0
            mm = re.match(r"^(.*?)([+-]0x[0-9a-f]+)$", sym)
            if mm:
                sym, add = mm.group(1), int(mm.group(2), 16)
            cur[-1][3].append((int(m.group(1), 16), m.group(2), sym, add))
            continue
        m = INSN.match(line)
        if m:
            ops = m.group(4).split("#")[0] if not m.group(3).startswith("ldr") else m.group(4)
            cur.append([int(m.group(1), 16), m.group(3), ops.strip(), [], m.group(2)])
    return secs


def operands(ops):
    return [o.strip() for o in re.split(r",(?![^\[(]*[\])])", ops) if o.strip()]


UNCOND = {
    62: ("jmp", "jmpq", "ret", "retq", "ud2"),
    3: ("jmp", "ret", "ud2"),
    40: ("b", "bx", "udf", "b.w"),
    243: ("j", "jr", "ret", "c.j", "c.jr", "tail", "ebreak", "c.ebreak"),
    21: ("b", "blr", "bctr", "trap"),
    183: ("b", "ret", "br", "brk"),
    22: ("j", "jg", "br"),
}
NORETURN = ("__stack_chk_fail", "__fortify_panic", "fortify_panic", "panic", "do_exit",
            "__ubsan_handle_builtin_unreachable", "make_task_dead", "kthread_exit")
TARGET = re.compile(r"(?:^|[ ,])([0-9a-f]+) <[^>]*>$")


def falls_through(elf, insn):
    addr, mn, ops, rels, raw = insn
    if mn in UNCOND[elf.machine]:
        return False
    if any(r[2] in NORETURN for r in rels):
        return False
    ol = operands(ops)
    if elf.machine == 40 and (mn in ("pop", "ldm", "ldmia", "ldmfd") and "pc" in ops
                              or mn == "ldr" and ol and ol[0] == "pc"
                              or mn == "mov" and ol and ol[0] == "pc"):
        return False
    if elf.machine == 21 and mn == "twi" and ops.startswith("31,"):
        return False
    return True


def branch_target(elf, insn):
    addr, mn, ops, rels, raw = insn
    if mn in CALLS[elf.machine] or rels:
        return None
    m = TARGET.search(ops)
    return int(m.group(1), 16) if m else None


def target_of(elf, insns, k, reg, secname):
    """The strings the argument register may hold at instruction k: a backward
    walk over the function's control flow (fall through and direct branches)."""
    index = {x[0]: i for i, x in enumerate(insns)}
    into = {}
    for i, x in enumerate(insns):
        t = branch_target(elf, x)
        if t is not None and t in index:
            into.setdefault(index[t], []).append(i)
    results, seen, stack = set(), set(), [(k, reg)]
    while stack:
        i, r = stack.pop()
        preds = list(into.get(i, []))
        if i > 0 and falls_through(elf, insns[i - 1]):
            preds.append(i - 1)
        if not preds:
            results.add("-")  # the function entry: a parameter
        for p in preds:
            if (p, r) in seen:
                continue
            seen.add((p, r))
            v = examine(elf, insns, p, r, secname)
            if v is None:
                stack.append((p, r))
            elif v[0] == "copy":
                stack.append((p, v[1]))
            else:
                results.add(v[1])
        if len(seen) > 20000:
            return "-"
    if "-" in results or len(results) != 1:
        return "-" if "-" in results or not results else ",".join(sorted(results))
    return results.pop()


def examine(elf, insns, j, reg, secname):
    """What instruction j puts in reg: None (nothing), ("copy", reg), ("str", name or "-")."""
    x86 = elf.machine in (62, 3)
    copy = ARCH[elf.machine][1]
    if True:
        addr, mn, ops, rels, raw = insns[j]
        ol = operands(ops)
        dst = (ol[-1] if x86 else ol[0]) if ol else None
        if x86 and dst in ("%edi",) and reg == "%rdi":
            dst = "%rdi"
        writes = dst == reg and not NOT_WRITES.match(mn)
        hook = any(r[2] in HOOKS for r in rels)
        if mn in CALLS[elf.machine] and not hook and reg not in SAVED[elf.machine]:
            if not (mn in ("jalr", "jal", "c.jalr") and "ra" not in ops):
                return ("str", "-")  # a call in between: the register is its result
        if not writes:
            return None
        for (o, t, sym, add) in rels:
            if t in ("R_RISCV_PCREL_LO12_I",):
                # the auipc of this register before it
                for jj in range(j - 1, -1, -1):
                    a2, m2, o2, r2, _ = insns[jj]
                    if m2 == "auipc" and operands(o2)[0] == ol[1] and r2:
                        sec, off = elf.where(secname, r2[0][0])
                        return ("str", (elf.string(sec, off) or "-") if sec else "-")
                return ("str", "-")
            if t in ("R_PPC64_TOC16_LO_DS",):
                sec, off = elf.where(secname, o)
                if sec:
                    sec, off = elf.where(sec, off)  # the .toc slot's own relocation
                return ("str", (elf.string(sec, off) or "-") if sec else "-")
            if t in ("R_ARM_MOVT_ABS", "R_ARM_MOVW_ABS_NC", "R_ARM_THM_MOVT_ABS",
                     "R_ARM_THM_MOVW_ABS_NC"):
                imm = re.search(r"#(-?\d+)", ops)
                add = int(imm.group(1)) if imm else 0
                sec, off = elf.where(secname, o, add)
                return ("str", (elf.string(sec, off) or "-") if sec else "-")
            if t in ("R_PPC64_TOC16_LO", "R_PPC64_ADDR16_LO", "R_AARCH64_ADD_ABS_LO12_NC",
                     "R_RISCV_LO12_I"):
                sec, off = elf.where(secname, o)
                return ("str", (elf.string(sec, off) or "-") if sec else "-")
            if t == "R_386_32":  # REL: the addend is the immediate itself
                sec, off = elf.where(secname, o, elf.word(secname, o, 4))
                return ("str", (elf.string(sec, off) or "-") if sec else "-")
            if t in ("R_X86_64_PC32", "R_X86_64_32S", "R_X86_64_32", "R_390_PC32DBL"):
                adj = 4 if t == "R_X86_64_PC32" else 2 if t == "R_390_PC32DBL" else 0
                sec, off = elf.where(secname, o)
                off = off + adj if sec else off
                return ("str", (elf.string(sec, off) or "-") if sec else "-")
        if copy and mn in copy and len(ol) == 2 and not ol[1].startswith("#"):
            return ("copy", ol[1])
        if x86 and mn.startswith("mov") and len(ol) == 2 and ol[0].startswith("%"):
            return ("copy", ol[0])
        if elf.machine == 40 and mn.startswith("ldr") and "[pc" in ops:
            m = re.search(r"@ ([0-9a-f]+)", ops) or re.search(r"\(([0-9a-f]+)", ops)
            if m:
                lit = int(m.group(1), 16)
                sec, off = elf.where(secname, lit, elf.word(secname, lit, 4))
                return ("str", (elf.string(sec, off) or "-") if sec else "-")
        return ("str", "-")


def module_sites(path):
    d = load(path)
    if d[:4] != b"\x7fELF":
        return []
    elf = Elf(d)
    if elf.machine not in ARCH or "__symbol_get" not in elf.symbyname:
        return []
    if elf.symbyname["__symbol_get"]["shndx"] != 0:
        return []
    tmp = "/tmp/objdump-sites-%d.ko" % os.getpid()
    with open(tmp, "wb") as f:
        f.write(d)
    try:
        secs = parse(tmp)
    finally:
        os.unlink(tmp)
    reg, _, calls = ARCH[elf.machine]
    funcs = sorted((s["value"], s["value"] + s["size"], s["shndx"]) for s in elf.syms
                   if s["type"] == 2 and s["size"])
    res = []
    for sec, insns in secs.items():
        shndx = elf.byname.get(sec)
        for k, (addr, mn, ops, rs, raw) in enumerate(insns):
            for (o, t, sym, add) in rs:
                if sym != "__symbol_get" or t not in calls:
                    continue
                start, end = 0, 1 << 62
                for (a, b, sh) in funcs:
                    if sh == shndx and a & ~1 <= addr < b:
                        start, end = a & ~1, b
                lo = k
                while lo > 0 and insns[lo - 1][0] >= start:
                    lo -= 1
                hi = k
                while hi + 1 < len(insns) and insns[hi + 1][0] < end:
                    hi += 1
                tgt = target_of(elf, insns[lo:hi + 1], k - lo, reg, sec)
                res.append((sec, addr, tgt))
    return res


def main():
    root = sys.argv[1]
    paths = []
    for dp, dn, fn in os.walk(root):
        for f in fn:
            if re.search(r"\.ko(\.xz|\.gz|\.zst)?$", f):
                paths.append(os.path.join(dp, f))
    for p in sorted(paths):
        try:
            d = load(p)
        except Exception:
            continue
        if b"__symbol_get\0" not in d:
            continue
        name = None
        m = re.search(rb"\0name=([^\0]+)\0", d)
        if m:
            name = m.group(1).decode()
        else:
            name = os.path.basename(p).split(".ko")[0].replace("-", "_")
        for sec, addr, tgt in module_sites(p):
            print(f"{name}\t{sec}+0x{addr:x}\t{tgt}")


if __name__ == "__main__":
    main()
