#!/usr/bin/env python3
"""Compare `kopolicy graph --format json` with depmod's view of the same module tree.

One comparison per invocation; prints `PASS <what>` or `FAIL <what>: ...` with
the first differences (module path, symbol, expected vs actual) and exits
0 equal, 1 different, 2 unusable input.  Called by check-graph.sh.

  deps  KP_JSON MODDIR MODULES_DEP
      Every module of MODULES_DEP (written by `depmod -b`) is in KP_JSON and
      vice versa (matched by path relative to MODDIR, the directory kopolicy
      was given); every kopolicy name is KBUILD_MODNAME of its file name
      (basename without .ko[.xz|.zst|.gz], '-' as '_'); for every module the
      transitive closure of kopolicy's `depends` equals its modules.dep line as
      a set; kopolicy's load order (the order of "modules") puts every
      modules.dep dependency before its user; no module names a base-module
      (`base_depends`) although the whole tree is the set.

  edges KP_JSON MODDIR MODULES_SYMBOLS DEPMOD_STDERR
      Per import: the provider kopolicy chose equals depmod's, derived from
      depmod's own outputs: the module `alias symbol:SYM MOD` in modules.symbols
      names, else unresolved if depmod warned "needs unknown symbol SYM" for
      the module, else vmlinux (depmod ran with the same -E/-F kernel symbols).
      Hence kopolicy's direct `depends` (the distinct module providers) equal
      depmod's direct dependencies.  The import list itself is kopolicy's
      (validated against readelf by compare-info.py's "imports" category).

  unresolved KP_JSON MODDIR DEPMOD_STDERR
      The set of (module, symbol) of kopolicy's non-weak `unresolved` equals
      the "MOD needs unknown symbol SYM" warnings of `depmod -e -F|-E`.
      Other depmod warnings (e.g. "disagrees about version of symbol") are
      listed as notes; they are not part of kopolicy's unresolved report.

Options: --label TEXT (prefix of the PASS/FAIL line), --max N (differences
shown, default 20), --expect-nonempty (FAIL if depmod reported no unknown
symbol: for the thinned-symbol negative controls).
"""
import argparse
import json
import os
import re
import sys

SUFFIX = re.compile(r"\.ko(\.(xz|zst|gz))?$")
UNKNOWN = re.compile(r"^depmod: WARNING: (.+?) needs unknown symbol (\S+)$")


class InputError(Exception):
    pass


def kernel_name(depmod_name):
    """depmod (kmod) names a module after its file, '-' as '_' but ',' kept; the module's
    own name (KBUILD_MODNAME, .gnu.linkonce.this_module, what kopolicy and the kernel
    report) has ',' as '_' too (scripts/Makefile.lib name-fix-token): sid 7.2 riscv64's
    thead,th1520-aon.ko is thead_th1520_aon."""
    return depmod_name.replace(",", "_")


def modname_of(relpath):
    base = os.path.basename(relpath)
    m = SUFFIX.search(base)
    if not m:
        raise InputError(f"not a module file name: {relpath}")
    return kernel_name(base[: m.start()].replace("-", "_"))


