# shellcheck shell=bash
# Helpers of the result-cache tests (sourced): each runs a command with --no-cache (the
# reference) and through the caches, and compares the two. Needs $kp, $tmp and ok().

# run NAME CMD...: a --no-cache run (the reference) in $tmp/NAME.ref.{out,err,rc} and a cached
# one in $tmp/NAME.{out,err,rc}, its result cache line in $tmp/NAME.stats, the facts cache's
# in $tmp/NAME.facts
run() {
	local name=$1
	shift
	"$kp" --no-cache "$@" >"$tmp/$name.ref.out" 2>"$tmp/$name.ref.err"
	echo $? >"$tmp/$name.ref.rc"
	KOPOLICY_CACHE_STATS=1 "$kp" "$@" >"$tmp/$name.out" 2>"$tmp/$name.all"
	echo $? >"$tmp/$name.rc"
	grep -v '^kopolicy: \(\(result \|base \)\?cache\|signatures\|module BTF\|depmod indexes\|libkmod\): ' \
		"$tmp/$name.all" >"$tmp/$name.err"
	# the lines of check's splice measure (src/check-splice.c: the splice, the manifest
	# carried over) are test-incremental.sh's
	sed -n '/^kopolicy: result cache: \(splice: \|manifest \)/d; s/^kopolicy: result cache: //p' \
		"$tmp/$name.all" >"$tmp/$name.stats"
	sed -n 's/^kopolicy: cache: //p' "$tmp/$name.all" >"$tmp/$name.facts"
}
same() { # NAME: the cached run printed the --no-cache run's bytes and status
	cmp -s "$tmp/$1.ref.out" "$tmp/$1.out" && cmp -s "$tmp/$1.ref.err" "$tmp/$1.err" &&
		cmp -s "$tmp/$1.ref.rc" "$tmp/$1.rc"
}
stats_is() { # NAME PATTERN (a shell pattern): the result cache line
	local s
	s=$(cat "$tmp/$1.stats")
	# shellcheck disable=SC2053
	[[ $s == $2 ]] || { echo "# $1: result cache: $s (wanted $2)"; return 1; }
}
# expect LABEL NAME PATTERN CMD...: one cached run against --no-cache, its stats line
expect() {
	local label=$1 name=$2 pat=$3
	shift 3
	run "$name" "$@"
	same "$name" && stats_is "$name" "$pat"
	ok "$label: = --no-cache, result cache \"$pat\"" $?
}
