#!/usr/bin/env bash
# An export whose name points outside the module (lib/sim/rules/export-name.c) on the committed
# fixture fixtures/ko/7.2/ksymtab/kp_ksymtab_wild.ko: kp_absent_prov.ko (kernel name
# kp_absent_prov) through tests/oracle/hook/ksymtab-wild.py, its first export's name relocated
# 0x60000000 below its string. Booted on 7.2.13 (tests/oracle/hook/testdata/
# serial-mutex-7.2.serial, replayed by hook-oracle-replay.sh): verify_exported_symbols() faults
# in find_symbol() holding module_mutex, every later load blocks. Before, `check` refused the
# file ("__ksymtab (24 bytes) fits no struct kernel_symbol layout", exit 2).
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
. "$top/tests/lib/tap.sh"
tap_tmpdir

use() { # SERIES: $fx, $rel for fixture-check.sh
	fx=$top/fixtures/ko/$1
	rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
}
. "$top/tests/lib/fixture-check.sh"

wild=$top/fixtures/ko/7.2/ksymtab/kp_ksymtab_wild.ko
python3 "$top/tests/oracle/hook/ksymtab-wild.py" "$top/fixtures/ko/7.2/kp_absent_prov.ko" \
	"$tmp/w.ko" > /dev/null && cmp -s "$tmp/w.ko" "$wild"
ok "the fixture is ksymtab-wild.py's copy of 7.2's kp_absent_prov.ko (the booted file)" $?

fault="BUG: unable to handle page fault for address: (__ksymtab_strings 0x60000000 bytes before)"
entry="the name of __ksymtab entry 0 points 0x60000000 bytes before __ksymtab_strings"
oops="not m['loads'] and m['oops'] and not m['hang'] and m['errno'] is None"
oops+=" and ids == ['kernel-oops'] and m['findings'][0]['severity'] == 'error'"
oops+=" and '$entry' in m['findings'][0]['message']"
oops+=" and 'module_mutex' in m['findings'][0]['message'] and m['messages'] == o + ['$fault']"
blocked="not m['loads'] and m['blocked'] and m['stalled_by'] == 'kp_absent_prov'"
blocked+=" and ids == ['loader-blocked']"

use 7.2
check "$tmp/a.json" "$wild" "$fx/kp_gpl_prov.ko"
[ ! -s "$tmp/a.json.err" ] && verdict "$tmp/a.json" kp_absent_prov "$oops"
ok "7.2: kernel-oops in verify_exported_symbols() holding module_mutex, the fault line" $?
verdict "$tmp/a.json" kp_gpl_prov "$blocked and 'early_mod_check()' in m['findings'][0]['message']"
ok "7.2: kp_gpl_prov after it blocks in early_mod_check()" $?

# the same edit of the other series' kp_absent_prov.ko (the same code path; booted with the
# hook oracle: serial-ksymtab-{5.10,6.1,6.12}.serial)
for s in 5.10 6.1 6.12; do
	use $s
	python3 "$top/tests/oracle/hook/ksymtab-wild.py" "$fx/kp_absent_prov.ko" "$tmp/w$s.ko" \
		> /dev/null
	check "$tmp/a$s.json" "$tmp/w$s.ko" "$fx/kp_gpl_prov.ko"
	verdict "$tmp/a$s.json" kp_absent_prov "$oops" &&
		verdict "$tmp/a$s.json" kp_gpl_prov "$blocked"
	ok "$s: the same oops, kp_gpl_prov blocked" $?
done

# nearer than 0x60000000 below: where the byte lies is not known, a warning only
use 7.2
python3 "$top/tests/oracle/hook/ksymtab-wild.py" "$fx/kp_absent_prov.ko" "$tmp/n.ko" -0x5fffffff \
	> /dev/null
check "$tmp/n.json" "$tmp/n.ko" "$fx/kp_gpl_prov.ko"
warned="m['loads'] and not m['oops'] and 'kernel-oops' in ids"
warned+=" and [f for f in m['findings'] if f['id'] == 'kernel-oops'][0]['severity'] == 'warning'"
verdict "$tmp/n.json" kp_absent_prov "$warned" &&
	verdict "$tmp/n.json" kp_gpl_prov "m['loads']"
ok "7.2: 0x5fffffff below: a kernel-oops warning, both load" $?

# text: an error, exit status 1 (no longer a refused file, exit 2)
"$kp" check -k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release "$rel" \
	"$wild" > "$tmp/a.txt" 2> "$tmp/a.err"
[ $? -eq 1 ] && [ ! -s "$tmp/a.err" ] &&
	grep -q "^  kp_absent_prov: E: kernel-oops: the name of __ksymtab entry 0 points" "$tmp/a.txt"
ok "7.2 text: the kernel-oops error, exit status 1, nothing on stderr" $?

tap_done
