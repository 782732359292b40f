#!/usr/bin/env bash
# The hook when a kernel read never returns (lib/system/kernel-read.c): /proc/modules'
# m_start() sleeps uninterruptibly on a module_mutex an oops left held (the hook oracle's
# "mutex" step boots that). Here a stand-in that needs no boot: the root's proc/modules is a
# FIFO with a writer that never writes, read like procfs through a child the hook abandons.
# The hook gives its --on-error answer at --timeout, its stdout and stderr reach EOF when it
# exits (the child holds neither), and the child, left to init, ends once the FIFO does.
# A FIFO that delivers the lines gives the answer the regular file gives. Last, the same for
# an EFI variable (SecureBoot), whose reader left behind is marked (--state-dir): a later hook
# answers at once, the variable unreadable. Times are only checked against generous bounds.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
fx=$top/fixtures/ko/6.12
rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/hook-root.sh"

if ! command -v depmod > /dev/null; then
	echo "1..0 # SKIP depmod is not installed"
	exit 0
fi
tap_tmpdir
trap 'exec 3>&- 2> /dev/null; rm -rf "$tmp"' EXIT

root=$tmp/root
hook_root "$root" kp_prop_prov kp_use_prop kp_plain
printf 'block proprietary\n' > "$tmp/policy.conf"

# the policy's answer with a readable proc/modules (kp_prop_prov not loaded)
"$kp" --no-cache hook --root "$root" --config "$tmp/policy.conf" --timeout 5 kp_use_prop \
	> /dev/null 2> "$tmp/err"
is "proc/modules readable: the policy blocks (exit 1)" "$?" 1

# kp_prop_prov loaded (P): kp_use_prop only inherits P, a warning
echo "kp_prop_prov 16384 0 - Live 0xffffffffc0000000 (POE)" >> "$root/proc/modules"
mkdir -p "$root/sys/module/kp_prop_prov"
echo POE > "$root/sys/module/kp_prop_prov/taint"
cp "$root/proc/modules" "$tmp/modules"
"$kp" --no-cache hook --root "$root" --config "$tmp/policy.conf" --timeout 5 kp_use_prop \
	> /dev/null 2> "$tmp/err.file"
is "kp_prop_prov loaded: a warning only (exit 0)" "$?" 0

fifo=$root/proc/modules
rm -f "$fifo"
mkfifo "$fifo"
# the same lines through the FIFO, written after the hook started: read by the child, whole
exec 3<> "$fifo"
{
	sleep 0.5
	cat "$tmp/modules" >&3
} &
writer=$!
exec 3>&-
ASAN_OPTIONS=detect_leaks=0 "$kp" --no-cache hook --root "$root" --config "$tmp/policy.conf" \
	--timeout 5 kp_use_prop > /dev/null 2> "$tmp/err"
is "the same /proc/modules through a FIFO: exit 0" "$?" 0
is "... the same words" "$(cat "$tmp/err")" "$(cat "$tmp/err.file")"
wait "$writer"

exec 3<> "$fifo" # a writer that never writes: a read of it blocks until fd 3 closes

