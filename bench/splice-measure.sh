#!/usr/bin/env bash
# bench/splice-measure.sh KOPOLICY_BIN TREE_ROOT [MODULES]
#
# The splice measure over a whole tree (issue 28): the bench's `check --format json -k
# SYMVERS --kernel-config ... --kernel-release ...` run through both caches in a scratch
# cache directory, filled once, then MODULES (default 10) signed plain .ko spread over the
# sorted tree each changed in turn: its appended signature stripped, put back, then touched.
# After every change the cached run is compared with a --no-cache run (stdout, stderr, exit
# status) and its KOPOLICY_CACHE_STATS lines printed (the "splice: ..." line: what a splice
# of the stored simulation would keep, src/check-splice.c).
#
# It changes module files of TREE_ROOT: run it on a private copy of a tree (cp -a), never on
# ~/.cache/kopolicy/trees. Each module's signed bytes and times are put back however it ends.
# Exit 0 when every cached run equals its --no-cache run, 1 otherwise, 2 on a setup error.
set -uo pipefail

usage="usage: splice-measure.sh KOPOLICY_BIN TREE_ROOT [MODULES]"
kp=${1:?$usage}
root=${2:?$usage}
count=${3:-10}
die() { echo "splice-measure: $*" >&2; exit 2; }

[[ $count =~ ^[1-9][0-9]*$ ]] || die "MODULES must be a positive number"
[ -x "$kp" ] || die "$kp is not executable"
rels=$(find "$root/lib/modules" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null || true)
if [ -z "$rels" ] || [ "$(printf '%s\n' "$rels" | wc -l)" != 1 ]; then
	die "expected exactly one release directory in $root/lib/modules"
fi
rel=$rels
moddir=$root/lib/modules/$rel
symvers=$root/usr/src/linux-headers-$rel/Module.symvers
config=$root/boot/config-$rel
[ -f "$symvers" ] || die "no Module.symvers for $rel under $root/usr/src"
[ -f "$config" ] || die "no $config"

tmp=$(mktemp -d) || die "no temporary directory"
export KOPOLICY_CACHE_DIR=$tmp/cache
unset KOPOLICY_CACHE KOPOLICY_CACHE_STATS KOPOLICY_RUN_CACHE
chk=(check --format json -k "$symvers" --kernel-config "$config" --kernel-release "$rel"
	"$moddir")
n=$(find "$moddir" -name '*.ko' -type f | wc -l)
[ "$n" -ge "$count" ] || die "fewer than $count plain .ko files in $moddir"
mapfile -t mods < <(find "$moddir" -name '*.ko' -type f | sort |
	awk -v n="$n" -v c="$count" 'NR % int(n / c) == 7' | sed -n "1,${count}p")
cur= # the module being changed: put back by the trap
trap '[ -z "$cur" ] || cp -p "$tmp/signed.ko" "$cur"; rm -rf "$tmp"' EXIT
same=0 differ=0

# one LABEL: the cached run against --no-cache; a state changed less than a second before a
# run is not stored, so each waits
one() {
	local r
	sleep 1.1
	"$kp" --no-cache "${chk[@]}" >"$tmp/ref.out" 2>"$tmp/ref.err"
	echo $? >"$tmp/ref.rc"
	KOPOLICY_CACHE_STATS=1 "$kp" "${chk[@]}" >"$tmp/inc.out" 2>"$tmp/inc.all"
	echo $? >"$tmp/inc.rc"
	grep -v '^kopolicy: \(\(result \|base \)\?cache\|signatures\|module BTF\): ' \
		"$tmp/inc.all" >"$tmp/inc.err"
	if cmp -s "$tmp/ref.out" "$tmp/inc.out" && cmp -s "$tmp/ref.err" "$tmp/inc.err" &&
		cmp -s "$tmp/ref.rc" "$tmp/inc.rc"; then
		same=$((same + 1))
		r=same
	else
		differ=$((differ + 1))
		r=DIFFERENT
	fi
	echo "$1: $r (exit $(cat "$tmp/ref.rc")); $(sed -n 's/^kopolicy: result cache: //p' \
		"$tmp/inc.all" | paste -sd '|')"
}

echo "tree: $root ($rel, $n plain .ko); load: $(cut -d ' ' -f 1-3 /proc/loadavg)"
one "cold fill"
for m in "${mods[@]}"; do
	b=$(basename "$m")
	size=$(stat -c %s "$m")
	if [ "$(tail -c 28 "$m")" != "~Module signature appended~" ]; then
		echo "$b: not signed, skipped"
		continue
	fi
	cp -p "$m" "$tmp/signed.ko" || die "cannot copy $m"
	cur=$m
	# struct module_signature (12 bytes, sig_len big-endian in its last 4), then the magic
	siglen=$(od -An -tu1 -j $((size - 32)) -N 4 "$m" |
		awk '{ print (($1 * 256 + $2) * 256 + $3) * 256 + $4 }')
	head -c $((size - 40 - siglen)) "$tmp/signed.ko" >"$m"
	one "$b stripped"
	cp -p "$tmp/signed.ko" "$m"
	one "$b restored"
	touch "$m"
	cur=
	one "$b touched"
done
echo "runs: $same same, $differ different; load: $(cut -d ' ' -f 1-3 /proc/loadavg)"
[ "$differ" = 0 ]
