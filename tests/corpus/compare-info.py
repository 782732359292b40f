#!/usr/bin/env python3
"""Compare `kopolicy info --json` with reference tools over a real module tree.

usage: compare-info.py [options] TREE_ROOT RELEASE SYMVERS KOPOLICY_BIN

For every module file (*.ko, *.ko.xz, *.ko.zst, *.ko.gz) under
TREE_ROOT/lib/modules/RELEASE, one test per module and category:

  license      first license= tag          vs `modinfo` (first license value)
  licenses     every license= tag in order  vs `modinfo` (all license values)
  vermagic     vermagic= tag                vs `modinfo`
  modinfo_name name= tag                    vs `modinfo`
  name         .gnu.linkonce.this_module    vs `modinfo` name= (equal in-tree)
  depends      depends= tag as a list       vs `modinfo` (split at ',')
  srcversion   srcversion= tag or null      vs `modinfo`
  intree       intree= tag is "Y"           vs `modinfo`
  import_ns    every import_ns= tag in order vs `modinfo`
  signed       signature appended           vs `modinfo` printing sig_id
                                            (kmod's own signature detection)
  imports      undefined .symtab symbols (name, weak) in symtab order
                                            vs `readelf -sW` (index 0 skipped)
  exports      name, gpl_only, namespace, crc vs the Module.symvers lines whose
               module column is the module's path below kernel/ without .ko*
  versions     __versions (name, crc)       vs the CRC Module.symvers gives the
               symbol (only names Module.symvers knows; an in-tree build
               records exactly those CRCs)

A Module.symvers whose CRC column is 0 on every line comes from a kernel
without CONFIG_MODVERSIONS (Debian's 7.x): modpost writes 0x00000000 for "no
CRC".  There every export must have crc null and every module no __versions.

CRCs must be printed exactly as "0x%08x" and a missing namespace as null
(schema_version 1); other spellings count as mismatches.

The modinfo reference is kmod's modinfo itself, run in batches as
`modinfo -0 FILE...` (key=value records, one `filename:` record per module):
the same kmod_module_get_info() list that `modinfo -F KEY FILE` filters, at a
fraction of the cost (one process per ~100 modules instead of four per
module).  A sample of modules (every multi-license module plus an evenly
spaced set) is re-checked with literal `modinfo -F KEY FILE` calls; any
difference is a setup error.  readelf cannot read compressed modules: those
are decompressed to a temporary directory for readelf (and for modinfo only
when this kmod lacks that compression, e.g. Debian 12's kmod is -ZLIB so
.ko.gz modinfo runs on the decompressed copy).

Exit status: 0 all tests passed, 1 any mismatch, 2 setup error.
"""

import argparse
import gzip
import json
import lzma
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SUFFIXES = (".ko", ".ko.xz", ".ko.zst", ".ko.gz")
CATEGORIES = ("license", "licenses", "vermagic", "modinfo_name", "name",
              "depends", "srcversion", "intree", "import_ns", "signed",
              "imports", "exports", "versions")
MODINFO_KEYS = ("license", "vermagic", "name", "depends", "srcversion",
                "intree", "import_ns", "sig_id")
CRC_RE = re.compile(r"0x[0-9a-f]{8}")
BATCH = 100
MAX_DETAIL = 20


class SetupError(Exception):
    pass


def strip_suffix(path):
    for s in (".ko.xz", ".ko.zst", ".ko.gz", ".ko"):
        if path.endswith(s):
            return path[: -len(s)]
    return path


# ---------------------------------------------------------------- references

def parse_modinfo0(out, files):
    """Parse `modinfo -0 FILE...` output into {file: {key: [values]}}."""
    res = {}
    cur = None
    for rec in out.split(b"\0"):
        if rec.startswith(b"filename:"):
            path = rec[len(b"filename:"):].lstrip(b" ").decode("utf-8", "surrogateescape")
            cur = res.setdefault(path, {})
            continue
        if cur is None or b"=" not in rec:
            continue
        key, _, val = rec.partition(b"=")
        cur.setdefault(key.decode("utf-8", "surrogateescape"), []).append(
            val.decode("utf-8", "surrogateescape"))
    missing = [f for f in files if f not in res]
    if missing:
        raise SetupError("modinfo printed nothing for %s" % missing[0])
    return res


SYM_RE = re.compile(r"^\s*(\d+):\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)"
                    r"(?:\s+\[[^\]]*\])?\s+(\S+)(?: (.*))?$")


