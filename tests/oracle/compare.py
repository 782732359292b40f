#!/usr/bin/env python3
"""Compare what the kernel did (oracle JSON) with what kopolicy predicted.

usage: compare.py [--ignore-once] [-v] OBSERVED.json PREDICTION.json [OBSERVED PREDICTION ...]

OBSERVED is tests/oracle/observed/<series>/<scenario>.json (run-oracle.sh); PREDICTION is the
stdout of `kopolicy check --format json <modules in load order>` (schema_version 1). Several
pairs may be given; the totals cover all of them.

Prints one line per mismatch, then `N passed, N failed`. Exit status: 0 when every check passed,
1 on any mismatch, 2 on a usage error or an unreadable OBSERVED file. An unreadable or invalid
PREDICTION counts as one failed check (kopolicy crashed or printed garbage).

The rules (the reasons are in tests/oracle/README.md, "Comparison rules"):

Pairing. The i-th load of module M in the scenario is paired with the i-th entry named M in
prediction["modules"]. An observed load without a prediction entry fails ("no prediction"); a
prediction entry without an observed load fails ("not loaded in this scenario").

Checks per paired load (each one counts as one check):
  loads       observed rc == 0  vs  prediction "loads".
  errno       observed errno name (null when loaded)  vs  prediction "errno".
  taint       only when the load succeeded: the letters of /sys/module/M/taint after the step
              vs prediction "taint", compared as sets of letters.
  global      only when prediction "global_taint" is not null: the kernel's tainted mask after
              the step, minus bits already set before the first load, as taint letters, vs the
              letters of the prediction (an int or a numeric string is read as a mask; 'G', '-',
              spaces are ignored).
  messages    see below (one check; every missing or extra line is reported).
  symbol_get  one check per symbol the module's init looked up (fixture pr_info lines
              "M: SYM=ok|null"): prediction "symbol_get" must hold that symbol with the same
              result, and not say it runs only when called ("when": "called"). When the load
              succeeded, predicted symbols the module did not look up fail, unless predicted
              to run only when called (a callback the load does not run).

Messages. A dmesg line printed during M's load step is *kernel-relevant* when
  (a) it matches one of the loader's printk formats in LOADER_FORMATS below, or
  (b) its level is KERN_NOTICE or more severe (<= 5), it names M as a whole word, and it is not
      a symbol_get result line of a fixture, nor printed by M's own init() (between the
      "calling  FN" and "initcall FN returned" lines of a boot with initcall_debug).
A load during which the kernel oopsed (the loader killed: "killed_by_signal", errno KILLED)
must be predicted with "oops": true (its errno is not compared); a predicted oops must have
happened. A load the guest never came back from ("hang": true, errno HANG: run-oracle.sh
--record-hang) must be predicted with "oops" and "hang" true, a predicted hang must have been
observed; its global taint is not compared (nothing could read it) and its dmesg are the
console lines, without levels. The modules after it are never loaded: each must be predicted
"not_run": true, and has no observed load to pair with. A load whose finit_module() call had
not returned when the guest's loader stopped waiting ("blocked", errno BLOCKED: an earlier
oops left the loader stuck) must be predicted "blocked": true (its errno is not compared), and
a predicted block must have happened; a load predicted "not_run" must not have been observed.
A failed load counts as loaded, errno and module taint not compared, when the failure is the
module's init()'s own: scenarios named init_*, or initcall_debug's "initcall FN returned RC"
line in the step with RC == the load's rc.
A loader line printed without a newline (7.2's "symbol name out of bounds in string table")
stays an open record until the next printk: dmesg shows it as the first line of the next step
that prints anything, and the prediction says so (kopolicy puts it first in that load's
"messages", not in the messages of the load that printed it): it is compared like any line.
Every kernel-relevant line must appear verbatim (exact string; prediction entries may also be
objects {"text": ...}) in the prediction's "messages" of that module (the process name in the
"Lockdown: <comm>: ..." line is masked on both sides). Conversely every
predicted message that matches a LOADER_FORMATS pattern must have been printed in that step
(no invented loader lines); predicted lines that match no loader format are kopolicy's own
commentary and are ignored. Lines of the once-per-boot class (ONCE=True: the global-taint
notices) are included, because each scenario is one fresh boot and kopolicy sees the same load
order; --ignore-once drops them from both directions (for predictions made against an
already-tainted kernel).
"""
import argparse
import json
import re
import sys

