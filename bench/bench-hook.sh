#!/usr/bin/env bash
# bench/bench-hook.sh KOPOLICY_BIN TREE_ROOT [RUNS] [MODULE...]
#
# Latency of `kopolicy hook MODULE` (what modprobe waits for on every hooked load) next to
# `modprobe --dry-run MODULE` on the same tree, in the same run, alternating. TREE_ROOT is an
# extracted Debian kernel (linux-image + linux-headers, e.g. the full 6.12 tree that
# tests/corpus/fetch-trees.sh unpacks: lib/modules/<release>/kernel, boot/config-<release>,
# usr/src/linux-headers-<release>/Module.symvers). A scratch root is made in $TMPDIR
# (bench/hook-root.sh): the tree's kernel/ hard-linked (or copied), the fixtures of
# fixtures/ko/<series>/ copied to extra/ when they were built for that release, depmod run,
# and a fake proc/ and sys/. The bench stops (exit 2) when the hook cannot decide a module
# there: that answer is not what it times. Each MODULE is timed
#   cold:   nothing loaded: the chain's out-of-tree modules and the target are read, in-tree
#           dependencies come from Module.symvers
#   loaded: every dependency already loaded (proc/modules, sys/module/<m>/taint)
#   full:   cold with --read-in-tree (every module of the chain decompressed and read)
# Each cell is RUNS alternating runs of both commands (python3 posix_spawn/wait4): the medians of
# wall time and of CPU time (user + system of the child, less sensitive to other load) in ms.
# Default modules: uas (5 dependencies), hid-logitech-dj (4), nfs (4), and kp_use_prop
# (a fixture whose proprietary provider is loaded) when the fixtures match the release.
# A MODULE may also name a set, timed in the cold state only, one line each and a summary
# (how many over the 20 ms budget, the slowest): @largest:N (the N largest module files),
# @sample:N (N modules spread over the sorted tree), @all (every module of the tree).
# The hook reads through the facts cache (lib/cache/facts-cache.c) in a scratch directory,
# filled by each cell's warm-up run: the numbers are warm-cache ones. KOPOLICY_CACHE=off in
# the environment times the hook without it.
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "bench-hook: error: line $LINENO: exit status $?" >&2' ERR

