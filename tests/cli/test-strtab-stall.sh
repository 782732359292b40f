#!/usr/bin/env bash
# What a later load sees after an oops (lib/sim/rules/stall.c), on the committed fixtures and
# their boots (tests/oracle/observed/<series>/strtab_*_then*.json, which oracle-replay.sh
# compares too): these are the finer checks, in every output format.
#
# kp_strtab_guard.ko (kernel name kp_plain): msleep's name starts 16 bytes into the guard page
# after the loader's copy of the 5128-byte file. Before 6.13 resolve_symbol() looks it up with
# find_symbol() holding module_mutex: the oops leaves the lock held and the next load sleeps
# in mutex_lock() for ever. kp_strtab_page.ko's oops (in the Unknown symbol printk) holds no
# lock but leaves kp_plain UNFORMED in the list: a second kp_plain waits for it for ever. On
# 5.10 that oops hangs the machine: nothing after it runs.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
. "$top/tests/lib/tap.sh"
tap_tmpdir

use() { # SERIES: $fx, $st, $rel for fixture-check.sh
	fx=$top/fixtures/ko/$1
	st=$fx/strtab
	rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
}
. "$top/tests/lib/fixture-check.sh"

# nth MODULE'S JSON object: the N-th (0-based) entry of that name
nth() { # FILE NAME N PYTHON-EXPR
	python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = [x for x in d["modules"] if x["name"] == sys.argv[2]][int(sys.argv[3])]
ids = [f["id"] for f in m["findings"]]
sys.exit(0 if eval(sys.argv[4]) else 1)
PY
}

fault="BUG: unable to handle page fault for address: (past the module image)"
for s in 6.1 6.12 5.10; do
	use $s
	check "$tmp/g$s.json" "$st/kp_strtab_guard.ko" "$fx/kp_gpl_prov.ko"
	# strtab-modules.py: 16 bytes into the page after the file's last page
	size=$(stat -c %s "$st/kp_strtab_guard.ko")
	at="starts at byte $(((size + 4095) / 4096 * 4096 + 16)) of a $size-byte file"
	verdict "$tmp/g$s.json" kp_plain \
		"not m['loads'] and m['oops'] and not m['hang'] and m['errno'] is None and ids == ['bad-symbol-strtab', 'kernel-oops'] and m['findings'][1]['severity'] == 'error' and '$at' in m['findings'][1]['message'] and 'module_mutex' in m['findings'][1]['message'] and m['messages'] == o + ['$fault']"
	ok "$s kp_strtab_guard: kernel-oops holding module_mutex ($at), the O and E lines, the fault" $?
	case $s in 6.12) where='early_mod_check()' ;; *) where='add_unformed_module()' ;; esac
	verdict "$tmp/g$s.json" kp_gpl_prov \
		"not m['loads'] and m['blocked'] and not m['not_run'] and not m['oops'] and m['stalled_by'] == 'kp_plain' and m['errno'] is None and m['errno_value'] == 0 and ids == ['loader-blocked'] and '$where' in m['findings'][0]['message'] and m['messages'] == [] and m['global_taint_added'] == ''"
	ok "$s kp_gpl_prov after it: blocked in $where, no line, stalled_by kp_plain" $?
done

use 7.2
check "$tmp/g7.2.json" "$st/kp_strtab_guard.ko" "$fx/kp_gpl_prov.ko"
verdict "$tmp/g7.2.json" kp_plain \
	"m['errno'] == 'ENOEXEC' and not m['oops'] and ids == ['bad-symbol-strtab']" &&
	verdict "$tmp/g7.2.json" kp_gpl_prov \
		"m['loads'] and not m['blocked'] and m['stalled_by'] is None"
ok "7.2: kp_strtab_guard refused (ENOEXEC), kp_gpl_prov loads" $?

# the other formats, on 6.1
use 6.1
args=(-k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release "$rel"
      "$st/kp_strtab_guard.ko" "$fx/kp_gpl_prov.ko")
"$kp" check "${args[@]}" > "$tmp/g.txt"
[ $? -eq 1 ] &&
	grep -q "^  kp_gpl_prov: E: loader-blocked: never loaded: the oops loading kp_plain killed its task holding module_mutex" "$tmp/g.txt"
