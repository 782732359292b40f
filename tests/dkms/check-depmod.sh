#!/bin/bash
# check-depmod.sh - kopolicy check -b / graph -b of a root holding the kernel's own modules plus
# every dkms build in updates/dkms/ (what `dkms install` leaves), against `depmod -b` of the
# same root: the file used under each module name (modules.dep's entries) and each module's
# dependencies (modules.dep's lists, transitive) must be the same.
#
# usage: tests/dkms/check-depmod.sh KOPOLICY_BIN
# The root is made by tests/dkms/run-dkms-oracle.sh --prepare-only (cached builds).
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "check-depmod: error: line $LINENO: exit status $?" >&2' ERR
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# = 1 ] && [ -x "$1" ] || { echo "usage: $0 KOPOLICY_BIN" >&2; exit 2; }
KP=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
WORK=$("$HERE/run-dkms-oracle.sh" --prepare-only | sed -n 's/^WORK=//p')
ROOT=$WORK/root
ABI=$(ls "$ROOT/lib/modules")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$KP" check -b "$ROOT" -f json --fail-on never >"$T/check.json" 2>"$T/check.err" || {
	cat "$T/check.err" >&2; exit 1; }
# exit 1: unresolved imports (dahdi_echocan_oslec's oslec_* have no provider), not an error
rc=0
"$KP" graph -b "$ROOT" -f json >"$T/graph.json" 2>"$T/graph.err" || rc=$?
[ $rc -le 1 ] || { cat "$T/graph.err" >&2; exit 1; }
python3 - "$ROOT/lib/modules/$ABI" "$T/check.json" "$T/graph.json" <<'PY'
import json, sys
moddir, check, graph = sys.argv[1:]
dep = {}
for line in open(moddir + "/modules.dep"):
    k, v = line.rstrip("\n").split(":", 1)
    dep[k] = v.split()
rel = lambda p: p[len(moddir) + 1:] if p.startswith(moddir + "/") else p
c = json.load(open(check))
used = sorted(rel(m["path"]) for m in c["modules"])
fails = 0
if used != sorted(dep):
    fails += 1
    a, b = set(used), set(dep)
    print("FAIL files: kopolicy only %s; depmod only %s" % (sorted(a - b)[:10], sorted(b - a)[:10]))
g = json.load(open(graph))
path = {m["name"]: rel(m["path"]) for m in g["modules"]}
direct = {m["name"]: m["depends"] for m in g["modules"]}
def closure(n, seen):
    for d in direct.get(n, []):
        if d not in seen:
            seen.add(d)
            closure(d, seen)
    return seen
ndep = 0
for m in g["modules"]:
    p = rel(m["path"])
    want = set(dep.get(p, []))
    got = {path[d] for d in closure(m["name"], set()) if d in path}
    ndep += 1
    if want != got:
        fails += 1
        if fails <= 20:
            print("FAIL deps %s: kopolicy only %s; depmod only %s" % (p, sorted(got - want), sorted(want - got)))
dkms = [p for p in used if p.startswith("updates/dkms/")]
print("%d files (%d in updates/dkms), %d dependency lists compared, %d shadowed, %d mismatches"
      % (len(used), len(dkms), ndep, len(c.get("shadowed", [])), fails))
sys.exit(1 if fails else 0)
PY
