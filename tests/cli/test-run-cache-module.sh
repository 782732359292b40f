#!/usr/bin/env bash
# The result cache when a module's state changed and its bytes did not (issue 28 item 4:
# touch, a package reinstalled with the same files, a DKMS rebuild that reproduces the
# module). A module the facts cache knows by its bytes (a compressed one found by its state,
# an uncompressed one read by a run with packs) is recorded with their SHA-256; a replay
# that finds its state changed hashes it again and compares. Each run's output must be the
# bytes of a --no-cache run:
#   - touched, never hashed (an uncompressed module of the run that filled the cache): a
#     miss, that module alone read; touched again: replayed, "1 module hashed again";
#   - a compressed module touched: replayed;
#   - a compressed module touched first after the run that filled empty caches (its content
#     key made by the facts cache's store thread, which that run waits for before it writes
#     its manifest): replayed, check and graph; with IMA (security.ima read): a miss;
#   - an uncompressed module touched first after the cold fill of a run that checks
#     signatures: replayed when its signature's digest is SHA-256 (the reader hashed the
#     whole file in passing), a miss when SHA-512;
#   - one byte changed, size and mtime put back (touch -r): a miss, the new answer;
#   - two modules touched whose bytes are more than 64 MiB: not replayed (a miss that says
#     why), the answer the same;
#   - as root, a module chown()ed to nobody (its state no longer trusted): not replayed;
#   - a module whose security.ima the run read (IMA appraisal): never taken by its bytes.
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.1
poke=$top/tests/cli/elf-poke.py
export KOPOLICY_CACHE_DIR=$tmp/cache
unset KOPOLICY_CACHE KOPOLICY_CACHE_STATS KOPOLICY_CACHE_MAX_SIZE KOPOLICY_RUN_CACHE
# a JSON check's miss recomputes (its budget step reads the measure's manifest line; the
# splice used in its place: test-incremental-use.sh)
export KOPOLICY_SPLICE=measure

command -v python3 >/dev/null || { echo "1..0 # SKIP python3 missing"; exit 0; }
command -v xz >/dev/null || { echo "1..0 # SKIP xz missing"; exit 0; }

t=$tmp/tree
mkdir -p "$t/kernel" "$t/extra" "$tmp/orig"
for m in kp_prop_prov kp_use_prop kp_use_prop_chain kp_missing_then_ns; do
	cp "$fx/$m.ko" "$t/kernel/"
done
cp "$fx/kp_gpl_prov.ko" "$t/extra/"
xz -c --check=crc32 "$fx/kp_plain.ko" >"$t/kernel/kp_plain.ko.xz"
cp -p "$t/extra/kp_gpl_prov.ko" "$tmp/orig/"
m=$t/extra/kp_gpl_prov.ko
x=$t/kernel/kp_plain.ko.xz

cmd=(check -f json --fail-on never -k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz"
	--kernel-release "$rel" "$t")
cmd_g=(graph --format json -k "$fx/Module.symvers.gz" "$t")

# run, same, stats_is, expect
. "$top/tests/cli/run-cache-lib.sh"
size_m=$(stat -c %s "$m")
size_x=$(stat -c %s "$x")
again1() { echo \
	"hit, replayed (inputs rewritten with the same bytes; entry refreshed; 1 module hashed again, $1 bytes)"; }

# a state changed less than a second before a run is not stored: every wait below is that
sleep 1.1
expect "first run" r0 'miss, stored (*' "${cmd[@]}"
expect "graph: first run" g0 'miss, stored (*' "${cmd_g[@]}"
expect "second run" r1 'hit, replayed' "${cmd[@]}"
cp "$tmp/r0.out" "$tmp/v0.json"

# the run that filled the cache did not hash the uncompressed modules: a miss, one read
touch "$m"
sleep 1.1
expect "touched, never hashed" r2 'miss, stored (*' "${cmd[@]}"
grep -q ' 1 misses,' "$tmp/r2.facts"
_st=$?
ok "touched, never hashed: that module alone read ($(cat "$tmp/r2.facts"))" $_st
cmp -s "$tmp/r2.out" "$tmp/v0.json"
ok "touched: the same answer" $?
expect "then replayed" r3 'hit, replayed' "${cmd[@]}"

