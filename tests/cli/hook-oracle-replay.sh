#!/usr/bin/env bash
# The hook oracle's checks (tests/oracle/hook/check-hook-serial.sh) on its committed serial
# logs: Debian's kernels booted with the hook installed, each ending with the "mutex" step
# (module_mutex held after an oops; the hook answers at --timeout, its reader left in D):
# 5.10, 6.1, 6.12 and 7.2, one serial-mutex-SERIES.serial each.
# Re-record with KP_ORACLE_KEEP=1 tests/oracle/hook/run-hook-oracle.sh SERIES (serial.kept).
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"

for log in "$top"/tests/oracle/hook/testdata/serial-mutex-*.serial; do
	series=${log##*/serial-mutex-}
	series=${series%.serial}
	rel=$(grep -o 'KPHOOK-BEGIN [^ ]*$' "$log" | head -1 | cut -d' ' -f2)
	# each check of that log as one of this script's, its series in front
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "$series: ${line#ok * - }" 0 ;;
		"not ok "*) ok "$series: ${line#not ok * - }" 1 ;;
		"1.."*) ;;
		*) echo "$line" ;;
		esac
	done < <("$top/tests/oracle/hook/check-hook-serial.sh" "$log" "$rel" 5)
done

tap_done