# (regex, once_per_boot). Group "m" (when present) is the module the line is about.
LOADER_FORMATS = [
    # global-taint notices: printed only when the global bit was clear (once per boot)
    (r"(?P<m>\S+): loading out-of-tree module taints kernel\.", True),
    (r"(?P<m>\S+): module verification failed: signature and/or required key missing"
     r" - tainting kernel", True),
    (r"(?P<m>\S+): module license '.*' taints kernel\.", True),
    (r"(?P<m>\S+): module license taints kernel\.", True),
    (r"Disabling lock debugging due to kernel taint", True),
    (r"(?P<m>\S+): loading test module taints kernel\.", True),
    (r"(?P<m>\S+): tainting kernel with TAINT_LIVEPATCH", True),
    (r"(?P<m>\S+): bad vermagic: kernel tainted\.", True),
    (r"System may be vulnerable to spectre v2", True),
    # per-load lines
    (r"(?P<m>\S+): module is from the staging directory, the quality is unknown,"
     r" you have been warned\.", False),
    (r"(?P<m>\S+): loading module not compiled with retpoline compiler\.", False),
    (r"(?P<m>\S+): Unknown symbol \S+ \(err -?\d+\)", False),
    # btf_module_notify(): the module's .BTF does not validate (fatal, or 6.1 with the option)
    (r"failed to validate module \[(?P<m>[^]]+)\] BTF: -?\d+", False),
    (r"Kernel module BTF mismatch detected, BTF debug info may be unavailable for some modules",
     True),
    (r"(?P<m>\S+): module uses symbols \S+ from proprietary module \S+, inheriting taint\.", False),
    (r"(?P<m>\S+): module using GPL-only symbols uses symbols \S+ from proprietary module \S+\.",
     False),
    (r"(?P<m>\S+): module uses symbols from proprietary module \S+, inheriting taint\.", False),
    (r"(?P<m>\S+): module using GPL-only symbols uses symbols from proprietary module \S+\.",
     False),
    (r"(?P<m>\S+): module uses symbol \(\S+\) from namespace \S+, but does not import it\.", False),
    (r"(?P<m>\S+): disagrees about version of symbol \S+", False),
    # upstream: pr_warn_once and accepted; Debian 6.1/6.12: pr_warn every time and rejected
    (r"(?P<m>\S+): no symbol version for \S+", False),
    (r"(?P<m>\S+): exports duplicate symbol \S+ \(owned by \S+\)", False),
    (r"(?P<m>\S+): version magic '.*' should be '.*'", False),
    (r"(?P<m>\S+): please compile with -fno-common", False),
    (r"(?P<m>\S+): module has no symbols \(stripped\?\)", False),
    (r"(?P<m>\S+): No module found in object", False),
    (r"(?P<m>\S+): Symbol \S+ has an invalid section index \d+ \(max \d+\)", False),
    (r"(?P<m>\S+): section \S+ \(index \d+\) has invalid WRITE\|EXEC flags", False),
    (r"(?P<m>\S+): gave up waiting for init of module \S+\.", False),
    (r"(?P<m>\S+): module is marked as livepatch module, but livepatch support is disabled",
     False),
    (r"module (?P<m>\S+): \.gnu\.linkonce\.this_module section size must match the kernel's"
     r" built struct module size at run time", False),
    (r"Module (?P<m>\S+) is blacklisted", False),
    (r"Loading of .* is rejected", False),
    (r"Lockdown: .*: unsigned module loading is restricted; see man kernel_lockdown\.7", False),
    (r"Module hash [0-9a-f]+ is blacklisted", False),
    (r"failing symbol_get of non-GPLONLY symbol \S+\.", False),
    (r"Invalid ELF header magic: != .*", False),
    (r"Only one \.modinfo section must exist\.", False),
    # >= 6.16: module-restricted namespaces
    (r"(?P<m>\S+): module tries to import module namespace: \S+", False),
    # >= 6.13: elf_validity_cache_strtab() (no module name: the module is not parsed yet)
    (r"empty symbol string table", False),
    (r"symbol string table missing leading NUL", False),
    (r"symbol string table isn't NUL terminated", False),
    (r"symbol name out of bounds in string table", False),
    # >= 7.1: __kflagstab
    (r"(?P<m>\S+): no flags for exported symbols", False),
    (r"(?P<m>\S+): ignoring obsolete section __k(sym|crc)tab_gpl", False),
    # do_init_module(): positive init return (<= 7.0: two lines + stack dump; >= 7.1: one line)
    (r"do_init_module: '(?P<m>\S+)'->init suspiciously returned -?\d+, it should follow 0/-E"
     r" convention", False),
    (r"do_init_module: loading module anyway\.\.\.", False),
    (r"(?P<m>\S+): init suspiciously returned -?\d+, it should follow 0/-E convention", False),
    # IMA: the appraisal record of a module read (normalised by norm()), and init_module()
    (r"audit: type=1800 op=appraise_data cause=\S+ res=\d+ errno=-?\d+", False),
    (r"ima: impossible to appraise a module without a file descriptor\. sig_enforce kernel"
     r" parameter might help", False),
]
LOADER_RE = [(re.compile(r"\A" + p + r"\Z"), once) for p, once in LOADER_FORMATS]
SYMGET_LINE = re.compile(r"\A([A-Za-z0-9_]+): [A-Za-z0-9_.$]+=(ok|null)\Z")

