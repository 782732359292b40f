#!/usr/bin/env bash
# bench/bench-tree.sh KOPOLICY_BIN TREE_ROOT [RUNS]
#
# Side-by-side with depmod on the same module tree, in the same run, alternating:
#   depmod -n -b TREE_ROOT RELEASE        (the reference: reads every module, builds the graph)
#   kopolicy graph --format json -k SYMVERS TREE_ROOT/lib/modules/RELEASE
#   kopolicy check --format json -k SYMVERS --kernel-config ... (the whole simulation)
# Prints the median wall time and peak RSS of each and the ratios to depmod.
# TREE_ROOT is an extracted linux-image package (tests/corpus/fetch-trees.sh makes them).
set -euo pipefail

kp=${1:?usage: bench-tree.sh KOPOLICY_BIN TREE_ROOT [RUNS]}
root=${2:?usage: bench-tree.sh KOPOLICY_BIN TREE_ROOT [RUNS]}
runs=${3:-5}
rel=$(ls "$root/lib/modules" | head -1)
symvers=$(ls "$root"/usr/src/linux-headers-"$rel"/Module.symvers 2>/dev/null | head -1)
config=$root/boot/config-$rel
[ -n "$symvers" ] || { echo "bench: no Module.symvers for $rel under $root" >&2; exit 2; }
command -v depmod >/dev/null || { echo "bench: depmod (kmod) is not installed" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is needed (apt-get install time)" >&2; exit 2; }

declare -A wall rss
measure() { # name, command...
	local name=$1 out
	shift
	out=$( { /usr/bin/time -f '%e %M' "$@" >/dev/null 2>/dev/null; } 2>&1 | tail -1)
	wall[$name]+="${out%% *} "
	rss[$name]+="${out##* } "
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

nmods=$(find "$root/lib/modules/$rel" -name '*.ko*' | wc -l)
echo "tree: $root ($rel, $nmods modules), $runs runs each, alternating; $(nproc) CPUs"
for ((i = 0; i < runs; i++)); do
	measure depmod depmod -n -b "$root" "$rel"
	measure graph "$kp" graph --format json -k "$symvers" "$root/lib/modules/$rel"
	measure check "$kp" check --format json -k "$symvers" --kernel-config "$config" \
		--kernel-release "$rel" "$root/lib/modules/$rel"
done
d=$(echo "${wall[depmod]}" | median)
dr=$(echo "${rss[depmod]}" | median)
printf '%-8s %8s %10s %8s %8s\n' tool wall_s peak_kib wall/dep rss/dep
for t in depmod graph check; do
	w=$(echo "${wall[$t]}" | median)
	r=$(echo "${rss[$t]}" | median)
	printf '%-8s %8s %10s %8.2f %8.2f\n' "$t" "$w" "$r" "$(echo "$w / $d" | bc -l)" \
		"$(echo "$r / $dr" | bc -l)"
done
