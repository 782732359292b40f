#!/usr/bin/env python3
# bench/run-timed.py OUTFILE COMMAND...: runs COMMAND (stdin, stdout and stderr inherited) and
# writes "WALL_S USER_S SYS_S MAXRSS_KIB" to OUTFILE, wall time to the microsecond
# (time.perf_counter() around posix_spawn and wait4: /usr/bin/time's %e rounds to 10 ms, too
# coarse for runs of 30-60 ms). Exits with COMMAND's status (128 + N for a signal N, 127 when
# it cannot be started).
import os
import sys
import time

if len(sys.argv) < 3:
    sys.exit("usage: run-timed.py OUTFILE COMMAND...")
out, argv = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
try:
    pid = os.posix_spawnp(argv[0], argv, os.environ)
except OSError as e:
    print(f"run-timed: {argv[0]}: {e.strerror}", file=sys.stderr)
    sys.exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(out, "w") as f:
    f.write(f"{wall:.6f} {ru.ru_utime:.6f} {ru.ru_stime:.6f} {ru.ru_maxrss}\n")
sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else
         128 + os.WTERMSIG(status))
