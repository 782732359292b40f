#!/usr/bin/env bash
# The splice (src/check-splice*.c) in four places no other fixture step reaches, each
# step's JSON report through the caches byte for byte the --no-cache one and its splice line
# the one asked for (simulation stored, report spliced, its store, the context-less run: the
# same), with KOPOLICY_SPLICE=measure. The mutants these steps catch are listed in
# bench/README.md (mutant22).
#
# late: symbol_get()'s reads in node order, not load order (check-splice-sim.c: the pool of
# the store's simulation; loader.c kp_simulate_recorded() runs symbol_get() by node index).
# 6.1 fixtures made, by byte changes, into a set whose two symbol_get() modules load in the
# other order than their nodes:
#   kp_prop_prov   its __x86_return_thunk import renamed to kp_use_prop_fn (its __versions
#                  CRC kp_use_prop's): with kp_use_prop, which imports kp_prop_plain, a
#                  cycle; both fail (unknown symbol)
#   kp_symget      its __x86_return_thunk import renamed to a weak kp_prop_plain: behind the
#                  cycle, so loaded after everything else (graph.c load_order()), yet it
#                  loads (the weak reference stays 0) and runs its symbol_get()s
#   kp_symget_multi, kp_gpl_prov unchanged
# Node order: kp_gpl_prov kp_prop_prov kp_symget kp_symget_multi kp_use_prop; load order:
# kp_gpl_prov kp_symget_multi kp_prop_prov kp_symget kp_use_prop. Steps: kp_gpl_prov's
# description changed and back (both symbol_get() modules kept); it fails to load and
# loads again (their loads kept, their symbol_get()s simulated again: the reads after the
# loads checked, check-splice-run.c); then each symbol_get() module changed in turn (its
# reads from its own simulation) and back.
#
# taints: a kept load's read of an earlier verdict's module taint (lib/sim/sim-reads.c
# same_verdict(): find_symbol() reads whether its exporter is P). 6.1 fixtures driverloader
# (proprietary by its name: the global P set first), kp_prop_prov, kp_use_prop (imports
# kp_prop_plain: inherits P). Steps: kp_prop_prov's license GPL (no module inherits P; the
# global taint keeps P: kp_use_prop simulated again by its read of kp_prop_prov's verdict
# alone) and Proprietary again.
#
# name: a kept load's read of its own name among the live modules (duplicate.c, -EEXIST;
# sim-reads.c kp_sim_reads_hold()). 6.1 fixtures kp_gpl_prov (the first out-of-tree load:
# O and E set before the others), kp_plain and kp_plain_prop (the kernel name kp_plain too).
# Steps: kp_plain.ko's vermagic made smp (it fails; the global taint the same, so
# kp_plain_prop.ko is simulated again by its name read alone, and loads) and back.
#
# open: the open record (6.13+'s unterminated loader lines, lib/sim/open-record.c) written at
# the head of the next printing load's messages in a spliced report (check-splice-report.c).
# 7.2 fixtures kp_plain, kp_strtab_oob (its "symbol name out of bounds in string table" has
# no "\n"), kp_test (prints its test taint line: the open record's head) and kp_vermagic_bad
# (prints its vermagic line). Steps: kp_plain's description changed; kp_test's test tag
# deleted (it prints nothing: the record moves to the kept kp_vermagic_bad); kp_plain's bytes
# again (kp_vermagic_bad's block as the step before stored it); kp_test's bytes again.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
. "$top/tests/lib/tap.sh"
tap_tmpdir
export KOPOLICY_CACHE_DIR=$tmp/cache KOPOLICY_SPLICE=measure
unset KOPOLICY_CACHE KOPOLICY_CACHE_STATS KOPOLICY_CACHE_MAX_SIZE KOPOLICY_RUN_CACHE
poke=$top/tests/cli/elf-poke.py
edit=$top/fixtures/edit-ko.py

command -v python3 >/dev/null || { echo "1..0 # SKIP python3 missing"; exit 0; }

. "$top/tests/cli/splice-lib.sh"
# kept K M S NAMES...: the splice line of K of M verdicts kept, S simulated again, NAMES the
# changed module files; BYTES: the --no-cache report's size, put in by step()
kept() {
	local k=$1 m=$2 s=$3
	shift 3
	echo "$k of $m verdicts kept, $s simulated again ($# module files changed:" \
		"${*:-none}; 0 spliced and differing: none; graph stored and rebuilt: the" \
		"same; graph copied: the same; simulation stored: the same; report spliced: the" \
		"same BYTES bytes, its store the same); measured only, the recompute answers; context-less:" \
		"the same (BYTES bytes)"
}

