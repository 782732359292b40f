#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Ground truth for symbol_get() targets, from the kernel source.

Usage: source-truth.py SRCDIR CONFIG MODDIR > truth.tsv

Prints one line per source call site that lands in a module of MODDIR:
    module<TAB>target<TAB>file:line<TAB>kind
kind is "name" (symbol_get(x), symbol_request(x), dvb_attach(x, ...), a
wrapper macro, or __symbol_get("x")) or "dynamic" (__symbol_get(expr): the
target is computed at run time; target is then the expression text).

How a call site is found
  * Comments are removed, and #if/#ifdef/#elif/#else blocks are evaluated with
    the kernel's CONFIG (defined(), IS_ENABLED(), IS_BUILTIN(), IS_MODULE(),
    IS_REACHABLE(), MODULE defined; anything not understood counts as true).
  * The macros that expand to symbol_get are found, not listed: any #define
    whose body passes its first parameter to symbol_get/symbol_request/
    dvb_attach (or to such a macro) is a wrapper (dvb_attach in
    include/media/dvbdev.h, tuner_symbol_probe in tuner-core.c, ...). The
    definitions themselves are not call sites.

How a .c file is mapped to its module (decision: kbuild, checked by the tree)
  * The built module has no source-file knowledge left (Debian strips the
    STT_FILE symbols and the debug info), so the kbuild Makefiles decide:
    obj-$(...) += foo.o makes DIR/foo a module, foo-objs/foo-y/foo-$(CONFIG_X)
    += a.o b.o makes DIR/a.c part of DIR/foo (members under a CONFIG that is
    not y/m in the tree's config are dropped; $(var) tokens are expanded from
    the same Makefile). A file is attributed to the modules MODDIR actually
    contains (kernel/DIR/foo.ko*), which drops built-in and unconfigured code.
  * A .c file #included by another .c file belongs to the includer's modules.
  * A call site in a header (a static inline function) belongs to every
    module with a .c file that includes the header and calls the function,
    directly or through another inline function of a header.
"""
import os
import re
import subprocess
import sys
import warnings

warnings.filterwarnings("ignore")

CALL_MACROS = {"symbol_get", "symbol_request", "dvb_attach"}
DIRECT = "__symbol_get"


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def grep_files(src, pattern, includes=("*.c", "*.h")):
    """Files under src whose text matches the extended regex pattern (grep is fast)."""
    cmd = ["grep", "-rlE"] + ["--include=%s" % i for i in includes] + [pattern, src]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    return sorted(res.stdout.decode("utf-8", "replace").split("\n")[:-1])


def load_config(path):
    cfg = {}
    for line in read(path).splitlines():
        m = re.match(r"^(CONFIG_\w+)=(.*)$", line)
        if m:
            cfg[m.group(1)] = m.group(2)
    return cfg


# ---------------------------------------------------------------- C preprocessing

def strip_comments(text):
    """Replaces comments and string contents' newlines-safe: keeps line numbers."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


class CondEval:
    def __init__(self, cfg):
        self.cfg = cfg

    def state(self, name):
        v = self.cfg.get(name)
        if v == "y":
            return "y"
        if v == "m":
            return "m"
        if v is None:
            if name.endswith("_MODULE") and self.cfg.get(name[:-7]) == "m":
                return "y"
            return None
        return "v"

    def eval(self, expr):
        """True, False or None (unknown)."""
        e = expr
        cfg = self

        def mac(m):
            fn, arg = m.group(1), m.group(2)
            st = cfg.state(arg) if arg.startswith("CONFIG_") else None
            if not arg.startswith("CONFIG_"):
                return " __UNK__ "
            if fn == "IS_ENABLED" or fn == "IS_REACHABLE":
                r = st in ("y", "m")
            elif fn == "IS_BUILTIN":
                r = st == "y"
            else:  # IS_MODULE
                r = st == "m"
            return " 1 " if r else " 0 "

        e = re.sub(r"\b(IS_ENABLED|IS_BUILTIN|IS_MODULE|IS_REACHABLE)\s*\(\s*(\w+)\s*\)", mac, e)

        def defd(m):
            name = m.group(1) or m.group(2)
            if name == "MODULE":
                return " 1 "
            if name.startswith("CONFIG_"):
                return " 1 " if cfg.state(name) else " 0 "
            return " __UNK__ "

        e = re.sub(r"\bdefined\s*(?:\(\s*(\w+)\s*\)|\s(\w+))", defd, e)

        def ident(m):
            name = m.group(0)
            if name.startswith("CONFIG_"):
                st = cfg.state(name)
                if st == "y":
                    return "1"
                if st is None or st == "m":
                    return "0"
                v = cfg.cfg.get(name, "0")
                return v if re.match(r"^-?(0x[0-9a-fA-F]+|\d+)$", v) else "__UNK__"
            if name == "__UNK__":
                return name
            return "__UNK__"

        e = re.sub(r"\b[A-Za-z_]\w*\b", ident, e)
        if "__UNK__" in e:
            # unknown parts: try both values; if the result does not depend on them, use it
            results = set()
            for v in ("0", "1"):
                r = self._py(e.replace("__UNK__", v))
                results.add(r)
            return results.pop() if len(results) == 1 else None
        return self._py(e)

    @staticmethod
    def _py(e):
        e = re.sub(r"(?<=\d)[uUlL]+\b", "", e)
        e = e.replace("&&", " and ").replace("||", " or ")
        e = re.sub(r"!(?!=)", " not ", e)
        try:
            return bool(eval(e, {"__builtins__": {}}, {}))
        except Exception:
            return None


