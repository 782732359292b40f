#!/usr/bin/env bash
# bench/bench-hook-all.sh KOPOLICY_BIN TREE_ROOT [CONCURRENCY] [LIMIT]
#
# The hook's latency over EVERY module of a tree, beside `modprobe --dry-run` for the same
# module on the same scratch root, in the same run: what modprobe waits for on each hooked
# load, and what it would cost anyway. TREE_ROOT is an extracted Debian kernel, as for
# bench-hook.sh (lib/modules/<release>/kernel, boot/config-<release>, the headers'
# Module.symvers); the scratch root is made the same way (bench/hook-root.sh: the tree's kernel/ hard-linked, depmod
# run, a fake proc/ and sys/ with nothing loaded: every module in the "cold" state, its
# in-tree dependencies described by Module.symvers).
#
# Three passes over every module (LIMIT: only every Nth module of the sorted tree, for a
# quick look):
#   warm-up      each module once through the hook and modprobe (fills the facts and base
#                caches in the scratch KOPOLICY_CACHE_DIR, and the page cache): not reported
#   sequential   for each module, the hook and modprobe one after the other, which one first
#                alternating from module to module
#   concurrent   CONCURRENCY (default 8) workers at once, each taking the next module and
#                running the hook and modprobe for it (alternating first): about CONCURRENCY
#                processes at any time, as when systemd-udevd loads modules with several
#                probe threads at boot
# Each process is timed by python3 (posix_spawn, wait4): wall time and CPU time (user + system
# of the child). Reported per pass: p50/p90/p99/max of each command's wall and CPU times, the
# ratio of the hook's percentile to modprobe's, the distribution of the per-module ratio
# hook/modprobe (wall), how many hook runs exited 2 (undecided: run with --on-error fail-closed)
# and the slowest modules, with
# the load average before and after. KOPOLICY_BASE_CACHE=off (or KOPOLICY_CACHE=off) in the
# environment times the hook without the base cache (or without both caches). BENCH_BTF=FILE:
# the kernel's raw BTF (e.g. objcopy -O binary --only-section=.BTF of the headers' vmlinux)
# as the root's sys/kernel/btf/vmlinux, as on a running Debian kernel (DEBUG_INFO_BTF_MODULES:
# the hook then checks each module's .BTF against it).
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "bench-hook-all: error: line $LINENO: exit status $?" >&2' ERR

usage() { echo "usage: bench-hook-all.sh KOPOLICY_BIN TREE_ROOT [CONCURRENCY] [LIMIT]" >&2; exit 2; }
kp=${1:-}
tree=${2:-}
[ -n "$kp" ] && [ -n "$tree" ] || usage
conc=${3:-8}
every=${4:-1}
[ -x "$kp" ] || { echo "bench-hook-all: $kp is not executable" >&2; exit 2; }
for t in depmod modprobe python3; do
	command -v $t >/dev/null || { echo "bench-hook-all: $t is needed" >&2; exit 2; }
done
rel=$(ls "$tree/lib/modules" | sed -n 1p)
[ -d "$tree/lib/modules/$rel/kernel" ] || { echo "bench-hook-all: no $tree/lib/modules/<release>/kernel" >&2; exit 2; }

root=$(mktemp -d "${TMPDIR:-/tmp}/bench-hook-all.XXXXXX")
trap 'rm -rf "$root"' EXIT
md=$root/lib/modules/$rel
. "$(cd "$(dirname "$0")" && pwd)/hook-root.sh"
bench_root "$tree" "$root" "$rel" || exit 2
if [ -n "${BENCH_BTF:-}" ]; then
	mkdir -p "$root/sys/kernel/btf"
	cp "$BENCH_BTF" "$root/sys/kernel/btf/vmlinux"
fi
depmod -b "$root" "$rel"
export KOPOLICY_CACHE_DIR=$root/cache
# the inputs' states are trusted once a second old (lib/util/fs-trust.h, base-cache.h)
sleep 2

find -L "$md/kernel" -name '*.ko*' -type f | sort | sed 's@.*/@@; s@\.ko.*@@' |
	awk -v n="$every" '(NR - 1) % n == 0' > "$root/modules.txt"
