#!/usr/bin/env bash
# The hook's --timeout counts the time the hook could run, not the time other processes kept
# it from a CPU (its threads' run_delay in /proc/self/task/TID/schedstat). Before, a local user
# who kept the CPUs busy until the deadline passed turned a load the policy blocks into the
# on-error mode's answer: fail-open, the load went on. Here the hook is starved on one CPU
# (nice 19 beside two busy loops, on the CPU they are pinned to) with --timeout 1: its answer
# is the policy's, later. A stall that is not starvation (a library sleeping) still times out:
# tests/cli/test-hardening.sh, "stalled lookup". Run as root (then also as nobody) and as a
# user.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
fx=$top/fixtures/ko/6.12
skel=$top/tests/unit/policy/root
rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
n=0
fail=0

for t in depmod taskset nice; do
	command -v "$t" > /dev/null || { echo "1..0 # SKIP $t is not installed"; exit 0; }
done
if [ ! -r "/proc/self/task/$$/schedstat" ]; then
	echo "1..0 # SKIP no /proc/PID/task/TID/schedstat (CONFIG_SCHED_INFO): every second counts"
	exit 0
fi
# the first CPU this test may run on
cpu=$(taskset -cp $$ | sed -n 's/.*: *\([0-9]*\).*/\1/p')
[ -n "$cpu" ] || { echo "1..0 # SKIP cannot tell this process's CPUs (taskset -cp)"; exit 0; }

tmp=$(mktemp -d)
hogs=()
cleanup() {
	local p
	for p in "${hogs[@]}"; do kill "$p" 2> /dev/null; done
	wait 2> /dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
chmod 0755 "$tmp"

ok() { # description, command status (0 = pass)
	n=$((n + 1))
	if [ "$2" -eq 0 ]; then echo "ok $n - $1"; else echo "not ok $n - $1"; fail=$((fail + 1)); fi
}
is() { # description, got, want
	if [ "$2" = "$3" ]; then ok "$1" 0; else ok "$1" 1; echo "#   got '$2', want '$3'"; fi
}
has() { # description, fixed string stderr of the last run must contain
	if grep -qF -- "$2" "$tmp/err"; then ok "$1" 0; else
		ok "$1" 1; echo "#   want: $2"; sed 's/^/#   got:  /' "$tmp/err"; fi
}

# a fake root with a proprietary module; the policy blocks it
root=$tmp/root
mkdir -p "$root/lib/modules/$rel/extra" "$root/boot"
cp -R "$skel/." "$root/"
cp "$fx/kp_prop_prov.ko" "$root/lib/modules/$rel/extra/"
: > "$root/lib/modules/$rel/modules.builtin"
: > "$root/lib/modules/$rel/modules.builtin.modinfo"
cp "$fx/Module.symvers.gz" "$root/boot/symvers-$rel.gz"
cp "$fx/config.gz" "$root/boot/config-$rel"
echo "$rel" > "$root/proc/sys/kernel/osrelease"
: > "$root/proc/modules"
depmod -b "$root" "$rel" 2> /dev/null
chmod -R go-w "$root"
mkdir -m 0755 "$tmp/etc"
printf 'block proprietary\n' > "$tmp/etc/hook.conf"
chmod 0644 "$tmp/etc/hook.conf"
cp "$kp" "$tmp/kopolicy"
chmod 0755 "$tmp/kopolicy"

# hook [AS...]: the hook (fail-open, --timeout 1) on $cpu at nice 19; $rc, $tmp/err, $secs
hook() {
	local t0=$SECONDS
	timeout -k 5 120 "$@" taskset -c "$cpu" nice -n 19 "$tmp/kopolicy" --no-cache hook \
		--timeout 1 --root "$root" --config "$tmp/etc/hook.conf" kp_prop_prov \
		> /dev/null 2> "$tmp/err"
	rc=$?
	secs=$((SECONDS - t0))
}

hook
is "unloaded: the policy blocks the module (1)" "$rc" 1

# two busy loops on the hook's CPU, at nice 0: the hook gets about 1% of it
for _ in 1 2; do
	taskset -c "$cpu" sh -c 'while :; do :; done' &
	hogs+=($!)
done
hook
is "starved on its CPU, --timeout 1, fail-open: still the policy's answer (1)" "$rc" 1
has "... the load blocked" "kopolicy: kp_prop_prov: load blocked: is proprietary"
grep -qF "no answer within" "$tmp/err"
is "... no timeout" "$?" 1
echo "# starved run: ${secs}s (the unstarved one: well under 1 s)"

if [ "$(id -u)" = 0 ] && setpriv --reuid=65534 --regid=65534 --clear-groups true 2> /dev/null; then
	hook setpriv --reuid=65534 --regid=65534 --clear-groups
	is "as nobody: starved, --timeout 1: the policy's answer (1)" "$rc" 1
	has "... the load blocked" "load blocked: is proprietary"
fi

echo "1..$n"
[ "$fail" -eq 0 ]