def active_lines(text, ev):
    """Blanks out lines in inactive #if branches; keeps line numbers."""
    lines = text.split("\n")
    # join continuation lines of directives for evaluation
    stack = []  # (parent_active, this_branch_active, any_taken)
    active = True
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        full = line
        j = i
        while full.endswith("\\") and j + 1 < len(lines):
            j += 1
            full = full[:-1] + " " + lines[j]
        m = re.match(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)$", full)
        if m:
            d, rest = m.group(1), m.group(2).strip()
            if d in ("if", "ifdef", "ifndef"):
                if d == "if":
                    r = ev.eval(rest)
                elif d == "ifdef":
                    r = ev.eval("defined(%s)" % rest.split()[0]) if rest else None
                else:
                    r = ev.eval("!defined(%s)" % rest.split()[0]) if rest else None
                taken = r is not False
                stack.append((active, taken, r is True))
                active = active and taken
            elif d == "elif":
                if stack:
                    parent, _, any_true = stack.pop()
                    r = ev.eval(rest)
                    taken = (not any_true) and r is not False
                    stack.append((parent, taken, any_true or r is True))
                    active = parent and taken
            elif d == "else":
                if stack:
                    parent, _, any_true = stack.pop()
                    taken = not any_true
                    stack.append((parent, taken, True))
                    active = parent and taken
            elif d == "endif":
                if stack:
                    parent, _, _ = stack.pop()
                    active = parent
            for k in range(i, j + 1):
                out.append("")
            i = j + 1
            continue
        for k in range(i, j + 1):
            out.append(lines[k] if active else "")
        i = j + 1
    return "\n".join(out)


def first_arg(text, pos):
    """Text of the first macro argument starting at pos (just after '(')."""
    depth = 0
    i = pos
    while i < len(text):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return text[pos:i].strip()
            depth -= 1
        elif c == "," and depth == 0:
            return text[pos:i].strip()
        elif c == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j
        i += 1
    return None


def find_wrappers(defines):
    """#define NAME(P, ...) bodies that pass P to a symbol_get-like macro."""
    macros = set(CALL_MACROS)
    changed = True
    while changed:
        changed = False
        for name, params, body in defines:
            if name in macros or not params:
                continue
            p = re.escape(params[0])
            if re.search(r"\b(%s)\s*\(\s*%s\s*[,)]" % ("|".join(sorted(macros)), p), body):
                macros.add(name)
                changed = True
    return macros


DEFINE_RE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)(.*)$", re.M)


def collect_defines(text):
    res = []
    joined = re.sub(r"\\\n", " ", text)
    for m in DEFINE_RE.finditer(joined):
        params = [p.strip() for p in m.group(2).split(",") if p.strip()]
        res.append((m.group(1), params, m.group(3)))
    return res