# now its bytes are known: touched again, replayed after hashing it
touch "$m"
sleep 1.1
expect "touched again" r4 "$(again1 "$size_m")" "${cmd[@]}"
[ ! -s "$tmp/r4.facts" ]
ok "touched again: no module read (no facts cache line)" $?
expect "then stat()s only again" r5 'hit, replayed' "${cmd[@]}"

# reinstalled with the same bytes (a new inode): replayed
cp -p "$m" "$m.new" && mv "$m.new" "$m"
sleep 1.1
expect "reinstalled, same bytes" r6 "$(again1 "$size_m")" "${cmd[@]}"

# a compressed module (found by its state in a run with packs: its content key recorded)
touch "$x"
sleep 1.1
expect "compressed module touched" r7 "$(again1 "$size_x")" "${cmd[@]}"
touch "$x"
sleep 1.1
expect "graph: compressed module touched (its entry recorded before)" g1 'miss, stored (*' \
	"${cmd_g[@]}"
touch "$x"
sleep 1.1
expect "graph: touched again" g2 "$(again1 "$size_x")" "${cmd_g[@]}"

# one byte changed, size and mtime put back: a miss, the new answer
cp -p "$m" "$tmp/m.before"
python3 "$poke" "$m" replace kp_gpl_prov_plain kp_absent_early
touch -r "$tmp/m.before" "$m"
[ "$(stat -c %s.%Y "$m")" = "$(stat -c %s.%Y "$tmp/m.before")" ] && ! cmp -s "$m" "$tmp/m.before"
ok "other bytes, the same size and mtime" $?
sleep 1.1
expect "other bytes, same size and mtime" r8 'miss, stored (*' "${cmd[@]}"
! cmp -s "$tmp/r8.out" "$tmp/v0.json"
ok "other bytes: a new answer" $?
expect "graph: other bytes" g3 'miss, stored (*' "${cmd_g[@]}"
# the first bytes back, the mtime too: a miss again (the entry has the other bytes)
cp "$tmp/orig/kp_gpl_prov.ko" "$m"
touch -r "$tmp/m.before" "$m"
sleep 1.1
expect "the first bytes back" r9 'miss, stored (*' "${cmd[@]}"
cmp -s "$tmp/r9.out" "$tmp/v0.json"
ok "the first bytes back: the first answer" $?

# a mode changed (bytes not): a miss
chmod 600 "$m"
sleep 1.1
expect "mode changed" r10 'miss, stored (*' "${cmd[@]}"
chmod 644 "$m"
sleep 1.1
expect "mode back" r11 'miss, stored (*' "${cmd[@]}"

# the budget: two compressed modules of 40 MiB (an ELF with random bytes after it: the same
# facts) are read, recorded with their bytes, touched: more than 64 MiB to hash, not replayed
if command -v zstd >/dev/null; then
	for b in kp_ns_ok kp_plain_prop; do
		{ cat "$fx/$b.ko"; head -c $((40 << 20)) /dev/urandom; } |
			zstd -q -1 -o "$t/extra/$b.ko.zst"
	done
	sleep 1.1
	expect "budget: two large modules added" r12 'miss, stored (*' "${cmd[@]}"
	touch "$m"
	sleep 1.1
	expect "budget: ... recorded with their bytes" r13 "$(again1 "$size_m")" "${cmd[@]}"
	touch "$t/extra/kp_ns_ok.ko.zst" "$t/extra/kp_plain_prop.ko.zst"
	sleep 1.1
	expect "budget: both touched: more than 64 MiB to hash" r14 \
		'miss, stored (* inputs; not replayed: more than 64 MiB of modules to hash again)' \
		"${cmd[@]}"
	# the splice's measure: kp_ns_ok held by its bytes (within the budget), kp_plain_prop
	# past it, changed; the manifest carried over takes both new states (the first's from
	# the check that held it), the one the run stored
	grep -qx 'kopolicy: result cache: manifest carried: the same (13 inputs, 1 replaced)' \
		"$tmp/r14.all"
	ok "budget: the manifest carried over, one module held by its bytes: the run's" $?
	touch "$t/extra/kp_ns_ok.ko.zst"
	sleep 1.1
	big=$(stat -c %s "$t/extra/kp_ns_ok.ko.zst")
	expect "budget: one touched: within it" r15 "$(again1 "$big")" "${cmd[@]}"
	rm -f "$t/extra/kp_ns_ok.ko.zst" "$t/extra/kp_plain_prop.ko.zst"
	sleep 1.1
	expect "budget: both removed" r16 'miss, stored (*' "${cmd[@]}"