ok "6.1 text: loader-blocked under Fails to load, exit status 1" $?
"$kp" check -v "${args[@]}" > "$tmp/gv.txt"
grep -qx "kp_gpl_prov: blocks for ever (the loader is stuck since kp_plain's oops), taint O" \
	"$tmp/gv.txt" &&
	grep -q "^kp_plain: the kernel oopses holding module_mutex" "$tmp/gv.txt"
ok "6.1 -v: the load order says who oopses holding module_mutex and who blocks" $?
"$kp" check -f sarif "${args[@]}" > "$tmp/g.sarif"
python3 - "$tmp/g.sarif" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
rules = {x["id"] for x in r["tool"]["driver"]["rules"]}
res = [(x["ruleId"], x["level"]) for x in r["results"]]
sys.exit(0 if {"loader-blocked", "machine-hung"} <= rules and
         ("loader-blocked", "error") in res and ("kernel-oops", "error") in res else 1)
PY
ok "6.1 SARIF: loader-blocked and machine-hung are rules, loader-blocked an error result" $?
"$kp" check -f junit "${args[@]}" > "$tmp/g.xml"
grep -q '<failure type="loader-blocked" message="kp_gpl_prov: never loaded' "$tmp/g.xml"
ok "6.1 JUnit: kp_gpl_prov's test case fails with loader-blocked" $?
"$kp" explain -k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release "$rel" \
	kp_gpl_prov "$st/kp_strtab_guard.ko" "$fx/kp_gpl_prov.ko" > "$tmp/ge.txt" 2>&1
grep -q "^kp_gpl_prov (.*): fails to load (BLOCKED), module taint O$" "$tmp/ge.txt" &&
	grep -A1 "^  - loader-blocked: " "$tmp/ge.txt" |
	grep -x "    fix: fix kp_plain first (its kernel-oops); on a running kernel this load waits until the machine is rebooted" >/dev/null
ok "6.1 explain: BLOCKED, no errno number; loader-blocked's fix names kp_plain" $?

# an oops after add_unformed_module(): the same name waits, state S
for s in 6.1 6.12; do
	use $s
	check "$tmp/p$s.json" "$st/kp_strtab_page.ko" "$fx/kp_plain.ko"
	case $s in 6.12) where='module_patient_check_exists()' ;; *) \
		where='add_unformed_module()' ;; esac
	nth "$tmp/p$s.json" kp_plain 0 "m['oops'] and not m['blocked']" &&
		nth "$tmp/p$s.json" kp_plain 1 \
			"m['blocked'] and m['stalled_by'] == 'kp_plain' and ids == ['loader-blocked'] and 'MODULE_STATE_UNFORMED' in m['findings'][0]['message'] and '$where' in m['findings'][0]['message'] and m['messages'] == []"
	ok "$s kp_strtab_page then kp_plain: the second waits for the UNFORMED first ($where)" $?
	check "$tmp/d$s.json" "$st/kp_strtab_defpage.ko" "$fx/kp_plain.ko"
	nth "$tmp/d$s.json" kp_plain 0 "m['oops']" && nth "$tmp/d$s.json" kp_plain 1 "m['loads']"
	ok "$s kp_strtab_defpage then kp_plain: layout_symtab()'s oops leaves nothing, it loads" $?
done

# after 5.10's hang nothing runs
use 5.10
check "$tmp/h.json" "$st/kp_strtab_page.ko" "$fx/kp_gpl_prov.ko"
verdict "$tmp/h.json" kp_plain "m['hang']" &&
	verdict "$tmp/h.json" kp_gpl_prov \
		"not m['loads'] and m['not_run'] and not m['blocked'] and m['stalled_by'] == 'kp_plain' and ids == ['machine-hung'] and m['messages'] == [] and m['taint'] == '' and m['global_taint_added'] == '' and m['errno'] is None"
ok "5.10 after kp_strtab_page's hang: kp_gpl_prov never runs (machine-hung), no line, no taint" $?
"$kp" check -v -k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release "$rel" \
	"$st/kp_strtab_page.ko" "$fx/kp_gpl_prov.ko" > "$tmp/h.txt"
grep -qx "kp_gpl_prov: never runs (the machine hung loading kp_plain), taint -" "$tmp/h.txt"
ok "5.10 -v: never runs" $?

tap_done