def find_sites(text, macros):
    """(line, target, kind, offset) for each call of a macro in macros or __symbol_get."""
    sites = []
    names = sorted(macros | {DIRECT})
    rx = re.compile(r"\b(%s)\s*\(" % "|".join(names))
    # skip #define bodies
    define_spans = []
    for m in re.finditer(r"^[ \t]*#[ \t]*define\b(?:[^\n]*\\\n)*[^\n]*", text, re.M):
        define_spans.append((m.start(), m.end()))
    di = 0
    for m in rx.finditer(text):
        while di < len(define_spans) and define_spans[di][1] < m.start():
            di += 1
        if di < len(define_spans) and define_spans[di][0] <= m.start() < define_spans[di][1]:
            continue
        # a declaration "void *__symbol_get(const char *symbol);"
        arg = first_arg(text, m.end())
        if arg is None:
            continue
        line = text.count("\n", 0, m.start()) + 1
        if m.group(1) == DIRECT:
            sm = re.match(r'^"(\w+)"$', arg)
            if sm:
                sites.append((line, sm.group(1), "name", m.start()))
            elif re.match(r"^const\s+char\b", arg):
                continue
            else:
                sites.append((line, arg, "dynamic", m.start()))
        else:
            if re.match(r"^\w+$", arg):
                sites.append((line, arg, "name", m.start()))
    return sites


def dead_reason(clean, pos, ev):
    """Why the call at pos is compiled out, or None."""
    # start of the enclosing function: the last "{" at the start of a line before pos
    start = clean.rfind("\n{", 0, pos)
    body = clean[start:pos] if start >= 0 else clean[:pos]
    for m in re.finditer(r"\bif\s*\(\s*!\s*IS_ENABLED\s*\(\s*(CONFIG_\w+)\s*\)\s*\)\s*return\b",
                         body):
        if ev.state(m.group(1)) not in ("y", "m"):
            return "after if (!IS_ENABLED(%s)) return" % m.group(1)
    return None


# ---------------------------------------------------------------- kbuild

def parse_makefiles(src, cfg):
    """Returns (obj_targets set of 'dir/name', members dict 'dir/file' -> set('dir/name'))."""
    obj_targets = set()
    members = {}
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for fn in files:
            if fn not in ("Makefile", "Kbuild"):
                continue
            path = os.path.join(root, fn)
            rel = os.path.relpath(root, src)
            rel = "" if rel == "." else rel
            text = re.sub(r"\\\n", " ", read(path))
            text = re.sub(r"#.*", "", text)

            def inline_includes(t, depth=0):
                def inc(mm):
                    ip = mm.group(1).replace("$(srctree)/", "").replace("$(src)/", rel + "/")
                    if depth > 3 or "$" in ip:
                        return ""
                    it = re.sub(r"#.*", "", re.sub(r"\\\n", " ", read(os.path.join(src, ip))))
                    return inline_includes(it, depth + 1)
                return re.sub(r"^\s*-?include\s+(\S+)\s*$", inc, t, flags=re.M)

            text = inline_includes(text)
            assigns = []
            vars_ = {}
            for line in text.split("\n"):
                m = re.match(r"^\s*([\w.\-/$():=]+?)\s*(\+=|:=|\?=|=)\s*(.*)$", line)
                if not m:
                    continue
                lhs, op, rhs = m.group(1), m.group(2), m.group(3)
                # expand simple variables inside tokens: $(KVM)/vfio.o
                rhs = re.sub(r"\$\((\w+)\)(?=/)",
                             lambda mm: vars_.get(mm.group(1), mm.group(0)).strip(), rhs)
                assigns.append((lhs, rhs))
                if op == "+=":
                    vars_[lhs] = vars_.get(lhs, "") + " " + rhs
                elif op == "?=" and lhs in vars_:
                    pass
                else:
                    vars_[lhs] = rhs

            def expand(tok, depth=0):
                mm = re.match(r"^\$\(([\w\-]+)\)$", tok)
                if mm and depth < 5 and mm.group(1) in vars_:
                    out = []
                    for t in vars_[mm.group(1)].split():
                        out.extend(expand(t, depth + 1))
                    return out
                return [tok]

            def cond_ok(suffix):
                mm = re.match(r"^\$\((CONFIG_\w+)(?::m=y)?\)$", suffix)
                if not mm:
                    return True
                return cfg.get(mm.group(1)) in ("y", "m")

            for lhs, rhs in assigns:
                toks = []
                for t in rhs.split():
                    toks.extend(expand(t))
                objs = [t[:-2] for t in toks if t.endswith(".o") and "$" not in t]
                if not objs:
                    continue
                if lhs.startswith("obj-"):
                    for o in objs:
                        obj_targets.add(os.path.normpath(os.path.join(rel, o)))
                    continue
                mm = re.match(r"^([\w\-]+)-(y|m|objs|\$\(.*\))$", lhs)
                if not mm:
                    continue
                name, suffix = mm.group(1), mm.group(2)
                if name in ("ccflags", "asflags", "ldflags", "subdir", "lib", "extra",
                            "always", "hostprogs", "targets", "clean", "userprogs", "obj",
                            "core", "drivers", "libs", "head", "init", "net", "virt"):
                    continue
                if suffix.startswith("$") and not cond_ok(suffix):
                    continue
                comp = os.path.normpath(os.path.join(rel, name))
                for o in objs:
                    members.setdefault(os.path.normpath(os.path.join(rel, o)), set()).add(comp)
    return obj_targets, members


