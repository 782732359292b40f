#!/usr/bin/env python3
# bench/bench-cold.py RUNS TREE_ROOT KOPOLICY_BIN...
#
# What filling the caches costs a whole-tree `check`, to the millisecond (bench-tree.sh's
# /usr/bin/time gives 10 ms): per binary, alternating, RUNS rounds after one warm-up of
#   nocache    check --no-cache
#   cold       both caches filled from empty (a scratch KOPOLICY_CACHE_DIR, removed first)
#   factsonly  the same with KOPOLICY_RUN_CACHE=off (the facts cache alone)
# and depmod -n on the same tree and Module.symvers as the reference (as bench-tree.sh).
# Prints the median and the minimum wall time, the median CPU time (user + system of the
# child) and the median peak RSS of each. Exit 2 on a setup error.
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    if len(sys.argv) < 4:
        print("usage: bench-cold.py RUNS TREE_ROOT KOPOLICY_BIN...", file=sys.stderr)
        return 2
    runs, tree, bins = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    rels = sorted(os.listdir(os.path.join(tree, "lib/modules")))
    if not rels:
        print("bench-cold: no lib/modules/<release> in " + tree, file=sys.stderr)
        return 2
    rel = rels[0]
    moddir = os.path.join(tree, "lib/modules", rel)
    symvers = os.path.join(tree, "usr/src/linux-headers-" + rel, "Module.symvers")
    config = os.path.join(tree, "boot/config-" + rel)
    for f in [symvers, config] + bins:
        if not os.path.exists(f):
            print("bench-cold: missing " + f, file=sys.stderr)
            return 2
    check = ["check", "--format", "json", "-k", symvers, "--kernel-config", config,
             "--kernel-release", rel, moddir]
    scratch = tempfile.mkdtemp(prefix="bench-cold.")
    empty = os.path.join(scratch, "depmod.d")
    os.mkdir(empty)
    cache = os.path.join(scratch, "cache")
    cells = [("depmod", None, ["depmod", "-n", "-C", empty, "-E", symvers, "-b", tree, rel], {})]
    for b in bins:
        cells += [(b, "nocache", [b] + check + ["--no-cache"], {}),
                  (b, "cold", [b] + check, {}),
                  (b, "factsonly", [b] + check, {"KOPOLICY_RUN_CACHE": "off"})]
    res = {}
    try:
        for rnd in range(runs + 1):
            for b, mode, argv, extra in cells:
                shutil.rmtree(cache, ignore_errors=True)
                env = dict(os.environ, KOPOLICY_CACHE_DIR=cache, **extra)
                t0 = time.perf_counter()
                p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, env=env)
                _, status, ru = os.wait4(p.pid, 0)
                wall = time.perf_counter() - t0
                code = os.waitstatus_to_exitcode(status)
                if code not in (0, 1):
                    print("bench-cold: %s exited with %d" % (argv[0], code), file=sys.stderr)
                    return 2
                if rnd:
                    res.setdefault((b, mode), []).append(
                        (wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("%-28s %-9s %9s %9s %9s %10s" % ("binary", "run", "wall_ms", "min_ms", "cpu_ms",
                                          "peak_kib"))
    for (b, mode), v in res.items():
        print("%-28s %-9s %9.1f %9.1f %9.1f %10d" % (
            os.path.basename(b), mode or "-", statistics.median(x[0] for x in v) * 1000,
            min(x[0] for x in v) * 1000, statistics.median(x[1] for x in v) * 1000,
            statistics.median(x[2] for x in v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
