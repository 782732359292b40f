# shellcheck shell=bash
# shellcheck disable=SC2154 # $kp, $fx and $rel: set by the script that sources this
# SPDX-License-Identifier: GPL-2.0-or-later
# Predictions for one kernel's fixture set (sourced after $kp, $fx and $rel are set: the
# binary, fixtures/ko/<series> and the release its kernel.txt names):
#   check OUT [OPTION...] MODULE...   `check` in JSON against the set's Module.symvers.gz and
#                                     config.gz, stderr in OUT.err
#   verdict FILE MODULE PYTHON-EXPR   true when the expression holds over m (the module's JSON
#                                     object), ids (its findings' ids) and o (its O and E
#                                     taint lines)

check() {
	local out=$1
	shift
	"$kp" check -f json --fail-on never -k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" \
		--kernel-release "$rel" "$@" > "$out" 2> "$out.err"
}

verdict() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = next(x for x in d["modules"] if x["name"] == sys.argv[2])
ids = [f["id"] for f in m["findings"]]
o = [sys.argv[2] + ": loading out-of-tree module taints kernel.",
     sys.argv[2] + ": module verification failed: signature and/or required key missing"
     " - tainting kernel"]
sys.exit(0 if eval(sys.argv[3]) else 1)
PY
}