# step LABEL MISSES SPLICE: the JSON check (--fail-on never, then note) of $t through the
# caches against --no-cache, the facts cache's misses, the splice line after "splice: "
# ("-": none), then the replay
step() {
	local label=$1 misses=$2 splice=$3 fo s want
	sleep 1.1 # a state changed less than a second before a run is neither trusted nor stored
	for fo in never note; do
		run "ref-$fo" check -f json --fail-on "$fo" --no-cache "${kargs[@]}" "$t"
		cached "inc-$fo" check -f json --fail-on "$fo" "${kargs[@]}" "$t"
		same "ref-$fo" "inc-$fo"
		ok "$label: check -f json --fail-on $fo through the caches = --no-cache (exit $(
			cat "$tmp/ref-$fo.rc"))" $?
		s=$(sed -n 's/^kopolicy: cache: //p' "$tmp/inc-$fo.stats")
		[[ $s == *", $([ $fo = never ] && echo "$misses" || echo 0) misses,"* ]]
		ok "$label: --fail-on $fo: the unchanged modules' facts from the cache ($s)" $?
		s=$(sed -n 's/^kopolicy: result cache: splice: //p' "$tmp/inc-$fo.stats")
		want=${splice//BYTES/$(wc -c <"$tmp/ref-$fo.out")}
		if [ "$want" = - ]; then
			[ -z "$s" ]
		else
			[ "$s" = "$want" ]
		fi
		ok "$label: --fail-on $fo: splice: $want" $?
		[ -z "$s" ] || [ "$s" = "$want" ] || echo "# got: $s"
		cached "rep-$fo" check -f json --fail-on "$fo" "${kargs[@]}" "$t"
		same "ref-$fo" "rep-$fo" && grep -q '^kopolicy: result cache: hit' "$tmp/rep-$fo.stats"
		ok "$label: --fail-on $fo: replayed = --no-cache" $?
	done
}
# report FILE FIELD: per module of the report, "NAME:" and FIELD ("messages": the first
# message; "symget": its symbol_get() findings' symbols), a line each
report() {
	python3 - "$tmp/$1" "$2" <<'EOF'
import json, sys
for m in json.load(open(sys.argv[1]))["modules"]:
    if sys.argv[2] == "messages":
        v = m["messages"][0] if m["messages"] else ""
    else:
        v = ",".join(f["symbol"] for f in m["findings"] if f["id"].startswith("symbol-get"))
    print("%s:%s" % (m["name"], v))
EOF
}

# taint FILE MODULE: MODULE's taint in the report
taint() {
	python3 - "$tmp/$1" "$2" <<'EOF'
import json, sys
for m in json.load(open(sys.argv[1]))["modules"]:
    if m["name"] == sys.argv[2]:
        print(m["taint"])
EOF
}

# loads FILE: per module of the report "FILE:LOADS:ERRNO", space-separated
loads() {
	python3 - "$tmp/$1" <<'EOF'
import json, os, sys
print(" ".join("%s:%s:%s" % (os.path.basename(m["path"]), m["loads"], m["errno"])
               for m in json.load(open(sys.argv[1]))["modules"]))
EOF
}
# late
fx=$top/fixtures/ko/6.1
t=$tmp/late
mkdir -p "$t/extra" "$tmp/orig-late"
for m in kp_gpl_prov kp_prop_prov kp_use_prop kp_symget kp_symget_multi; do
	cp "$fx/$m.ko" "$t/extra/"
done
# each name twice: the symbol table's string and the __versions record's
python3 "$poke" "$t/extra/kp_prop_prov.ko" replace __x86_return_thunk kp_use_prop_fn &&
	python3 "$poke" "$t/extra/kp_prop_prov.ko" replace __x86_return_thunk kp_use_prop_fn &&
	python3 "$edit" "$t/extra/kp_prop_prov.ko" --set-crc kp_use_prop_fn=0xe33724d4 >/dev/null &&
	python3 "$poke" "$t/extra/kp_symget.ko" replace __x86_return_thunk kp_prop_plain &&
	python3 "$poke" "$t/extra/kp_symget.ko" replace __x86_return_thunk kp_prop_plain &&
	python3 "$poke" "$t/extra/kp_symget.ko" weak kp_prop_plain &&
	python3 "$edit" "$t/extra/kp_symget.ko" --set-crc kp_prop_plain=0x751a431a >/dev/null
