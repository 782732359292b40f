#!/usr/bin/env bash
# Replays the dkms_ oracle scenarios (tests/dkms/observed/<series>/*.json: Debian's *-dkms
# packages built with the real dkms tool and loaded by a stock Debian kernel under QEMU, see
# tests/dkms/README.md) against kopolicy's predictions for the very modules the guest loaded
# (tests/dkms/ko/<series>/*.ko.xz: the dkms builds and their in-tree dependencies from the
# kernel's own package), without network or QEMU: one TAP test per scenario.
set -uo pipefail

top=${srcdir:-.}
kopolicy=${KOPOLICY:-./src/kopolicy}
. "$top/tests/lib/tap.sh"
tap_tmpdir

for obsdir in "$top"/tests/dkms/observed/*/; do
	[ -d "$obsdir" ] || continue
	series=$(basename "$obsdir")
	ko=$top/tests/dkms/ko/$series
	fx=$top/fixtures/ko/$series
	rel=$(sed -n 's/^release=//p' "$ko/build.txt")
	for obs in "$obsdir"*.json; do
		[ -f "$obs" ] || continue
		name=$(basename "$obs" .json)
		n=$((n + 1))
		mapfile -t files < <(python3 -c '
import json, sys
for l in json.load(open(sys.argv[1]))["loads"]:
    print(l["file"])' "$obs")
		args=(check --format json -k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz"
		      --kernel-release "$rel")
		missing=
		mkdir -p "$tmp/$series"
		for f in "${files[@]}"; do
			if [ ! -f "$tmp/$series/$f" ]; then
				xz -dc "$ko/$f.xz" > "$tmp/$series/$f" 2>/dev/null || missing="$missing $f"
			fi
			args+=("$tmp/$series/$f")
		done
		if [ -n "$missing" ]; then
			echo "not ok $n - $series $name: not in tests/dkms/ko/$series:$missing"
			fail=$((fail + 1))
			continue
		fi
		pred=$("$kopolicy" "${args[@]}" 2>&1)
		rc=$?
		if [ $rc -gt 1 ]; then
			echo "not ok $n - $series $name: kopolicy exited $rc"
			echo "$pred" | sed 's/^/# /'
			fail=$((fail + 1))
			continue
		fi
		if out=$(python3 "$top/tests/oracle/compare.py" "$obs" <(echo "$pred") 2>&1); then
			echo "ok $n - $series $name ($(echo "$out" | tail -n 1))"
		else
			echo "not ok $n - $series $name"
			echo "$out" | sed 's/^/# /'
			fail=$((fail + 1))
		fi
	done
done
tap_done
