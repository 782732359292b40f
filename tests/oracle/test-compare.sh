#!/bin/bash
# test-compare.sh - self-test of compare.py on hand-made predictions (tests/oracle/testdata/).
# Needs only python3: no QEMU, no kernel, no kopolicy. TAP (make check runs it); ends with
# `N passed, N failed`.
#
# testdata/observed-<case>.json      copies of observed results (so a re-run of the oracle on a
#                                    newer Debian kernel does not change this test)
# testdata/prediction-<case>.good.json  a correct prediction: compare.py must exit 0
# testdata/prediction-<case>.bad.json   a wrong one: compare.py must exit 1 and print exactly
# testdata/expected-<case>.bad.txt      this
# testdata/serial-*.serial           serial console logs for parse-serial.py (run-oracle.sh's
#                                    kept logs, KP_ORACLE_KEEP=1; .serial, as git ignores *.log)
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "test-compare: error: line $LINENO: exit status $?" >&2' ERR

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T=$HERE/testdata
CMP=$HERE/compare.py
pass=0
fail=0

expect() { # name, expected rc, expected output file or "-", command...
	local name=$1 want_rc=$2 want_out=$3 out rc=0
	shift 3
	out=$("$@" 2>&1) || rc=$?
	if [ "$rc" != "$want_rc" ]; then
		echo "not ok - $name: exit $rc, expected $want_rc"
		printf '%s\n' "$out" | sed 's/^/    /'
		fail=$((fail + 1))
	elif [ "$want_out" != - ] && ! diff -u "$want_out" <(printf '%s\n' "$out") >/dev/null; then
		echo "not ok - $name: output differs from $want_out"
		diff -u "$want_out" <(printf '%s\n' "$out") | sed 's/^/    /' || true
		fail=$((fail + 1))
	else
		echo "ok - $name"
		pass=$((pass + 1))
	fi
}

