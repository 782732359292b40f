#!/usr/bin/env python3
# bench/bench-warm.py RUNS TREE_ROOT KOPOLICY_BIN...
#
# What a warm whole-tree `check` costs, to the millisecond, per binary, alternating (the
# binaries' caches are their own scratch directories, filled once before the rounds):
#   replay   the stored result replayed (the manifest re-checked, the output written)
#   warm     the facts cache alone (KOPOLICY_RUN_CACHE=off): each module looked up, the
#            rest computed
# RUNS rounds after one warm-up round. Prints the median and the minimum wall time, the
# median CPU time (user + system of the child) and the median peak RSS, and how the last
# run of each cell was served (KOPOLICY_CACHE_STATS). For the cost of content verification
# (lib/util/fs-trust.h), run it once on the tree as extracted and once after
# `chmod -R g+w TREE_ROOT/lib/modules` (every module's state then untrusted: hashed).
# Exit 2 on a setup error.
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    if len(sys.argv) < 4:
        print("usage: bench-warm.py RUNS TREE_ROOT KOPOLICY_BIN...", file=sys.stderr)
        return 2
    runs, tree, bins = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    rels = sorted(os.listdir(os.path.join(tree, "lib/modules")))
    if not rels:
        print("bench-warm: no lib/modules/<release> in " + tree, file=sys.stderr)
        return 2
    rel = rels[0]
    moddir = os.path.join(tree, "lib/modules", rel)
    symvers = os.path.join(tree, "usr/src/linux-headers-" + rel, "Module.symvers")
    config = os.path.join(tree, "boot/config-" + rel)
    for f in [symvers, config] + bins:
        if not os.path.exists(f):
            print("bench-warm: missing " + f, file=sys.stderr)
            return 2
    check = ["check", "--format", "json", "-k", symvers, "--kernel-config", config,
             "--kernel-release", rel, moddir]
    scratch = tempfile.mkdtemp(prefix="bench-warm.")
    cells = []
    for i, b in enumerate(bins):
        cache = os.path.join(scratch, "cache-%d" % i)
        cells += [(b, "replay", [b] + check, {"KOPOLICY_CACHE_DIR": cache}),
                  (b, "warm", [b] + check, {"KOPOLICY_CACHE_DIR": cache,
                                            "KOPOLICY_RUN_CACHE": "off"})]
    res, how = {}, {}
    try:
        time.sleep(1.1)  # nothing the runs read changed less than a second before
        for b, mode, argv, extra in cells:  # fill each binary's caches
            env = dict(os.environ, **extra)
            env.pop("KOPOLICY_RUN_CACHE", None)
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env=env, check=False)
        for rnd in range(runs + 1):
            for b, mode, argv, extra in cells:
                env = dict(os.environ, KOPOLICY_CACHE_STATS="1", **extra)
                t0 = time.perf_counter()
                p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     env=env)
                err = p.stderr.read()
                _, status, ru = os.wait4(p.pid, 0)
                wall = time.perf_counter() - t0
                code = os.waitstatus_to_exitcode(status)
                if code not in (0, 1):
                    print("bench-warm: %s exited with %d" % (argv[0], code), file=sys.stderr)
                    return 2
                how[(b, mode)] = "; ".join(
                    line[len("kopolicy: "):] for line in err.decode(errors="replace").split("\n")
                    if "cache: " in line)
                if rnd:
                    res.setdefault((b, mode), []).append(
                        (wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("%-24s %-7s %9s %9s %9s %10s  %s" % ("binary", "run", "wall_ms", "min_ms", "cpu_ms",
                                              "peak_kib", "served"))
    for (b, mode), v in res.items():
        print("%-24s %-7s %9.1f %9.1f %9.1f %10d  %s" % (
            os.path.basename(b), mode, statistics.median(x[0] for x in v) * 1000,
            min(x[0] for x in v) * 1000, statistics.median(x[1] for x in v) * 1000,
            statistics.median(x[2] for x in v), how[(b, mode)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