else
	for i in 1 2 3 4 5; do
		n=$((n + 1))
		echo "ok $n # SKIP zstd missing"
	done
fi

# as root: a module another user owns is not taken by its bytes
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	touch "$m"
	sleep 1.1
	expect "root: recorded with its bytes" r17 "$(again1 "$size_m")" "${cmd[@]}"
	chown nobody "$m"
	sleep 1.1
	expect "root: the module now nobody's (same bytes)" r18 'miss, stored (*' "${cmd[@]}"
	expect "root: ... then its bytes hashed on every replay" r19 'hit, replayed' "${cmd[@]}"
	chown root "$m"
	sleep 1.1
	expect "root: back to root" r20 'miss, stored (*' "${cmd[@]}"
else
	for i in 1 2 3 4; do
		n=$((n + 1))
		echo "ok $n # SKIP not root: no other user's file"
	done
fi

# IMA appraisal reads a module's security.ima (and owner, file system) besides its bytes: a
# setxattr() changes only the state, so such a module is never taken by its bytes
f12=$top/fixtures/ko/6.12
im=$tmp/ima/kp_plain.ko
mkdir -p "$tmp/ima"
cp "$f12/kp_plain.ko" "$im"
cmd_i=(check -f json --fail-on never -k "$f12/Module.symvers.gz" --kernel-config
	"$f12/config.gz" --kernel-release "$(sed -n 's/^release=//p' "$f12/kernel.txt")"
	--kernel-cmdline ima_policy=secure_boot "$im")
setx() { python3 -c \
	"import os,sys; os.setxattr(sys.argv[1], 'security.ima', bytes.fromhex(sys.argv[2]))" \
	"$im" "$1" 2>/dev/null; }
if setx "0404$(sha256sum "$im" | cut -c1-64)"; then
	sleep 1.1
	expect "ima: a digest in security.ima" i0 'miss, stored (*' "${cmd_i[@]}"
	touch "$im"
	sleep 1.1
	expect "ima: touched: not taken by its bytes" i1 'miss, stored (*' "${cmd_i[@]}"
	setx 0302040102030401000100
	sleep 1.1
	expect "ima: a signature in security.ima instead" i2 'miss, stored (*' "${cmd_i[@]}"
	! cmp -s "$tmp/i1.out" "$tmp/i2.out"
	ok "ima: ... a new answer" $?
else
	for i in 1 2 3 4; do
		n=$((n + 1))
		echo "ok $n # SKIP security.ima cannot be set here"
	done
fi

# the first touch after a cold fill: the run that filled empty caches hashed the compressed
# module in the facts cache's store thread and waited for it before writing its manifest
for c in check graph; do
	export KOPOLICY_CACHE_DIR=$tmp/cold-$c
	if [ $c = check ]; then cc=("${cmd[@]}"); else cc=("${cmd_g[@]}"); fi
	touch "$x"
	sleep 1.1
	expect "cold fill, $c" c0$c 'miss, stored (*' "${cc[@]}"
	grep -q '^0 hits (0 by stat), 6 misses, 6 stored,' "$tmp/c0$c.facts"
	_st=$?
	ok "cold fill, $c: every module read and stored ($(cat "$tmp/c0$c.facts"))" $_st
	touch "$x"
	sleep 1.1
	expect "cold fill, $c: the compressed module touched first" c1$c "$(again1 "$size_x")" \
		"${cc[@]}"
	cmp -s "$tmp/c1$c.out" "$tmp/c0$c.out"
	ok "cold fill, $c: touched: the same answer" $?
	# the uncompressed ones were not hashed by the fill: a miss, that module alone read
	touch "$m"
	sleep 1.1
	expect "cold fill, $c: an uncompressed module touched first" c2$c 'miss, stored (*' \
		"${cc[@]}"
	grep -q ' 1 misses,' "$tmp/c2$c.facts"
	_st=$?
	ok "cold fill, $c: ... that module alone read ($(cat "$tmp/c2$c.facts"))" $_st
