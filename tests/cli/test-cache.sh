#!/usr/bin/env bash
# The facts cache (lib/cache/facts-cache.c): invisible in results. On every fixture tree,
# info and check print the same bytes (stdout, stderr, exit status) without the cache,
# cold and warm; corrupt, truncated, foreign and other-version entries and packs are misses;
# two runs writing at once; a module rewritten in place; a copy found by content; many packs
# merged; --no-cache, KOPOLICY_CACHE=off; kopolicy cache show, prune, clear. Sections 1-6
# test the facts cache alone (KOPOLICY_RUN_CACHE=off); section 7 the result cache
# (lib/cache/run-cache.c): replayed only while every input is unchanged, also when its
# manifest spilled to a file.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
. "$top/tests/lib/tap.sh"
tap_tmpdir
export KOPOLICY_CACHE_DIR=$tmp/cache
unset KOPOLICY_CACHE KOPOLICY_CACHE_STATS KOPOLICY_CACHE_MAX_SIZE
export KOPOLICY_RUN_CACHE=off
cdir=$tmp/cache/facts-v7

kern() { # version: the fixture kernel's options
	local fx=$top/fixtures/ko/$1
	echo "-k $fx/Module.symvers.gz --kernel-config $fx/config.gz --kernel-release" \
		"$(sed -n 's/^release=//p' "$fx/kernel.txt")"
}
# run NAME ARGS...: stdout, stderr and status of one kopolicy run in $tmp/NAME.{out,err,rc}
run() {
	local name=$1
	shift
	"$kp" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
}
same() { # a b: identical runs
	cmp -s "$tmp/$1.out" "$tmp/$2.out" && cmp -s "$tmp/$1.err" "$tmp/$2.err" &&
		cmp -s "$tmp/$1.rc" "$tmp/$2.rc"
}
# stats ARGS...: the run's cache counters line ("H hits (S by stat), M misses, W stored, R refused")
stats() {
	KOPOLICY_CACHE_STATS=1 "$kp" "$@" 2>&1 >/dev/null | sed -n 's/^kopolicy: cache: //p'
}
entries() { "$kp" cache show | sed -n 's/^entries: //p'; }
packs() { find "$cdir/packs" -name '*.pack' -type f 2>/dev/null | wc -l; }

