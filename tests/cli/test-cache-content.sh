#!/usr/bin/env bash
# Caches that cannot answer for bytes they did not see (issue 22, items 3 and 4):
# - a module whose bytes change without a stat() change (a store through a shared writable
#   mapping into a page already dirty: tests/cli/mmap-rewrite.py) is answered from its new
#   bytes by the result cache and by the facts cache when its state is not trusted
#   (other-writable; as root also: owned by another user), like --no-cache;
# - a group-writable modprobe.d file libkmod reads for -b ROOT: the same for the result cache;
# - a trusted state (the user's own file, not writable by others) is still answered by
#   stat() alone (what keeps a warm run cheap; lib/util/fs-trust.h);
# - a run that reads the running kernel's file systems is never stored, however the path is
#   spelled: //proc, /./proc, x/../proc, a relative proc/..., a symbolic link, an absent
#   path under /proc, sysfs;
# - a module touched (same bytes, new state) is replayed by its bytes only when a run
#   recorded them: whether it did depends on the facts cache's history, never the answer.
set -uo pipefail

top=$(cd "${srcdir:-.}" && pwd)
kp=$(cd "$(dirname "${KOPOLICY:-./src/kopolicy}")" && pwd)/$(basename "${KOPOLICY:-./src/kopolicy}")
. "$top/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'touch "$tmp"/*/quit 2>/dev/null; rm -rf "$tmp"' EXIT
chmod 0755 "$tmp" # the second user (as root) reaches its file below
export KOPOLICY_CACHE_DIR=$tmp/cache
unset KOPOLICY_CACHE KOPOLICY_CACHE_STATS KOPOLICY_CACHE_MAX_SIZE KOPOLICY_RUN_CACHE
# a JSON check's miss recomputes (its steps count the recompute's facts-cache hits; the
# splice used in its place: test-incremental-use.sh)
export KOPOLICY_SPLICE=measure

