#!/usr/bin/env bash
# The hook's deadline (src/hook-deadline.c): --timeout counts the time the hook ran or was
# blocked, not the time it waited for a CPU. Busy loops that any user can start (spinners pinned
# to the hook's CPU, at its nice) starve a hook that needs CPU: it answers late, with its
# policy's answer, not with the on-error mode's "no answer within N s (timeout)" pass. A stall
# (blocked in open() on a FIFO: restarted after each re-armed SIGALRM) and a loop still end in
# about --timeout. The hook's CPU need, the loop and the stall come from a preloaded libkmod
# wrapper (as in test-hardening.sh). Times are only checked against generous bounds.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
fx=$top/fixtures/ko/6.12
rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/hook-root.sh"

cc=${CC:-cc}
for t in depmod taskset "$cc"; do
	if ! command -v "$t" > /dev/null; then
		echo "1..0 # SKIP $t is not installed"
		exit 0
	fi
done
if ! [ -r /proc/thread-self/schedstat ]; then
	echo "1..0 # SKIP no /proc/thread-self/schedstat (CONFIG_SCHED_INFO)"
	exit 0
fi
tap_tmpdir
spinners=()
stop_spinners() {
	local p
	for p in "${spinners[@]}"; do kill "$p" 2> /dev/null; done
	for p in "${spinners[@]}"; do wait "$p" 2> /dev/null; done
	spinners=()
}
trap 'stop_spinners; rm -rf "$tmp"' EXIT

# the first CPU this script may run on: the hook and the spinners share it
cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[,-].*//')
spin() { # N: N busy loops on $cpu, at this script's nice
	local i
	for ((i = 0; i < $1; i++)); do
		taskset -c "$cpu" sh -c 'while :; do :; done' &
		spinners+=($!)
	done
}

root=$tmp/root
hook_root "$root" kp_prop_prov kp_use_prop kp_plain
printf 'block proprietary\n' > "$tmp/policy.conf"
mkfifo "$tmp/fifo"

# the libkmod lookup wrapped: BURN_MS of the thread's own CPU time first (a hook that needs
# CPU), or a loop that never ends, or open() of a FIFO no one writes (a stall)
cat > "$tmp/wrap.c" << 'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <time.h>
int kmod_module_new_from_lookup(void *ctx, const char *given, void **list)
{
	int (*real)(void *, const char *, void **) =
		dlsym(RTLD_NEXT, "kmod_module_new_from_lookup");
#ifdef BURN_MS
	struct timespec t;

	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while (t.tv_sec * 1000 + t.tv_nsec / 1000000 < BURN_MS);
#elif defined(FOREVER)
	for (volatile unsigned long i = 0;; i++)
		;
#else
	open(FIFO, O_RDONLY);
#endif
	return real(ctx, given, list);
}
C
if ! "$cc" -shared -fPIC -DBURN_MS=200 -o "$tmp/burn.so" "$tmp/wrap.c" -ldl ||
	! "$cc" -shared -fPIC -DFOREVER -o "$tmp/loop.so" "$tmp/wrap.c" -ldl ||
	! "$cc" -shared -fPIC -DFIFO="\"$tmp/fifo\"" -o "$tmp/stall.so" "$tmp/wrap.c" -ldl; then
	echo "1..0 # SKIP cannot build the libkmod wrapper with $cc"
	exit 0
fi