def parse_readelf(out, files):
    """Parse `readelf -sW FILE...` into {file: [(name, weak)]} (UND, idx>0)."""
    res = {}
    cur = files[0] if len(files) == 1 else None
    in_symtab = False
    expected = {}
    counted = {}
    for line in out.splitlines():
        if line.startswith("File: "):
            cur = line[6:]
            in_symtab = False
            continue
        m = re.match(r"^Symbol table '([^']*)' contains (\d+) entr", line)
        if m:
            in_symtab = m.group(1) == ".symtab"
            if in_symtab:
                if cur is None:
                    raise SetupError("readelf output without File: header")
                res[cur] = []
                expected[cur] = int(m.group(2))
                counted[cur] = 0
            continue
        if not in_symtab:
            continue
        m = SYM_RE.match(line)
        if not m:
            continue
        counted[cur] += 1
        idx, bind, ndx, name = int(m.group(1)), m.group(5), m.group(7), m.group(8) or ""
        if idx == 0 or ndx != "UND":
            continue
        res[cur].append((name, bind == "WEAK"))
    for f in files:
        if f not in res:
            raise SetupError("readelf found no .symtab in %s" % f)
        if counted[f] != expected[f]:
            raise SetupError("readelf: parsed %d of %d symbols in %s"
                             % (counted[f], expected[f], f))
    return res


def decompress(src, dst):
    if src.endswith(".ko.xz"):
        with lzma.open(src) as i, open(dst, "wb") as o:
            shutil.copyfileobj(i, o, 1 << 20)
    elif src.endswith(".ko.gz"):
        with gzip.open(src) as i, open(dst, "wb") as o:
            shutil.copyfileobj(i, o, 1 << 20)
    elif src.endswith(".ko.zst"):
        with open(dst, "wb") as o:
            subprocess.run(["zstd", "-dcq", src], stdout=o, check=True)
    else:
        raise SetupError("not compressed: " + src)


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    if p.returncode != 0:
        raise SetupError("%s failed (%d): %s" % (cmd[0], p.returncode,
                                                  p.stderr.decode(errors="replace")[-500:]))
    return p.stdout


