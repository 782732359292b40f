#!/usr/bin/env bash
# The splice (src/check-splice*.c) over bridge findings (lib/sim/rules/policy.c: a GPL module
# that uses GPL-only symbols exports plain symbols a proprietary module imports), the policy
# findings the spliced report writes after each kept block's simulation findings
# (check-splice-report.c: the "fsim" mark, the findings' marks moved). A tree of 6.1
# fixtures, made into a bridge by real byte changes:
#   kp_use_prop        its import kp_prop_plain renamed to the vmlinux GPL-only ktime_get_raw
#                      (its __versions CRC that of Module.symvers, depends= emptied): GPL, no
#                      longer P, uses a GPL-only symbol, exports kp_use_prop_fn (plain);
#                      its description tag made staging=Y: the first staging module adds
#                      the C taint (its line is printed whatever the kernel's taint)
#   kp_use_prop_chain  license "MIT": proprietary, imports kp_use_prop_fn -> a bridge
#                      finding on kp_use_prop
# Then modules changed in turn, each step's JSON report through the caches byte for byte the
# --no-cache one, its splice line the one asked for (the report spliced from the store, its
# store, the context-less run: the same), replayed, with --fail-on never and note (the
# note run's exit status 1 already from the importer's license-taint note):
#   touched            kp_use_prop_chain's change time: kp_use_prop's bridge kept and spliced
#   bridge gone        kp_use_prop_chain's license "GPL": the kept kp_use_prop loses its
#                      bridge finding (its block's findings end moves)
#   bridge back        "MIT" again: the bridge written into the kept block once more
#   C moved            kp_plain (loaded before kp_use_prop) staging too (its description
#                      string made staging=Y): kp_use_prop, kept,
#                      no longer adds C (its block shorter before its findings); its bridge
#                      gone and back while it is so
#   dummy signed       dummy.ko signed by the trusted key: the E taint and its line move to
#                      kp_gpl_prov; the bridge's block kept after blocks of other lengths
#   first P moved      kp_gpl_prov's license "MIT": kp_gpl_prov is the first P module
#   GPL-only use gone  kp_use_prop's fixture bytes again (imports kp_prop_plain: inherits P,
#                      no bridge; its interface changed: a fall-back) and back
# After most changes a "nudged" step (kp_plain's description changed, or its bytes again)
# splices over the store the step before wrote, the bridge's block kept: a mark stored wrong
# shows in the store comparison of the splice line or in the next report.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
. "$top/tests/lib/tap.sh"
tap_tmpdir
export KOPOLICY_CACHE_DIR=$tmp/cache
unset KOPOLICY_CACHE KOPOLICY_CACHE_STATS KOPOLICY_CACHE_MAX_SIZE KOPOLICY_RUN_CACHE
# the splice measured beside the recompute, not used in its place (test-incremental-use.sh)
export KOPOLICY_SPLICE=measure
fx=$top/fixtures/ko/6.1
poke=$top/tests/cli/elf-poke.py
edit=$top/fixtures/edit-ko.py

command -v python3 >/dev/null || { echo "1..0 # SKIP python3 missing"; exit 0; }

t=$tmp/tree
mkdir -p "$t/extra" "$tmp/orig"
for m in kp_gpl_prov kp_prop_prov kp_use_prop kp_use_prop_chain kp_plain; do
	cp "$fx/$m.ko" "$t/extra/"
done
cp "$fx/sig/sig_dummy_unsigned.ko" "$t/extra/dummy.ko"
# kp_prop_plain: in the symbol table and in __versions; its CRC then ktime_get_raw's
python3 "$poke" "$t/extra/kp_use_prop.ko" replace kp_prop_plain ktime_get_raw &&
	python3 "$poke" "$t/extra/kp_use_prop.ko" replace kp_prop_plain ktime_get_raw &&
	python3 "$poke" "$t/extra/kp_use_prop.ko" replace \
		"description=kopolicy test fixture kp_use_prop" staging=Y &&
	python3 "$edit" "$t/extra/kp_use_prop.ko" --set-crc ktime_get_raw=0x9714e0bb \
		--set depends= >/dev/null &&
	python3 "$edit" "$t/extra/kp_use_prop_chain.ko" --set license=MIT >/dev/null