# hook WRAPPER ARGS...: on $cpu, -> $rc, stderr in $tmp/err, wall-clock seconds in $wall
hook() {
	local so=$1 t0 t1 limit=90
	shift
	[ -n "${idle:-}" ] && limit=150 # its SIGALRM handler waits for the CPU too
	t0=$(date +%s%N)
	LD_PRELOAD=$tmp/$so.so ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 \
		timeout -k 2 "$limit" ${idle:+chrt -i 0} taskset -c "$cpu" "$kp" \
			--no-cache hook --root "$root" \
		--config "$tmp/policy.conf" "$@" > /dev/null 2> "$tmp/err"
	rc=$?
	t1=$(date +%s%N)
	wall=$(((t1 - t0) / 1000000))
	wall=$((wall / 1000)).$(printf %03d $((wall % 1000)))
	echo "# $so $*: exit $rc after $wall s"
}
say_err() { sed 's/^/#   /' "$tmp/err"; }
has() { # description, pattern (grep -E) that stderr of the last run must contain
	if grep -qE -- "$2" "$tmp/err"; then ok "$1" 0; else ok "$1" 1; say_err; fi
}
hasnt() {
	if grep -qE -- "$2" "$tmp/err"; then ok "$1" 1; say_err; else ok "$1" 0; fi
}
within() { # description, seconds: the last run's wall-clock time at most that
	ok "$1" $((${wall%.*} < $2 ? 0 : 1))
}
blocked='^kopolicy: kp_use_prop: load blocked: dependency kp_prop_prov is proprietary: '
blocked+='.*\[proprietary, '

# --- not starved: the policy's answer
hook burn --timeout 1 kp_use_prop
is "200 ms of CPU, not starved: the policy blocks (exit 1)" "$rc" 1
has "... saying why" "$blocked"

# --- starved: 7 busy loops on the hook's CPU leave it an eighth of it, 200 ms of CPU take
# 1.6 s or more; the old wall-clock deadline said "no answer within 1 s (timeout)" and let the
# load go on (exit 0)
spin 7
hook burn --timeout 1 kp_use_prop
ok "starved: the hook waited longer than --timeout for the CPU (else nothing is tested)" \
	$((${wall%.*} >= 1 ? 0 : 1))
is "starved, --timeout 1: the policy's answer still (exit 1), not the on-error pass" "$rc" 1
has "... the load blocked, saying why" "$blocked"
hasnt "... no timeout" "cannot decide|timeout"

# --- a stall still ends in about --timeout, starved: blocked time is the hook's
hook stall --timeout 1 --on-error fail-closed kp_use_prop
is "starved stall, --timeout 1, fail-closed: exit 2" "$rc" 2
within "... within 10 s" 10
is "... one line" "$(cat "$tmp/err")" \
	"kopolicy: kp_use_prop: cannot decide: no answer within 1 s (timeout); blocking the load (on-error fail-closed, --on-error)"
hook stall --timeout 1 kp_use_prop
is "starved stall, fail-open: exit 0" "$rc" 0
has "... saying so" \
	"^kopolicy: kp_use_prop: cannot decide: no answer within 1 s \(timeout\); letting the load go on \(on-error fail-open, default\)$"

# --- the wall-clock cap: a hook that loops, starved (an eighth of the CPU: its second of CPU
# time would take 8 s), is stopped by the cap first, and blocks the load whatever the on-error
# mode. --wall-cap lowers the cap (60 s for --timeout 1) to 3 s; KP_SLOW_TESTS=1 also waits for
# the default one, the hook at SCHED_IDLE there (chrt -i: a share of the CPU of 3/1024 against
# the spinners, where an eighth of it would spend its second before the minute).
starved() { # the cap's line for $1 s, as a pattern
	echo "^kopolicy: kp_use_prop: cannot decide: no answer within $1 s of wall-clock time, most" \
		"of it waiting for a CPU \(starved\); blocking the load \(whatever the on-error mode:" \
		"any user can starve the hook\)$"
}
hook loop --timeout 1 --wall-cap 3 kp_use_prop
is "starved loop, --timeout 1 --wall-cap 3, fail-open: blocked (exit 2)" "$rc" 2
has "... at the cap, starved" "$(starved 3)"
ok "... after 3 s or more (${wall} s)" $((${wall%.*} >= 3 ? 0 : 1))
within "... and within 8 s" 8
if [ "${KP_SLOW_TESTS:-0}" = 1 ] && command -v chrt > /dev/null; then
	idle=1 hook loop --timeout 1 kp_use_prop
	is "starved loop, --timeout 1, fail-open: blocked (exit 2)" "$rc" 2
	has "... at the default cap, 60 s" "$(starved 60)"
	ok "... after 60 s or more (${wall} s)" $((${wall%.*} >= 60 ? 0 : 1))
	# the handler itself runs late when starved this hard (73.6 s on a 2-CPU machine at a load
	# of 15, 2026-12-06)
	within "... and within 140 s" 140
