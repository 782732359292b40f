#!/usr/bin/env python3
"""parse-boot.py OUTDIR — summary of a bench/bench-boot.sh run.

Reads OUTDIR/boots.tsv and each boot's serial log (the KPBENCH-BEGIN..END report of
bench/boot/report.sh) and prints, for the boots without the hook ("off") and with it ("on":
`install *`; "rules": the install lines of `kopolicy hook --print-install-rules`, one per
out-of-tree module; "null": `install *` with /bin/true):
the median, minimum and maximum of
  settle      udevadm settle returned (seconds since boot, CLOCK_MONOTONIC)
  last-load   the last module_load trace event (the last module the kernel loaded)
  mod-load    systemd-modules-load.service exited
  startup     systemd-analyze's "Startup finished" total (kernel + initrd + userspace)
  modules     modules loaded (/proc/modules) when the report ran
  oot-span    the last out-of-tree module's module_load event, from systemd-modules-load's start
  qemu-wall   the QEMU process on the host: wall, and user + sys CPU seconds
the ratio of the medians (on / off, rules / off, null / off, on / null), and the hook's
latency distribution (hook-timer: wall and CPU ms per `kopolicy hook` run) with the slowest
modules, over every hook run of the measured "on" boots and, apart, of the "rules" boots
(with every line the hook printed in them), the out-of-tree modules' taints per kind, and
kernel console lines about memory, hangs or panics. The warm-up boot (writable disk, facts
cache filled by it) is listed apart. Exit status 1 when a boot has no complete report.
"""
import os
import re
import statistics
import sys

# kernel console lines (loglevel=4: warnings and worse) that explain a failed or slow boot
KERNEL_TROUBLE = re.compile(r"(Out of memory|oom-kill|Kernel panic|hung_task|blocked for more "
                            r"than|soft lockup|rcu.*stall|BUG:|Call Trace|timed out|watchdog)",
                            re.IGNORECASE)


def parse_report(path):
    rep = {"loads": [], "hooks": [], "units": {}, "fail": [], "kernel": [], "hookmsg": [],
           "taint": {}}
    inside = False
    done = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.strip().replace("\r", "")
            if not inside and KERNEL_TROUBLE.search(line):
                rep["kernel"].append(line)
            if line.endswith("KPBENCH-BEGIN"):
                inside = True
                continue
            if line == "KPBENCH-END":
                done = True
                break
            if not inside:
                continue
            word, _, rest = line.partition(" ")
            if word == "settle":
                rep["settle"] = float(rest)
            elif word == "load":
                t, _, mod = rest.partition(" ")
                rep["loads"].append((float(t), mod))
            elif word == "hook":
                fields = rest.split()
                h = {"module": fields[0]}
                for kv in fields[1:]:
                    k, _, v = kv.partition("=")
                    h[k] = float(v)
                rep["hooks"].append(h)
            elif word == "unit":
                parts = rest.split()
                rep["units"][parts[0]] = parts[1:]
            elif word == "lsmod":
                rep["modules"] = int(rest)
            elif word == "oom_kill":
                rep["oom_kill"] = int(rest or 0)
            elif word == "analyze":
                m = re.search(r"= ([0-9.]+min )?([0-9.]+)s", rest)
                if m and "Startup finished" in rest:
                    mins = float(m.group(1)[:-4]) if m.group(1) else 0.0
                    rep["startup"] = mins * 60 + float(m.group(2))
            elif word == "fail":
                rep["fail"].append(rest)
            elif word == "hookmsg":
                rep["hookmsg"].append(rest)
            elif word == "taint":
                mod, _, t = rest.partition(" ")
                rep["taint"][mod] = t
    if not done:
        return {"incomplete": True, "kernel": rep["kernel"]}
    if rep["loads"]:
        rep["last_load"] = max(t for t, _ in rep["loads"])
    ml = rep["units"].get("systemd-modules-load", [])
    if len(ml) >= 2 and ml[1].isdigit() and int(ml[1]) > 0:
        rep["mod_load"] = int(ml[1]) / 1e6
    # the out-of-tree modules (those the report gives a taint line for): when the last of
    # them was loaded, counted from systemd-modules-load's start (they head its list)
    oot = [t for t, m in rep["loads"] if m in rep["taint"]]
    if oot and ml and ml[0].isdigit() and int(ml[0]) > 0:
        rep["oot_span"] = max(oot) - int(ml[0]) / 1e6
    return rep


def pct(values, p):
    """Nearest-rank percentile."""
    v = sorted(values)
    if not v:
        return float("nan")
    k = max(0, min(len(v) - 1, int(round(p / 100.0 * len(v) + 0.5)) - 1))
    return v[k]