done
export KOPOLICY_CACHE_DIR=$tmp/cache

# the same with IMA appraisal: the fill reads the compressed module's security.ima, so its
# content key is not recorded for the result cache (a setxattr() changes only the state)
ix=$tmp/ima-xz/kp_plain.ko.xz
mkdir -p "$tmp/ima-xz"
xz -c --check=crc32 "$f12/kp_plain.ko" >"$ix"
cmd_ix=("${cmd_i[@]}")
cmd_ix[${#cmd_ix[@]} - 1]=$ix
if python3 -c \
	"import os,sys; os.setxattr(sys.argv[1], 'security.ima', bytes.fromhex(sys.argv[2]))" \
	"$ix" "0404$(sha256sum "$ix" | cut -c1-64)" 2>/dev/null; then
	export KOPOLICY_CACHE_DIR=$tmp/cold-ima
	sleep 1.1
	expect "ima: cold fill, compressed" i3 'miss, stored (*' "${cmd_ix[@]}"
	touch "$ix"
	sleep 1.1
	expect "ima: cold fill, compressed, touched: not taken by its bytes" i4 'miss, stored (*' \
		"${cmd_ix[@]}"
	export KOPOLICY_CACHE_DIR=$tmp/cache
else
	for i in 1 2; do
		n=$((n + 1))
		echo "ok $n # SKIP security.ima cannot be set here"
	done
fi

# a run that checks signatures hashes a SHA-256-signed uncompressed module whole in passing
# (the signed part, continued over the signature): the cold fill records those bytes
sd=$top/tests/data/sig/6.1
st=$tmp/sigtree
mkdir -p "$st"
cp "$sd/kp_sig_sha256.ko" "$sd/kp_sig_sha512_skid.ko" "$st/"
cmd_s=(check -f json --fail-on never -k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz"
	--kernel-release "$rel" --trusted-cert "$top/tests/data/sig/test-cert.pem" "$st")
export KOPOLICY_CACHE_DIR=$tmp/cold-sig
sleep 1.1
expect "signatures: cold fill" s0 'miss, stored (*' "${cmd_s[@]}"
touch "$st/kp_sig_sha256.ko"
sleep 1.1
expect "signatures: SHA-256-signed module touched first" s1 \
	"$(again1 "$(stat -c %s "$st/kp_sig_sha256.ko")")" "${cmd_s[@]}"
cmp -s "$tmp/s1.out" "$tmp/s0.out"
ok "signatures: touched: the same answer" $?
touch "$st/kp_sig_sha512_skid.ko"
sleep 1.1
expect "signatures: SHA-512-signed module touched first: not hashed in passing" s2 \
	'miss, stored (*' "${cmd_s[@]}"
# without keys nothing is hashed: the same module touched first after such a fill, a miss
export KOPOLICY_CACHE_DIR=$tmp/cold-nokeys
cmd_n=("${cmd_s[@]}")
unset 'cmd_n[11]' 'cmd_n[12]'
sleep 1.1
expect "no keys: cold fill" s3 'miss, stored (*' "${cmd_n[@]}"
touch "$st/kp_sig_sha256.ko"
sleep 1.1
expect "no keys: SHA-256-signed module touched first" s4 'miss, stored (*' "${cmd_n[@]}"
export KOPOLICY_CACHE_DIR=$tmp/cache

tap_done
