#!/usr/bin/env bash
# One module of a tree changed, then `check` through the caches (the facts of the unchanged
# modules from the facts cache, the result cache missing): the output must be the bytes a
# run without any cache prints, in every format, with the exit status. Changes, each to one
# module of a small tree of 6.1 fixtures (tests the incremental path of issue 28 item 4
# against lib/cache/ and everything after it):
#   touched      same bytes, new change time
#   new export   kp_gpl_prov exports kp_absent_early (its kp_gpl_prov_plain renamed), which
#                kp_missing_then_ns imports and nobody exported before
#   removed      kp_use_prop no longer exports kp_use_prop_fn (renamed): kp_use_prop_chain
#                loses its provider
#   proprietary  kp_gpl_prov's license becomes "MIT" (not GPL-compatible: P, inherited by
#                its importers under the 2023 rule)
#   signature    dummy.ko: unsigned -> signed by the trusted key -> a bad signature (the E
#                taint of the first unsigned module moves: the global taint of later modules)
#   restored     every module back to its first bytes
# After each change the cached run must have read only the changed modules (facts cache
# counters: one miss a module changed since the last run, a restore included), and a second
# cached run must replay the stored result. The JSON run keeps its simulation in the entry
# (src/check-splice.c) and says what a splice of the stored one would keep: it must fall
# back when an interface changed or an input other than a stored module file did, else
# simulate the changed modules again alone at their places (named) and keep the others'
# verdicts by their reads: the spliced verdicts, none of them differing from the recompute. A forged store is not read (CRC wrong, entry
# writable by others) or refused by its reader (the user's own entry). Each splice is run
# again without the run's context (src/check-splice-load.c): its whole report the same bytes
# as the recompute's; a line said by its own kernel load, or by the stored run on stderr,
# makes it fall back.
# Then a tree where an oops stalls the loads after it (kp_strtab_guard.ko, kp_strtab_gap.ko,
# kp_strtab_page.ko): the stalled verdicts are kept while the same oops stalls them, not
# once it is gone, and a load waiting for a module left UNFORMED keeps its verdict.
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

. "$top/tests/cli/splice-lib.sh"
splice_tree_61
formats=(json text sarif junit)

