# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
# TAP for the shell tests (sourced: . "$top/tests/lib/tap.sh"), the lines automake's
# tap-driver.sh reads:
#   ok DESCRIPTION STATUS   "ok N - DESCRIPTION" when STATUS is 0, else "not ok N - ..."
#                           and one more failure
#   is DESCRIPTION GOT WANT ok when GOT equals WANT; else a "#   got ..., want ..." line
#   skip DESCRIPTION WHY    "ok N - DESCRIPTION # SKIP WHY"
#   tap_tmpdir              $tmp: a new directory, removed when the script exits
#   tap_done                the plan "1..N" (last, after every test); returns 1 when a test
#                           failed, so as the script's last command it is its exit status
# and the fixture preamble most scripts share (after top=${srcdir:-.}):
#   tap_fixture SERIES      $kp the binary ($KOPOLICY, else ./src/kopolicy), $fx
#                           $top/fixtures/ko/SERIES, $rel the release its kernel.txt names,
#                           then tap_tmpdir
#   tap_own_cache           the run's own facts cache in $tmp/cache, no cache variable of
#                           the caller's, the result cache off
# $n counts the tests and $fail the failures: a script that prints its own "ok N" lines
# counts them there.
n=0
fail=0

ok() { # description, status (0 = pass)
	n=$((n + 1))
	if [ "$2" -eq 0 ]; then echo "ok $n - $1"; else echo "not ok $n - $1"; fail=$((fail + 1)); fi
}

is() { # description, got, want
	if [ "$2" = "$3" ]; then ok "$1" 0; else ok "$1" 1; echo "#   got '$2', want '$3'"; fi
}

skip() { # description, why
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

tap_tmpdir() {
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
}

# hold_as_nobody FILE: the unprivileged user 65534 takes FILE's flock() and keeps it for 60 s
# (its pid in $holder); once it holds it (5 s at most), the status of a try to take it here
# (1: held by nobody)
hold_as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups flock -x "$1" sleep 60 &
	holder=$!
	for _ in $(seq 50); do flock -n -x "$1" true 2>/dev/null || break; sleep 0.1; done
	flock -n -x "$1" true 2>/dev/null
}

tap_done() {
	echo "1..$n"
	[ "$fail" -eq 0 ]
}

tap_fixture() { # series: 6.1, 6.12, 7.2, 5.10 (fixtures/ko/SERIES)
	kp=${KOPOLICY:-./src/kopolicy}
	fx=$top/fixtures/ko/$1
	rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
	tap_tmpdir
}

# tap_kernel_files ROOT: the fixture kernel's config (boot/config-$rel) and Module.symvers
# (usr/src/linux-headers-$rel) under ROOT, uncompressed (after tap_fixture)
tap_kernel_files() {
	mkdir -p "$1/boot" "$1/usr/src/linux-headers-$rel"
	gzip -dc "$fx/config.gz" >"$1/boot/config-$rel"
	gzip -dc "$fx/Module.symvers.gz" >"$1/usr/src/linux-headers-$rel/Module.symvers"
}

tap_own_cache() {
	export KOPOLICY_CACHE_DIR=$tmp/cache
	unset KOPOLICY_CACHE KOPOLICY_CACHE_STATS
	export KOPOLICY_RUN_CACHE=off
}