vers=()
for d in "$top"/fixtures/ko/*/; do
	[ -f "$d/kernel.txt" ] && vers+=("$(basename "$d")")
done

# 1. byte-identical: no cache, cold, warm; info (every tag) and check (loader's tags only)
for v in "${vers[@]}"; do
	d=$top/fixtures/ko/$v
	# shellcheck disable=SC2046
	for cmd in "info --json" "check -f json --fail-on never $(kern "$v")"; do
		# shellcheck disable=SC2086
		run ref $cmd --no-cache "$d"
		# shellcheck disable=SC2086
		run cold $cmd "$d"
		# shellcheck disable=SC2086
		run warm $cmd "$d"
		same ref cold && same ref warm
		ok "$v: ${cmd%% *} identical without the cache, cold and warm" $?
	done
done
ok "entries were written" $(($(entries) > 0 ? 0 : 1))

v=6.12
d=$top/fixtures/ko/$v
nko=$(find "$d" -name '*.ko*' -type f | wc -l)
k612=$(kern $v)
# shellcheck disable=SC2086
chk() { run "$1" check -f json --fail-on never $k612 "$d"; }
KOPOLICY_CACHE_DIR=$tmp/nocache chk ref
# shellcheck disable=SC2086
s=$(stats check -f json --fail-on never $k612 "$d")
ok "warm: every module from the stat index ($s)" \
	$([ "$s" = "$nko hits ($nko by stat), 0 misses, 0 stored, 0 refused" ] && echo 0 || echo 1)

# 2. --no-cache and KOPOLICY_CACHE=off neither read nor write the cache
rm -rf "$tmp/cache2"
KOPOLICY_CACHE_DIR=$tmp/cache2 "$kp" info --json --no-cache "$d" >/dev/null
KOPOLICY_CACHE_DIR=$tmp/cache2 KOPOLICY_CACHE=off "$kp" info --json "$d" >/dev/null
ok "--no-cache and KOPOLICY_CACHE=off write nothing" $([ ! -e "$tmp/cache2" ] && echo 0 || echo 1)

# 3. damaged entries and packs are misses, with the right answer, and are written again
# (tests/cli/damage-pack.py: how; a refused entry is counted once per lookup that found it:
# by state, and by content key for a compressed module)
ncomp=$(find "$d" -name '*.ko.*' -type f | wc -l)
if command -v python3 >/dev/null; then
	for how in flip_payload other_format other_build foreign flip_record truncate_half empty; do
		case $how in
		flip_record | truncate_half | empty) refused=0 ;; # the index or pack is not used
		*) refused=$((nko + ncomp)) ;;
		esac
		rm -rf "$tmp/cache"
		chk warm
		python3 "$top/tests/cli/damage-pack.py" "$how" "$cdir"/packs/*.pack
		# shellcheck disable=SC2086
		s=$(stats check -f json --fail-on never $k612 "$d")
		chk after
		ok "$how: refused ($s), then the same answer" \
			$([ "$s" = \
				"0 hits (0 by stat), $nko misses, $nko stored, $refused refused" ] &&
				same ref after && echo 0 || echo 1)
	done
else
	ok "# SKIP damaged packs: no python3" 0
fi

# 4. a module rewritten in place (same path) gets its new facts
mods=()
while IFS= read -r f; do mods+=("$f"); done < <(find "$d" -name '*.ko' -type f | sort | sed -n 1,2p)
cp "${mods[0]}" "$tmp/m.ko"
run m1 info --json "$tmp/m.ko"
cat "${mods[1]}" >"$tmp/m.ko"
run m2 info --json "$tmp/m.ko"
run m2ref info --json --no-cache "$tmp/m.ko"
same m2 m2ref && ! same m1 m2
ok "a file rewritten in place is read again" $?

# 5. two writers at once on an empty cache
rm -rf "$tmp/cache"
chk p1 &
chk p2 &
wait
chk p3
same ref p1 && same ref p2 && same ref p3
ok "two runs writing at once, then a warm run: identical" $?
ok "no temporary file left" $(find "$cdir" -name '.tmp-*' | grep . >/dev/null && echo 1 || echo 0)

# a compressed module copied elsewhere is found by its content (no decompression)
suffix() { local b=${1##*/}; echo "${b#*.}"; } # ko, ko.xz, ...
comp=$(find "$d" -name '*.ko.*' -type f | sort | sed -n 1p)
copy=$tmp/copy.$(suffix "$comp")
"$kp" info --json "$d" >/dev/null # entries with info's read options (every modinfo tag)
cp "$comp" "$copy"
sleep 1.1 # a state changed less than a second before it is read is not stored
s=$(stats info --json "$copy")
ok "a copy of a compressed module is a hit by content ($s)" \
	$([ "$s" = "1 hits (0 by stat), 0 misses, 0 stored, 0 refused" ] && echo 0 || echo 1)
s=$(stats info --json "$copy")
ok "then a hit by state ($s)" \
	$([ "$s" = "1 hits (1 by stat), 0 misses, 0 stored, 0 refused" ] && echo 0 || echo 1)

# many small packs (one per run) are merged into few, with the same answers
rm -rf "$tmp/cache"
i=0
for f in $(find "$d" -name '*.ko*' -type f | sort | sed -n 1,20p); do
	cp "$f" "$tmp/many-$i.$(suffix "$f")"
	i=$((i + 1))
done
sleep 1.1 # a state changed less than a second before it is read is not stored
for f in "$tmp"/many-*; do "$kp" info --json "$f" >/dev/null; done
p=$(packs)
run mref info --json --no-cache "$tmp"/many-*
s=$(stats info --json "$tmp"/many-*)
run mwarm info --json "$tmp"/many-*
ok "20 runs leave at most 16 packs ($p), every entry kept ($s)" \
	$([ "$p" -le 16 ] && [ "$s" = "20 hits (20 by stat), 0 misses, 0 stored, 0 refused" ] &&
		same mref mwarm && echo 0 || echo 1)