ok "late: kp_prop_prov and kp_use_prop a cycle, kp_symget behind it by a weak import" $?
cp "$t"/extra/*.ko "$tmp/orig-late/"
kargs=(-k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release
	"$(sed -n 's/^release=//p' "$fx/kernel.txt")" --trusted-cert "$fx/sig/kernel-certs.pem")

step "late: cold" 5 -
cp "$tmp/ref-never.out" "$tmp/late0.json"
is "late: the load order, each module's symbol_get() symbols" "$(report late0.json symget)" \
	"kp_gpl_prov:
kp_symget_multi:kp_prop_gplonly,msleep,kp_gpl_prov_plain
kp_prop_prov:
kp_symget:kp_gpl_prov_plain,kp_prop_plain,kp_prop_gplonly,msleep
kp_use_prop:"
is "late: kp_symget loads, its weak kp_prop_plain unresolved" "$(python3 - "$tmp/late0.json" <<'EOF'
import json, sys
for m in json.load(open(sys.argv[1]))["modules"]:
    if m["name"] == "kp_symget":
        print(m["loads"], [f["id"] for f in m["findings"]][0])
EOF
)" "True weak-dependency-failed"

python3 "$edit" "$t/extra/kp_gpl_prov.ko" --set description=late >/dev/null
step "late: kp_gpl_prov changed" 1 "$(kept 4 5 1 kp_gpl_prov)"
cp "$tmp/orig-late/kp_gpl_prov.ko" "$t/extra/"
step "late: kp_gpl_prov back" 1 "$(kept 4 5 1 kp_gpl_prov)"
# its vermagic's SMP made smp: it fails, every symbol_get() of its symbols finds none; the
# symbol_get() modules' loads kept, their late reads (its verdict) simulated again
python3 "$poke" "$t/extra/kp_gpl_prov.ko" replace \
	"vermagic=6.1.0-57-amd64 SMP preempt mod_unload modversions " \
	"vermagic=6.1.0-57-amd64 smp preempt mod_unload modversions "
step "late: kp_gpl_prov fails" 1 "$(kept 2 5 3 kp_gpl_prov)"
is "late: kp_gpl_prov fails: each module's symbol_get() symbols" \
	"$(report ref-never.out symget)" "kp_gpl_prov:
kp_symget_multi:kp_prop_gplonly,msleep,kp_gpl_prov_gplonly,kp_gpl_prov_plain,kp_gpl_prov_ns
kp_prop_prov:
kp_symget:kp_gpl_prov_plain,kp_gpl_prov_gplonly,kp_prop_plain,kp_prop_gplonly,msleep,kp_gpl_prov_ns
kp_use_prop:"
cp "$tmp/orig-late/kp_gpl_prov.ko" "$t/extra/"
step "late: kp_gpl_prov loads again" 1 "$(kept 2 5 3 kp_gpl_prov)"
cmp -s "$tmp/ref-never.out" "$tmp/late0.json"
ok "late: kp_gpl_prov loads again: the first report again" $?
python3 "$edit" "$t/extra/kp_symget.ko" --set description=late >/dev/null
step "late: kp_symget changed" 1 "$(kept 4 5 1 kp_symget)"
python3 "$edit" "$t/extra/kp_symget_multi.ko" --set description=late >/dev/null
step "late: kp_symget_multi changed" 1 "$(kept 4 5 1 kp_symget_multi)"
cp "$tmp/orig-late/kp_symget.ko" "$t/extra/"
step "late: kp_symget back" 1 "$(kept 4 5 1 kp_symget)"
cp "$tmp/orig-late/kp_symget_multi.ko" "$t/extra/"
step "late: kp_symget_multi back" 1 "$(kept 4 5 1 kp_symget_multi)"
cmp -s "$tmp/ref-never.out" "$tmp/late0.json"
ok "late: kp_symget_multi back: the first report again" $?

# taints
fx=$top/fixtures/ko/6.1
t=$tmp/taints
mkdir -p "$t/extra" "$tmp/orig-taints"
for m in driverloader kp_prop_prov kp_use_prop; do
	cp "$fx/$m.ko" "$t/extra/"
	cp "$fx/$m.ko" "$tmp/orig-taints/"
done
kargs=(-k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release
	"$(sed -n 's/^release=//p' "$fx/kernel.txt")" --trusted-cert "$fx/sig/kernel-certs.pem")

step "taints: cold" 3 -
cp "$tmp/ref-never.out" "$tmp/taints0.json"
is "taints: kp_use_prop inherits P" "$(taint taints0.json kp_use_prop)" POE
python3 "$edit" "$t/extra/kp_prop_prov.ko" --set license=GPL >/dev/null
step "taints: kp_prop_prov GPL" 1 "$(kept 1 3 2 kp_prop_prov)"
is "taints: kp_prop_prov GPL: kp_use_prop inherits nothing" \
	"$(taint ref-never.out kp_use_prop)" OE
cp "$tmp/orig-taints/kp_prop_prov.ko" "$t/extra/"
step "taints: kp_prop_prov proprietary again" 1 "$(kept 1 3 2 kp_prop_prov)"
cmp -s "$tmp/ref-never.out" "$tmp/taints0.json"
ok "taints: kp_prop_prov proprietary again: the first report again" $?

# name
t=$tmp/name
mkdir -p "$t/extra" "$tmp/orig-name"
for m in kp_gpl_prov kp_plain kp_plain_prop; do
	cp "$fx/$m.ko" "$t/extra/"
	cp "$fx/$m.ko" "$tmp/orig-name/"
done

step "name: cold" 3 -
cp "$tmp/ref-never.out" "$tmp/name0.json"
is "name: kp_plain_prop.ko's load finds kp_plain live" "$(loads name0.json)" \
	"kp_gpl_prov.ko:True:None kp_plain.ko:True:None kp_plain_prop.ko:False:EEXIST"
python3 "$poke" "$t/extra/kp_plain.ko" replace \
	"vermagic=6.1.0-57-amd64 SMP preempt mod_unload modversions " \
	"vermagic=6.1.0-57-amd64 smp preempt mod_unload modversions "
step "name: kp_plain.ko fails" 1 "$(kept 1 3 2 kp_plain)"
is "name: kp_plain.ko fails: kp_plain_prop.ko loads" "$(loads ref-never.out)" \
	"kp_gpl_prov.ko:True:None kp_plain.ko:False:ENOEXEC kp_plain_prop.ko:True:None"
cp "$tmp/orig-name/kp_plain.ko" "$t/extra/"
step "name: kp_plain.ko loads again" 1 "$(kept 1 3 2 kp_plain)"
cmp -s "$tmp/ref-never.out" "$tmp/name0.json"
ok "name: kp_plain.ko loads again: the first report again" $?

# open
fx=$top/fixtures/ko/7.2
t=$tmp/open
mkdir -p "$t/extra" "$tmp/orig-open"
for m in kp_plain kp_strtab_oob kp_test kp_vermagic_bad; do
	cp "$fx/$m.ko" "$t/extra/"
	cp "$fx/$m.ko" "$tmp/orig-open/"
done
kargs=(-k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release
	"$(sed -n 's/^release=//p' "$fx/kernel.txt")" --trusted-cert "$fx/sig/kernel-certs.pem")
oob="symbol name out of bounds in string table" vm=7.2.13+deb14-amd64 vt="preempt mod_unload "

step "open: cold" 4 -
cp "$tmp/ref-never.out" "$tmp/open0.json"
is "open: kp_test's messages start with the open record" "$(report open0.json messages)" \
	"kp_plain:kp_plain: loading out-of-tree module taints kernel.
kp_strtab_oob:
kp_test:$oob
kp_vermagic_bad:kp_vermagic_bad: version magic '$vm smp $vt' should be '$vm SMP $vt'"
python3 "$edit" "$t/extra/kp_plain.ko" --set description=nudged >/dev/null
step "open: kp_plain changed" 1 "$(kept 3 4 1 kp_plain)"
python3 "$edit" "$t/extra/kp_test.ko" --delete test >/dev/null
step "open: kp_test silent" 1 "$(kept 3 4 1 kp_test)"
is "open: kp_test silent: the open record on the kept kp_vermagic_bad" \
	"$(report ref-never.out messages | grep '^kp_test:\|^kp_vermagic_bad:')" \
	"kp_test:
kp_vermagic_bad:$oob"
cp "$tmp/orig-open/kp_plain.ko" "$t/extra/"
step "open: kp_test silent, kp_plain back" 1 "$(kept 3 4 1 kp_plain)"
cp "$tmp/orig-open/kp_test.ko" "$t/extra/"
step "open: kp_test back" 1 "$(kept 3 4 1 kp_test)"
cmp -s "$tmp/ref-never.out" "$tmp/open0.json"
ok "open: kp_test back: the first report again" $?

tap_done