# kernel/panic.c taint_flags[] (identical in 6.1 and 6.12; 5.10 stops at T (bit 17), >= 6.15
# adds J (TAINT_FWCTL, bit 19), which the loader never sets)
TAINT_LETTERS = "PFSRMBUDAWCIOELKXTNJ"  # kernel/panic.c taint_flags[], bits 0..19


# A module's init() return value is its own code's business, not in the file: in the scenarios
# named init_*, what do_init_module() makes of it (errno, "init suspiciously returned" lines)
# is recorded but not compared; the loader's part before init() is.
INIT_LINE = re.compile(r"\A(do_init_module: |\S+: init suspiciously returned )")


def init_dependent(scen):
    return scen.startswith("init_")


# Booted with initcall_debug (the dkms_ scenarios), the kernel brackets every module init() with
# "calling  FN @ PID" and "initcall FN returned RC after N usecs" (KERN_DEBUG, init/main.c):
# a failed load whose init() returned that errno was accepted by the loader and failed in the
# module's own code (hardware, request_module() without modprobe in the guest, self tests), and
# lines between the two that match no loader format are the module's own output.
INITCALL_CALLING = re.compile(r"\Acalling  \S+( \[\S+\])? @ \d+\Z")
INITCALL_RETURNED = re.compile(r"\Ainitcall \S+( \[\S+\])? returned (-?\d+) after \d+ usecs\Z")


def init_returned(ld):
    """True if the step's own init() returned the load's (failing) rc."""
    for line in ld["dmesg"]:
        m = INITCALL_RETURNED.match(line)
        if m and ld["rc"] is not None and int(m.group(2)) == ld["rc"] != 0:
            return True
    return False


def loader_class(line):
    """None if LINE is no loader format, else once_per_boot (bool)."""
    for rx, once in LOADER_RE:
        if rx.match(line):
            return once
    return None


def mentions(line, mod):
    return re.search(r"(?<![A-Za-z0-9_])" + re.escape(mod) + r"(?![A-Za-z0-9_])", line) is not None


def mask_letters(mask):
    return {TAINT_LETTERS[b] for b in range(len(TAINT_LETTERS)) if mask & (1 << b)}


def pred_letters(v):
    if isinstance(v, int):
        return mask_letters(v)
    v = str(v).strip()
    if v.isdigit():
        return mask_letters(int(v))
    return {c for c in v if c.isalpha() and c != "G"}


def fmt_letters(s):
    return "".join(c for c in TAINT_LETTERS if c in s) or "(none)"


# The lockdown line names the *calling process* (current->comm): "loader" in the oracle guest,
# "insmod"/"modprobe"/"systemd-udevd" elsewhere. It is compared with the comm masked.
LOCKDOWN_COMM = re.compile(r"\A(Lockdown: )\S+(: unsigned module loading is restricted;)")


# IMA's appraisal record (integrity_audit_msg(), AUDIT_INTEGRITY_DATA) carries the guest's
# time stamp, pid, audit ids, LSM context, comm, path, device and inode; kopolicy predicts the
# operation, the cause and the result. Both sides are compared as
# "audit: type=1800 op=OP cause=CAUSE res=R errno=E".
IMA_AUDIT = re.compile(r"\Aaudit: type=1800 audit\([^)]*\): .*? op=(\S+) cause=(\S+) comm=.*"
                       r" res=(\d+) errno=(-?\d+)\Z")