def fmt_row(name, off, on, unit="s", digits=2):
    def cell(vals):
        if not vals:
            return "-"
        return "%.*f [%.*f–%.*f]" % (digits, statistics.median(vals), digits, min(vals),
                                     digits, max(vals))
    ratio = "-"
    if off and on and statistics.median(off) > 0:
        ratio = "%.3f×" % (statistics.median(on) / statistics.median(off))
    return "| %s | %s | %s | %s |" % (name + (" (%s)" % unit if unit else ""), cell(off),
                                       cell(on), ratio)


def print_hooks(groups, kind, label):
    """The hook's latency over every hook run of the measured boots of one kind."""
    hooks = [h for r in groups[kind] for h in r["hooks"]]
    if not hooks:
        return
    wall = [h["wall_ms"] for h in hooks]
    cpu = [h["user_ms"] + h["sys_ms"] for h in hooks]
    print()
    print("%s: hook latency over %d hook runs of the measured boots (%s per boot):" % (
        label, len(hooks), "/".join(str(len(r["hooks"])) for r in groups[kind])))
    print()
    print("| ms | p50 | p90 | p99 | max | mean |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, v in (("wall", wall), ("CPU (user+sys)", cpu)):
        print("| %s | %.1f | %.1f | %.1f | %.1f | %.1f |" % (
            name, pct(v, 50), pct(v, 90), pct(v, 99), max(v), statistics.mean(v)))
    per_boot = [sum(h["wall_ms"] for h in r["hooks"]) / 1e3 for r in groups[kind]]
    per_boot_cpu = [sum(h["user_ms"] + h["sys_ms"] for h in r["hooks"]) / 1e3
                    for r in groups[kind]]
    print()
    print("hook time summed per boot: wall %s s, CPU %s s" % (
        ", ".join("%.1f" % x for x in per_boot), ", ".join("%.1f" % x for x in per_boot_cpu)))
    nonzero = sorted({h["module"] for h in hooks if h["status"] != 0})
    print("hook runs with a non-zero exit: %d%s" % (
        sum(1 for h in hooks if h["status"] != 0),
        (" (" + ", ".join(nonzero[:10]) + ")") if nonzero else ""))
    print("slowest hook runs (wall ms, CPU ms, module):")
    for h in sorted(hooks, key=lambda h: -h["wall_ms"])[:10]:
        print("  %7.1f %7.1f  %s" % (h["wall_ms"], h["user_ms"] + h["sys_ms"], h["module"]))


def main():
    if len(sys.argv) != 2:
        print("usage: parse-boot.py OUTDIR", file=sys.stderr)
        return 2
    out = sys.argv[1]
    boots = []
    with open(os.path.join(out, "boots.tsv"), encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            row = dict(zip(header, line.rstrip("\n").split("\t")))
            boots.append(row)
    bad = 0
    groups = {"off": [], "on": [], "null": [], "rules": []}
    warm = None
    print("boot      hook  settle  last-load  mod-load  startup  modules  hooks  qemu wall/cpu s"
          "   load1 before/after")
    for b in boots:
        rep = parse_report(os.path.join(out, b["log"]))
        if rep.get("incomplete"):
            print("%-9s %-5s no complete report in %s (QEMU wall %s s)" % (
                b["boot"], b["hook"], b["log"], b["wall_s"]))
            for kl in rep["kernel"][:5]:
                print("          kernel: %s" % kl)
            bad = 1
            continue
        rep["qemu_wall"] = float(b["wall_s"])
        rep["qemu_cpu"] = float(b["qemu_user_s"]) + float(b["qemu_sys_s"])
        rep["la"] = (float(b["load1_before"]), float(b["load1_after"]))
        print("%-9s %-5s %6.2f  %9.2f  %8.2f  %7.2f  %7d  %5d  %6.1f/%6.1f   %5.2f/%5.2f" % (
            b["boot"], b["hook"], rep.get("settle", float("nan")),
            rep.get("last_load", float("nan")), rep.get("mod_load", float("nan")),
            rep.get("startup", float("nan")), rep.get("modules", 0), len(rep["hooks"]),
            rep["qemu_wall"], rep["qemu_cpu"], rep["la"][0], rep["la"][1]))
        # the hook's own lines that say "fail" (fail-open, "failing symbol_get" in a
        # warning) are not modules-load failures: all its lines are under hookmsg
        undecided = [fl for fl in rep["fail"]
                     if fl.startswith("kopolicy:") and "fail-open" in fl]
        for fl in [fl for fl in rep["fail"] if not fl.startswith("kopolicy:")]:
            print("          modules-load: %s" % fl)
        if undecided:
            print("          modules-load: %d hook messages about failing open, e.g. %s" % (
                len(undecided), undecided[0]))
        if rep.get("oom_kill"):
            print("          OOM killer: %d processes killed" % rep["oom_kill"])
        for kl in rep["kernel"][:5]:
            print("          kernel: %s" % kl)
        if b["boot"] == "warmup":
            warm = rep
        else:
            groups[{"1": "on", "null": "null", "rules": "rules"}.get(b["hook"], "off")].append(
                rep)

    def col(g, k):
        return [r[k] for r in groups[g] if k in r]

    if groups["on"] or not groups["rules"]:
        print()
        print("medians [min–max] of %d boots without and %d with the hook on every module:" % (
            len(groups["off"]), len(groups["on"])))
        print()
        print("| measure | without hook | install * hook | ratio |")
        print("|---|---:|---:|---:|")
        for key, name in (("settle", "udevadm settle"), ("last_load", "last module loaded"),
                          ("mod_load", "systemd-modules-load done"),
                          ("startup", "systemd-analyze startup"), ("qemu_wall", "QEMU wall"),
                          ("qemu_cpu", "QEMU CPU (user+sys)")):
            print(fmt_row(name, col("off", key), col("on", key)))
        print(fmt_row("modules loaded", col("off", "modules"), col("on", "modules"), "", 0))

    if groups["null"]:
        print()
        print("the same measures with a null hook (-N: the install rule with /bin/true in place of "
              "kopolicy), %d boots: the mechanism's own cost, and kopolicy's beyond it:" % (
                  len(groups["null"])))
        print()
        print("| measure | without hook | null hook | ratio |")
        print("|---|---:|---:|---:|")
        for key, name in (("settle", "udevadm settle"), ("last_load", "last module loaded"),
                          ("qemu_cpu", "QEMU CPU (user+sys)")):
            print(fmt_row(name, col("off", key), col("null", key)))
        print()
        print("| measure | null hook | kopolicy hook | ratio |")
        print("|---|---:|---:|---:|")
        for key, name in (("settle", "udevadm settle"), ("last_load", "last module loaded"),
                          ("qemu_cpu", "QEMU CPU (user+sys)")):
            print(fmt_row(name, col("null", key), col("on", key)))
        nh = [h for r in groups["null"] for h in r["hooks"]]
        if nh:
            nc = sorted(h["user_ms"] + h["sys_ms"] for h in nh)
            print()
            print("null hook (/bin/true) runs: %d, CPU p50 %.1f ms, p99 %.1f ms" % (
                len(nh), nc[len(nc) // 2], nc[min(len(nc) - 1, int(len(nc) * 0.99))]))
        print()
    print_hooks(groups, "on", "install * (every module)")
    if groups["rules"]:
        print()
        print("the recommended deployment (-G, kpbench.hook=rules: the install lines of "
              "`kopolicy hook --print-install-rules`, one per out-of-tree module), %d boots:" %
              len(groups["rules"]))
        print()
        print("| measure | without hook | rules | ratio |")
        print("|---|---:|---:|---:|")
        for key, name in (("settle", "udevadm settle"), ("last_load", "last module loaded"),
                          ("mod_load", "systemd-modules-load done"),
                          ("startup", "systemd-analyze startup"), ("qemu_wall", "QEMU wall"),
                          ("qemu_cpu", "QEMU CPU (user+sys)")):
            print(fmt_row(name, col("off", key), col("rules", key)))
        print(fmt_row("out-of-tree modules loaded, from systemd-modules-load start",
                      col("off", "oot_span"), col("rules", "oot_span")))
        print(fmt_row("modules loaded", col("off", "modules"), col("rules", "modules"), "", 0))
        print_hooks(groups, "rules", "rules")
        msgs = {}
        for r in groups["rules"]:
            for m in r["hookmsg"]:
                msgs[m] = msgs.get(m, 0) + 1
        print("what kopolicy hook printed in the rules boots (times, line):")
        for m, n in sorted(msgs.items()):
            print("  %dx %s" % (n, m))
        if not msgs:
            print("  nothing")
    for kind in ("off", "rules", "null", "on"):
        taints = {}
        for r in groups[kind]:
            for m, t in r["taint"].items():
                taints.setdefault(m, set()).add(t)
        if taints:
            print("out-of-tree modules' taints, %s boots: %s" % (kind, ", ".join(
                "%s %s" % (m, "/".join(sorted(t))) for m, t in sorted(taints.items()))))
    if warm and warm["hooks"]:
        wall = [h["wall_ms"] for h in warm["hooks"]]
        print()
        print("warm-up boot (facts cache empty at first): %d hook runs, wall p50 %.1f p99 %.1f "
              "max %.1f ms" % (len(wall), pct(wall, 50), pct(wall, 99), max(wall)))
    return bad


if __name__ == "__main__":
    sys.exit(main())
