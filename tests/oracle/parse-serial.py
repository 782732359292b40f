#!/usr/bin/env python3
"""Turn one oracle boot's serial console log into observed/<series>/<scenario>.json.

Usage: parse-serial.py --log SERIAL --scenario NAME --series S --abi A
                       [--extra-cmdline STR] --out FILE MODULE_FILE[=NAME]...

NAME is the module's name in the kernel (.gnu.linkonce.this_module); without it the file
name minus ".ko" is used.

The guest's /init (written by run-oracle.sh) prints, between markers:

  KPORACLE-BEGIN <scenario>
  KPUNAME <uname -r>
  KPCMDLINE <contents of /proc/cmdline>
  KPGTAINT0 <tainted before the first load>
  KPSTEP-BEGIN <n> <file> [flags=<finit_module flags>]
  KPLOAD <file> rc=<rc> <ERRNAME>          (tests/oracle/loader.c)
  KPLOADBLOCKED <file> state=<S> wchan=<W>  (instead: the call did not return in time)
  KPSTACK <frame>                           (/proc/<pid>/stack of that call, one per line)
  KPDMESG-BEGIN
  <level>[ time] message                    (busybox dmesg -r -c)
  KPDMESG-END
  KPTAINT <module> <letters>                (one per loaded module: /sys/module/*/taint)
  KPGTAINT <tainted>
  KPSTEP-END <n>
  ...
  KPORACLE-END

Exits 1 with a message on stderr when the log is incomplete or inconsistent.

--hang: the scenario hangs the guest (run-oracle.sh --record-hang, a boot with loglevel=8 that
ends in the timeout): the log must stop inside its last step, with no KPORACLE-END. That step
is recorded with rc null, errno "HANG", "hang": true, no taints, global_tainted null, and as
dmesg the kernel's console lines printed after its KPSTEP-BEGIN (no levels: the console does
not show them); every earlier step must be complete. The modules after it never ran: they are
listed in "not_run" (module names, in load order).

A load whose finit_module() call had not returned when the loader stopped waiting (loader -t:
blocked, e.g. in mutex_lock(&module_mutex) after an oops left that lock held) is recorded with
rc null, errno "BLOCKED", "blocked": {"state": <S>, "wchan": <W>, "stack": [<frames>]}; the
rest of the step (dmesg, taints, the global mask) as for any load.
"""
import argparse
import json
import re
import sys

ANSI = re.compile(r"\x1b(\[[0-9;?]*[A-Za-z]|c|\][^\x07]*\x07)")
RAW_DMESG = re.compile(r"^<(\d+)>\[\s*\d+\.\d+\] ?(.*)$")
PLAIN_DMESG = re.compile(r"^\[\s*\d+\.\d+\] ?(.*)$")
SYMGET = re.compile(r"^([A-Za-z0-9_]+): ([A-Za-z0-9_.$]+)=(ok|null)$")