# the merge's lock: a file no other user can open. flock() takes any descriptor open for
# reading: a lock file others can read (0644, as made before) could be held by any user for
# ever, and no run merged again (packs without end, every lookup opening each of them).
# An older one of that mode is replaced.
if [ "$(id -u)" = 0 ] && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
	rm -rf "$tmp/cache"
	chmod 0755 "$tmp"
	for f in "$tmp"/many-*; do "$kp" info --json "$f" >/dev/null; break; done
	chmod 0644 "$cdir/lock"
	hold_as_nobody "$cdir/lock"
	is "as root: nobody holds a 0644 merge lock of the cache" $? 1
	for f in "$tmp"/many-*; do "$kp" info --json "$f" >/dev/null; done
	p=$(packs)
	ok "... 20 runs all the same leave at most 16 packs ($p)" "$([ "$p" -le 16 ]; echo $?)"
	is "... the lock replaced by a 0600 file" "$(stat -c '%a %u' "$cdir/lock")" "600 0"
	setpriv --reuid=65534 --regid=65534 --clear-groups cat "$cdir/lock" 2>/dev/null
	is "... which nobody cannot open" $? 1
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	chmod 0700 "$tmp"
else
	skip "a merge lock another user holds" "needs root and setpriv"
fi

# 6. kopolicy cache show / prune / clear (of the facts: the kernel bases check stored are
# tests/cli/test-check-base-cache.sh's, removed here so that prune's counts are the packs')
rm -rf "$tmp/cache/base-v1"
export KOPOLICY_BASE_CACHE=off
rm -rf "$tmp/cache"
chk p0
"$kp" info --json "${mods[0]}" "$tmp/m.ko" >/dev/null # a 2nd pack (info's read options)
"$kp" cache show >"$tmp/show.txt"
grep -q "^directory: $cdir$" "$tmp/show.txt" && grep -q "^entries: $((nko + 2))$" "$tmp/show.txt" &&
	grep -q "^packs: 2$" "$tmp/show.txt" && grep -q \
		"^disk use: [1-9][0-9]* bytes" "$tmp/show.txt"
