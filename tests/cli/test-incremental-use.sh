#!/usr/bin/env bash
# The splice used (issue 28, layer 5: src/check-splice-use.c): on a result-cache miss of a
# plain `check --format json` whose previous entry has a store, a run that changed only
# module files of the stored set is answered from that store, the changed modules read
# alone, and its entry stored with the store the splice made and the previous manifest
# carried over. Each step: stdout, stderr and exit status byte for byte those of a run
# without any cache, and the KOPOLICY_CACHE_STATS line "splice: used (...)" or "splice: not
# used: WHY". After a used splice, its entry (output, key, manifest entries in any order,
# store bytes) is the one a recompute of the same change stores (KOPOLICY_SPLICE=measure
# from the entry before it), and the next run replays it. Changes, on the fixture tree of
# test-incremental.sh: one module, two modules, the same module twice in a row (the second
# splice from the first splice's store), a license making its importers inherit P (its
# dependents simulated again); not used: a module renamed, replaced by a directory (and
# unreadable, as a user other than root), with a new interface, a store byte flipped, a
# report part's block offset outside the output or its lengths not adding up, an entry of
# the KPSPLIC2 store, of the KPGRST01 graph or of a KPSIMST2 simulation part, a graph part of
# more nodes than the simulation part's modules, the changed
# module's stored edges damaged (a node's edges are read when first needed), a stored run that
# wrote to stderr, a changed module writable by others.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
. "$top/tests/lib/tap.sh"
tap_tmpdir
export KOPOLICY_CACHE_DIR=$tmp/cache
unset KOPOLICY_CACHE KOPOLICY_CACHE_STATS KOPOLICY_CACHE_MAX_SIZE KOPOLICY_RUN_CACHE \
	KOPOLICY_SPLICE
fx=$top/fixtures/ko/6.1
poke=$top/tests/cli/elf-poke.py
edit=$top/fixtures/edit-ko.py

command -v python3 >/dev/null || { echo "1..0 # SKIP python3 missing"; exit 0; }

. "$top/tests/cli/splice-lib.sh"
splice_tree_61
runs=$KOPOLICY_CACHE_DIR/runs-v1