# ok DESCRIPTION STATUS (0 = pass); call as "check; ok ... $?" only when DESCRIPTION has no
# command substitution (it would reset $?), else "check; st=$?; ok ... $st"
# (the words of DESCRIPTION are joined with spaces)
ok() {
	local st=${!#} d="${*:1:$#-1}"
	n=$((n + 1))
	if [ "$st" -eq 0 ]; then echo "ok $n - $d"; else echo "not ok $n - $d"; fail=$((fail + 1)); fi
}
skip() {
	n=$((n + 1))
	echo "ok $n - # SKIP $1"
}
fx=$top/fixtures/ko/6.1
K=(-k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz"
	--kernel-release "$(sed -n 's/^release=//p' "$fx/kernel.txt")")
# run NAME ARGS...: stdout, stderr (without the cache's notes) and status in $tmp/NAME.*;
# the result cache's note in $tmp/NAME.rcache, the facts cache's counters in $tmp/NAME.facts
run() {
	local name=$1
	shift
	KOPOLICY_CACHE_STATS=1 "$kp" "$@" >"$tmp/$name.out" 2>"$tmp/$name.all"
	echo $? >"$tmp/$name.rc"
	grep -v '^kopolicy: \(result \|base \)\?cache: ' "$tmp/$name.all" >"$tmp/$name.err"
	sed -n 's/^kopolicy: result cache: //p' "$tmp/$name.all" >"$tmp/$name.rcache"
	sed -n 's/^kopolicy: cache: //p' "$tmp/$name.all" >"$tmp/$name.facts"
}
same() { # a b: identical runs
	cmp -s "$tmp/$1.out" "$tmp/$2.out" && cmp -s "$tmp/$1.err" "$tmp/$2.err" &&
		cmp -s "$tmp/$1.rc" "$tmp/$2.rc"
}

# rewritten CASE AS OWNER MODE ENV...: a copy of kp_gpl_prov.ko (license GPL) in its own
# directory, owned by OWNER with MODE, is checked twice (stored, then replayed or read from
# the facts cache), rewritten to license XYZ (proprietary) through a mapping by user AS
# without a stat() change, then checked again with the cache and without it: the same answer.
rewritten() {
	local c=$1 as=$2 owner=$3 mode=$4 d=$tmp/$1 pre post
	shift 4
	mkdir -p "$d"
	cp "$fx/kp_gpl_prov.ko" "$d/m.ko"
	[ "$owner" = - ] || chown "$owner" "$d/m.ko" "$d"
	chmod "$mode" "$d/m.ko"
	chmod 0777 "$d"
	rm -rf "$tmp/cache"
	local rw=("$top/tests/cli/mmap-rewrite.py" "$d/m.ko" license=GPL license=XYZ "$d")
	if [ "$as" = - ]; then
		python3 "${rw[@]}" &
	else
		setpriv --reuid="$as" --regid="$(id -g "$as")" --clear-groups /usr/bin/python3 "${rw[@]}" &
	fi
	for _ in $(seq 500); do [ -e "$d/ready" ] && break; sleep 0.01; done
	pre=$(stat -c '%s %Y.%y %Z.%z %i' "$d/m.ko")
	# the ENV assignments for these runs only: a subshell
	(
		# shellcheck disable=SC2163 # the arguments are NAME=VALUE words
		[ $# -eq 0 ] || export "$@"
		run "$c-1" check -f json --fail-on never "${K[@]}" "$d/m.ko"
		run "$c-2" check -f json --fail-on never "${K[@]}" "$d/m.ko"
	)
	touch "$d/go"
	for _ in $(seq 500); do [ -e "$d/done" ] && break; sleep 0.01; done
	post=$(stat -c '%s %Y.%y %Z.%z %i' "$d/m.ko")
	(
		# shellcheck disable=SC2163 # the arguments are NAME=VALUE words
		[ $# -eq 0 ] || export "$@"
		run "$c-3" check -f json --fail-on never "${K[@]}" "$d/m.ko"
		run "$c-4" --no-cache check -f json --fail-on never "${K[@]}" "$d/m.ko"
	)
	touch "$d/quit"
	wait
	if [ "$pre" != "$post" ] || ! grep -q 'license=XYZ' "$d/m.ko"; then
		skip "$c: the kernel changed the state or the bytes did not change ('$pre' -> '$post')"
		return 1
	fi
	! same "$c-1" "$c-4" && same "$c-1" "$c-2"
	ok "$c: the rewrite changes the answer (setup)" $?
	same "$c-3" "$c-4"
	st=$?
	ok "$c: bytes changed without a stat() change: the cached run answers like --no-cache" \
		"($(cat "$tmp/$c-3.rcache") / $(cat "$tmp/$c-3.facts"))" $st
	return 0
}

# 1. the result cache (with the facts cache under it): an other-writable file is hashed
if rewritten rc-o+w - - 0666; then
	[ "$(cat "$tmp/rc-o+w-2.rcache")" = "hit, replayed" ]
	ok "result cache: the other-writable file's run replayed while its bytes are the same" $?
	[[ "$(cat "$tmp/rc-o+w-3.rcache")" = "miss, stored "* ]]
	st=$?
	ok "result cache: after the rewrite a miss ($(cat "$tmp/rc-o+w-3.rcache"))" $st
fi
# 2. the facts cache alone: the other-writable file is looked up by its bytes, never stored
if rewritten fc-o+w - - 0666 KOPOLICY_RUN_CACHE=off; then
	[ "$(cat "$tmp/fc-o+w-2.facts")" = "0 hits (0 by stat), 1 misses, 0 stored, 0 refused" ]
	st=$?
	ok "facts cache: an other-writable module is not stored ($(cat "$tmp/fc-o+w-2.facts"))" $st
fi
# 3. a group-writable file: the same
if rewritten rc-g+w - - 0664; then :; fi
# 4. as root: a file of another user, who rewrites it
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	rewritten rc-other nobody nobody 0644 || true
	rewritten fc-other nobody nobody 0644 KOPOLICY_RUN_CACHE=off || true
else
	skip "another user's file: needs root, setpriv and the user nobody"
	skip "another user's file (facts cache): needs root, setpriv and the user nobody"
fi
# 5. a file libkmod reads for -b ROOT (modprobe.d), group-writable, rewritten the same way:
# the result cache hashed it, so the replay is refused
rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
r=$tmp/root
mkdir -p "$r/lib/modules/$rel/kernel/a" "$r/usr/src/linux-headers-$rel" "$r/boot" \
	"$r/etc/modprobe.d" "$r/mm"
cp "$fx/kp_plain.ko" "$r/lib/modules/$rel/kernel/a/"
gzip -dc "$fx/Module.symvers.gz" >"$r/usr/src/linux-headers-$rel/Module.symvers"
gzip -dc "$fx/config.gz" >"$r/boot/config-$rel"
echo "options kp_plain x=1" >"$r/etc/modprobe.d/a.conf"
chmod 0664 "$r/etc/modprobe.d/a.conf"
rm -rf "$tmp/cache"
python3 "$top/tests/cli/mmap-rewrite.py" "$r/etc/modprobe.d/a.conf" x=1 x=2 "$r/mm" &
for _ in $(seq 500); do [ -e "$r/mm/ready" ] && break; sleep 0.01; done
pre=$(stat -c '%s %y %z %i' "$r/etc/modprobe.d/a.conf")
run b1 check --fail-on never -b "$r"
run b2 check --fail-on never -b "$r"
touch "$r/mm/go"
for _ in $(seq 500); do [ -e "$r/mm/done" ] && break; sleep 0.01; done
post=$(stat -c '%s %y %z %i' "$r/etc/modprobe.d/a.conf")
run b3 check --fail-on never -b "$r"
touch "$r/mm/quit"
wait
if [ "$pre" = "$post" ] && grep -q x=2 "$r/etc/modprobe.d/a.conf"; then
	[[ "$(cat "$tmp/b1.rcache")" = "miss, stored "* ]] &&
		[ "$(cat "$tmp/b2.rcache")" = "hit, replayed" ] &&
		[[ "$(cat "$tmp/b3.rcache")" = "miss, stored "* ]]
	st=$?
	ok "result cache: a group-writable modprobe.d file rewritten without a stat() change:" \
		"a miss ($(cat "$tmp/b2.rcache"), then $(cat "$tmp/b3.rcache"))" $st
else
	skip "modprobe.d: the kernel changed the state or the bytes did not change"
fi

# 6. the user's own file, not writable by others: its state is trusted (stat() only)
d=$tmp/own
mkdir -p "$d"
cp "$fx/kp_gpl_prov.ko" "$d/m.ko"
chmod 0644 "$d/m.ko"
touch -d @1700000000 "$d/m.ko"
sleep 1.1
rm -rf "$tmp/cache"
KOPOLICY_RUN_CACHE=off run own-1 check -f json --fail-on never "${K[@]}" "$d/m.ko"
KOPOLICY_RUN_CACHE=off run own-2 check -f json --fail-on never "${K[@]}" "$d/m.ko"
[ "$(cat "$tmp/own-2.facts")" = "1 hits (1 by stat), 0 misses, 0 stored, 0 refused" ]
st=$?
ok "facts cache: the user's own 0644 file is found by its state ($(cat "$tmp/own-2.facts"))" $st
run own-3 check -f json --fail-on never "${K[@]}" "$d/m.ko"
run own-4 check -f json --fail-on never "${K[@]}" "$d/m.ko"
[[ "$(cat "$tmp/own-3.rcache")" = "miss, stored "* ]] &&
	[ "$(cat "$tmp/own-4.rcache")" = "hit, replayed" ] && same own-3 own-4
st=$?
ok "result cache: the user's own file's run replayed ($(cat "$tmp/own-4.rcache"))" $st
# a module changed less than a second before it is read: its state is not stored
cp "$fx/kp_plain.ko" "$d/new.ko"
KOPOLICY_RUN_CACHE=off run new-1 check -f json --fail-on never "${K[@]}" "$d/new.ko"
[ "$(cat "$tmp/new-1.facts")" = "0 hits (0 by stat), 1 misses, 0 stored, 0 refused" ]
st=$?
ok "facts cache: a module changed less than a second ago is not stored" \
	"($(cat "$tmp/new-1.facts"))" $st

# 7. the running kernel's file systems, however spelled: never stored
mod=$fx/kp_plain.ko
mkdir -p "$tmp/x"
ln -s /proc/kallsyms "$tmp/ks"
ln -s /proc "$tmp/p"
kernel="not stored: it reads the running kernel's state (procfs, sysfs, /dev, ...)"
i=0
for spec in "/://proc/kallsyms" "/:/./proc/kallsyms" "$tmp:x/../../../proc/kallsyms" \
	"/:proc/kallsyms" "/tmp:../proc/kallsyms" "$tmp:$tmp/ks" "$tmp:p/kallsyms" \
	"/:///proc//kallsyms"; do
	i=$((i + 1))
	dir=${spec%%:*}
	k=${spec#*:}
	(cd "$dir" && run k$i check --fail-on never -k "$k" "$mod")
	(cd "$dir" && run k${i}b check --fail-on never -k "$k" "$mod")
	[ "$(cat "$tmp/k$i.rcache")" = "miss, $kernel" ] &&
		[ "$(cat "$tmp/k${i}b.rcache")" = "miss, $kernel" ]
	st=$?
	ok "result cache: -k $k (in $dir) is the running kernel's: not stored" \
		"($(cat "$tmp/k${i}b.rcache"))" $st
done
# an absent path under /proc (what is absent there is the kernel's state too), and sysfs
run a1 check --fail-on never -k //proc/kopolicy-absent/kallsyms "$mod"
[ "$(cat "$tmp/a1.rcache")" = "miss, $kernel" ]
st=$?
ok "result cache: an absent path under //proc: not stored ($(cat "$tmp/a1.rcache"))" $st
if [ -e /sys/kernel/uevent_seqnum ]; then
	run s1 check --fail-on never "${K[@]:0:2}" --kernel-config //sys/kernel/uevent_seqnum "$mod"
	[ "$(cat "$tmp/s1.rcache")" = "miss, $kernel" ]
	st=$?
	ok "result cache: --kernel-config //sys/...: not stored ($(cat "$tmp/s1.rcache"))" $st
else
	skip "no /sys/kernel/uevent_seqnum"
fi
# a file merely named like /proc is not the kernel's: stored, then replayed
mkdir -p "$tmp/procfake"
zcat "$fx/Module.symvers.gz" >"$tmp/procfake/Module.symvers"
sleep 1.1
(cd "$tmp" && run f1 check --fail-on never -k procfake/Module.symvers "$mod")
(cd "$tmp" && run f2 check --fail-on never -k procfake/Module.symvers "$mod")
[ "$(cat "$tmp/f2.rcache")" = "hit, replayed" ]
st=$?
ok "result cache: a relative procfake/... on a disk is replayed ($(cat "$tmp/f2.rcache"))" $st

# 8. A module touched after its run was stored: a result cache hit or a miss, by history.
# The result cache takes a module whose state changed by its bytes only when the run that
# stored the entry recorded their SHA-256 (file/inputs.h, kp_in_note_bytes()), and it records
# them only when the facts cache had them: a run that fills an empty cache does not hash an
# uncompressed module (its reader loads a quarter of the bytes), one that misses in a cache
# with packs does (facts-cache.c, KP_FC_PLAIN_HASH_MAX). So the same steps give a miss on a
# fresh cache and a hit after other runs filled it (session 16's "touched file gave a hit in a
# full test run, a miss alone"). Both are the answer for the bytes on disk: a replay hashes
# the file again, and other bytes in the same size and mtime are a miss.
touched() { # DIR: kp_gpl_prov.ko and kp_prop_prov.ko copied into DIR
	mkdir -p "$1"
	cp "$fx/kp_gpl_prov.ko" "$fx/kp_prop_prov.ko" "$1/"
	sleep 1.1
}
rm -rf "$tmp/cache"
touched "$tmp/touch-a"
run ta-1 check -f json --fail-on never "${K[@]}" "$tmp/touch-a"
touch "$tmp/touch-a/kp_gpl_prov.ko"
sleep 1.1
run ta-2 check -f json --fail-on never "${K[@]}" "$tmp/touch-a"
run ta-ref check -f json --fail-on never --no-cache "${K[@]}" "$tmp/touch-a"
[[ "$(cat "$tmp/ta-1.rcache")" = "miss, stored "* ]] &&
	[[ "$(cat "$tmp/ta-2.rcache")" = "miss, stored "* ]] &&
	[ "$(cat "$tmp/ta-2.facts")" = "1 hits (1 by stat), 1 misses, 1 stored, 0 refused" ] &&
	same ta-2 ta-ref
st=$?
ok "result cache: filled from empty, a touched module is a miss ($(head -n 1 "$tmp/ta-2.rcache");" \
	"facts: $(cat "$tmp/ta-2.facts"))" $st
# the same copies in another directory, read through a cache that has packs now: hashed
touched "$tmp/touch-b"
run tb-1 check -f json --fail-on never "${K[@]}" "$tmp/touch-b"
touch "$tmp/touch-b/kp_gpl_prov.ko"
sleep 1.1
run tb-2 check -f json --fail-on never "${K[@]}" "$tmp/touch-b"
by_bytes="hit, replayed (inputs rewritten with the same bytes;"
run tb-ref check -f json --fail-on never --no-cache "${K[@]}" "$tmp/touch-b"
[ "$(cat "$tmp/tb-1.facts")" = "0 hits (0 by stat), 2 misses, 2 stored, 0 refused" ] &&
	[[ "$(cat "$tmp/tb-2.rcache")" = "$by_bytes"*"1 module hashed again"* ]] &&
	same tb-2 tb-ref
st=$?
ok "result cache: after a cache with packs read it, a touched module is replayed by its bytes" \
	"($(cat "$tmp/tb-2.rcache"))" $st
# other bytes in the same size, the mtime put back: a miss, the new answer
f=$tmp/touch-b/kp_gpl_prov.ko
mt=$(stat -c %Y "$f")
sz=$(stat -c %s "$f")
python3 "$top/tests/cli/elf-poke.py" "$f" replace license=GPL license=MIT >/dev/null &&
	touch -d "@$mt" "$f"
sleep 1.1
run tb-3 check -f json --fail-on never "${K[@]}" "$tmp/touch-b"
run tb-3ref check -f json --fail-on never --no-cache "${K[@]}" "$tmp/touch-b"
[ "$(stat -c %s "$f")" = "$sz" ] && [[ "$(cat "$tmp/tb-3.rcache")" = "miss, stored "* ]] &&
	same tb-3 tb-3ref && ! cmp -s "$tmp/tb-2.out" "$tmp/tb-3.out"
st=$?
ok "result cache: then other bytes, same size and mtime: a miss, the new answer" \
	"($(head -n 1 "$tmp/tb-3.rcache"))" $st

tap_done
