#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-thumb2.sh KOPOLICY_BIN
#
# Builds symget.c as ARM (-marm) and Thumb-2 (-mthumb) code with
# arm-linux-gnueabihf-gcc (Debian 12: apt-get install gcc-arm-linux-gnueabihf) and
# checks that `kopolicy info` finds every symbol_get() target exactly, at the 6 call
# sites of each: 2 in f (foo; bar or baz), 3 in h (one; seven; x or y), 1 in via
# (via_a or via_b, from its callers). Skips (exit
# 77) without the cross compiler.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: check-thumb2.sh KOPOLICY_BIN}
cc=arm-linux-gnueabihf-gcc
command -v "$cc" >/dev/null || { echo "SKIP: $cc not found"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
want="bar_attach baz_attach foo_attach one_attach seven_attach via_a_attach via_b_attach"
want="$want x_attach y_attach"
fail=0
for isa in arm thumb; do
	"$cc" -O2 -m$isa -fno-pic -c "$here/symget.c" -o "$work/$isa.o" || exit 1
	got=$("$bin" info --json "$work/$isa.o" | python3 -c '
import json, sys
m = json.load(sys.stdin)["modules"][0]
g = m["symbol_get"]
bad = [x for x in g if x["method"] != "exact"]
print(" ".join(sorted({x["symbol"] for x in g if x["method"] == "exact"})),
      "|", len({x["site"] for x in g}), "sites |", len(bad), "not exact |",
      m["symbol_get_method"])')
	if [ "$got" = "$want | 6 sites | 0 not exact | exact" ]; then
		echo "PASS $isa: $got"
	else
		echo "FAIL $isa: $got"
		fail=1
	fi
done
exit $fail
