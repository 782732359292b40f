#!/usr/bin/env python3
"""Negative control for compare-info.py: runs the real kopolicy and corrupts
one field per category in its JSON, so every category must report mismatches.

usage: KOPOLICY_REAL_BIN=src/kopolicy tests/corpus/check-corpus.sh \\
           tests/corpus/inject-faults.py s390x
expected: exit 1; 13 modules get one wrong field each (one per category),
one module is dropped and one reported as a kopolicy error (those two fail
all 13 categories): 13 + 2 * 13 = 39 failed, 3 per category.
"""
import json
import os
import subprocess
import sys

real = os.environ.get("KOPOLICY_REAL_BIN")
if not real:
    sys.exit("inject-faults.py: set KOPOLICY_REAL_BIN")
d = json.loads(subprocess.run([real] + sys.argv[1:], stdout=subprocess.PIPE, check=True).stdout)
ms = d["modules"]
ms.sort(key=lambda m: m["path"])
ms[0]["license"] = "Proprietary"                          # license
ms[1]["licenses"] = []                                    # licenses
ms[2]["vermagic"] = ms[2]["vermagic"].strip()             # vermagic
ms[3]["modinfo_name"] = "x"                               # modinfo_name
ms[4]["name"] = "y"                                       # name
ms[5]["depends"] = list(reversed(ms[5]["depends"])) + ["z"]  # depends
ms[6]["srcversion"] = "0" * 23                            # srcversion (none has this)
ms[7]["intree"] = not ms[7]["intree"]                     # intree
ms[8]["import_ns"] = ms[8]["import_ns"] + ["NS_X"]        # import_ns
ms[9]["signed"] = not ms[9]["signed"]                     # signed
imp = [m for m in ms[10:] if len(m["imports"]) > 3]
imp[0]["imports"][1], imp[0]["imports"][2] = imp[0]["imports"][2], imp[0]["imports"][1]  # imports order
exp = [m for m in ms[10:] if len(m["exports"]) > 2 and m is not imp[0]]
exp[0]["exports"][0]["crc"] = exp[0]["exports"][0]["crc"].upper().replace("0X", "0x")  # crc spelling
ver = [m for m in ms[10:] if m["versions"] and m is not imp[0] and m is not exp[0]]
ver[0]["versions"][0]["crc"] = "0x12345678"               # versions
gone = ms.pop(-1)                                         # missing module
err = ms.pop(-1)                                          # kopolicy error
d["errors"].append({"path": err["path"], "error": "injected"})
json.dump(d, sys.stdout)