# use LABEL SPLICE [DIR]: after a change, the cached JSON check of DIR (default the tree)
# against the uncached one, its splice line (after "splice: ") SPLICE; a used splice's entry
# against a recompute's of the same change, then a replay
use() {
	local label=$1 want=$2 dir=${3:-$t} s r
	# a state changed less than a second before a run is neither trusted nor stored
	sleep 1.1
	rm -rf "$tmp/before"
	[ ! -d "$runs" ] || cp -a "$runs" "$tmp/before"
	run ref check -f json "${kargs[@]}" --no-cache "$dir"
	cached inc check -f json "${kargs[@]}" "$dir"
	same ref inc
	# the status kept first: a $(...) in the description would set $? again
	r=$?
	ok "$label: stdout, stderr and exit status ($(cat "$tmp/ref.rc")) = --no-cache" $r
	# a recompute under KOPOLICY_CACHE_STATS measures the splice after it: its part cut
	s=$(sed -n 's/^kopolicy: result cache: splice: //p' "$tmp/inc.stats")
	s=${s%%; splice: *}
	[[ $s == $want ]]
	ok "$label: splice: $want" $?
	[[ $s == $want ]] || echo "# got: $s" >&2
	grep -qx 'kopolicy: result cache: miss, stored ([0-9]* inputs)' "$tmp/inc.stats"
	ok "$label: the entry stored" $?
	if [[ $want == "used "* ]]; then
		rm -rf "$tmp/used"
		cp -a "$runs" "$tmp/used"
		# the same change recomputed from the entry before it
		rm -rf "$runs"
		cp -a "$tmp/before" "$runs"
		KOPOLICY_SPLICE=measure cached full check -f json "${kargs[@]}" "$dir"
		same ref full && entries_same "$tmp"/used/*.run "$runs"/*.run
		ok "$label: the used splice's entry = a recompute's (output, key, manifest, store)" $?
		rm -rf "$runs"
		cp -a "$tmp/used" "$runs"
	fi
	cached rep check -f json "${kargs[@]}" "$dir"
	same ref rep && grep -q '^kopolicy: result cache: hit' "$tmp/rep.stats"
	ok "$label: the next run replays it" $?
}
# used K M S NAMES...: the line of a used splice: K of M verdicts kept, S simulated again,
# the modules whose files changed (NAMES, in load order of the note: changed inputs' order)
used() {
	local k=$1 m=$2 s=$3
	shift 3
	echo "used ($k of $m verdicts kept, $s simulated again, $# module files changed: $*)"
}

use "cold" ""
cp "$tmp/ref.out" "$tmp/v0.json"

python3 "$edit" "$t/extra/kp_plain.ko" --set description=one >/dev/null
use "one module changed" "$(used 8 9 1 kp_plain)"

python3 "$edit" "$t/extra/kp_plain.ko" --set description=two >/dev/null
use "the same module again: spliced from the splice's store" "$(used 8 9 1 kp_plain)"

python3 "$edit" "$t/extra/kp_plain.ko" --set description=xyz >/dev/null
python3 "$edit" "$t/extra/kp_use_prop_chain.ko" --set description=xyz >/dev/null
use "two modules changed" \
	"used (7 of 9 verdicts kept, 2 simulated again, 2 module files changed: *)"
[[ $(sed -n 's/^kopolicy: result cache: splice: //p' "$tmp/inc.stats") == *kp_plain* ]] &&
	[[ $(sed -n 's/^kopolicy: result cache: splice: //p' "$tmp/inc.stats") == *kp_use_prop_chain* ]]
ok "two modules changed: both named" $?

# P inherited by kp_gpl_prov's importers (2023 rule): its dependents simulated again
python3 "$edit" "$t/extra/kp_gpl_prov.ko" --set license=MIT >/dev/null
use "a license making importers inherit P" "$(used 5 9 4 kp_gpl_prov)"
! cmp -s "$tmp/ref.out" "$tmp/v0.json" && python3 - "$tmp/ref.out" <<'EOF'
import json, sys
mods = {m["name"]: m for m in json.load(open(sys.argv[1]))["modules"]}
sys.exit(0 if "P" in mods["kp_gpl_prov"]["taint"] else 1)
EOF
ok "a license making importers inherit P: the answer changed" $?
cp "$tmp/orig/kp_gpl_prov.ko" "$t/extra/"
use "the license restored" "$(used 5 9 4 kp_gpl_prov)"

# a signature: the E taint of the first unsigned module moves (later loads' global taint)
cp "$fx/sig/sig_dummy_debian.ko" "$t/extra/dummy.ko"
use "dummy signed" "used (7 of 9 verdicts kept, 2 simulated again, 1 module files changed: dummy)"
cp "$tmp/orig/dummy.ko" "$tmp/orig/kp_plain.ko" "$tmp/orig/kp_use_prop_chain.ko" "$t/extra/"
use "restored" "used (* of 9 verdicts kept, * simulated again, 3 module files changed: *)"
cmp -s "$tmp/ref.out" "$tmp/v0.json"
ok "restored: the first answer again" $?

# Not used: the recompute answers, the same bytes
python3 "$poke" "$t/extra/kp_gpl_prov.ko" replace kp_gpl_prov_plain kp_absent_early
use "a new interface (an export renamed)" "not used: the interface of kp_gpl_prov changed"
cp "$tmp/orig/kp_gpl_prov.ko" "$t/extra/"
use "its old interface back" "not used: the interface of kp_gpl_prov changed"

mv "$t/extra/kp_plain.ko" "$t/extra/kp_plain2.ko"
use "a module renamed" "not used: * changed, not a module of the stored set"
mv "$t/extra/kp_plain2.ko" "$t/extra/kp_plain.ko"
use "renamed back" "not used: * changed, not a module of the stored set"

# its name in .modinfo and .gnu.linkonce.this_module changed, the file's path kept
# (every NUL-terminated "kp_plain" shortened: .modinfo, .gnu.linkonce.this_module, .strtab)
while python3 "$poke" "$t/extra/kp_plain.ko" replace kp_plain kp_plai 2>/dev/null; do :; done
use "a module's name changed" "not used: $t/extra/kp_plain.ko: its name changed"
grep -q '"name":"kp_plai"' "$tmp/ref.out"
ok "a module's name changed: the report names kp_plai" $?
cp "$tmp/orig/kp_plain.ko" "$t/extra/"
use "its name back" "not used: $t/extra/kp_plain.ko: its name changed"

rm "$t/extra/kp_plain.ko"
mkdir "$t/extra/kp_plain.ko"
use "a module replaced by a directory" "not used: *"
rmdir "$t/extra/kp_plain.ko"
cp "$tmp/orig/kp_plain.ko" "$t/extra/"
use "the module back" "not used: *"

if [ "$(id -u)" != 0 ]; then
	chmod 000 "$t/extra/kp_plain.ko"
	use "a module unreadable" "not used: *kp_plain.ko*"
	chmod 644 "$t/extra/kp_plain.ko"
	use "readable again" "not used: *"
else
	skip "a module unreadable (chmod 000)" "root reads it"
fi

# A changed module another user can write: its state does not name its bytes, so the run
# noted none (kp_in_note_bytes()) and its entry could not be stored with the manifest carried
# over (which records a changed file only in a state whose bytes the run read: never a state
# written after the read beside an output made from the bytes before): not used, recomputed
python3 "$edit" "$t/extra/kp_plain.ko" --set description=writable-by-others >/dev/null
chmod o+w "$t/extra/kp_plain.ko"
use "a changed module writable by others" \
	"not used: the manifest not carried: a changed module is not in the state whose bytes the run read"
chmod o-w "$t/extra/kp_plain.ko"
python3 "$edit" "$t/extra/kp_plain.ko" --set description=own-again >/dev/null
# the entry before recorded it by its bytes: a digest made now would be of the bytes now
use "the module the user's own again" \
	"not used: the manifest not carried: a changed input is recorded by its bytes, not its state"

# a byte of the store flipped, the entry's CRC made right (the user's own entry: trusted,
# its store checked by its reader)
python3 "$edit" "$t/extra/kp_plain.ko" --set description=flip >/dev/null
python3 - "$runs" <<'EOF'
import glob, os, struct, sys, zlib
for f in glob.glob(os.path.join(sys.argv[1], "*.run")):
    m = bytearray(open(f, "rb").read())
    slen = struct.unpack_from("<Q", m, 40)[0]
    m[len(m) - slen] ^= 0xff
    h = bytes(m[:48]) + b"\0\0\0\0" + bytes(m[52:64])
    struct.pack_into("<I", m, 48, zlib.crc32(bytes(m[64:]), zlib.crc32(h)))
    open(f, "r+b").write(m)
EOF
use "a store byte flipped" "not used: the store: its magic"
python3 "$edit" "$t/extra/kp_plain.ko" --set description=back >/dev/null
use "after the flipped store" "$(used 8 9 1 kp_plain)"

# The report part points into the entry's output (check-splice.h): damaged, or an entry of the
# store before it (KPSPLIC2: the report's bytes held again), it is not used
# damage HOW: each entry's store edited (the user's own entry: its CRC made right): "graph01",
# the graph part's magic the one before (KPGRST01); "edges", every stored node's first edge
# given a kind past the last; "offset",
# the first reported block's offset past the output's end; "tail", the tail's length one less
# (the lengths no longer adding up to the output's); "old", the store written back in the
# KPSPLIC2 format (the report part "KPSPLRP1" with the head's, the tail's and each block's
# bytes from the output); "sim", the simulation part's magic that of the layout before it
# (KPSIMST2: one pool of verdicts read, offsets into it); "nodes", a node appended to the
# graph part (its count one over the simulation part's)
damage() {
	python3 - "$runs" "$1" <<'EOF2'
import glob, os, struct, sys, zlib
for f in glob.glob(os.path.join(sys.argv[1], "*.run")):
    m = bytearray(open(f, "rb").read())
    olen, klen, mlen, slen = struct.unpack_from("<QQQQ", m, 16)
    if not slen:
        continue
    out, at = b"", 64
    while at < 64 + olen:
        n = struct.unpack_from("<I", m, at + 1)[0]
        out += m[at + 5:at + 5 + n] if m[at] == 1 else b""
        at += 5 + n
    st = len(m) - slen
    sim = struct.unpack_from("<Q", m, st + 8)[0]
    glen = struct.unpack_from("<Q", m, st + 16 + sim)[0]
    rp = st + 16 + sim + 8 + glen
    assert m[st:st + 8] == b"KPSPLIC3" and m[rp:rp + 8] == b"KPSPLRP2"
    hl, tl, cnt = struct.unpack_from("<III", m, rp + 10)
    if sys.argv[2] == "tail":
        struct.pack_into("<I", m, rp + 14, tl - 1)
    at = rp + 22
    old = m[rp + 8:rp + 10] + struct.pack("<I", hl) + out[:hl]
    old += struct.pack("<I", tl) + out[len(out) - tl:] + struct.pack("<I", cnt)
    first = True
    for _ in range(cnt):
        old += m[at:at + 1]
        if not m[at]:
            at += 1
            continue
        off, ln = struct.unpack_from("<QI", m, at + 1)
        if sys.argv[2] == "offset" and first:
            struct.pack_into("<Q", m, at + 1, len(out) + 1)
        first = False
        old += struct.pack("<I", ln) + out[off:off + ln] + m[at + 13:at + 49]
        at += 49
    g = st + 16 + sim + 8
    assert m[g:g + 8] == b"KPGRST02"
    if sys.argv[2] == "graph01":
        m[g:g + 8] = b"KPGRST01"
    if sys.argv[2] == "edges":
        # every node's first edge: its kind past the last (graph-store.h's layout)
        at = g + 12
        for _ in range(struct.unpack_from("<I", m, g + 8)[0]):
            at = m.index(b"\0", at) + 1
        nodes, at = struct.unpack_from("<I", m, at)[0], at + 4
        for _ in range(nodes):
            at += 3
            at += 4 + 14 * struct.unpack_from("<I", m, at)[0]
            ne, el = struct.unpack_from("<II", m, at)
            if ne:
                m[at + 8] = 0xff
            at += 8 + el
        assert at == g + glen
    if sys.argv[2] == "nodes":
        # one node more in the graph part than modules in the simulation part: a node with
        # the first one's machine, no export, no edge, appended, the lengths made to agree
        at = g + 12
        for _ in range(struct.unpack_from("<I", m, g + 8)[0]):
            at = m.index(b"\0", at) + 1
        nodes = struct.unpack_from("<I", m, at)[0]
        struct.pack_into("<I", m, at, nodes + 1)
        node = b"\0" + m[at + 5:at + 7] + struct.pack("<III", 0, 0, 0)
        m[g + glen:g + glen] = node
        struct.pack_into("<Q", m, g - 8, glen + len(node))
        struct.pack_into("<Q", m, 40, slen + len(node))
    if sys.argv[2] == "sim":
        assert m[st + 16:st + 24] == b"KPSIMST3"
        m[st + 16:st + 24] = b"KPSIMST2"
    if sys.argv[2] == "old":
        m[st:st + 8] = b"KPSPLIC2"
        m[rp:] = b"KPSPLRP1" + old
        struct.pack_into("<Q", m, 40, len(m) - st)
    h = bytes(m[:48]) + b"\0\0\0\0" + bytes(m[52:64])
    struct.pack_into("<I", m, 48, zlib.crc32(bytes(m[64:]), zlib.crc32(h)))
    open(f, "wb").write(m)
EOF2
}
python3 "$edit" "$t/extra/kp_plain.ko" --set description=offs >/dev/null
damage offset
use "a block's offset outside the output" "not used: the report store: a block's offset"
python3 "$edit" "$t/extra/kp_plain.ko" --set description=tail >/dev/null
damage tail
use "the tail one byte shorter" \
	"not used: the report store: the lengths do not add up to the output's"
python3 "$edit" "$t/extra/kp_plain.ko" --set description=olds >/dev/null
damage old
use "an entry of the KPSPLIC2 store" "not used: the store: its magic"
# the graph part before it (KPGRST01: its names without a NUL, its edges without their length,
# so not read lazily): not used, the recompute's answer
python3 "$edit" "$t/extra/kp_plain.ko" --set description=gr01 >/dev/null
damage graph01
use "an entry of the KPGRST01 graph" "not used: stored graph: magic"
# a node's edges are decoded when the splice first needs them (graph-store.h): the changed
# module's, damaged, are refused then
python3 "$edit" "$t/extra/kp_plain.ko" --set description=edge >/dev/null
damage edges
use "every node's first edge damaged" "not used: stored graph: edge kind or flags of node *"
# a graph part of more nodes than the simulation part's modules (each reader sizes its
# arrays by one count and indexes them by the other): refused before anything is read
python3 "$edit" "$t/extra/kp_plain.ko" --set description=node >/dev/null
damage nodes
use "a graph node more than the simulated modules" \
	"not used: the store: * graph nodes for * simulated modules"
python3 "$edit" "$t/extra/kp_plain.ko" --set description=sims >/dev/null
damage sim
use "a simulation part of the KPSIMST2 layout" "not used: stored simulation: magic"
python3 "$edit" "$t/extra/kp_plain.ko" --set description=back >/dev/null
use "after the damaged stores" "$(used 8 9 1 kp_plain)"

# The used splice's entry holds its output as one stdout chunk of stdout's bytes (a stream's
# consecutive writes are one chunk: lib/cache/run-cache-capture.c), which the next splice reads in
# place; an entry whose output is cut in chunks (as entries were written before, one chunk
# per flush of stdout's buffer) is still spliced from, its chunks joined
chunks() { # the output chunks of each entry: "STREAM:LENGTH ..."
	python3 - "$runs" <<'EOF2'
import glob, os, struct, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.run"))):
    m = open(f, "rb").read()
    olen, at, c = struct.unpack_from("<Q", m, 16)[0], 64, []
    while at < 64 + olen:
        n = struct.unpack_from("<I", m, at + 1)[0]
        c.append("%d:%d" % (m[at], n))
        at += 5 + n
    print(" ".join(c))
EOF2
}
is "the used splice's entry: one stdout chunk of stdout's bytes" "$(chunks)" \
	"1:$(stat -c %s "$tmp/inc.out")"
[ "$(stat -c %s "$tmp/inc.out")" -gt 4096 ]
ok "that output is longer than stdout's buffer (4096 bytes to a file)" $?
python3 - "$runs" <<'EOF2'
import glob, os, struct, sys, zlib
for f in glob.glob(os.path.join(sys.argv[1], "*.run")):
    m = bytearray(open(f, "rb").read())
    olen = struct.unpack_from("<Q", m, 16)[0]
    assert m[64] == 1 and struct.unpack_from("<I", m, 65)[0] == olen - 5
    out = bytes(m[69:64 + olen])
    cut = b"".join(b"\1" + struct.pack("<I", len(p)) + p
                   for p in (out[:1000], out[1000:4096], out[4096:]))
    m[64:64 + olen] = cut
    struct.pack_into("<Q", m, 16, len(cut))
    h = bytes(m[:48]) + b"\0\0\0\0" + bytes(m[52:64])
    struct.pack_into("<I", m, 48, zlib.crc32(bytes(m[64:]), zlib.crc32(h)))
    open(f, "wb").write(m)
EOF2
is "an entry cut in chunks" "$(chunks)" "1:1000 1:3096 1:$(($(stat -c %s "$tmp/inc.out") - 4096))"
python3 "$edit" "$t/extra/kp_plain.ko" --set description=cuts >/dev/null
use "from an entry whose output is three chunks" "$(used 8 9 1 kp_plain)"
is "its entry: one stdout chunk again" "$(chunks)" "1:$(stat -c %s "$tmp/inc.out")"

# A stored run that wrote to stderr (a file of the tree that is no module: an error line,
# exit 2): the store holds stdout's bytes alone
et=$tmp/stderr
mkdir -p "$et"
cp "$fx/kp_plain.ko" "$fx/kp_gpl_prov.ko" "$et/"
printf 'junk' >"$et/junk.ko"
use "stderr: cold" "" "$et"
python3 "$edit" "$et/kp_plain.ko" --set description=said >/dev/null
use "a stored run with stderr lines" "not used: the stored run wrote to stderr" "$et"
[ "$(cat "$tmp/ref.rc")" = 2 ] && grep -qx "kopolicy: $et/junk.ko: not an ELF file" "$tmp/ref.err"
ok "a stored run with stderr lines: the error line and exit status 2" $?

# A kernel beyond the model: its load's warning (on stderr) is a fall back
bt=$tmp/beyond
mkdir -p "$bt"
cp "$fx/kp_plain.ko" "$fx/kp_gpl_prov.ko" "$bt/"
kargs+=(--kernel-version 99.1.0)
use "beyond the model: cold" "" "$bt"
python3 "$edit" "$bt/kp_plain.ko" --set description=beyond >/dev/null
use "beyond the model" "not used: *" "$bt"

tap_done
