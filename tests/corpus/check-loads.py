#!/usr/bin/env python3
"""Whole Debian trees must load: `kopolicy check -b ROOT` on every module of a
stock tree (its own config and Module.symvers) predicts no load failure and no
P taint, and its symbol_get() failures are exactly the real ones.

usage: check-loads.py [--offline] [--jobs N] KOPOLICY_BIN [TREE...]
  TREE: as tests/corpus/fetch-trees.sh (default: its default list)

Per tree, five tests:
  errors      kopolicy reads every module (no input error, exit status 0 with
              --fail-on never, nothing on stderr but, for a kernel newer than
              the newest modelled loader, the unverified-kernel warning whose
              text kernel.assumptions also names)
  vermagic    the kernel's vermagic is derived from the tree's config (so the
              loads test below also proves it equals every module's)
  loads       no module is predicted to fail to load (a Debian tree loads whole)
  taint       no module is predicted to carry P (every module is GPL-compatible)
  symbol_get  the symbol-get-non-gpl findings == the lines of
              expected-symbol-get.txt for this tree whose caller exists in it
              (real failures: plain EXPORT_SYMBOL targets under the 2023 rule)
The other symbol_get findings (targets Debian does not build) are listed, not
counted.  Every module of a Debian image package is in-tree.

Prints one PASS/FAIL line per test with the first offenders, and a closing
"N passed, N failed".  Exit: 0 all passed, 1 a test failed, 2 setup error.
"""

import argparse
import collections
import fnmatch
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_SHOW = 5


class SetupError(Exception):
    pass


def fetch(trees, offline):
    cmd = [os.path.join(HERE, "fetch-trees.sh")] + (["--offline"] if offline else []) + trees
    p = subprocess.run(cmd, stdout=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        raise SetupError("fetch-trees.sh failed (exit %d)" % p.returncode)
    specs = []
    for line in p.stdout.splitlines():
        if line:
            specs.append(dict(f.split("=", 1) for f in line.split("\t")))
    return specs


def read_expected(path):
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.split("#", 1)[0].rstrip()
            if not line:
                continue
            cols = line.split("\t")
            if len(cols) != 3:
                raise SetupError("%s:%d: expected TREES<TAB>SYMBOL<TAB>CALLER" % (path, n))
            rows.append((cols[0].split(), cols[1], cols[2]))
    return rows


def expected_for(rows, tree):
    return {(sym, caller) for globs, sym, caller in rows
            if any(fnmatch.fnmatchcase(tree, g) for g in globs)}


def show(items):
    items = sorted(items)
    s = "; ".join(items[:MAX_SHOW])
    return s + ("; ... (%d in all)" % len(items) if len(items) > MAX_SHOW else "")


UNVERIFIED_PREFIX = "kopolicy: warning: "
UNVERIFIED_SUFFIX = " [unverified-kernel]"


def is_unverified_kernel(line, assumptions):
    """The unverified-kernel warning (lib/ctx/context.c) for an assumption the JSON names."""
    if not (line.startswith(UNVERIFIED_PREFIX) and line.endswith(UNVERIFIED_SUFFIX)):
        return False
    return line[len(UNVERIFIED_PREFIX):-len(UNVERIFIED_SUFFIX)] in assumptions


def check_tree(binary, spec, rows, jobs):
    tree = spec["tree"]
    t0 = time.monotonic()
    p = subprocess.run([binary, "check", "-b", spec["root"], "--format", "json",
                        "--fail-on", "never", "-j", str(jobs)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dt = time.monotonic() - t0
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        raise SetupError("%s: kopolicy check exit %d, no JSON; stderr: %s"
                         % (tree, p.returncode, p.stderr.decode(errors="replace")[-500:]))
    mods = doc["modules"]
    k = doc["kernel"]
    print("== %s: %s (%s, rules %s), %d modules, %.1fs"
          % (tree, k.get("release"), k.get("version"), k.get("rules"), len(mods), dt))
    for a in k.get("assumptions") or []:
        print("   assumed: %s" % a)
    stderr = p.stderr.decode(errors="replace").strip()
    results = []

    bad = ["exit %d" % p.returncode] if p.returncode != 0 else []
    bad += ["%s" % e for e in doc.get("errors") or []]
    # the one designed stderr line: a kernel newer than the newest modelled loader, the
    # warning saying what kernel.assumptions says (any other line is an input error)
    lines = stderr.splitlines() if stderr else []
    designed = [ln for ln in lines if is_unverified_kernel(ln, k.get("assumptions") or [])]
    bad += ["stderr: " + ln for ln in lines if ln not in designed][:1]
    read = "%d modules read" % len(mods)
    if designed:
        read += " (stderr: the unverified-kernel warning its kernel.assumptions names)"
    results.append(("errors", bad, read))

    vm = k.get("vermagic")
    bad = [] if vm and vm.startswith("%s " % k.get("release")) else ["not derived: %r" % vm]
    results.append(("vermagic", bad, "'%s'" % vm))

    fails = []
    for m in mods:
        if not m["loads"]:
            f = next((f for f in m["findings"] if f["severity"] == "error"), None)
            fails.append("%s %s (%s)" % (m["name"], m.get("errno"),
                                         f["message"] if f else "no error finding"))
    results.append(("loads", fails, "0 of %d fail" % len(mods)))

    tainted = ["%s taint %s" % (m["name"], m["taint"]) for m in mods
               if "P" in (m.get("taint") or "")]
    results.append(("taint", tainted, "0 of %d carry P" % len(mods)))

    names = {m["name"] for m in mods}
    got = collections.defaultdict(set)
    other = []
    for m in mods:
        for f in m["findings"]:
            if f["id"] == "symbol-get-non-gpl":
                got[(f["symbol"], m["name"])].add(f["message"])
            elif f["id"].startswith("symbol-get"):
                other.append("%s: %s" % (m["name"], f["message"]))
    want = {(s, c) for s, c in expected_for(rows, tree) if c in names}
    diff = ["unexpected %s <- %s" % sc for sc in set(got) - want]
    diff += ["missing %s <- %s" % sc for sc in want - set(got)]
    results.append(("symbol_get", diff, "%d real GPL-only failures as expected: %s"
                    % (len(want), show("%s <- %s" % sc for sc in want) or "none")))
    if other:
        print("   other symbol_get findings (not counted): %s" % show(other))

    npass = 0
    for name, bad, ok_text in results:
        if bad:
            print("FAIL %s %s: %s" % (tree, name, show(bad)))
        else:
            print("PASS %s %s: %s" % (tree, name, ok_text))
            npass += 1
    return npass, len(results) - npass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kopolicy_bin")
    ap.add_argument("trees", nargs="*")
    ap.add_argument("--offline", action="store_true",
                    default=os.environ.get("KOPOLICY_CORPUS_OFFLINE") == "1")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--expected", default=os.path.join(HERE, "expected-symbol-get.txt"))
    a = ap.parse_args()
    passed = failed = 0
    try:
        binary = os.path.abspath(a.kopolicy_bin)
        if not os.access(binary, os.X_OK):
            raise SetupError("%s is not executable" % binary)
        rows = read_expected(a.expected)
        for spec in fetch(a.trees, a.offline):
            p, f = check_tree(binary, spec, rows, a.jobs)
            passed += p
            failed += f
    except SetupError as e:
        print("check-loads: %s" % e, file=sys.stderr)
        print("%d passed, %d failed" % (passed, failed + 1))
        return 2
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