ok "cache show: directory, entries, packs, disk use" $?
"$kp" cache prune --max-size 1G >"$tmp/prune.txt"
grep -q "^removed: 0 files$" "$tmp/prune.txt" && [ "$(packs)" -eq 2 ]
ok "cache prune under the limit removes nothing" $?
old=$(ls -S "$cdir"/packs/*.pack | sed -n 1p) # the check's
touch -d '2 days ago' "$old"
used=$(sed -n 's/^disk use: \([0-9]*\) bytes.*/\1/p' "$tmp/show.txt")
"$kp" cache prune --max-size $((used - 1)) >"$tmp/prune.txt"
grep -q "^removed: 1 files$" "$tmp/prune.txt" && [ "$(packs)" -eq 1 ] && [ ! -e "$old" ] &&
	grep -q "^entries: 2$" "$tmp/prune.txt"
ok "cache prune removes the least recently used pack" $?
chk p4
same ref p4
ok "after pruning: the same answer" $?
"$kp" cache clear >"$tmp/clear.txt"
grep -q "^entries: 0$" "$tmp/clear.txt" && [ ! -e "$cdir" ]
ok "cache clear removes every pack and the directory" $?
mkdir -p "$tmp/cache/facts-v1/ab/cd"
touch "$tmp/cache/facts-v1/ab/cd/e1" "$tmp/cache/facts-v1/ab/e2" "$tmp/cache/facts-v1/e3"
ln -s /etc/passwd "$tmp/cache/facts-v1/link"
"$kp" cache show >/dev/null && [ -d "$tmp/cache/facts-v1" ]
ok "cache show leaves an older release's facts-v1 alone" $?
"$kp" cache clear >"$tmp/clear.txt"
grep -qx "removed obsolete: facts-v1 (4 files)" "$tmp/clear.txt" &&
	grep -qx "removed: 0 files" "$tmp/clear.txt" && [ ! -e "$tmp/cache/facts-v1" ] &&
	[ -f /etc/passwd ]
ok "cache clear removes an older release's facts-v1 (4 files, a symlink not followed)" $?
"$kp" cache clear >"$tmp/clear.txt"
! grep -q "obsolete" "$tmp/clear.txt"
ok "cache clear with nothing obsolete says nothing of it" $?
"$kp" cache frobnicate 2>/dev/null
ok "cache with an unknown action exits 2" $(($? == 2 ? 0 : 1))
XDG_CACHE_HOME=$tmp/xdg KOPOLICY_CACHE_DIR= "$kp" cache show |
	grep "^directory: $tmp/xdg/kopolicy/facts-v7$" >/dev/null
ok "the user cache is under \$XDG_CACHE_HOME/kopolicy" $?

# 7. the result cache: a run replays only while every input is unchanged
unset KOPOLICY_RUN_CACHE KOPOLICY_BASE_CACHE
rm -rf "$tmp/cache"
rel=$(sed -n 's/^release=//p' "$d/kernel.txt")
root=$tmp/root
mdir=$root/lib/modules/$rel/kernel/a
mkdir -p "$mdir" "$root/usr/src/linux-headers-$rel" "$root/boot"
for f in "${mods[@]}"; do cp "$f" "$mdir/"; done
find "$d" -name 'kp_*.ko' -type f | sort | sed -n 1,12p | while read -r f; do cp "$f" "$mdir/"; done
gzip -dc "$d/Module.symvers.gz" >"$root/usr/src/linux-headers-$rel/Module.symvers"
gzip -dc "$d/config.gz" >"$root/boot/config-$rel"
sleep 1.1 # an input changed less than a second before a run is not trusted (not stored)
# rc NAME ARGS...: the result cache's line of a run (stdout, stderr, status in $tmp/NAME.*)
rc() {
	local name=$1
	shift
	KOPOLICY_CACHE_STATS=1 "$kp" "$@" >"$tmp/$name.out" 2>"$tmp/$name.all"
	echo $? >"$tmp/$name.rc"
	grep -v '^kopolicy: \(result \|base \)\{0,1\}cache: ' "$tmp/$name.all" >"$tmp/$name.err"
	sed -n 's/^kopolicy: result cache: //p' "$tmp/$name.all"
}
# expect NAME RESULT-LINE-PATTERN DESCRIPTION ARGS...: the run's line matches, its output is the
# --no-cache run's
expect() {
	local name=$1 want=$2 what=$3 got
	shift 3
	got=$(rc "$name" "$@")
	run "$name-ref" --no-cache "$@"
	# shellcheck disable=SC2254
	case $got in
	$want) same "$name" "$name-ref" ;;
	*) false ;;
	esac
	ok "result cache: $what ($got)" $?
}
B=(check -b "$root" --fail-on never)
expect r1 "miss, stored (*inputs)" "first run stored" "${B[@]}"
expect r2 "hit, replayed" "same run replayed, same bytes" "${B[@]}"
grep -q . "$tmp/r2.out" && ! same r1 r1-ref-none 2>/dev/null
ok "result cache: the replayed output is not empty" $?
# a module rewritten with the same bytes, size and mtime: only its ctime differs
f=$mdir/$(basename "${mods[0]}")
mt=$(stat -c %Y "$f")
cat "$f" >"$tmp/same.ko" && cat "$tmp/same.ko" >"$f" && touch -d "@$mt" "$f"
expect r3 "miss, not stored: an input changed less than a second before the run" \
	"module rewritten, same size and mtime, new ctime: a miss" "${B[@]}"