else
	for t in 1 2 3 4; do skip "the default 60 s cap" \
		"KP_SLOW_TESTS=1 (and chrt) wait for it"; done
fi
stop_spinners

# --- --wall-cap only lowers the cap, and keeps it above --timeout
for args in "--timeout 1 --wall-cap 61" "--timeout 10 --wall-cap 101" "--timeout 5 --wall-cap 5" \
	"--timeout 0 --wall-cap 60"; do
	# shellcheck disable=SC2086 # the words are the options
	"$kp" --no-cache hook --root "$root" --config "$tmp/policy.conf" $args kp_use_prop \
		> /dev/null 2> "$tmp/err"
	is "$args: refused (exit 2)" "$?" 2
	has "... saying why" \
		"^kopolicy: --wall-cap (takes seconds above --timeout|needs a deadline)"
done

# --- not starved: a stall and a loop in about --timeout
hook stall --timeout 1 --on-error fail-closed kp_use_prop
is "stall, --timeout 1, fail-closed: exit 2" "$rc" 2
within "... within 5 s" 5
has "... timeout" "no answer within 1 s \(timeout\); blocking the load"
hook loop --timeout 1 --on-error fail-closed kp_use_prop
is "libkmod looping, --timeout 1, fail-closed: exit 2" "$rc" 2
# after a second of the hook's own CPU time (15 s of wall-clock time under make check on a
# busy machine), not at the 60 s cap
has "... timeout" "no answer within 1 s \(timeout\); blocking the load"

# --- the wait for a CPU cannot be measured ("0 0 0": sched_info off before 5.14, bound over
# the hook's own schedstat in a private mount namespace): wall-clock time is all there is,
# and a load is blocked at --timeout whatever the on-error mode
printf '0 0 0\n' > "$tmp/schedstat"
# shellcheck disable=SC2016 # expanded by the inner shell
nosched='mount --bind "$1" /proc/$$/task/$$/schedstat && mount --bind "$1" /proc/$$/schedstat &&
	shift && exec "$@"'
if unshare -m sh -c "$nosched" sh "$tmp/schedstat" true 2> /dev/null; then
	LD_PRELOAD=$tmp/stall.so ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 \
		timeout -k 2 30 unshare -m sh -c "$nosched" sh "$tmp/schedstat" "$kp" --no-cache \
		hook --root "$root" --config "$tmp/policy.conf" --timeout 1 kp_use_prop \
		> /dev/null 2> "$tmp/err"
	is "no run_delay, stall, fail-open: blocked all the same (exit 2)" "$?" 2
	is "... one line" "$(cat "$tmp/err")" \
		"kopolicy: kp_use_prop: cannot decide: no answer within 1 s, and the time spent waiting for a CPU is unknown (no run_delay in /proc/thread-self/schedstat); blocking the load (whatever the on-error mode: any user can starve the hook)"
	LD_PRELOAD=$tmp/burn.so ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 \
		timeout -k 2 30 unshare -m sh -c "$nosched" sh "$tmp/schedstat" "$kp" --no-cache \
		hook --root "$root" --config "$tmp/policy.conf" --timeout 10 kp_use_prop \
		> /dev/null 2> "$tmp/err"
	is "no run_delay, an answer in time: the policy's (exit 1)" "$?" 1
	has "... saying why" "$blocked"
else
	for t in 1 2 3 4; do skip "no run_delay" \
		"cannot bind-mount in a private mount namespace"; done
fi

tap_done
