#!/bin/bash
# Fetch real Debian module trees and compare `kopolicy info --json` with
# modinfo / readelf / Module.symvers on every module (tests/corpus/compare-info.py).
#
# usage: tests/corpus/check-corpus.sh KOPOLICY_BIN [TREE...]
#   TREE: see fetch-trees.sh (default: its default list: amd64-6.12 amd64-6.1 arm64
#         i386 s390x amd64-5.10 amd64-6.12t amd64-7.2)
# Environment:
#   KOPOLICY_CACHE            cache directory (default ~/.cache/kopolicy)
#   KOPOLICY_CORPUS_OFFLINE=1 use the already extracted trees, no apt/network
# Prints each tree's report and a closing "N passed, N failed" (sum over trees).
# Exit: 0 all passed, 1 any mismatch, 2 setup error (fetch or compare setup).
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "check-corpus: error: line $LINENO: exit status $?" >&2' ERR

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ $# -lt 1 ]; then
	echo "usage: $0 KOPOLICY_BIN [TREE...]" >&2
	exit 2
fi
bin=$1; shift
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
if [ ! -x "$bin" ]; then
	echo "check-corpus: $bin is not executable" >&2
	echo "0 passed, 1 failed"
	exit 2
fi
command -v python3 >/dev/null || { echo "check-corpus: python3 not found" >&2; echo "0 passed, 1 failed"; exit 2; }

fetch_opts=()
if [ "${KOPOLICY_CORPUS_OFFLINE:-0}" = 1 ]; then fetch_opts+=(--offline); fi

if ! specs=$("$here/fetch-trees.sh" "${fetch_opts[@]}" "$@"); then
	echo "check-corpus: fetching trees failed" >&2
	echo "0 passed, 1 failed"
	exit 2
fi

field() { # line key
	printf '%s\n' "$1" | tr '\t' '\n' | sed -n "s/^$2=//p"
}

passed=0 failed=0 rc=0
summary=()
while IFS= read -r line; do
	[ -n "$line" ] || continue
	tree=$(field "$line" tree)
	root=$(field "$line" root)
	release=$(field "$line" release)
	symvers=$(field "$line" symvers)
	echo "== $tree: $root ($release)"
	out=$(mktemp)
	# compare-info.py's own status, a failure kept (no set -e exit, no ERR trap line)
	python3 "$here/compare-info.py" --label "$tree" "$root" "$release" "$symvers" "$bin" |
		tee "$out" && st=0 || st=${PIPESTATUS[0]}
	last=$(tail -n 1 "$out"); rm -f "$out"
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		passed=$((passed + BASH_REMATCH[1])); failed=$((failed + BASH_REMATCH[2]))
	else
		failed=$((failed + 1))
	fi
	summary+=("$tree: ${last} (exit $st)")
	if [ "$st" -ge 2 ] || { [ "$st" -ne 0 ] && [ "$st" -ne 1 ]; }; then rc=2
	elif [ "$st" = 1 ] && [ "$rc" = 0 ]; then rc=1
	fi
done <<<"$specs"

echo "== summary"
printf '  %s\n' "${summary[@]}"
echo "$passed passed, $failed failed"
exit "$rc"