def kmod_compressions():
    """Module compressions kmod's modinfo reads itself (kmod --version flags)."""
    sup = {".ko"}
    try:
        out = subprocess.run(["kmod", "--version"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL).stdout.decode()
    except OSError:
        return sup
    for flag, suf in (("+XZ", ".ko.xz"), ("+ZSTD", ".ko.zst"), ("+ZLIB", ".ko.gz")):
        if flag in out.split():
            sup.add(suf)
    return sup


def suffix_of(path):
    for s in (".ko.xz", ".ko.zst", ".ko.gz", ".ko"):
        if path.endswith(s):
            return s
    return ""


def reference_batch(args):
    """Worker: modinfo + readelf references for one batch of absolute paths."""
    files, tmproot, modinfo_reads = args
    try:
        tmp = tempfile.mkdtemp(dir=tmproot)
        try:
            elf_of = {}
            for i, f in enumerate(files):
                if f.endswith(".ko"):
                    elf_of[f] = f
                else:
                    d = os.path.join(tmp, "%d-%s" % (i, strip_suffix(os.path.basename(f)) + ".ko"))
                    decompress(f, d)
                    elf_of[f] = d
            # modinfo reads the original file, or the decompressed copy when
            # this kmod was built without that compression (Debian 12: -ZLIB)
            mi_of = {f: (f if suffix_of(f) in modinfo_reads else elf_of[f]) for f in files}
            mi_files = [mi_of[f] for f in files]
            mi = parse_modinfo0(run(["modinfo", "-0"] + mi_files), mi_files)
            elfs = [elf_of[f] for f in files]
            re_out = run(["readelf", "-sW"] + elfs).decode("utf-8", "surrogateescape")
            syms = parse_readelf(re_out, elfs)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return {f: {"modinfo": mi[mi_of[f]], "imports": syms[elf_of[f]]} for f in files}
    except SetupError as e:
        return {"__error__": str(e)}
    except (OSError, subprocess.SubprocessError, lzma.LZMAError) as e:
        return {"__error__": "%s: %s" % (type(e).__name__, e)}


def verify_modinfo_sample(files, refs, modinfo_reads, log):
    """Re-check the batched modinfo parse with literal `modinfo -F KEY FILE`."""
    sample = [f for f in files if len(refs[f]["modinfo"].get("license", [])) > 1]
    for key in ("srcversion", "import_ns", "depends"):
        sample += [f for f in files if refs[f]["modinfo"].get(key, [""])[0]][:5]
        sample += [f for f in files if len(refs[f]["modinfo"].get(key, [])) > 1][:5]
    step = max(1, len(files) // 12)
    sample += files[::step]
    sample = sorted(set(sample))
    t0 = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="kopolicy-corpus-")
    try:
        for f in sample:
            path = f
            if suffix_of(f) not in modinfo_reads:
                path = os.path.join(tmp, strip_suffix(os.path.basename(f)) + ".ko")
                decompress(f, path)
            for key in MODINFO_KEYS:
                out = run(["modinfo", "-F", key, path]).decode("utf-8", "surrogateescape")
                want = [v + "\n" for v in refs[f]["modinfo"].get(key, [])]
                if out != "".join(want):
                    raise SetupError("batched modinfo parse differs from `modinfo -F %s %s`: %r vs %r"
                                     % (key, f, "".join(want), out))
            if path != f:
                os.unlink(path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log("reference check: `modinfo -F` on %d sampled modules x %d keys agrees with the batch parse (%.1fs)"
        % (len(sample), len(MODINFO_KEYS), time.monotonic() - t0))


def read_symvers(path):
    by_module = {}
    crc_of = {}
    with open(path, encoding="utf-8", errors="surrogateescape") as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            cols = line.split("\t")
            if len(cols) != 5 or not cols[0].startswith("0x"):
                raise SetupError("%s:%d: not a 5-column Module.symvers line: %r" % (path, n, line))
            crc, sym, mod, kind, ns = cols
            if kind not in ("EXPORT_SYMBOL", "EXPORT_SYMBOL_GPL"):
                raise SetupError("%s:%d: unknown export type %r" % (path, n, kind))
            crc = int(crc, 16)
            by_module.setdefault(mod, []).append(
                {"name": sym, "gpl_only": kind == "EXPORT_SYMBOL_GPL",
                 "namespace": ns or None, "crc": "0x%08x" % crc})
            crc_of.setdefault(sym, set()).add(crc)
    if crc_of and not any(any(c) for c in crc_of.values()):
        # MODVERSIONS off: 0x00000000 everywhere means "no CRC"
        for exports in by_module.values():
            for e in exports:
                e["crc"] = None
        crc_of = None
    return by_module, crc_of


# ---------------------------------------------------------------- kopolicy

def run_kopolicy(binary, moddir, log):
    t0 = time.monotonic()
    p = subprocess.run([binary, "info", "--json", moddir],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dt = time.monotonic() - t0
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        raise SetupError("kopolicy info --json exit %d, output not JSON (%s); stderr: %s"
                         % (p.returncode, e, p.stderr.decode(errors="replace")[-800:]))
    if not isinstance(doc, dict) or not isinstance(doc.get("modules"), list):
        raise SetupError("kopolicy JSON has no modules array")
    if doc.get("schema_version") != 1:
        log("warning: schema_version %r (expected 1)" % doc.get("schema_version"))
    log("kopolicy info --json: %d modules, %d errors, exit %d, %.2fs wall"
        % (len(doc["modules"]), len(doc.get("errors") or []), p.returncode, dt))
    return doc


# ---------------------------------------------------------------- compare

def cmp_exports(got, want):
    """Return a list of difference strings (empty when equal)."""
    diffs = []
    g = {}
    for e in got:
        if e.get("name") in g:
            diffs.append("kopolicy lists %s twice" % e.get("name"))
        g[e.get("name")] = e
    w = {e["name"]: e for e in want}
    for name in sorted(set(w) - set(g)):
        diffs.append("missing %s (%s)" % (name, "GPL" if w[name]["gpl_only"] else "plain"))
    for name in sorted(set(g) - set(w)):
        diffs.append("extra %s" % name)
    for name in sorted(set(g) & set(w)):
        a, b = g[name], w[name]
        for k in ("gpl_only", "namespace", "crc"):
            if a.get(k) != b[k]:
                diffs.append("%s.%s: kopolicy %r, Module.symvers %r" % (name, k, a.get(k), b[k]))
    return diffs


def cmp_list(got, want, what):
    if got == want:
        return []
    n = 0
    while n < min(len(got), len(want)) and got[n] == want[n]:
        n += 1
    return ["%s differ at #%d (kopolicy %d entries, reference %d): kopolicy %r, reference %r"
            % (what, n, len(got), len(want),
               got[n] if n < len(got) else "<end>", want[n] if n < len(want) else "<end>")]


def first(d, key):
    v = d.get(key)
    return v[0] if v else None


def compare_module(km, ref, symvers_mod, crc_of):
    """Yield (category, [diffs])."""
    mi = ref["modinfo"]
    lic = mi.get("license", [])
    yield "license", ([] if km.get("license") == (lic[0] if lic else None)
                      else ["kopolicy %r, modinfo %r" % (km.get("license"), lic[0] if lic else None)])
    yield "licenses", ([] if list(km.get("licenses") or []) == lic
                       else ["kopolicy %r, modinfo %r" % (km.get("licenses"), lic)])
    yield "vermagic", ([] if km.get("vermagic") == first(mi, "vermagic")
                       else ["kopolicy %r, modinfo %r" % (km.get("vermagic"), first(mi, "vermagic"))])
    yield "modinfo_name", ([] if km.get("modinfo_name") == first(mi, "name")
                           else ["kopolicy %r, modinfo %r" % (km.get("modinfo_name"), first(mi, "name"))])
    yield "name", ([] if km.get("name") == first(mi, "name")
                   else ["this_module name %r, modinfo name %r" % (km.get("name"), first(mi, "name"))])
    dep = first(mi, "depends")
    want_dep = [d for d in dep.split(",") if d] if dep else []
    got_dep = km.get("depends")
    yield "depends", ([] if got_dep == want_dep
                      else ["kopolicy %r, modinfo %r" % (got_dep, dep)])
    srcv = first(mi, "srcversion")
    yield "srcversion", ([] if km.get("srcversion") == srcv
                         else ["kopolicy %r, modinfo %r" % (km.get("srcversion"), srcv)])
    intree = first(mi, "intree") == "Y"
    yield "intree", ([] if km.get("intree") is intree
                     else ["kopolicy %r, modinfo intree=%r" % (km.get("intree"), first(mi, "intree"))])
    ns = mi.get("import_ns", [])
    yield "import_ns", ([] if km.get("import_ns") == ns
                        else ["kopolicy %r, modinfo %r" % (km.get("import_ns"), ns)])
    signed = "sig_id" in mi
    yield "signed", ([] if km.get("signed") is signed
                     else ["kopolicy %r, modinfo sig_id %r" % (km.get("signed"), first(mi, "sig_id"))])
    got_imp = [(i.get("name"), i.get("weak")) for i in km.get("imports") or []]
    yield "imports", cmp_list(got_imp, ref["imports"], "imports")
    yield "exports", cmp_exports(km.get("exports") or [], symvers_mod)
    vd = []
    if crc_of is None:  # MODVERSIONS off: modpost writes no __versions
        if km.get("versions"):
            vd.append("kopolicy lists %d versions, the kernel has no MODVERSIONS"
                      % len(km["versions"]))
        yield "versions", vd
        return
    for v in km.get("versions") or []:
        known = crc_of.get(v.get("name"))
        if known is None:
            continue
        c = v.get("crc")
        if not isinstance(c, str) or not CRC_RE.fullmatch(c) or int(c, 16) not in known:
            vd.append("%s: kopolicy crc %r, Module.symvers %s" % (
                v.get("name"), v.get("crc"), ",".join("0x%08x" % k for k in sorted(known))))
    if not km.get("versions") and any(i[0] in crc_of for i in ref["imports"]):
        vd.append("kopolicy lists no versions")
    yield "versions", vd


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tree_root")
    ap.add_argument("release")
    ap.add_argument("symvers")
    ap.add_argument("kopolicy_bin")
    ap.add_argument("--label", help="tree name for the report (default: basename of TREE_ROOT)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--max-detail", type=int, default=MAX_DETAIL)
    ap.add_argument("--no-verify-reference", action="store_true",
                    help="skip the literal `modinfo -F` sample re-check")
    a = ap.parse_args()
    label = a.label or os.path.basename(os.path.normpath(a.tree_root))

    def log(msg):
        print("[%s] %s" % (label, msg), flush=True)

    try:
        for tool in ("modinfo", "readelf"):
            if not shutil.which(tool):
                raise SetupError("%s not found in PATH" % tool)
        moddir = os.path.realpath(os.path.join(a.tree_root, "lib", "modules", a.release))
        if not os.path.isdir(moddir):
            raise SetupError("no module directory " + moddir)
        if not (os.path.isfile(a.kopolicy_bin) and os.access(a.kopolicy_bin, os.X_OK)):
            raise SetupError("kopolicy binary not executable: " + a.kopolicy_bin)
        files = []
        for dp, _, fns in os.walk(moddir):
            files += [os.path.join(dp, f) for f in fns if f.endswith(SUFFIXES)]
        files.sort()
        if not files:
            raise SetupError("no modules under " + moddir)
        if any(f.endswith(".ko.zst") for f in files) and not shutil.which("zstd"):
            raise SetupError("zstd not found (needed to decompress .ko.zst for readelf)")
        by_module, crc_of = read_symvers(a.symvers)
        log("%d module files under %s; Module.symvers: %d exports in %d modules + vmlinux%s"
            % (len(files), moddir, sum(len(v) for v in by_module.values()),
               len(by_module) - ("vmlinux" in by_module),
               "" if crc_of is not None else " (every CRC 0: no MODVERSIONS)"))

        # references, in parallel batches
        modinfo_reads = kmod_compressions()
        unread = sorted({suffix_of(f) for f in files} - modinfo_reads)
        if unread:
            log("note: this kmod cannot read %s itself; modinfo runs on decompressed copies of those"
                % ", ".join(unread))
        t0 = time.monotonic()
        refs = {}
        tmproot = tempfile.mkdtemp(prefix="kopolicy-corpus-")
        try:
            batches = [(files[i:i + BATCH], tmproot, modinfo_reads)
                       for i in range(0, len(files), BATCH)]
            with multiprocessing.Pool(max(1, a.jobs)) as pool:
                for r in pool.imap_unordered(reference_batch, batches):
                    if "__error__" in r:
                        raise SetupError(r["__error__"])
                    refs.update(r)
        finally:
            shutil.rmtree(tmproot, ignore_errors=True)
        log("references (modinfo -0 batches, readelf -sW) built in %.1fs" % (time.monotonic() - t0))
        if not a.no_verify_reference:
            verify_modinfo_sample(files, refs, modinfo_reads, log)

        kdoc = run_kopolicy(a.kopolicy_bin, moddir, log)
    except SetupError as e:
        print("[%s] setup error: %s" % (label, e), file=sys.stderr, flush=True)
        print("0 passed, 1 failed")
        return 2

    def rel(p):
        return os.path.relpath(os.path.realpath(p), moddir)

    kmods = {}
    dup = []
    for m in kdoc["modules"]:
        r = rel(m.get("path", ""))
        if r in kmods:
            dup.append(r)
        kmods[r] = m
    kerrs = {rel(e.get("path", "")): e.get("error") for e in kdoc.get("errors") or []}

    checked = {c: 0 for c in CATEGORIES}
    failed = {c: [] for c in CATEGORIES}
    extra_paths = sorted(set(kmods) - {rel(f) for f in files})
    used_symvers = set()
    for f in files:
        r = rel(f)
        kernel_rel = os.path.relpath(f, os.path.join(moddir, "kernel"))
        modkey = strip_suffix(kernel_rel if not kernel_rel.startswith("..") else r)
        used_symvers.add(modkey)
        km = kmods.get(r)
        for c in CATEGORIES:
            checked[c] += 1
        if km is None:
            why = "kopolicy error: %s" % kerrs[r] if r in kerrs else "missing from kopolicy output"
            for c in CATEGORIES:
                failed[c].append((r, [why]))
            continue
        for c, diffs in compare_module(km, refs[f], by_module.get(modkey, []), crc_of):
            if diffs:
                failed[c].append((r, diffs))

    npass = sum(checked[c] - len(failed[c]) for c in CATEGORIES)
    nfail = sum(len(failed[c]) for c in CATEGORIES)
    print("[%s] %-13s %8s %10s" % (label, "category", "checked", "mismatches"))
    for c in CATEGORIES:
        print("[%s] %-13s %8d %10d" % (label, c, checked[c], len(failed[c])))
    orphan = sorted(set(by_module) - used_symvers - {"vmlinux"})
    if orphan:
        log("note: %d Module.symvers modules have no file in the tree (e.g. %s)"
            % (len(orphan), ", ".join(orphan[:5])))
    if extra_paths:
        log("note: kopolicy reported %d paths that are not module files (e.g. %s)"
            % (len(extra_paths), extra_paths[0]))
    if dup:
        log("note: kopolicy reported %d paths twice (e.g. %s)" % (len(dup), dup[0]))
    for c in CATEGORIES:
        if not failed[c]:
            continue
        log("first %d of %d %s mismatches:" % (min(a.max_detail, len(failed[c])), len(failed[c]), c))
        for r, diffs in failed[c][:a.max_detail]:
            more = " (+%d more)" % (len(diffs) - 5) if len(diffs) > 5 else ""
            print("  %s: %s%s" % (r, "; ".join(diffs[:5]), more))
    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
