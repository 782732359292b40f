#!/usr/bin/env python3
# gen-kallsyms.py MODULE.SYMVERS[.gz] [ADDR-ZERO]: a /proc/kallsyms for the hook's tests.
# Every vmlinux export of the Module.symvers becomes a __ksymtab_<sym> label inside the
# table bounds of its class (__start___ksymtab .. __stop___ksymtab, then the _gpl table), as
# the kernel prints them; one module line ("\t[kp_prop_prov]") must be skipped by the reader.
# With a second argument every address is 0, as kallsyms reads without CAP_SYSLOG.
import gzip
import sys

path = sys.argv[1]
zero = len(sys.argv) > 2
opener = gzip.open if path.endswith(".gz") else open
plain, gpl = [], []
with opener(path, "rt") as f:
    for line in f:
        fields = line.rstrip("\n").split("\t")
        if len(fields) >= 4 and fields[2] == "vmlinux":
            (gpl if fields[3] == "EXPORT_SYMBOL_GPL" else plain).append(fields[1])


def addr(a):
    return "%016x" % (0 if zero else a)


out = [addr(0xFFFFFFFF81000000) + " T _stext", addr(0xFFFFFFFF82000000) + " R __start___ksymtab"]
out += [
    "%s r __ksymtab_%s" % (addr(0xFFFFFFFF82000000 + 12 * (i + 1)), s)
    for i, s in enumerate(plain)
]
out += [
    addr(0xFFFFFFFF83000000) + " R __stop___ksymtab",
    addr(0xFFFFFFFF83000000) + " R __start___ksymtab_gpl",
]
out += [
    "%s r __ksymtab_%s" % (addr(0xFFFFFFFF83000000 + 12 * (i + 1)), s)
    for i, s in enumerate(gpl)
]
out += [
    addr(0xFFFFFFFF84000000) + " R __stop___ksymtab_gpl",
    addr(0xFFFFFFFFC0A00000) + " t kp_prop_plain\t[kp_prop_prov]",
]
print("\n".join(out))
