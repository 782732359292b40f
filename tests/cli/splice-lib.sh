# shellcheck shell=bash
# Helpers of the splice tests (sourced by test-incremental.sh and test-incremental-bridge.sh):
# runs kept in $tmp, compared, and the splice line expected. Needs $kp and $tmp.

# run NAME ARGS...: stdout, stderr and status of one run in $tmp/NAME.{out,err,rc}
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
# cached NAME ARGS...: a run through both caches; $tmp/NAME.stats gets its cache lines
cached() {
	local name=$1
	shift
	KOPOLICY_CACHE_STATS=1 "$kp" "$@" >"$tmp/$name.out" 2>"$tmp/$name.all"
	echo $? >"$tmp/$name.rc"
	grep -v '^kopolicy: \(\(result \|base \)\?cache\|signatures\): ' "$tmp/$name.all" >"$tmp/$name.err"
	grep '^kopolicy: \(\(result \|base \)\?cache\|signatures\): ' "$tmp/$name.all" >"$tmp/$name.stats"
}