usage() { echo "usage: bench-hook.sh KOPOLICY_BIN TREE_ROOT [RUNS] [MODULE...]" >&2; exit 2; }
kp=${1:-}
tree=${2:-}
[ -n "$kp" ] && [ -n "$tree" ] || usage
shift 2
runs=${1:-21}
[ $# -gt 0 ] && shift
top=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$kp" ] || { echo "bench-hook: $kp is not executable" >&2; exit 2; }
command -v depmod >/dev/null || { echo "bench-hook: depmod (kmod) is not installed" >&2; exit 2; }
command -v modprobe >/dev/null || { echo "bench-hook: modprobe (kmod) is not installed" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench-hook: python3 is needed" >&2; exit 2; }
rel=$(ls "$tree/lib/modules" | sed -n 1p)
[ -d "$tree/lib/modules/$rel/kernel" ] || { echo "bench-hook: no $tree/lib/modules/<release>/kernel" >&2; exit 2; }

root=$(mktemp -d "${TMPDIR:-/tmp}/bench-hook.XXXXXX")
trap 'rm -rf "$root"' EXIT
md=$root/lib/modules/$rel
. "$top/bench/hook-root.sh"
bench_root "$tree" "$root" "$rel" || exit 2
export KOPOLICY_CACHE_DIR=$root/cache
fixtures=""
for d in "$top"/fixtures/ko/*/; do
	if [ -e "$d/kernel.txt" ] && grep -qx "release=$rel" "$d/kernel.txt"; then
		cp "$d"/kp_*.ko "$md/extra/"
		fixtures=$d
	fi
done
depmod -b "$root" "$rel"

mods=("$@")
if [ ${#mods[@]} -eq 0 ]; then
	mods=(uas hid-logitech-dj nfs)
	[ -n "$fixtures" ] && mods+=(kp_use_prop)
fi
# modname FILE...: module names of module files
modname() { for f in "$@"; do f=${f##*/}; echo "${f%%.ko*}"; done; }
# expand_set @largest:N | @sample:N | @all: the module names of the set
expand_set() {
	local all
	case $1 in
	@largest:*) find -L "$md/kernel" -name '*.ko*' -type f -printf '%s %p\n' | sort -rn |
		sed -n "1,${1#@largest:}p" | while read -r _ f; do modname "$f"; done ;;
	@sample:*)
		mapfile -t all < <(find -L "$md/kernel" -name '*.ko*' -type f | sort)
		local step=$(( ${#all[@]} / ${1#@sample:} ))
		[ "$step" -ge 1 ] || step=1
		for ((i = 0; i < ${#all[@]}; i += step)); do modname "${all[$i]}"; done |
			sed -n "1,${1#@sample:}p" ;;
	@all) find -L "$md/kernel" -name '*.ko*' -type f | sort | while read -r f; do modname "$f"; done ;;
	*) echo "bench-hook: unknown set $1 (@largest:N, @sample:N, @all)" >&2; exit 2 ;;
	esac
}

# proc/modules and sys/module/<m>/taint for a list of loaded modules.
set_loaded() {
	: > "$root/proc/modules"
	rm -rf "$root/sys/module"/*/taint
	local m t
	for m in "$@"; do
		t=""
		case $m in kp_prop_prov) t=POE ;; kp_*) t=OE ;; esac
		echo "$m 16384 0 - Live 0xffffffffc0000000${t:+ ($t)}" >> "$root/proc/modules"
		mkdir -p "$root/sys/module/$m"
		echo "$t" > "$root/sys/module/$m/taint"
	done
}
deps_of() { # the kernel names of MODULE's dependencies (modprobe --show-depends)
	modprobe -d "$root" -S "$rel" --show-depends "$1" 2>/dev/null | sed -n 's/^insmod //p' |
		sed '$d' | sed 's@.*/@@; s@\.ko.*@@; s@-@_@g'
}
# timing HOOK_ARGS... -- MODPROBE_ARGS...: "hook_wall hook_cpu modprobe_wall modprobe_cpu" (ms)
timing() {
	python3 - "$runs" "$@" <<'PY'
import os, statistics, sys, time
runs = int(sys.argv[1]); args = sys.argv[2:]; cut = args.index("--")
cmds = [args[:cut], args[cut + 1:]]
res = [([], []), ([], [])]
null = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
def run(argv):
    t = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=null)
    _, _, ru = os.wait4(pid, 0)
    return (time.perf_counter() - t) * 1e3, (ru.ru_utime + ru.ru_stime) * 1e3
for c in cmds: run(c)  # warm the page cache
for _ in range(runs):
    for i, c in enumerate(cmds):
        w, u = run(c); res[i][0].append(w); res[i][1].append(u)
print(" ".join("%.2f" % statistics.median(x) for r in res for x in r))
PY
}

nmods=$(find -L "$md" -name '*.ko*' | wc -l)
echo "tree: $tree ($rel, $nmods modules), scratch root $root; $runs runs per cell, alternating;"
echo "$(nproc) CPUs, $(uname -r); exports from $(ls "$root"/usr/src/*/Module.symvers 2>/dev/null || echo 'proc/kallsyms')"
printf '%-20s %-6s %4s | %8s %8s | %8s %8s | %6s\n' module state deps hook_ms hook_cpu \
	mprb_ms mprb_cpu ratio
for m in "${mods[@]}"; do
	if [[ $m == @* ]]; then
		mapfile -t set < <(expand_set "$m")
		over=0 worst=0 worst_m=""
		set_loaded
		for s in "${set[@]}"; do
			bench_decides "$kp" "$root" "$s" || exit 2
			read -r hw hc pw pc < <(timing "$kp" hook --root "$root" "$s" -- \
				modprobe -d "$root" -S "$rel" --dry-run "$s")
			printf '%-20s %-6s %4s | %8s %8s | %8s %8s | %6.1f\n' "$s" cold "-" \
				"$hw" "$hc" "$pw" "$pc" "$(echo "$hw / $pw" | bc -l)"
			if awk -v a="$hw" 'BEGIN { exit !(a > 20) }'; then over=$((over + 1)); fi
			if awk -v a="$hw" -v b="$worst" 'BEGIN { exit !(a > b) }'; then
				worst=$hw worst_m=$s
			fi
		done
		echo "$m: ${#set[@]} modules, $over over 20 ms (median wall), slowest $worst_m $worst ms"
		continue
	fi
	set_loaded
	bench_decides "$kp" "$root" "$m" || exit 2
	mapfile -t deps < <(deps_of "$m")
	for state in cold loaded full; do
		hook_args=()
		case $state in
		cold) set_loaded ;;
		loaded) set_loaded "${deps[@]}" ;;
		full) set_loaded; hook_args=(--read-in-tree) ;;
		esac
		read -r hw hc pw pc < <(timing "$kp" hook --root "$root" "${hook_args[@]}" "$m" -- \
			modprobe -d "$root" -S "$rel" --dry-run "$m")
		printf '%-20s %-6s %4s | %8s %8s | %8s %8s | %6.1f\n' "$m" "$state" "${#deps[@]}" \
			"$hw" "$hc" "$pw" "$pc" "$(echo "$hw / $pw" | bc -l)"
	done
done
echo "hook_ms/mprb_ms: median wall time; *_cpu: median user+system CPU time; ratio: wall hook/modprobe"
