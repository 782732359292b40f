#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Compares source truth with what kopolicy finds, for one tree.

Usage: compare.py TREE TRUTH.tsv INFO.json EXPLAINED.tsv

TRUTH.tsv is source-truth.py's output; INFO.json is `kopolicy info --json`.
Pairs are (module, target). Found = exact + heuristic entries of every module.
A miss or false positive listed in EXPLAINED.tsv (tree-glob, module, target,
miss|fp, explanation) is printed with its explanation; others are printed as
UNEXPLAINED. Exit 0 when recall and precision are both >= 99% and nothing is
unexplained, 1 otherwise.
"""
import fnmatch
import json
import sys


def main():
    tree, truth_path, info_path, explained_path = sys.argv[1:5]
    truth = {}
    truth_dyn = {}
    with open(truth_path) as f:
        for line in f:
            mod, target, loc, kind = line.rstrip("\n").split("\t")
            if kind == "name":
                truth.setdefault((mod, target), []).append(loc)
            else:
                truth_dyn.setdefault(mod, []).append(loc)
    with open(info_path) as f:
        info = json.load(f)
    found = {}
    dyn = {}
    methods = {"exact": set(), "heuristic": set()}
    for m in info.get("modules", []):
        for g in m.get("symbol_get") or []:
            if g.get("method") == "dynamic":
                dyn.setdefault(m["name"], []).append(g)
                continue
            if not g.get("symbol"):
                continue
            key = (m["name"], g["symbol"])
            found.setdefault(key, []).append(g)
            methods.setdefault(g.get("method"), set()).add(key)
    explained = []
    try:
        with open(explained_path) as f:
            for line in f:
                if not line.strip() or line.startswith("#"):
                    continue
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 5:
                    explained.append(parts[:5])
    except OSError:
        pass

    def explain(mod, target, kind):
        for glob, emod, etarget, ekind, text in explained:
            if fnmatch.fnmatch(tree, glob) and emod == mod and etarget == target and ekind == kind:
                return text
        return None

    t = set(truth)
    fset = set(found)
    hit = t & fset
    recall = len(hit) / len(t) if t else 1.0
    precision = len(hit) / len(fset) if fset else 1.0
    exact_only = methods["exact"] - methods["heuristic"]
    heur = {k for k in fset if k not in exact_only}
    print("tree %s" % tree)
    print("  pairs in source truth: %d (%d modules)" % (len(t), len({m for m, _ in t})))
    print("  found exact:           %d" % len(exact_only))
    print("  found heuristic:       %d" % len(heur))
    print("  dynamic sites:         %d in %s (source: %d in %s)" % (
        sum(len(v) for v in dyn.values()), ",".join(sorted(dyn)) or "-",
        sum(len(v) for v in truth_dyn.values()), ",".join(sorted(truth_dyn)) or "-"))
    for mod, gs in sorted(dyn.items()):
        fmts = sorted({g.get("format") or "(none)" for g in gs})
        print("    %s: %d sites, format %s" % (mod, len(gs), ", ".join(fmts)))
    print("  recall:    %.2f%% (%d/%d)" % (100 * recall, len(hit), len(t)))
    print("  precision: %.2f%% (%d/%d)" % (100 * precision, len(hit), len(fset)))
    unexplained = 0
    for mod, target in sorted(t - fset):
        why = explain(mod, target, "miss")
        unexplained += why is None
        print("  miss %s %s (%s): %s" % (mod, target, ", ".join(truth[(mod, target)]),
                                        why or "UNEXPLAINED"))
    for mod, target in sorted(fset - t):
        why = explain(mod, target, "fp")
        unexplained += why is None
        sites = ", ".join("%s %s" % (g.get("site"), g.get("method")) for g in found[(mod, target)])
        print("  false positive %s %s (%s): %s" % (mod, target, sites, why or "UNEXPLAINED"))
    for mod in sorted(set(truth_dyn) - set(dyn)):
        print("  dynamic site not reported in %s (%s)" % (mod, ", ".join(truth_dyn[mod])))
        unexplained += 1
    ok = recall >= 0.99 and precision >= 0.99 and unexplained == 0 and len(t) > 0
    print("  %s" % ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