cases=()
for f in "$T"/observed-*.json; do
	c=${f##*/observed-}
	cases+=("${c%.json}")
done
[ ${#cases[@]} -gt 0 ] || { echo "no test cases in $T"; echo "0 passed, 1 failed"; exit 1; }

all_good=()
for c in "${cases[@]}"; do
	expect "$c good" 0 - python3 "$CMP" "$T/observed-$c.json" "$T/prediction-$c.good.json"
	expect "$c bad" 1 "$T/expected-$c.bad.txt" \
		python3 "$CMP" "$T/observed-$c.json" "$T/prediction-$c.bad.json"
	all_good+=("$T/observed-$c.json" "$T/prediction-$c.good.json")
done
# several pairs in one call; totals add up
expect "all good pairs at once" 0 - python3 "$CMP" "${all_good[@]}"
# --ignore-once removes the once-per-boot notices (the 6.1 bad case differs only in one)
expect "--ignore-once" 0 - python3 "$CMP" --ignore-once \
	"$T/observed-6.1-prop_then_gplonly.json" "$T/prediction-6.1-prop_then_gplonly.bad.json"
# a missing or malformed prediction is one failed check, not a crash
expect "missing prediction" 1 - python3 "$CMP" "$T/observed-inherit_chain.json" "$T/does-not-exist.json"
expect "malformed prediction" 1 - python3 "$CMP" "$T/observed-inherit_chain.json" "$T/expected-inherit_chain.bad.txt"
# usage errors
expect "odd argument count" 2 - python3 "$CMP" "$T/observed-inherit_chain.json"
expect "missing observed" 2 - python3 "$CMP" "$T/nope.json" "$T/prediction-inherit_chain.good.json"

# parse-serial.py: a step's finit_module() flags (a force: prefix) become "finit_flags"; flags
# 0 are left out; a flags field other than 0..3 is an inconsistent log.
# serial-force_vermagic_bad.serial: the 6.12.118+deb12 boot of force_vermagic_bad (2026-12-06,
# run-oracle.sh with KP_ORACLE_KEEP=1; its JSON was byte-identical to observed/6.12/)
PS=$HERE/parse-serial.py
PSOUT=$(mktemp)
trap 'rm -f "$PSOUT"' EXIT
flags_of() { # serial log, scenario, module files -> the loads' finit_flags ("-" when absent)
	python3 "$PS" --log "$1" --scenario "$2" --series 6.12 --abi a --out "$PSOUT" "${@:3}" &&
		python3 -c 'import json, sys
for l in json.load(open(sys.argv[1]))["loads"]: print(l.get("finit_flags", "-"))' "$PSOUT"
}
expect "parse-serial finit_flags" 0 <(printf '3\n') \
	flags_of "$T/serial-force_vermagic_bad.serial" force_vermagic_bad kp_vermagic_bad.ko
expect "parse-serial finit_flags 0 left out" 0 <(printf -- '-\n-\n') \
	flags_of "$T/serial-strtab_guard_then.serial" strtab_guard_then \
	kp_strtab_guard.ko=kp_plain kp_gpl_prov.ko
expect "parse-serial bad flags" 1 - flags_of \
	<(sed 's/ flags=3\r\{0,1\}$/ flags=7/' "$T/serial-force_vermagic_bad.serial") \
	force_vermagic_bad kp_vermagic_bad.ko

# parse-serial.py --hang: a log that stops inside a load (the 5.10 strtab_page boot's tail)
# gives that load errno HANG, "hang", and the console lines of the step; without --hang the
# log is incomplete, and --hang on a log that reaches KPORACLE-END is an error
hang_of() { # serial log, parse-serial options -> errno, hang, dmesg of the one load
	local log=$1
	shift
	python3 "$PS" --log "$log" --scenario strtab_page --series 5.10 --abi a --out "$PSOUT" "$@" \
		kp_strtab_page.ko=kp_plain &&
		python3 -c 'import json, sys
l = json.load(open(sys.argv[1]))["loads"][0]
print(l["module"], l["errno"], l.get("hang"), l["rc"], l["global_tainted"], l["dmesg_level"])
for m in l["dmesg"]: print(m)' "$PSOUT"
}
expect "parse-serial --hang" 0 <(printf '%s\n' "kp_plain HANG True None None [None, None]" \
	"kp_plain: loading out-of-tree module taints kernel." \
	"kp_plain: module verification failed: signature and/or required key missing - tainting kernel") \
	hang_of "$T/serial-strtab_page_hang.serial" --hang
expect "parse-serial hang log without --hang" 1 - hang_of "$T/serial-strtab_page_hang.serial"
completed() { # the hang log with its step and the run completed
	cat "$T/serial-strtab_page_hang.serial"
	printf '%s\n' "KPLOAD kp_strtab_page.ko rc=-2 ENOENT" KPDMESG-BEGIN KPDMESG-END \
		"KPGTAINT 12288" "KPSTEP-END 1" KPORACLE-END
}
expect "parse-serial the completed log" 0 <(printf '%s\n' "kp_plain ENOENT None -2 12288 []") \
	hang_of <(completed)
expect "parse-serial --hang on a complete log" 1 - hang_of <(completed) --hang

# parse-serial.py --hang with more modules than steps: the ones after the hanging step never
# ran ("not_run"); without --hang that is an incomplete log
not_run_of() { # serial log, parse-serial options -> the not_run list
	python3 "$PS" --log "$1" --scenario strtab_page --series 5.10 --abi a --out "$PSOUT" \
		"${@:2}" kp_strtab_page.ko=kp_plain kp_gpl_prov.ko &&
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(len(d["loads"]), d["loads"][0]["errno"], d.get("not_run"))' "$PSOUT"
}
expect "parse-serial --hang, a step never run" 0 <(printf '%s\n' "1 HANG ['kp_gpl_prov']") \
	not_run_of "$T/serial-strtab_page_hang.serial" --hang
expect "parse-serial a step never run without --hang" 1 - \
	not_run_of "$T/serial-strtab_page_hang.serial"

# parse-serial.py: a call the loader stopped waiting for (KPLOADBLOCKED, the 6.1 strtab_guard_then
# boot: kp_gpl_prov sleeps in mutex_lock(&module_mutex) after kp_strtab_guard's oops) is errno
# BLOCKED with its state, wchan and stack; a KPSTACK line outside such a step is inconsistent
blocked_of() { # serial log -> errno, rc, blocked of the second load
	python3 "$PS" --log "$1" --scenario strtab_guard_then --series 6.1 --abi a --out "$PSOUT" \
		kp_strtab_guard.ko=kp_plain kp_gpl_prov.ko &&
		python3 -c 'import json, sys
l = json.load(open(sys.argv[1]))["loads"][1]
print(l["errno"], l["rc"], l["global_tainted"], json.dumps(l["blocked"]))' "$PSOUT"
}
expect "parse-serial KPLOADBLOCKED" 0 <(printf '%s\n' 'BLOCKED None 12416 {"state": "D", "wchan": "load_module", "stack": ["load_module+0x7fd/0x21a0", "__do_sys_finit_module+0xac/0x120", "do_syscall_64+0x5d/0xb0", "entry_SYSCALL_64_after_hwframe+0x6e/0xd8"]}') \
	blocked_of "$T/serial-strtab_guard_then.serial"
expect "parse-serial KPSTACK without KPLOADBLOCKED" 1 - \
	blocked_of <(sed '/^KPLOADBLOCKED/d' "$T/serial-strtab_guard_then.serial")

echo "1..$((pass + fail))" # the TAP plan, last: make check runs this through tap-driver.sh
echo "$pass passed, $fail failed"
[ $fail = 0 ] || exit 1 # a failed count, not an error: no ERR trap line