ok "the bridge made: kp_use_prop uses ktime_get_raw and is staging, kp_use_prop_chain is MIT" $?
cp "$t"/extra/*.ko "$tmp/orig/"
rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
kargs=(-k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release "$rel"
	--trusted-cert "$fx/sig/kernel-certs.pem")

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

# step LABEL MISSES SPLICE: the JSON check (--fail-on never, then note) through the caches
# against --no-cache, the facts cache's misses, the splice line after "splice: " ("-":
# none), then the replay
step() {
	local label=$1 misses=$2 splice=$3 fo s want
	sleep 1.1 # a state changed less than a second before a run is neither trusted nor stored
	for fo in never note; do
		run "ref-$fo" check -f json --fail-on "$fo" --no-cache "${kargs[@]}" "$t"
		cached "inc-$fo" check -f json --fail-on "$fo" "${kargs[@]}" "$t"
		same "ref-$fo" "inc-$fo"
		s=$?
		ok "$label: check -f json --fail-on $fo through the caches = --no-cache (exit $(
			cat "$tmp/ref-$fo.rc"))" $s
		# the note run follows the never run: every module's facts cached by then
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
# bridges FILE: the bridge findings of the report, "MODULE:SYMBOL>IMPORTER" a line
bridges() {
	python3 - "$tmp/$1" <<'EOF'
import json, sys
for m in json.load(open(sys.argv[1]))["modules"]:
    for f in m["findings"]:
        if f["id"] == "bridge":
            print("%s:%s>%s" % (m["name"], f["symbol"], f["message"].split()[-1]))
EOF
}
# nudge: kp_plain's description changed, or its first bytes again (no interface change): a
# splice that keeps kp_use_prop's block as the last run stored it
nudge() {
	if cmp -s "$t/extra/kp_plain.ko" "$tmp/orig/kp_plain.ko"; then
		python3 "$edit" "$t/extra/kp_plain.ko" --set description=nudged >/dev/null
	else
		cp "$tmp/orig/kp_plain.ko" "$t/extra/"
	fi
}
# added MODULE FILE: MODULE's global_taint_added in the report
added() {
	python3 - "$tmp/$2" "$1" <<'EOF'
import json, sys
for m in json.load(open(sys.argv[1]))["modules"]:
    if m["name"] == sys.argv[2]:
        print(m["global_taint_added"])
EOF
}

step "cold" 6 -
cp "$tmp/ref-never.out" "$tmp/v0.json"
is "cold: the bridge finding" "$(bridges v0.json)" "kp_use_prop:kp_use_prop_fn>kp_use_prop_chain"
is "cold: --fail-on note fails on the notes" "$(cat "$tmp/ref-note.rc")" 1

touch "$t/extra/kp_use_prop_chain.ko"
step "touched" 1 "$(kept 5 6 1 kp_use_prop_chain)"
cmp -s "$tmp/ref-never.out" "$tmp/v0.json"
ok "touched: the same report" $?

python3 "$edit" "$t/extra/kp_use_prop_chain.ko" --set license=GPL >/dev/null
step "bridge gone" 1 "$(kept 5 6 1 kp_use_prop_chain)"
is "bridge gone: no bridge finding" "$(bridges ref-never.out)" ""
# the kept kp_use_prop spliced again without its bridge (the store written above)
nudge
step "bridge gone, nudged" 1 "$(kept 5 6 1 kp_plain)"
is "bridge gone, nudged: still no bridge finding" "$(bridges ref-never.out)" ""

cp "$tmp/orig/kp_use_prop_chain.ko" "$t/extra/"
step "bridge back" 1 "$(kept 5 6 1 kp_use_prop_chain)"
cmp -s "$tmp/ref-never.out" "$tmp/v0.json"
ok "bridge back: the first report again" $?
nudge
step "bridge back, nudged" 1 "$(kept 5 6 1 kp_plain)"
cmp -s "$tmp/ref-never.out" "$tmp/v0.json"
ok "bridge back, nudged: the first report again" $?

python3 "$poke" "$t/extra/kp_plain.ko" replace "description=kopolicy test fixture kp_plain" \
	staging=Y
step "C moved" 1 "$(kept 5 6 1 kp_plain)"
is "C moved: kp_plain adds C" "$(added kp_plain ref-never.out)" C
is "C moved: kp_use_prop adds nothing" "$(added kp_use_prop ref-never.out)" ""
is "C moved: the bridge kept" "$(bridges ref-never.out)" \
	"kp_use_prop:kp_use_prop_fn>kp_use_prop_chain"
cp "$tmp/ref-never.out" "$tmp/v1.json"
python3 "$edit" "$t/extra/kp_use_prop_chain.ko" --set license=GPL >/dev/null
step "C moved, bridge gone" 1 "$(kept 5 6 1 kp_use_prop_chain)"
is "C moved, bridge gone: no bridge finding" "$(bridges ref-never.out)" ""
cp "$tmp/orig/kp_use_prop_chain.ko" "$t/extra/"
step "C moved, bridge back" 1 "$(kept 5 6 1 kp_use_prop_chain)"
cmp -s "$tmp/ref-never.out" "$tmp/v1.json"
ok "C moved, bridge back: the report of C moved again" $?
cp "$tmp/orig/kp_plain.ko" "$t/extra/"
step "C back" 1 "$(kept 5 6 1 kp_plain)"
is "C back: kp_use_prop adds C" "$(added kp_use_prop ref-never.out)" C
cmp -s "$tmp/ref-never.out" "$tmp/v0.json"
ok "C back: the first report again" $?

cp "$fx/sig/sig_dummy_debian.ko" "$t/extra/dummy.ko"
step "dummy signed" 1 "$(kept 4 6 2 dummy)"
is "dummy signed: kp_gpl_prov adds the E taint" "$(added kp_gpl_prov ref-never.out)" OE
is "dummy signed: the bridge kept" "$(bridges ref-never.out)" \
	"kp_use_prop:kp_use_prop_fn>kp_use_prop_chain"
nudge
step "dummy signed, nudged" 1 "$(kept 5 6 1 kp_plain)"
cp "$tmp/orig/dummy.ko" "$t/extra/"
step "dummy unsigned again" 1 "$(kept 4 6 2 dummy)"
cmp -s "$tmp/ref-never.out" "$tmp/v0.json"
ok "dummy unsigned again: the first report again" $?

python3 "$edit" "$t/extra/kp_gpl_prov.ko" --set license=MIT >/dev/null
step "first P moved" 1 "$(kept 3 6 3 kp_gpl_prov)"
is "first P moved: kp_gpl_prov adds P" "$(added kp_gpl_prov ref-never.out)" PO
is "first P moved: kp_prop_prov adds nothing" "$(added kp_prop_prov ref-never.out)" ""
is "first P moved: the bridge kept" "$(bridges ref-never.out)" \
	"kp_use_prop:kp_use_prop_fn>kp_use_prop_chain"
python3 "$edit" "$t/extra/kp_use_prop_chain.ko" --set license=GPL >/dev/null
step "first P moved, bridge gone" 1 "$(kept 5 6 1 kp_use_prop_chain)"
is "first P moved, bridge gone: no bridge finding" "$(bridges ref-never.out)" ""
cp "$tmp/orig/kp_use_prop_chain.ko" "$t/extra/"
step "first P moved, bridge back" 1 "$(kept 5 6 1 kp_use_prop_chain)"
cp "$tmp/orig/kp_gpl_prov.ko" "$t/extra/"
step "first P back" 1 "$(kept 3 6 3 kp_gpl_prov)"
cmp -s "$tmp/ref-never.out" "$tmp/v0.json"
ok "first P back: the first report again" $?

# the GPL module's GPL-only use removed: the fixture's bytes import kp_prop_plain again
cp "$fx/kp_use_prop.ko" "$t/extra/"
step "GPL-only use gone" 1 "falls back: the interface of kp_use_prop changed"
is "GPL-only use gone: no bridge finding" "$(bridges ref-never.out)" ""
cp "$tmp/orig/kp_use_prop.ko" "$t/extra/"
step "GPL-only use back" 1 "falls back: the interface of kp_use_prop changed"
cmp -s "$tmp/ref-never.out" "$tmp/v0.json"
ok "GPL-only use back: the first report again" $?
nudge
step "GPL-only use back, nudged" 1 "$(kept 5 6 1 kp_plain)"

tap_done
