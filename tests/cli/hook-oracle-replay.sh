#!/usr/bin/env bash
# The hook oracle's checks (tests/oracle/hook/check-hook-serial.sh) on its committed serial
# logs: Debian's kernels booted with the hook installed, each ending with the "mutex" step
# (module_mutex held after an oops; the hook answers at --timeout, its reader left in D):
# 5.10, 6.1, 6.12 and 7.2, one serial-mutex-SERIES.serial each, and 5.10, 6.1 and 6.12 again
# with the mutex step by ksymtab-wild.py's module (KP_HOOK_MUTEX=ksymtab),
# serial-ksymtab-SERIES.serial (7.2's serial-mutex log already takes that module).
# Re-record with KP_ORACLE_KEEP=1 tests/oracle/hook/run-hook-oracle.sh SERIES (serial.kept).
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
. "$top/tests/lib/tap.sh"
tap_tmpdir

for log in "$top"/tests/oracle/hook/testdata/serial-{mutex,ksymtab}-*.serial; do
	series=${log##*/serial-*-}
	series=${series%.serial}
	rel=$(grep -o 'KPHOOK-BEGIN [^ ]*$' "$log" | sed -n 1p | cut -d' ' -f2)
	# each check of that log as one of this script's, its series in front
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "$series: ${line#ok * - }" 0 ;;
		"not ok "*) ok "$series: ${line#not ok * - }" 1 ;;
		"1.."*) ;;
		*) echo "$line" ;;
		esac
	done < <("$top/tests/oracle/hook/check-hook-serial.sh" "$log" "$rel" 5)
	# a mutex step by ksymtab-wild.py's kp_absent_prov.ko: kopolicy's prediction for the
	# committed copy (fixtures/ko/SERIES/ksymtab/kp_ksymtab_wild.ko, the booted file) against
	# the kernel's oops (lib/sim/rules/export-name.c)
	wild=$top/fixtures/ko/$series/ksymtab/kp_ksymtab_wild.ko
	[ "$(sed -n 's/^KPMUTEXKO //p' "$log")" = kp_absent_prov.ko ] && [ -f "$wild" ] || continue
	fx=$top/fixtures/ko/$series
	"$kp" check -f json --fail-on never -k "$fx/Module.symvers.gz" --kernel-config \
		"$fx/config.gz" --kernel-release "$rel" "$wild" "$fx/kp_gplonly_then_prop.ko" \
		> "$tmp/$series.json" 2> /dev/null
	bug='^\[ *[0-9.]*\] BUG: unable to handle page fault for address: \([0-9a-f]*\)$'
	addr=$(sed -n "s/$bug/\\1/p" "$log" | sed -n 1p)
	python3 - "$tmp/$series.json" "${addr:-0}" <<'PY'
import json, sys
d = {m["name"]: m for m in json.load(open(sys.argv[1]))["modules"]}
a, b = d["kp_absent_prov"], d["kp_gplonly_then_prop"]
addr = int(sys.argv[2], 16)
# the kernel faulted in the unused hole under the kernel text, 0x60000000 below a string in
# the module mapping space (Documentation/arch/x86/x86_64/mm.rst)
hole = (0xffffffff00000000 <= addr < 0xffffffff80000000 and
        addr + 0x60000000 >= 0xffffffffa0000000)
sys.exit(0 if hole and a["oops"] and not a["loads"] and
         [f["id"] for f in a["findings"]] == ["kernel-oops"] and
         "module_mutex" in a["findings"][0]["message"] and
         b["blocked"] and b["stalled_by"] == "kp_absent_prov" else 1)
PY
	ok "$series: kopolicy predicts the wild export name's oops holding module_mutex ($addr in the \
hole under the kernel text) and the next load blocked" $?
done

tap_done