# hook ARGS...: in the background, its stdout and stderr through a pipe; -> $rc, $out, $wall,
# $done (1 when the pipe reached EOF within 60 s: no descriptor of it left open)
hook() {
	local t0 t1 pid i
	t0=$(date +%s%N)
	{
		ASAN_OPTIONS=detect_leaks=0 "$kp" --no-cache hook --root "$root" \
			--config "$tmp/policy.conf" "$@" 2>&1
		echo "rc=$?"
	} | cat > "$tmp/out" &
	pid=$!
	done=0
	for ((i = 0; i < 600; i++)); do
		if ! kill -0 "$pid" 2> /dev/null; then
			done=1
			break
		fi
		sleep 0.1
	done
	t1=$(date +%s%N)
	wall=$(((t1 - t0) / 1000000000))
	rc=$(sed -n 's/^rc=//p' "$tmp/out")
	out=$(grep -v '^rc=' "$tmp/out")
	echo "# hook $*: exit $rc after ${wall} s"
}
# the kopolicy processes holding the FIFO open: the readers left behind
readers() {
	local p f
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2> /dev/null)" = kopolicy ] || continue
		for f in "$p"/fd/*; do
			[ "$(readlink "$f" 2> /dev/null)" = "$fifo" ] && echo "${p#/proc/}" && break
		done
	done
}
# the targets of @1's descriptors, the pipe's inode elided
fds_of() {
	local f
	for f in /proc/"$1"/fd/*; do readlink "$f"; done | sed 's/^pipe:\[[0-9]*\]$/pipe/' | sort
}

hook --timeout 1 --on-error fail-closed kp_use_prop
is "read blocked, fail-closed: the stdout/stderr pipe reaches EOF" "$done" 1
is "... exit 2" "$rc" 2
ok "... within 30 s" $((wall < 30 ? 0 : 1))
is "... one line" "$out" \
	"kopolicy: kp_use_prop: cannot decide: no answer within 1 s (timeout); blocking the load (on-error fail-closed, --on-error)"
left=$(readers)
ok "... its reader is left behind, still reading the FIFO" "$([ -n "$left" ] && echo 0 || echo 1)"
for p in $left; do
	ok "... reader $p is no child of this shell's hook any more (ppid $(cut -d' ' \
		-f4 /proc/"$p"/stat))" \
		"$([ "$(cut -d' ' -f4 /proc/"$p"/stat)" != "$$" ] && echo 0 || echo 1)"
	is "... and holds two descriptors: the FIFO and its pipe" \
		"$(fds_of "$p" | tr '\n' ' ')" "$fifo pipe "
done

hook --timeout 1 kp_use_prop
is "read blocked, fail-open: the pipe reaches EOF" "$done" 1
is "... exit 0" "$rc" 0
is "... one line" "$out" \
	"kopolicy: kp_use_prop: cannot decide: no answer within 1 s (timeout); letting the load go on (on-error fail-open, default)"

# the FIFO's last writer gone: the readers read its end and exit
exec 3>&-
for ((i = 0; i < 100; i++)); do
	[ -z "$(readers)" ] && break
	sleep 0.1
done
is "the FIFO closed: no reader left" "$(readers)" ""

# The EFI variables: efivarfs_file_read() waits uninterruptibly for a firmware call that may
# never return (efi_queue_work(): wait_for_completion()), so the hook reads them through the
# same child (ctx/context-machine.c): here SecureBoot a FIFO, as proc/modules above.
rm -f "$fifo"
cp "$tmp/modules" "$root/proc/modules"
efi=$root/sys/firmware/efi/efivars
mkdir -p "$efi"
sbvar=$efi/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c
printf '\x06\x00' > "$sbvar" # shorter than its attribute word: said under -v
"$kp" --no-cache hook -v --root "$root" --config "$tmp/policy.conf" --timeout 5 kp_use_prop \
	> /dev/null 2> "$tmp/err.sb"
sb_rc=$?
rm -f "$sbvar"
grep -qF "assumed: EFI variables: $sbvar: shorter than efivarfs' attribute word" "$tmp/err.sb"
ok "SecureBoot a regular file of 2 bytes: read, said too short (the control)" $?
mkfifo "$sbvar"
exec 3<> "$sbvar"
{
	sleep 0.5
	printf '\x06\x00' >&3
} &
writer=$!
exec 3>&-
ASAN_OPTIONS=detect_leaks=0 "$kp" --no-cache hook -v --root "$root" --config "$tmp/policy.conf" \
	--timeout 5 kp_use_prop > /dev/null 2> "$tmp/err"
is "SecureBoot through a FIFO: exit $sb_rc, as the regular file" "$?" "$sb_rc"
is "... the same words" "$(cat "$tmp/err")" "$(cat "$tmp/err.sb")"
wait "$writer"

fifo=$sbvar
exec 3<> "$fifo" # a writer that never writes: the firmware call that never returns
state=$tmp/state # --state-dir: where the reader left behind is marked
hook --timeout 1 --on-error fail-closed --state-dir "$state" kp_use_prop
is "SecureBoot's read blocked, fail-closed: the pipe reaches EOF" "$done" 1
is "... exit 2" "$rc" 2
is "... one line" "$out" \
	"kopolicy: kp_use_prop: cannot decide: no answer within 1 s (timeout); blocking the load (on-error fail-closed, --on-error)"
left=$(readers)
ok "... its reader is left behind, still reading the FIFO" "$([ -n "$left" ] && echo 0 || echo 1)"
mark=$(cat "$state"/efi-reader.* 2> /dev/null)
is "... and marked: efi-reader.PID, this boot's id, its pid and start time" \
	"$(cd "$state" && ls) $(cut -d' ' -f1-3 <<<"$mark")" \
	"efi-reader.$left $(cat /proc/sys/kernel/random/boot_id) $left $(
		cut -d' ' -f22 /proc/"$left"/stat)"
hookpid=$(cut -d' ' -f4 <<<"$mark")
ok "... then its hook's pid and start time, the hook gone" \
	"$([ "$hookpid" -gt 0 ] && [ ! -e /proc/"$hookpid"/fd ] && echo 0 || echo 1)"
# efivarfs' next reads queue behind the stuck one (efivars_lock): a later hook of the boot
# does not read, each present variable unreadable at once, the policy's answer for that
hook --timeout 30 -v --state-dir "$state" kp_use_prop
is "a later hook, the reader still stuck: exit $sb_rc, as for an unreadable variable" "$rc" \
	"$sb_rc"
ok "... answered before its deadline (${wall} s of 30)" \
	"$([ "$wall" -lt 30 ] && ! grep -q 'no answer within' <<<"$out" && echo 0 || echo 1)"
why="cannot read: not read: the reader of an earlier hook (pid $left) still waits for the firmware"
grep -qF "assumed: EFI variables: $sbvar: $why" <<<"$out"
ok "... and says why under -v" $?
is "... no other reader left" "$(readers)" "$left"
# a reader its hook still waits for (a hook run beside) is no reason not to read: the same
# mark naming this shell as its hook, alive, is not believed (the hook waits its deadline)
mkdir -m 0700 "$tmp/beside"
printf '%s %s %s %s %s\n' $(cut -d' ' -f1-3 <<<"$mark") $$ \
	"$(sed 's/.*) //' /proc/$$/stat | cut -d' ' -f20)" > "$tmp/beside/efi-reader.$left"
hook --timeout 1 --state-dir "$tmp/beside" kp_use_prop
ok "a reader whose hook still waits: read as before (the hook waits its deadline)" \
	"$(grep -q 'no answer within 1 s' <<<"$out" && echo 0 || echo 1)"
ok "... its mark kept (beside the mark of this hook's own reader, left behind)" \
	"$([ -f "$tmp/beside/efi-reader.$left" ] && echo 0 || echo 1)"
# a directory another user can write is refused: a mark there is not believed, said
mkdir -m 0777 "$tmp/open"
cp "$state/efi-reader.$left" "$tmp/open/"
hook --timeout 1 --state-dir "$tmp/open" kp_use_prop
ok "a mark in a directory others can write: not believed (the hook waits its deadline)" \
	"$(grep -q 'no answer within 1 s' <<<"$out" && echo 0 || echo 1)"
grep -q "^kopolicy: $tmp/open.*readers of EFI variables left behind not marked: " <<<"$out"
ok "... the refusal said" $?
exec 3>&-
for ((i = 0; i < 100; i++)); do
	[ -z "$(readers)" ] && break
	sleep 0.1
done
is "... the FIFO closed: no reader left" "$(readers)" ""
# its reader gone, the mark is stale: removed, the variable read again (the control's answer)
"$kp" --no-cache hook -v --root "$root" --config "$tmp/policy.conf" --timeout 5 \
	--state-dir "$state" kp_use_prop > /dev/null 2> "$tmp/err"
is "the reader ended: exit $sb_rc, the variable read" "$?" "$sb_rc"
grep -qF "assumed: EFI variables: $sbvar: shorter than efivarfs' attribute word" "$tmp/err"
ok "... as the control (a FIFO without a writer reads empty)" $?
is "... the stale mark removed, none left" "$(ls -A "$state")" ""

tap_done