def norm(line):
    line = str(line).rstrip()
    m = IMA_AUDIT.match(line)
    if m:
        return "audit: type=1800 op=%s cause=%s res=%s errno=%s" % m.groups()
    return LOCKDOWN_COMM.sub(r"\1*\2", line)


def msg_text(m):
    if isinstance(m, dict):
        return norm(m.get("text", ""))
    return norm(m)


class Result:
    def __init__(self, verbose):
        self.passed = 0
        self.failed = 0
        self.verbose = verbose

    def check(self, ok, where, what, details=()):
        if ok:
            self.passed += 1
            if self.verbose:
                print("ok   %s: %s" % (where, what))
        else:
            self.failed += 1
            print("FAIL %s: %s" % (where, what))
            for d in details:
                print("FAIL %s: %s" % (where, d))


def compare_pair(obs_path, pred_path, res, ignore_once):
    try:
        with open(obs_path) as f:
            obs = json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write("compare: cannot read observed %s: %s\n" % (obs_path, e))
        sys.exit(2)
    scen = obs.get("scenario", obs_path)
    try:
        with open(pred_path) as f:
            pred = json.load(f)
        if not isinstance(pred, dict) or not isinstance(pred.get("modules"), list):
            raise ValueError("no \"modules\" list")
        if pred.get("schema_version") != 1:
            raise ValueError("schema_version %r, expected 1" % pred.get("schema_version"))
    except (OSError, ValueError) as e:
        res.check(False, scen, "prediction %s unreadable: %s" % (pred_path, e))
        return

    # pair loads and prediction entries by name and occurrence
    by_name = {}
    for p in pred["modules"]:
        by_name.setdefault(p.get("name"), []).append(p)
    used = {}
    base_mask = obs.get("global_tainted_before") or 0
    symget = obs.get("symbol_get", [])

    for ld in obs["loads"]:
        mod = ld["module"]
        k = used.get(mod, 0)
        used[mod] = k + 1
        where = "%s/%s" % (scen, mod) + ("#%d" % (k + 1) if k else "")
        cands = by_name.get(mod, [])
        if k >= len(cands):
            res.check(False, where, "no prediction for this load (rc=%s %s)"
                      % (ld["rc"], ld["errno"] or "OK"))
            continue
        p = cands[k]
        loaded = ld["rc"] == 0
        by_init = (init_dependent(scen) or init_returned(ld)) and not loaded

        # loads / errno (an init() failure: the loader itself accepted the module)
        if by_init:
            loaded = True
        res.check(bool(p.get("loads")) == loaded, where,
                  "loads: kernel %s, predicted %s" % (loaded, bool(p.get("loads"))))
        # the kernel oopsed: the loader was killed (no rc, errno "KILLED"), kopolicy says "oops"
        killed = "killed" in ld or ld.get("killed_by_signal") is not None
        hang = bool(ld.get("hang"))
        if hang or p.get("hang"):
            res.check(bool(p.get("hang")) == hang and (not hang or bool(p.get("oops"))),
                      where, "hang: kernel %s, predicted %s (oops %s)"
                      % (hang, bool(p.get("hang")), bool(p.get("oops"))))
        killed = killed or hang
        blocked = "blocked" in ld
        if blocked or p.get("blocked"):
            res.check(bool(p.get("blocked")) == blocked, where,
                      "blocked: kernel %s, predicted %s" % (blocked, bool(p.get("blocked"))))
        if p.get("not_run"):
            res.check(False, where, "predicted never to run (not_run), but the kernel loaded it"
                      " (rc=%s %s)" % (ld["rc"], ld["errno"] or "OK"))
        if not by_init and not killed and not blocked:
            res.check(p.get("errno") == ld["errno"], where,
                      "errno: kernel %s (rc=%s), predicted %s"
                      % (ld["errno"] or "null", ld["rc"], p.get("errno") or "null"))
        if killed or p.get("oops"):
            res.check(bool(p.get("oops")) == killed, where,
                      "oops: kernel %s, predicted %s" % (killed, bool(p.get("oops"))))

        # module taint (gone with the module when init() failed)
        if loaded and not by_init:
            kt = set(ld["taint_after"].get(mod, ""))
            pt = pred_letters(p.get("taint") or "")
            res.check(kt == pt, where, "taint: kernel %s, predicted %s"
                      % (fmt_letters(kt), fmt_letters(pt)))

        # global taint
        if p.get("global_taint") is not None and ld.get("global_tainted") is not None:
            kg = mask_letters(ld["global_tainted"] & ~base_mask)
            pg = pred_letters(p["global_taint"])
            res.check(kg == pg, where, "global taint: kernel %s, predicted %s"
                      % (fmt_letters(kg), fmt_letters(pg)))

        # messages
        levels = ld.get("dmesg_level") or [None] * len(ld["dmesg"])
        relevant = []
        in_init = False
        for line, lvl in zip(ld["dmesg"], levels):
            line = norm(line)
            if INITCALL_CALLING.match(line):
                in_init = True
            elif INITCALL_RETURNED.match(line):
                in_init = False
            if init_dependent(scen) and INIT_LINE.match(line):
                continue
            cls = loader_class(line)
            if cls is None:
                if (not in_init and lvl is not None and lvl <= 5 and mentions(line, mod)
                        and not SYMGET_LINE.match(line)):
                    relevant.append(line)
            elif not (cls and ignore_once):
                relevant.append(line)
        pmsgs = [msg_text(m) for m in (p.get("messages") or [])]
        missing = [l for l in relevant if l not in pmsgs]
        printed = set(norm(l) for l in ld["dmesg"])
        extra = []
        for m in pmsgs:
            cls = loader_class(m)
            if cls is None or (cls and ignore_once):
                continue
            if m not in printed:
                extra.append(m)
        res.check(not missing and not extra, where,
                  "messages: %d kernel line(s) not predicted, %d predicted line(s) not printed"
                  % (len(missing), len(extra)),
                  ["  kernel printed, not predicted: %s" % l for l in missing]
                  + ["  predicted, kernel did not print: %s" % m for m in extra])

        # symbol_get (results printed by the fixture's init, so only when it ran)
        psg, when = {}, {}
        for e in p.get("symbol_get") or []:
            psg.setdefault(e.get("symbol"), e.get("result"))
            when.setdefault(e.get("symbol"), e.get("when", "load"))
        seen = set()
        if loaded:
            for e in symget:
                if e["module"] != mod:
                    continue
                sym = e["symbol"]
                seen.add(sym)
                if psg.get(sym) == e["result"] and when.get(sym) == "called":
                    res.check(False, where, "symbol_get(%s): looked up during the load,"
                              " predicted to run only when called" % sym)
                    continue
                res.check(psg.get(sym) == e["result"], where,
                          "symbol_get(%s): kernel %s, predicted %s"
                          % (sym, e["result"], psg.get(sym, "nothing")))
            for sym in psg:
                if sym not in seen and when[sym] != "called":
                    res.check(False, where, "symbol_get(%s): predicted %s, module did not look"
                              " it up" % (sym, psg[sym]))

    hung = any(ld.get("hang") for ld in obs["loads"])
    for name, cands in by_name.items():
        for extra in cands[used.get(name, 0):]:
            # after a load that hung the guest nothing more ran: kopolicy must say not_run
            if hung:
                res.check(bool(extra.get("not_run")), "%s/%s" % (scen, name),
                          "after the hang: predicted %s, expected not_run"
                          % ("loads" if extra.get("loads") else "a load attempt"))
                continue
            res.check(False, "%s/%s" % (scen, name),
                      "prediction for a module not loaded in this scenario")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ignore-once", action="store_true",
                    help="do not compare once-per-boot global-taint notices")
    ap.add_argument("-v", "--verbose", action="store_true", help="also print passing checks")
    ap.add_argument("pairs", nargs="+", metavar="OBSERVED PREDICTION")
    a = ap.parse_args()
    if len(a.pairs) % 2:
        ap.error("arguments must be OBSERVED PREDICTION pairs")
    res = Result(a.verbose)
    for i in range(0, len(a.pairs), 2):
        compare_pair(a.pairs[i], a.pairs[i + 1], res, a.ignore_once)
    print("%d passed, %d failed" % (res.passed, res.failed))
    sys.exit(1 if res.failed else 0)


if __name__ == "__main__":
    main()