def load_kp(path, moddir):
    """-> (modules in output order, {relpath: module}, {name: [relpath]})."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: {e}") from e
    if not isinstance(doc, dict) or not isinstance(doc.get("modules"), list):
        raise InputError(f"{path}: no \"modules\" array")
    moddir = os.path.normpath(moddir)
    by_path, by_name = {}, {}
    for m in doc["modules"]:
        rel = os.path.relpath(os.path.normpath(m["path"]), moddir)
        if rel.startswith(".."):
            raise InputError(f"{path}: module path {m['path']} is outside {moddir}")
        m["rel"] = rel
        if rel in by_path:
            raise InputError(f"{path}: {rel} listed twice")
        by_path[rel] = m
        by_name.setdefault(m["name"], []).append(rel)
    return doc["modules"], by_path, by_name


def load_modules_dep(path):
    deps = {}
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.rstrip("\n")
                if not line:
                    continue
                head, sep, tail = line.partition(":")
                if not sep:
                    raise InputError(f"{path}:{n}: no ':'")
                deps[head] = tail.split()
    except OSError as e:
        raise InputError(f"{path}: {e}") from e
    return deps


def depmod_path_rel(p, moddir_names):
    """depmod prints absolute paths under its -b copy: keep what follows lib/modules/<rel>/."""
    for marker in moddir_names:
        i = p.find(marker)
        if i >= 0:
            return p[i + len(marker):]
    return None


def load_depmod_stderr(path, release):
    """-> ({(relpath, sym)}, [other lines])."""
    unknown, other = set(), []
    marker = [f"/lib/modules/{release}/"]
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line:
                    continue
                m = UNKNOWN.match(line)
                if m:
                    rel = depmod_path_rel(m.group(1), marker)
                    if rel is None:
                        raise InputError(f"{path}: cannot place {m.group(1)} under lib/modules/{release}/")
                    unknown.add((rel, m.group(2)))
                else:
                    other.append(line)
    except OSError as e:
        raise InputError(f"{path}: {e}") from e
    return unknown, other


def closure(rel, direct):
    seen, stack = set(), list(direct.get(rel, ()))
    while stack:
        d = stack.pop()
        if d in seen:
            continue
        seen.add(d)
        stack.extend(direct.get(d, ()))
    seen.discard(rel)  # a cycle member does not list itself (depmod refuses cycles anyway)
    return seen


def cmp_deps(args, problems):
    mods, by_path, by_name = load_kp(args.kp_json, args.moddir)
    dep = load_modules_dep(args.modules_dep)
    for rel in sorted(set(dep) - set(by_path)):
        problems.append(f"{rel}: in modules.dep, not in kopolicy's graph")
    for rel in sorted(set(by_path) - set(dep)):
        problems.append(f"{rel}: in kopolicy's graph, not in modules.dep")
    for rel, m in sorted(by_path.items()):
        want = modname_of(rel)
        if m["name"] != want:
            problems.append(f"{rel}: kopolicy name {m['name']!r}, file name gives {want!r}")
        if m.get("base_depends"):
            problems.append(f"{rel}: base_depends {m['base_depends']} (whole tree is the set)")
    dups = {n: p for n, p in by_name.items() if len(p) > 1}
    for n, p in sorted(dups.items()):
        problems.append(f"module name {n} is used by {len(p)} files: {p}")
    direct = {}
    for rel, m in by_path.items():
        ds = []
        for n in m["depends"]:
            if n not in by_name:
                problems.append(f"{rel}: depends on {n!r}, which is not a module of the graph")
                continue
            ds.extend(by_name[n])
        direct[rel] = ds
    checked = 0
    for rel in sorted(set(dep) & set(by_path)):
        got, want = closure(rel, direct), set(dep[rel])
        checked += 1
        if got != want:
            miss, extra = sorted(want - got), sorted(got - want)
            problems.append(
                f"{rel} ({by_path[rel]['name']}): modules.dep has {len(want)}, kopolicy closure "
                f"{len(got)}; missing {[modname_of(x) for x in miss]}, extra {[modname_of(x) for x in extra]}"
            )
    pos = {m["rel"]: i for i, m in enumerate(mods)}
    for rel in sorted(set(dep) & set(by_path)):
        for d in dep[rel]:
            if d in pos and pos[d] > pos[rel]:
                problems.append(f"{rel}: kopolicy's load order puts dependency {d} after it")
    ndeps = sum(len(v) for v in dep.values())
    return f"{checked} modules, {ndeps} modules.dep entries, {sum(len(m['depends']) for m in mods)} direct edges"


def load_modules_symbols(path):
    owner = {}
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if line.startswith("#") or not line.strip():
                    continue
                parts = line.split()
                if len(parts) != 3 or parts[0] != "alias" or not parts[1].startswith("symbol:"):
                    raise InputError(f"{path}:{n}: unexpected line {line.strip()!r}")
                owner.setdefault(parts[1][7:], []).append(kernel_name(parts[2]))
    except OSError as e:
        raise InputError(f"{path}: {e}") from e
    return owner


def cmp_edges(args, problems):
    _, by_path, _ = load_kp(args.kp_json, args.moddir)
    owner = load_modules_symbols(args.modules_symbols)
    unknown, _ = load_depmod_stderr(args.depmod_stderr, args.release)
    multi = {s: o for s, o in owner.items() if len(o) > 1}
    for s, o in sorted(multi.items()):
        problems.append(f"modules.symbols: {s} has {len(o)} owners {o} (depmod keeps one)")
    nimp = nmod = nvm = nun = 0
    for rel, m in sorted(by_path.items()):
        want_deps = []
        for imp in m["imports"]:
            sym = imp["symbol"]
            nimp += 1
            if sym in owner and owner[sym][0] != m["name"]:
                want = ("module", owner[sym][0])
                if owner[sym][0] not in want_deps:
                    want_deps.append(owner[sym][0])
                nmod += 1
            elif (rel, sym) in unknown:
                want = ("unresolved", None)
                nun += 1
            elif imp["weak"] and imp["kind"] == "unresolved":
                # depmod does not warn about weak unknowns: vmlinux and unresolved look alike
                want = ("unresolved", None)
                nun += 1
            elif imp["kind"] == "loader" and sym == ".TOC.":
                # ppc64: the kernel's loader and depmod both define .TOC. themselves
                want = ("loader", "loader")
                nvm += 1
            else:
                want = ("vmlinux", "vmlinux")
                nvm += 1
            got = (imp["kind"], imp["provider"] if imp["kind"] != "unresolved" else None)
            if got != want:
                problems.append(f"{rel}: import {sym}: depmod {want[0]} {want[1] or ''}, "
                                f"kopolicy {got[0]} {got[1] or ''}".rstrip())
        if sorted(m["depends"]) != sorted(want_deps):
            problems.append(f"{rel}: direct depends kopolicy {sorted(m['depends'])}, depmod {sorted(want_deps)}")
    return f"{len(by_path)} modules, {nimp} imports ({nmod} module, {nvm} vmlinux, {nun} unresolved per depmod)"


def cmp_unresolved(args, problems):
    _, by_path, _ = load_kp(args.kp_json, args.moddir)
    unknown, other = load_depmod_stderr(args.depmod_stderr, args.release)
    got = set()
    nweak = 0
    for rel, m in by_path.items():
        for u in m["unresolved"]:
            if u["weak"]:
                nweak += 1
                continue
            got.add((rel, u["name"]))
    for rel, sym in sorted(unknown - got):
        problems.append(f"{rel}: depmod: needs unknown symbol {sym}; kopolicy resolves it")
    for rel, sym in sorted(got - unknown):
        problems.append(f"{rel}: kopolicy: unresolved {sym}; depmod resolves it")
    if args.expect_nonempty and not unknown:
        problems.append("depmod reported no unknown symbol although the kernel symbols were thinned")
    notes = ""
    if other:
        kinds = {}
        for line in other:
            k = re.sub(r"^depmod: (WARNING|ERROR): \S+ ", r"\1: MOD ", line)
            k = re.sub(r"symbol \S+$", "symbol SYM", k)
            kinds[k] = kinds.get(k, 0) + 1
        notes = "; other depmod messages: " + ", ".join(f"{n}x {k!r}" for k, n in sorted(kinds.items()))
    return f"depmod {len(unknown)} unknown, kopolicy {len(got)} unresolved (+{nweak} weak){notes}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--label", default="")
    ap.add_argument("--max", type=int, default=20)
    ap.add_argument("--release", default="", help="kernel release (edges, unresolved)")
    ap.add_argument("--expect-nonempty", action="store_true")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("deps")
    p.add_argument("kp_json"); p.add_argument("moddir"); p.add_argument("modules_dep")
    p = sub.add_parser("edges")
    p.add_argument("kp_json"); p.add_argument("moddir"); p.add_argument("modules_symbols")
    p.add_argument("depmod_stderr")
    p = sub.add_parser("unresolved")
    p.add_argument("kp_json"); p.add_argument("moddir"); p.add_argument("depmod_stderr")
    args = ap.parse_args()
    if not args.release:
        args.release = os.path.basename(os.path.normpath(args.moddir))
    what = args.label.strip() or args.cmd
    problems = []
    try:
        stats = {"deps": cmp_deps, "edges": cmp_edges, "unresolved": cmp_unresolved}[args.cmd](args, problems)
    except (InputError, KeyError, TypeError) as e:
        print(f"ERROR {what}: {e!r}")
        return 2
    if problems:
        print(f"FAIL {what}: {len(problems)} differences ({stats})")
        for line in problems[: args.max]:
            print(f"    {line}")
        if len(problems) > args.max:
            print(f"    ... {len(problems) - args.max} more")
        return 1
    print(f"PASS {what} ({stats})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