# step LABEL MISSES SPLICE: after a change, every format's cached run against the uncached
# one; MISSES: the modules changed since the last run (each restore counts), the only ones
# read; SPLICE: the JSON run's splice line after "splice: " ("-": none, no entry before)
step() {
	local label=$1 misses=$2 splice=$3 f s c r
	# a state changed less than a second before a run is neither trusted nor stored
	sleep 1.1
	for f in "${formats[@]}"; do
		run "ref-$f" check -f "$f" --fail-on never --no-cache "${kargs[@]}" "$t"
		cached "inc-$f" check -f "$f" --fail-on never "${kargs[@]}" "$t"
		same "ref-$f" "inc-$f"
		ok "$label: check -f $f through the caches = --no-cache" $?
		s=$(sed -n 's/^kopolicy: cache: //p' "$tmp/inc-$f.stats")
		if [ "$f" = json ]; then
			[[ $s == *", $misses misses,"* ]]
			ok "$label: the unchanged modules' facts came from the cache ($s)" $?
			s=$(sed -n 's/^kopolicy: result cache: splice: //p' "$tmp/inc-$f.stats")
			splice=${splice//BYTES/$(wc -c <"$tmp/ref-json.out")}
			if [ "$splice" = - ]; then
				[ -z "$s" ]
			else
				[ "$s" = "$splice" ]
			fi
			ok "$label: splice: $splice" $?
			[ -z "$s" ] || [ "$s" = "$splice" ] || echo "# got: $s" >&2
			# a splice that ran: its entry's manifest carried over (only the
			# changed files' states and content keys replaced) is the one the
			# whole run stored, entry for entry
			c=$(sed -n 's/^kopolicy: result cache: manifest //p' "$tmp/inc-$f.stats")
			if [[ $s == *"verdicts kept"* ]]; then
				[[ $c == "carried: the same ("*" inputs, "[1-9]*" replaced)" ]]
			else
				[ -z "$c" ]
			fi
			ok "$label: manifest ${c:-not carried (no splice ran)}" $?
		fi
		if [ "$f" = json ]; then
			# --fail-on note: the exit status counts every finding; the report
			# written from the store and the spliced verdicts, with its exit
			# status, is the recompute's whenever a splice was measured
			run ref-note check -f json --fail-on note --no-cache "${kargs[@]}" "$t"
			cached inc-note check -f json --fail-on note "${kargs[@]}" "$t"
			s=$(sed -n 's/^kopolicy: result cache: splice: //p' "$tmp/inc-note.stats")
			same ref-note inc-note && { [[ $s != *"report spliced"* ]] ||
				[[ $s == *"report spliced: the same $(wc -c <"$tmp/ref-note.out") bytes, its store the same)"* ]]; }
			# the status kept first: a $(...) in the description would set $? again
			r=$?
			ok "$label: check -f json --fail-on note through the caches = --no-cache, its spliced report too (exit $(cat "$tmp/ref-note.rc"))" $r
			[[ $s != *"report spliced"* ]] || [[ $s == *"the same"*")"* ]] ||
				echo "# got: $s" >&2
		fi
		cached "rep-$f" check -f "$f" --fail-on never "${kargs[@]}" "$t"
		same "ref-$f" "rep-$f" &&
			grep -q '^kopolicy: result cache: hit' "$tmp/rep-$f.stats"
		ok "$label: check -f $f replayed after the change = --no-cache" $?
	done
	run ref-graph graph --format json --no-cache "${kargs[@]}" "$t"
	cached inc-graph graph --format json "${kargs[@]}" "$t"
	same ref-graph inc-graph
	ok "$label: graph --format json through the caches = --no-cache" $?
}
# kept K M S NAMES...: the splice line of K of M verdicts kept, S simulated again, the
# modules whose files changed (NAMES, in load order; none: "") among those, no kept
# verdict differing from the recompute (a kept one that differs would be a wrong splice),
# the graph stored the run's and rebuilt from the store (stubs, kp_graph_build()) the
# same, the stored graph's bytes (copied into the new store) a fresh encoding's, the
# simulation part made from the spliced verdicts (their bridges added, the kept ones'
# bodies copied from the stored bytes: src/check-splice-sim.c) byte for byte the one the
# run stored, and the
# report written from the store over the spliced verdicts byte for byte the recompute's
# (BYTES: the size of the --no-cache JSON report, put in by step()), and the report store
# made from what it wrote (the kept blocks' marks moved) the one the run stored; then the
# context-less splice run on its own (src/check-splice-load.c: its own thin context, the
# kernel's facts alone, the changed modules read) writes those bytes too, with the exit
# status
kept() {
	local k=$1 m=$2 s=$3
	shift 3
	echo "$k of $m verdicts kept, $s simulated again ($# module files changed:" \
		"${*:-none}; 0 spliced and differing: none; graph stored and rebuilt: the" \
		"same; graph copied: the same; simulation stored: the same; report spliced: the" \
		"same BYTES bytes, its store the" \
		"same); measured only, the recompute answers; context-less: the same (BYTES bytes)"
}
# differs LABEL A B: the change is visible (the test is not comparing constant output)
differs() {
	! cmp -s "$tmp/$2" "$tmp/$3"
	ok "$1" $?
}

# the caches filled from empty
step "cold" 9 -
cp "$tmp/ref-json.out" "$tmp/v0.json"

touch "$t/extra/kp_gpl_prov.ko"
step "touched" 1 "$(kept 8 9 1 kp_gpl_prov)"
cmp -s "$tmp/ref-json.out" "$tmp/v0.json"
ok "touched: same answer as before" $?

# a dependent simulated again: its read of kp_use_prop's verdict is stored with its own body
# (the range of its own run's pool), beside the kept bodies copied (src/check-splice-sim.c)
touch "$t/extra/kp_use_prop_chain.ko"
step "touched a dependent" 1 "$(kept 8 9 1 kp_use_prop_chain)"
cmp -s "$tmp/ref-json.out" "$tmp/v0.json"
ok "touched a dependent: same answer as before" $?

python3 "$poke" "$t/extra/kp_gpl_prov.ko" replace kp_gpl_prov_plain kp_absent_early
step "new export" 1 "falls back: the interface of kp_gpl_prov changed"
cp "$tmp/ref-json.out" "$tmp/v1.json"
differs "new export: the answer changed" v0.json v1.json
# kp_missing_then_ns found kp_absent_early: no longer "Unknown symbol kp_absent_early"
! grep -q 'Unknown symbol kp_absent_early' "$tmp/ref-text.out" &&
	grep -q 'kp_absent_early' "$tmp/ref-graph.out"
ok "new export: kp_absent_early resolves now" $?
cp "$tmp/orig/kp_gpl_prov.ko" "$t/extra/"

python3 "$poke" "$t/extra/kp_use_prop.ko" replace kp_use_prop_fn kp_use_prop_fX
step "removed export" 2 "falls back: the interface of kp_gpl_prov changed"
cp "$tmp/ref-json.out" "$tmp/v2.json"
differs "removed export: the answer changed" v0.json v2.json
grep -q 'kp_use_prop_chain: Unknown symbol kp_use_prop_fn' "$tmp/ref-json.out"
ok "removed export: kp_use_prop_chain misses kp_use_prop_fn" $?
cp "$tmp/orig/kp_use_prop.ko" "$t/extra/"

python3 "$edit" "$t/extra/kp_gpl_prov.ko" --set license=MIT >/dev/null
step "proprietary" 2 "falls back: the interface of kp_use_prop changed"
cp "$tmp/ref-json.out" "$tmp/v3.json"
differs "proprietary: the answer changed" v0.json v3.json
python3 - "$tmp/v3.json" <<'EOF'
import json, sys
mods = {m["name"]: m for m in json.load(open(sys.argv[1]))["modules"]}
sys.exit(0 if "P" in mods["kp_gpl_prov"]["taint"] else 1)
EOF
ok "proprietary: kp_gpl_prov taints P" $?
cp "$tmp/orig/kp_gpl_prov.ko" "$t/extra/"

cp "$fx/sig/sig_dummy_debian.ko" "$t/extra/dummy.ko"
step "signed" 2 "$(kept 4 9 5 dummy kp_gpl_prov)"
cp "$tmp/ref-json.out" "$tmp/v4.json"
differs "signed: the answer changed" v0.json v4.json
cp "$fx/sig/sig_dummy_bad_sig.ko" "$t/extra/dummy.ko"
step "bad signature" 1 "$(kept 8 9 1 dummy)"
cp "$tmp/ref-json.out" "$tmp/v5.json"
differs "bad signature: the answer changed" v4.json v5.json
cp "$tmp/orig/dummy.ko" "$t/extra/dummy.ko"

step "restored" 1 "$(kept 7 9 2 dummy)"
cmp -s "$tmp/ref-json.out" "$tmp/v0.json"
ok "restored: the first answer again" $?

# the license alone changed (no interface change): through the splice's measure
python3 "$edit" "$t/extra/kp_gpl_prov.ko" --set license=MIT >/dev/null
step "license only" 1 "$(kept 5 9 4 kp_gpl_prov)"
differs "license only: the answer changed" v0.json ref-json.out
cp "$tmp/orig/kp_gpl_prov.ko" "$t/extra/"
step "license restored" 1 "$(kept 5 9 4 kp_gpl_prov)"
cmp -s "$tmp/ref-json.out" "$tmp/v0.json"
ok "license restored: the first answer again" $?

# Only a change of module files of the stored set is a splice's: a file added beside them
# changes their directory (the walk's listing), and the splice falls back on it
: >"$t/extra/notes.txt"
step "a file added" 0 "falls back: $t/extra changed, not a module of the stored set"
rm -f "$t/extra/notes.txt"
step "the file removed" 0 "falls back: $t/extra changed, not a module of the stored set"

# The stored simulation is part of the result cache's trust boundary: read only from an
# entry that is whole, of the same key, CRC-right and trusted (the user's or root's, not
# writable by group or others: a root run never takes one a user could have written).
# forge HOW: the check --format json entries (those with a store) get their store's first
# byte changed; crc: its CRC left as it was; o+w: its CRC made right, the file writable by
# others; own: its CRC made right, the user's own file as it was; report: as own, its last
# byte changed instead; graph: as own, the first stored graph node's flags (after the
# simulation) given a bit no node has; cycle: as own, that node (dummy) marked in a cycle;
# name: as own, a name no export or import uses added at the end of the graph's name table
forge() {
	python3 - "$KOPOLICY_CACHE_DIR" "$1" <<'EOF2'
import glob, os, struct, sys, zlib
n = 0
for f in glob.glob(os.path.join(sys.argv[1], "runs-v*", "*.run")):
    m = bytearray(open(f, "rb").read())
    slen = struct.unpack_from("<Q", m, 40)[0]
    if not slen:
        continue
    # report: the last byte instead, the high byte of the last block's last mark
    at = len(m) - 1 if sys.argv[2] == "report" else len(m) - slen
    # the store: "KPSPLIC3", the simulation's length and bytes, the graph's length and
    # bytes ("KPGRST02", the name table: its count and strings, each up to its NUL, the node
    # count, the first node's flags)
    if sys.argv[2] == "name":
        sim = struct.unpack_from("<Q", m, at + 8)[0]
        glen_at = at + 16 + sim
        at = glen_at + 8 + 8
        names = struct.unpack_from("<I", m, at)[0]
        struct.pack_into("<I", m, at, names + 1)
        at += 4
        for _ in range(names):
            at = m.index(b"\0", at) + 1
        m[at:at] = b"zzz\0"
        struct.pack_into("<Q", m, glen_at, struct.unpack_from("<Q", m, glen_at)[0] + 4)
        struct.pack_into("<Q", m, 40, slen + 4)
    elif sys.argv[2] in ("graph", "cycle"):
        sim = struct.unpack_from("<Q", m, at + 8)[0]
        at += 16 + sim + 8 + 8
        names = struct.unpack_from("<I", m, at)[0]
        at += 4
        for _ in range(names):
            at = m.index(b"\0", at) + 1
        at += 4
        m[at] ^= 0x10 if sys.argv[2] == "graph" else 0x01
    else:
        m[at] ^= 0xff
    if sys.argv[2] != "crc":
        h = bytes(m[:48]) + b"\0\0\0\0" + bytes(m[52:64])
        struct.pack_into("<I", m, 48, zlib.crc32(bytes(m[64:]), zlib.crc32(h)))
    open(f, "r+b").write(m)
    if sys.argv[2] == "o+w":
        os.chmod(f, 0o646)
    n += 1
sys.exit(0 if n == 2 else 1)
EOF2
}
python3 "$edit" "$t/extra/kp_gpl_prov.ko" --set license=MIT >/dev/null
forge crc
ok "forged: the two entries with a store (--fail-on never and note)" $?
step "forged store, its CRC wrong: not read" 1 -
cp "$tmp/orig/kp_gpl_prov.ko" "$t/extra/"
forge o+w
ok "forged: the two entries with a store (--fail-on never and note)" $?
step "forged store, writable by others: not read" 1 -
python3 "$edit" "$t/extra/kp_gpl_prov.ko" --set license=MIT >/dev/null
forge own
ok "forged: the two entries with a store (--fail-on never and note)" $?
# the user's own entry is trusted for the user's runs; its store is still checked whole
step "forged store in the user's own entry: refused by its reader" 1 \
	"falls back: the store: its magic"
cp "$tmp/orig/kp_gpl_prov.ko" "$t/extra/"
step "after the forged stores" 1 "$(kept 5 9 4 kp_gpl_prov)"
cmp -s "$tmp/ref-json.out" "$tmp/v0.json"
ok "after the forged stores: the first answer again" $?
# the report store (after the simulation's) is checked too: a mark outside its block refused
python3 "$edit" "$t/extra/kp_gpl_prov.ko" --set license=MIT >/dev/null
forge report
ok "forged: the two entries with a store (--fail-on never and note)" $?
step "forged report store in the user's own entry: refused by its reader" 1 \
	"falls back: the report store: marks"
cp "$tmp/orig/kp_gpl_prov.ko" "$t/extra/"
step "after the forged report store" 1 "$(kept 5 9 4 kp_gpl_prov)"
# the graph's interface stored (what a splice rebuilds the kept modules' graph from) is
# checked by its reader, and compared with the run's graph field for field
python3 "$edit" "$t/extra/kp_gpl_prov.ko" --set license=MIT >/dev/null
forge graph
ok "forged: the two entries with a store (--fail-on never and note)" $?
step "forged graph store in the user's own entry: refused by its reader" 1 \
	"falls back: stored graph: node flags"
cp "$tmp/orig/kp_gpl_prov.ko" "$t/extra/"
forge cycle
ok "forged: the two entries with a store (--fail-on never and note)" $?
# the rebuild takes the stored edges as they are, computes the cycles from them and
# refuses a store whose cycles are not those; the splice falls back, the forged bytes are
# not copied into the new store (the next step finds a fresh one)
step "forged graph store, a node put in a cycle: the rebuild refuses it" 1 \
	"falls back: rebuilding the graph: stored graph: the node flags of node 0"
python3 "$edit" "$t/extra/kp_gpl_prov.ko" --set license=MIT >/dev/null
step "after the forged graph store" 1 "$(kept 5 9 4 kp_gpl_prov)"
cp "$tmp/orig/kp_gpl_prov.ko" "$t/extra/"
step "after the forged graph store: restored" 1 "$(kept 5 9 4 kp_gpl_prov)"
# bytes the decoder takes and the graph does not carry (a name nobody uses): the splice
# runs, the stored bytes are not a fresh encoding, and the new store has the fresh one
python3 "$edit" "$t/extra/kp_gpl_prov.ko" --set license=MIT >/dev/null
forge name
ok "forged: the two entries with a store (--fail-on never and note)" $?
s=$(kept 5 9 4 kp_gpl_prov)
fresh="1077 bytes, a fresh encoding 1073, from byte 8; the fresh one stored"
step "forged graph store, a name added: not copied" 1 \
	"${s/graph copied: the same/graph copied: differs ($fresh)}"
cp "$tmp/orig/kp_gpl_prov.ko" "$t/extra/"
step "after the forged name: the fresh graph copied" 1 "$(kept 5 9 4 kp_gpl_prov)"

# After an oops the loads that follow are stalled (lib/sim/rules/stall.c): their verdicts read
# the stall, and the splice keeps them only while the same load still stalls them. A second
# tree: a_plain.ko is kp_strtab_guard.ko (kernel name kp_plain: an oops holding module_mutex
# on 6.1), every later module BLOCKED behind it.
st=$top/fixtures/ko/6.1/strtab
t=$tmp/stall
mkdir -p "$t"
cp "$st/kp_strtab_guard.ko" "$t/a_plain.ko"
for m in kp_gpl_prov kp_prop_prov kp_use_prop; do
	cp "$fx/$m.ko" "$t/"
done
cp "$fx/sig/sig_dummy_unsigned.ko" "$t/dummy.ko"
# blocked FILE STALLED: kp_plain first; with STALLED 1 it oopses and the 4 others are BLOCKED
# behind it, with 0 none of that
blocked() {
	python3 - "$tmp/$1" "$2" <<'EOF'
import json, sys
mods = json.load(open(sys.argv[1]))["modules"]
want = sys.argv[2] == "1"
stalled = [m["blocked"] and m["stalled_by"] == "kp_plain" for m in mods if m["name"] != "kp_plain"]
ok = len(stalled) == 4 and all(s == want for s in stalled)
sys.exit(0 if ok and mods[0]["name"] == "kp_plain" and mods[0]["oops"] == want else 1)
EOF
}
step "stall: cold" 5 -
blocked ref-json.out 1
ok "stall: kp_plain oopses holding module_mutex, the 4 others BLOCKED" $?
# (a file touched is replayed by its bytes once the result cache saw them: a real change)
python3 "$edit" "$t/kp_gpl_prov.ko" --set description=changed >/dev/null
step "stall: description" 1 "$(kept 4 5 1 kp_gpl_prov)"
# dummy.ko signed: its load never gets to the signature, its verdict is the same
cp "$fx/sig/sig_dummy_debian.ko" "$t/dummy.ko"
step "stall: a blocked module changed" 1 "$(kept 4 5 1 dummy)"
blocked ref-json.out 1
ok "stall: dummy.ko signed, still BLOCKED" $?
# kp_strtab_gap.ko: the same interface (msleep's name outside the file, read as ""), the name
# in the zeroed rest of the last page: ENOENT, no oops, no stall. The stored verdicts of the
# 4 others read the stall and are not kept (a store without the stall state kept them all)
cp "$st/kp_strtab_gap.ko" "$t/a_plain.ko"
step "stall: the oops gone" 1 "$(kept 0 5 5 kp_plain)"
blocked ref-json.out 0
ok "stall: kp_plain ENOENT, the 4 others not BLOCKED" $?
cp "$st/kp_strtab_guard.ko" "$t/a_plain.ko"
step "stall: the oops again" 1 "$(kept 0 5 5 kp_plain)"
blocked ref-json.out 1
ok "stall: BLOCKED again" $?
# an oops after add_unformed_module() (kp_strtab_page.ko): a second kp_plain waits for the
# UNFORMED one; the measure gives it the unformed name its stored reads saw
cp "$st/kp_strtab_page.ko" "$t/a_plain.ko"
step "unformed: the oops moved" 1 "falls back: the interface of kp_plain changed"
cp "$fx/kp_plain.ko" "$t/b_plain.ko"
step "unformed: a second kp_plain" 1 "falls back: 6 modules, 5 stored"
python3 - "$tmp/ref-json.out" <<'EOF'
import json, sys
m = [x for x in json.load(open(sys.argv[1]))["modules"] if x["name"] == "kp_plain"]
sys.exit(0 if len(m) == 2 and m[0]["oops"] and m[1]["blocked"] and
         m[1]["stalled_by"] == "kp_plain" else 1)
EOF
ok "unformed: the second kp_plain waits for the UNFORMED first" $?
# the second kp_plain's reads saw its name UNFORMED, as the measure's state now has it
python3 "$edit" "$t/b_plain.ko" --set description=changed >/dev/null
step "unformed: description" 1 "$(kept 5 6 1 kp_plain)"
# a license the kernel taints P is checked before the wait on 6.1: its verdict differs, and
# the P it adds to the global taint reaches the 4 loads after it
python3 "$edit" "$t/b_plain.ko" --set license=MIT >/dev/null
step "unformed: license" 1 "$(kept 2 6 4 kp_plain)"

# The report is kept only as the plain JSON report writes it, and not when waivers mark the
# findings: nothing stored then, and said
cached pretty check -f json --pretty "${kargs[@]}" "$t"
grep -qx 'kopolicy: result cache: splice: not stored: the report was not kept (--pretty, or no memory)' \
	"$tmp/pretty.stats"
ok "--pretty: no store, said" $?
: >"$tmp/waivers"
cached waived check -f json --waivers "$tmp/waivers" "${kargs[@]}" "$t"
grep -qx 'kopolicy: result cache: splice: not stored: --waivers marks the findings' \
	"$tmp/waived.stats"
ok "--waivers: no store, said" $?

# A kernel beyond the model is said on stderr by the recompute and by the context-less
# splice's own kernel load: a line said there is a fall back (a stored run's diagnostics are
# not in its store), the splice measured beside the recompute still the same
bt=$tmp/beyond
mkdir -p "$bt"
cp "$fx/kp_plain.ko" "$fx/kp_gpl_prov.ko" "$bt/"
bargs=("${kargs[@]}" --kernel-version 99.1.0)
sleep 1.1
cached beyond0 check -f json --fail-on never "${bargs[@]}" "$bt"
python3 "$edit" "$bt/kp_plain.ko" --set description=beyond >/dev/null
sleep 1.1
run ref-beyond check -f json --fail-on never --no-cache "${bargs[@]}" "$bt"
cached beyond1 check -f json --fail-on never "${bargs[@]}" "$bt"
s=$(sed -n 's/^kopolicy: result cache: splice: //p' "$tmp/beyond1.stats")
w1="1 of 2 verdicts kept, 1 simulated again (1 module files changed: kp_plain; "
w2="; context-less: falls back: the kernel's load said: warning: kernel 99.1 is newer than"
same ref-beyond beyond1 && grep -q 'unverified-kernel' "$tmp/ref-beyond.err" &&
	[[ $s == "$w1"*"report spliced: the same "*"$w2"* ]]
ok "beyond the model: the context-less splice falls back on the kernel's warning, the output --no-cache's" $?
[[ $s == *"context-less: falls back: the kernel's load said"* ]] || echo "# got: $s" >&2

# A stored run that wrote to stderr (a file of the tree that is no module: an error line,
# exit 2) while the context-less splice's own kernel load says nothing: its report alone
# would be stdout's bytes without that line, so it falls back (run-cache.h
# kp_run_cache_previous_quiet()); the splice measured beside the recompute still the same
et=$tmp/stderr
mkdir -p "$et"
cp "$fx/kp_plain.ko" "$fx/kp_gpl_prov.ko" "$et/"
printf 'junk' >"$et/junk.ko"
sleep 1.1
cached said0 check -f json --fail-on never "${kargs[@]}" "$et"
python3 "$edit" "$et/kp_plain.ko" --set description=said >/dev/null
sleep 1.1
run ref-said check -f json --fail-on never --no-cache "${kargs[@]}" "$et"
cached said1 check -f json --fail-on never "${kargs[@]}" "$et"
s=$(sed -n 's/^kopolicy: result cache: splice: //p' "$tmp/said1.stats")
w2="; context-less: falls back: the stored run wrote to stderr"
same ref-said said1 && [ "$(cat "$tmp/ref-said.rc")" = 2 ] &&
	grep -qx "kopolicy: $et/junk.ko: not an ELF file" "$tmp/ref-said.err" &&
	[[ $s == "$w1"*"report spliced: the same "*"$w2" ]]
ok "a stored run with stderr lines: the context-less splice falls back, the output --no-cache's" $?
[[ $s == *"$w2" ]] || echo "# got: $s" >&2

tap_done
