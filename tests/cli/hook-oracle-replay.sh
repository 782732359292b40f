#!/usr/bin/env bash
# The hook oracle's checks (tests/oracle/hook/check-hook-serial.sh) on its committed serial
# log: Debian's 6.12.118 kernel booted with the hook installed, ending with the "mutex" step
# (module_mutex held after an oops; the hook answers at --timeout, its reader left in D).
# Re-record with KP_ORACLE_KEEP=1 tests/oracle/hook/run-hook-oracle.sh 6.12 (serial.kept).
set -uo pipefail

top=${srcdir:-.}
exec "$top/tests/oracle/hook/check-hook-serial.sh" \
	"$top/tests/oracle/hook/testdata/serial-mutex-6.12.serial" 6.12.118+deb12-amd64 5