def main():
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    src, config, moddir = sys.argv[1:]
    cfg = load_config(config)
    ev = CondEval(cfg)

    kos = {}
    kdir = os.path.join(moddir, "kernel")
    for root, _, files in os.walk(kdir):
        for fn in files:
            m = re.match(r"^(.*)\.ko(\.xz|\.gz|\.zst)?$", fn)
            if m:
                rel = os.path.relpath(os.path.join(root, m.group(1)), kdir)
                kos[os.path.normpath(rel)] = m.group(1).replace("-", "_")

    # wrapper macros, from every header and .c that defines one
    candidates = {}
    for path in grep_files(src, r"\b(symbol_get|symbol_request|dvb_attach|__symbol_get)\b"):
        candidates[path] = read(path)
    defines = []
    for path, text in candidates.items():
        defines.extend(collect_defines(strip_comments(text)))
    macros = find_wrappers(defines)
    extra = sorted(macros - CALL_MACROS)
    if extra:
        for path in grep_files(src, r"\b(%s)\b" % "|".join(extra)):
            if path not in candidates:
                candidates[path] = read(path)

    obj_targets, members = parse_makefiles(src, cfg)

    def modules_of_c(relc, seen=None):
        base = relc[:-2]
        mods = set()
        for comp in members.get(base, ()):
            if comp in kos:
                mods.add(comp)
        if base in obj_targets and base in kos:
            mods.add(base)
        if not mods:
            # #included .c file: the includer's modules
            seen = seen or set()
            seen.add(relc)
            bn = os.path.basename(relc)
            d = os.path.dirname(relc)
            for other in os.listdir(os.path.join(src, d)) if os.path.isdir(os.path.join(src, d)) else []:
                orel = os.path.join(d, other)
                if not other.endswith(".c") or orel in seen:
                    continue
                if re.search(r'#\s*include\s*"%s"' % re.escape(bn), read(os.path.join(src, orel))):
                    mods |= modules_of_c(orel, seen)
        return mods

    out = []
    header_sites = []
    for path, text in sorted(candidates.items()):
        rel = os.path.relpath(path, src)
        clean = active_lines(strip_comments(text), ev)
        sites = find_sites(clean, macros)
        if not sites:
            continue
        if rel.endswith(".h"):
            header_sites.append((rel, clean, sites))
            continue
        live = []
        for site in sites:
            dead = dead_reason(clean, site[3], ev)
            if dead:
                sys.stderr.write("dead\t%s:%d\t%s\t%s\n" % (rel, site[0], site[1], dead))
            else:
                live.append(site)
        for mod in sorted(modules_of_c(rel)):
            for line, target, kind, _ in live:
                out.append((kos[mod], target, "%s:%d" % (rel, line), kind))

    # headers: static inline functions containing a call site, followed through
    # the .c files (and inline functions of other headers) that call them
    def enclosing_fn(clean, pos):
        fns = list(re.finditer(r"\b(\w+)\s*\([^;{}]*\)\s*\{", clean[:pos]))
        return fns[-1].group(1) if fns else None

    def inline_users(hrel, fn, depth=0):
        mods = set()
        hb = os.path.basename(hrel)
        for cpath in grep_files(src, r"\b%s\s*\(" % fn):
            crel = os.path.relpath(cpath, src)
            if crel == hrel:
                continue
            ctext = strip_comments(read(cpath))
            if hb not in ctext:
                continue
            for cm in re.finditer(r"\b%s\s*\(" % re.escape(fn), ctext):
                if crel.endswith(".c"):
                    mods |= modules_of_c(crel)
                    break
                caller = enclosing_fn(ctext, cm.start())
                if caller and depth < 3:
                    mods |= inline_users(crel, caller, depth + 1)
        return mods

    for rel, clean, sites in header_sites:
        for line, target, kind, pos in sites:
            fn = enclosing_fn(clean, pos)
            if not fn:
                continue
            for mod in sorted(inline_users(rel, fn)):
                out.append((kos[mod], target, "%s:%d" % (rel, line), kind))

    for row in sorted(set(out)):
        print("\t".join(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