def die(msg):
    sys.stderr.write("parse-serial: %s\n" % msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--series", required=True)
    ap.add_argument("--abi", required=True)
    ap.add_argument("--extra-cmdline", default="")
    ap.add_argument("--out", required=True)
    ap.add_argument("--hang", action="store_true",
                    help="the guest hangs in the last step (no KPORACLE-END)")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()

    with open(a.log, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    lines = [ANSI.sub("", ln).rstrip("\r") for ln in text.split("\n")]

    # Everything before our begin marker is firmware/kernel console noise.
    begin = None
    for i, ln in enumerate(lines):
        if ln.endswith("KPORACLE-BEGIN " + a.scenario):
            begin = i
            break
    if begin is None:
        die("%s: guest never reached /init (no KPORACLE-BEGIN marker)" % a.log)
    ended = any(ln == "KPORACLE-END" for ln in lines[begin:])
    if not ended and not a.hang:
        die("%s: guest did not reach the end marker (KPORACLE-END); "
            "crash, hang or timeout - see the log" % a.log)
    if ended and a.hang:
        die("%s: --hang, but the guest reached the end marker (KPORACLE-END)" % a.log)

    release = cmdline = None
    tainted0 = None
    loads = []
    cur = None
    in_dmesg = False
    for ln in lines[begin + 1:]:
        if ln == "KPORACLE-END":
            break
        if in_dmesg:
            if ln == "KPDMESG-END":
                in_dmesg = False
                continue
            m = RAW_DMESG.match(ln)
            if m:
                cur["dmesg"].append(m.group(2))
                cur["dmesg_level"].append(int(m.group(1)) & 7)
                continue
            m = PLAIN_DMESG.match(ln)
            if m:  # kernel console line interleaved (loglevel=1: emerg only)
                continue
            if ln.strip():  # continuation of a multi-line record
                cur["dmesg"].append(ln)
                cur["dmesg_level"].append(None)
            continue
        if cur is not None and a.hang and cur["rc"] is None and "killed" not in cur:
            m = PLAIN_DMESG.match(ln)
            if m:  # the console (loglevel=8) is all a hanging guest leaves
                cur["dmesg"].append(m.group(1))
                cur["dmesg_level"].append(None)
                continue
        if ln.startswith("KPUNAME "):
            release = ln.split(" ", 1)[1]
        elif ln.startswith("KPCMDLINE "):
            cmdline = ln.split(" ", 1)[1].strip()
        elif ln.startswith("KPGTAINT0 "):
            tainted0 = int(ln.split()[1])
        elif ln.startswith("KPSTEP-BEGIN "):
            parts = ln.split()
            if len(parts) not in (3, 4) or (len(parts) == 4 and
                                            not re.fullmatch(r"flags=[0-3]", parts[3])):
                die("%s: unexpected step line %r" % (a.log, ln))
            n, fname = parts[1], parts[2]
            flags = int(parts[3][6:]) if len(parts) == 4 else 0
            cur = {"step": int(n), "file": fname, "flags": flags, "rc": None, "errno": None,
                   "dmesg": [], "dmesg_level": [], "taint_after": {},
                   "global_tainted": None}
        elif ln.startswith("KPLOAD "):
            parts = ln.split()
            if cur is None or parts[1] != cur["file"] or not parts[2].startswith("rc="):
                die("%s: unexpected loader line %r" % (a.log, ln))
            cur["rc"] = int(parts[2][3:])
            cur["errno"] = None if cur["rc"] == 0 else parts[3]
        elif ln.startswith("KPLOADBLOCKED "):
            # the call had not returned after loader -t's wait: the process sleeps in it
            m = re.fullmatch(r"KPLOADBLOCKED (\S+) state=(\S) wchan=(.*)", ln)
            if cur is None or not m or m.group(1) != cur["file"]:
                die("%s: unexpected line %r" % (a.log, ln))
            cur["blocked"] = {"state": m.group(2), "wchan": m.group(3), "stack": []}
            cur["errno"] = "BLOCKED"
        elif ln.startswith("KPSTACK "):
            if cur is None or "blocked" not in cur:
                die("%s: unexpected line %r" % (a.log, ln))
            # "[<0>] __mutex_lock.constprop.0+0x.../0x..." -> the function and offset
            frame = ln.split(" ", 1)[1].strip()
            cur["blocked"]["stack"].append(re.sub(r"^\[<[0-9a-f]+>\] ", "", frame))
        elif ln.startswith("KPLOADKILLED "):
            # the loader died (e.g. an oops inside finit_module): no syscall result
            parts = ln.split()
            if cur is None or parts[1] != cur["file"]:
                die("%s: unexpected line %r" % (a.log, ln))
            cur["killed"] = int(parts[2])
            cur["errno"] = "KILLED"
        elif ln == "KPDMESG-BEGIN":
            in_dmesg = True
        elif ln.startswith("KPTAINT "):
            parts = ln.split(" ", 2)
            cur["taint_after"][parts[1]] = parts[2] if len(parts) > 2 else ""
        elif ln.startswith("KPGTAINT "):
            cur["global_tainted"] = int(ln.split()[1])
        elif ln.startswith("KPSTEP-END "):
            if ((cur["rc"] is None and "killed" not in cur and "blocked" not in cur)
                    or cur["global_tainted"] is None):
                die("%s: step %d (%s) incomplete" % (a.log, cur["step"], cur["file"]))
            loads.append(cur)
            cur = None
    if a.hang:
        if cur is None or cur["rc"] is not None or "killed" in cur or "blocked" in cur:
            die("%s: --hang, but the log does not stop inside a load" % a.log)
        cur["errno"] = "HANG"
        cur["hang"] = True
        loads.append(cur)

    names = {}
    files = []
    for f in a.files:
        fname, sep, name = f.partition("=")
        files.append(fname)
        if sep and name:
            names[fname] = name
    a.files = files

    if len(loads) != len(a.files) and not (a.hang and len(loads) < len(a.files)):
        die("%s: expected %d load steps, found %d" % (a.log, len(a.files), len(loads)))
    for ld, f in zip(loads, a.files):
        if ld["file"] != f:
            die("%s: step %d loaded %s, expected %s" % (a.log, ld["step"], ld["file"], f))

    out_loads = []
    symget = []
    for ld in loads:
        mod = names.get(ld["file"]) or (ld["file"][:-3] if ld["file"].endswith(".ko") else ld["file"])
        for msg in ld["dmesg"]:
            m = SYMGET.match(msg)
            if m:
                symget.append({"module": m.group(1), "symbol": m.group(2),
                               "result": m.group(3)})
        out = {
            "module": mod,
            "file": ld["file"],
            "rc": ld["rc"],
            "errno": ld["errno"],
            "dmesg": ld["dmesg"],
            "dmesg_level": ld["dmesg_level"],
            "taint_after": dict(sorted(ld["taint_after"].items())),
            "global_tainted": ld["global_tainted"],
        }
        if ld["flags"]:  # finit_module() flags: 1 ignore modversions, 2 ignore vermagic
            out["finit_flags"] = ld["flags"]
        if "killed" in ld:  # rc is null: the loader was killed by this signal
            out["killed_by_signal"] = ld["killed"]
        if "blocked" in ld:  # rc is null: the call never returned (state, wchan, stack)
            out["blocked"] = ld["blocked"]
        if ld.get("hang"):  # rc is null: the guest never came back from this load
            out["hang"] = True
        out_loads.append(out)

    doc = {
        "kernel": {"series": a.series, "abi": a.abi, "release": release},
        "scenario": a.scenario,
        "extra_cmdline": a.extra_cmdline,
        "cmdline": cmdline,
        "global_tainted_before": tainted0,
        "loads": out_loads,
        "symbol_get": symget,
    }
    if len(loads) < len(a.files):  # --hang: the steps after the hanging one never ran
        doc["not_run"] = [names.get(f) or (f[:-3] if f.endswith(".ko") else f)
                          for f in a.files[len(loads):]]
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