sleep 1.1
expect r4 "miss, stored*" "then stored again" "${B[@]}"
expect r5 "hit, replayed" "then replayed" "${B[@]}"
# a module replaced by other bytes: the output changes
cp "${mods[1]}" "$f"
sleep 1.1
expect r6 "miss, stored*" "module replaced: a miss, the new answer" "${B[@]}"
! same r5 r6
ok "result cache: the replaced module's answer differs from the replayed one" $?
# a module added to a walked directory
cp "$(find "$d" -name 'kp_*.ko' -type f | sort | tail -n 1)" "$mdir/zz_added.ko"
sleep 1.1
expect r7 "miss, stored*" "module added to a walked directory: a miss" "${B[@]}"
! same r6 r7
ok "result cache: the added module is in the new answer" $?
# a depmod.d file created where the run found none
mkdir -p "$root/etc/depmod.d"
echo "search updates built-in" >"$root/etc/depmod.d/kp.conf"
sleep 1.1
expect r8 "miss, stored*" "depmod.d file created: a miss" "${B[@]}"
# Module.symvers changed: one export removed
sym=$root/usr/src/linux-headers-$rel/Module.symvers
sed -i '1d' "$sym"
sleep 1.1
expect r9 "miss, stored*" "Module.symvers changed: a miss" "${B[@]}"
expect r10 "hit, replayed" "then replayed" "${B[@]}"
# another option, another environment: other keys
expect r11 "miss, stored*" "an option changed: a miss" "${B[@]}" --format json
expect r12 "hit, replayed" "that option's run replayed" "${B[@]}" --format json
NO_COLOR=1 expect r13 "miss, stored*" "an environment variable changed: a miss" "${B[@]}"
expect r14 "hit, replayed" "the first environment's entry still replayed" "${B[@]}"
# damaged, truncated and foreign entries are misses with the right answer
ent=$(grep -l "" "$tmp"/cache/runs-v1/*.run | sed -n 1p)
for how in flip truncate foreign; do
	for e in "$tmp"/cache/runs-v1/*.run; do
		case $how in
		flip) printf '\377' | dd of="$e" bs=1 seek=200 conv=notrunc status=none ;;
		truncate) truncate -s $(($(stat -c %s "$e") - 7)) "$e" ;;
		foreign) printf 'KPRUNS0' | dd of="$e" bs=1 seek=0 conv=notrunc status=none ;;
		esac
	done
	expect "d-$how" "miss, stored*" "$how entry: a miss" "${B[@]}"
done
[ -n "$ent" ]
ok "result cache: entries were there to damage" $?
# not replayed: --no-cache, KOPOLICY_RUN_CACHE=off, output to a file
s=$(rc n1 --no-cache "${B[@]}")
ok "result cache: --no-cache bypasses it ('$s')" $([ -z "$s" ] && echo 0 || echo 1)
s=$(KOPOLICY_RUN_CACHE=off rc n2 "${B[@]}")
ok "result cache: KOPOLICY_RUN_CACHE=off bypasses it ('$s')" $([ -z "$s" ] && echo 0 || echo 1)
s=$(rc n3 "${B[@]}" -o "$tmp/o.txt")
ok "result cache: output to a file is not stored ('$s')" \
	$([ "$s" = "miss, not stored: output to a file" ] && echo 0 || echo 1)
# two runs storing at once
rm -rf "$tmp/cache/runs-v1"
rc c1 "${B[@]}" >/dev/null &
rc c2 "${B[@]}" >/dev/null &
wait
expect c3 "hit, replayed" "two runs stored at once, then replayed" "${B[@]}"
ok "result cache: no temporary file left" \
	$(find "$tmp/cache/runs-v1" -name '.tmp-*' | grep . >/dev/null && echo 1 || echo 0)
# stdout and stderr into one file: the same bytes in the same order, recorded and replayed
mix=$tmp/mix
mkdir -p "$mix"
cp "${mods[0]}" "${mods[1]}" "$mix/"
head -c 4096 /dev/urandom >"$mix/zz_garbage.ko"
sleep 1.1
# mixrun NAME [OPTION]: stdout and stderr both in $tmp/NAME.both, the status in $tmp/NAME.rc
mixrun() {
	local name=$1
	shift
	# shellcheck disable=SC2086
	"$kp" "$@" check -f json --fail-on never $k612 "$mix" >"$tmp/$name.both" 2>&1
	echo $? >"$tmp/$name.rc"
}
mixrun m0 --no-cache
mixrun m1
mixrun m2
KOPOLICY_CACHE_STATS=1 mixrun m3
s=$(sed -n 's/^kopolicy: result cache: //p' "$tmp/m3.both")
grep -q '^kopolicy: ' "$tmp/m0.both" && [ "$s" = "hit, replayed" ] &&
	cmp -s "$tmp/m0.both" "$tmp/m1.both" && cmp -s "$tmp/m0.both" "$tmp/m2.both" &&
	cmp -s "$tmp/m0.rc" "$tmp/m1.rc" && cmp -s "$tmp/m0.rc" "$tmp/m2.rc"
ok "result cache: stdout and stderr in one file: same bytes and order, recorded and replayed ('$s')" $?
# kopolicy cache show / prune / clear
"$kp" cache show >"$tmp/show.txt"
grep -qx "results: 2" "$tmp/show.txt"
ok "cache show counts the results (2: the root's check, the mixed directory's)" $?
"$kp" cache prune --max-size 4K >"$tmp/prune.txt"
grep -qx "results: 0" "$tmp/prune.txt" && grep -qx \
	"results disk use: 0 bytes (0 bytes)" "$tmp/prune.txt"
ok "cache prune --max-size 4K removes the results" $?
rc p1 "${B[@]}" >/dev/null
"$kp" cache clear >"$tmp/clear.txt"
grep -qx "results: 0" "$tmp/clear.txt" && [ ! -e "$tmp/cache/runs-v1" ]
ok "cache clear removes the results and their directory" $?

# a manifest larger than the recorder's buffer (64 KiB, lib/file/inputs.h) spills to a file:
# the root with 600 depmod.d files, each stat()ed and read in the same state (one input)
rm -rf "$root/etc/depmod.d"
mkdir -p "$root/etc/depmod.d"
for i in $(seq -w 0 599); do
	echo "# $i" >"$root/etc/depmod.d/$i-a-long-name-so-that-the-manifest-spills-sooner.conf"
done
sleep 1.1
# 73 inputs without them (14 modules with zz_added.ko, their directories, every path looked
# up in the root — build/vmlinux too, for the kernel's BTF: the config has
# DEBUG_INFO_BTF_MODULES —, etc/depmod.d, the root's sys/firmware/efi and DKMS key) and 9
# lstat()s of the directories on the way to the depmod.d directories, resolved inside the
# root (a link put there later is seen); each file once though it is stat()ed, then opened
expect s1 "miss, stored (682 inputs)" "600 depmod.d files: spilled, each one input once" "${B[@]}"
expect s2 "hit, replayed" "the spilled manifest replayed" "${B[@]}"
# the first file read is in the first 64 KiB of the manifest (spilled): its change is seen
early=$root/etc/depmod.d/000-a-long-name-so-that-the-manifest-spills-sooner.conf
ent=$(echo "$tmp"/cache/runs-v1/*.run)
mlen=$(od -An -t u8 -j 32 -N 8 "$ent" | tr -d ' ')
at=$(grep -boa -- "$early" "$ent" | sed -n 1p | cut -d: -f1)
[ -n "$at" ] && [ $((at - ($(stat -c %s "$ent") - mlen))) -lt 60000 ] && [ "$mlen" -gt 65536 ]
ok "result cache: $early is in the spilled part of a $mlen-byte manifest" $?
echo "# changed" >>"$early"
sleep 1.1
expect s3 "miss, stored (682 inputs)" "a spilled input changed: a miss" "${B[@]}"
expect s4 "hit, replayed" "then replayed" "${B[@]}"

tap_done