echo "tree: $tree ($rel), $(wc -l < "$root/modules.txt") modules (every ${every}th of the" \
	"tree), scratch root $root"
echo "$(nproc) CPUs, $(uname -r); kopolicy $("$kp" --version); concurrency $conc;" \
	"KOPOLICY_BASE_CACHE=${KOPOLICY_BASE_CACHE:-} KOPOLICY_CACHE=${KOPOLICY_CACHE:-}" \
	"BENCH_BTF=${BENCH_BTF:-}"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$kp" "$root" "$rel" "$conc" "$root/modules.txt" <<'PY'
import os, sys, time, threading
kp, root, rel, conc, listf = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
mods = [l.strip() for l in open(listf) if l.strip()]
null = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]

def run(argv):
    t = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=null)
    _, status, ru = os.wait4(pid, 0)
    return ((time.perf_counter() - t) * 1e3, (ru.ru_utime + ru.ru_stime) * 1e3,
            os.waitstatus_to_exitcode(status))

def cmds(m):
    # fail-closed: a module the hook cannot decide exits 2 and is counted, never timed as a
    # quiet pass (the default fail-open exits 0)
    return ([kp, "hook", "--on-error", "fail-closed", "--root", root, m],
            ["modprobe", "-d", root, "-S", rel, "--dry-run", m])

def one(i, m):
    h, p = cmds(m)
    if i % 2:
        rp = run(p); rh = run(h)
    else:
        rh = run(h); rp = run(p)
    return m, rh, rp

def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100.0 * (len(xs) - 1))))]

def report(name, res, secs):
    print("\n== %s: %d modules, %.1f s, load average %s" %
          (name, len(res), secs, " ".join(open("/proc/loadavg").read().split()[:3])))
    print("%-22s %8s %8s %8s %8s" % ("ms", "p50", "p90", "p99", "max"))
    rows = {}
    for label, idx, k in (("hook wall", 1, 0), ("modprobe -n wall", 2, 0),
                          ("hook CPU", 1, 1), ("modprobe -n CPU", 2, 1)):
        xs = [r[idx][k] for r in res]
        rows[label] = [pct(xs, q) for q in (50, 90, 99, 100)]
        print("%-22s %8.2f %8.2f %8.2f %8.2f" % ((label,) + tuple(rows[label])))
    for kind in ("wall", "CPU"):
        h, p = rows["hook " + kind], rows["modprobe -n " + kind]
        print("%-22s %8.2f %8.2f %8.2f %8.2f" % (("hook/modprobe " + kind,) +
              tuple(a / b for a, b in zip(h, p))))
    per = [r[1][0] / r[2][0] for r in res if r[2][0] > 0]
    print("per-module wall ratio: p50 %.2f p90 %.2f p99 %.2f max %.2f; over 2x: %d" %
          (pct(per, 50), pct(per, 90), pct(per, 99), pct(per, 100), sum(x > 2 for x in per)))
    bad = [r[0] for r in res if r[1][2] not in (0, 1)]
    print("hook exit status other than 0/1: %d%s" % (len(bad), (" (" + ", ".join(bad[:5]) + ")") if bad else ""))
    slow = sorted(res, key=lambda r: -r[1][0])[:5]
    print("slowest hooks: " + ", ".join("%s %.1f ms (modprobe %.1f)" % (r[0], r[1][0], r[2][0]) for r in slow))

t0 = time.time()
for i, m in enumerate(mods):
    one(i, m)
print("\nwarm-up: %d modules, %.1f s" % (len(mods), time.time() - t0))

t0 = time.time()
seq = [one(i, m) for i, m in enumerate(mods)]
report("sequential", seq, time.time() - t0)

lock = threading.Lock()
nxt = [0]
par = []
def worker():
    while True:
        with lock:
            i = nxt[0]; nxt[0] += 1
        if i >= len(mods):
            return
        r = one(i, mods[i])
        with lock:
            par.append(r)
t0 = time.time()
ts = [threading.Thread(target=worker) for _ in range(conc)]
for t in ts: t.start()
for t in ts: t.join()
report("concurrent (%d at once)" % conc, par, time.time() - t0)
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
