#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Compares the symbol_get() targets of one architecture's tree with the amd64
tree of the same kernel build, and with objdump call-site references.

Usage: compare-arch.py NAME REF.json ARCH.json [OBJDUMP.tsv [EXPLAINED.tsv]]

REF.json and ARCH.json are `kopolicy info --json` of the amd64 tree and of
the architecture's tree. Which symbols a driver looks up is decided by its
source, not the architecture: over the modules present in both trees, the
(module, target) pairs found exactly in ARCH.json are compared with those of
REF.json (recall = found / reference, precision = matching / found).
OBJDUMP.tsv (objdump-sites.py) holds one line per call site of __symbol_get
(module, site, target or "-"): every site of the architecture's modules must
have exactly one entry, exact with the same target, or dynamic where objdump
finds no string.

EXPLAINED.tsv (name-glob, module, target, miss|extra, explanation) explains
differences with the amd64 tree that the kernel configuration decides.
Prints one summary line and every difference; exit 0 when recall and
precision are >= 99% on both comparisons, every found target is exact and
every difference with the amd64 tree is explained.
"""
import fnmatch
import json
import sys


def load(path):
    with open(path) as f:
        data = json.load(f)
    mods = data["modules"] if isinstance(data, dict) else data
    out = {}
    for m in mods:
        if not m.get("symbol_get") and not m.get("symbol_get_method"):
            if m.get("name") not in out:
                out[m.get("name")] = None
            continue
        out[m["name"]] = m
    return out


def pairs(m, exact_only=True):
    res = set()
    for g in m.get("symbol_get") or []:
        if g["symbol"] and (g["method"] == "exact" or not exact_only):
            res.add(g["symbol"])
    return res


def main():
    name, ref_path, arch_path = sys.argv[1:4]
    objdump_path = sys.argv[4] if len(sys.argv) > 4 else None
    explained = {}
    if len(sys.argv) > 5:
        with open(sys.argv[5]) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                glob, mod, target, kind, why = line.rstrip("\n").split("\t")
                if fnmatch.fnmatch(name, glob):
                    explained[(mod, target, kind)] = why
    ref, arch = load(ref_path), load(arch_path)
    common = set(ref) & set(arch)
    rp, ap = set(), set()
    methods = {}
    nmods = 0
    nonexact = []
    for mod in sorted(arch):
        m = arch[mod]
        if not m:
            continue
        nmods += 1
        for g in m.get("symbol_get") or []:
            methods[g["method"]] = methods.get(g["method"], 0) + 1
            if g["method"] == "heuristic":
                nonexact.append((mod, g["site"], g["symbol"]))
        if mod in common:
            ap |= {(mod, s) for s in pairs(m)}
    for mod in common:
        if ref[mod]:
            rp |= {(mod, s) for s in pairs(ref[mod], exact_only=False)}
    hit = rp & ap
    recall = len(hit) / len(rp) if rp else 1.0
    precision = len(hit) / len(ap) if ap else 1.0
    ok = recall >= 0.99 and precision >= 0.99 and not nonexact
    print(f"{name}: {nmods} modules with __symbol_get, entries "
          + ", ".join(f"{k} {v}" for k, v in sorted(methods.items()))
          + f"; vs amd64 ({len(common)} common modules): {len(rp)} reference pairs,"
          f" {len(ap)} found, recall {recall:.4f}, precision {precision:.4f}")
    unexplained = 0
    for kind, diff in (("miss", rp - ap), ("extra", ap - rp)):
        for p in sorted(diff):
            why = explained.get((p[0], p[1], kind))
            unexplained += why is None
            print(f"  {kind}: {p[0]} {p[1]}: {why or 'UNEXPLAINED'}")
    ok = ok and not unexplained
    for x in nonexact:
        print(f"  heuristic entry: {x[0]} {x[1]} {x[2]}")
    if objdump_path and objdump_path != "/dev/null":
        sites = {}
        with open(objdump_path) as f:
            for line in f:
                mod, site, target = line.rstrip("\n").split("\t")
                sites[(mod, site)] = None if target == "-" else target
        found = {}
        for mod, m in arch.items():
            for g in (m or {}).get("symbol_get") or []:
                found.setdefault((mod, g["site"]), []).append(g)
        good = 0
        bad = []
        for key, target in sorted(sites.items()):
            got = found.get(key, [])
            syms = sorted({g["symbol"] for g in got if g["method"] == "exact"})
            dyn = any(g["method"] == "dynamic" for g in got)
            if target is not None and syms == sorted(target.split(",")):
                good += 1
            elif target is None and (dyn or syms):
                good += 1  # objdump sees no string: the argument is computed
            else:
                bad.append((key, target, syms, [g["method"] for g in got]))
        extra = sorted(set(found) - set(sites))
        nref = len(sites)
        frac = good / nref if nref else 1.0
        print(f"{name}: objdump call sites {nref}, same target {good} ({frac:.4f}),"
              f" sites not in objdump {len(extra)}")
        for b in bad:
            print(f"  objdump differs: {b[0][0]} {b[0][1]}: objdump {b[1]}, kopolicy {b[2]} {b[3]}")
        for e in extra:
            print(f"  not an objdump site: {e[0]} {e[1]}")
        ok = ok and frac >= 0.99 and not extra
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
