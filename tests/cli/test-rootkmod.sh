#!/usr/bin/env bash
# libkmod's reads under `hook --root`: libkmod opens depmod's indexes and modprobe.d by name,
# after kopolicy checked them. A root whose release directory others can write (0777) has
# libkmod read a private copy made through the pinned root; a trusted root is read by name.
# The hook itself answers such a root with its on-error answer: kmod opens the module files
# by name after it (system/module-trust.h); `check -b` still reads it, through the copy, and
# a root whose modprobe.d others can write (its module files trusted) has the hook read a
# copy and answer. The race: a watcher (inotify, python3) swaps modules.dep.bin for a link
# to another system's index (where kp_use_prop has no dependency) as soon as kopolicy opens
# it; 3000 modprobe.d files widen the window before libkmod opens it. The answer (check -b)
# must stay the root's: kp_use_prop's chain is the root's.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
fx=$top/fixtures/ko/6.12
rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/hook-root.sh"
if ! command -v depmod >/dev/null || ! command -v python3 >/dev/null; then
	echo "1..0 # SKIP depmod (kmod) or python3 is not installed"
	exit 0
fi
tap_tmpdir
export KOPOLICY_CACHE_DIR=$tmp/cache
unset KOPOLICY_CACHE KOPOLICY_CACHE_STATS
export KOPOLICY_RUN_CACHE=off

root=$tmp/root
md=$root/lib/modules/$rel
hook_root "$root" kp_prop_prov kp_use_prop kp_plain kp_nolicense kp_symget
hook_root "$tmp/other" kp_use_prop
for i in $(seq 3000); do echo "# $i" >"$root/etc/modprobe.d/pad-$i.conf"; done
chmod 0755 "$root" "$md"
mkdir -m 0777 "$tmp/shared" # a TMPDIR others can change: no copy may be made there

hook() { # ARGS... -> $rc, $tmp/out, $tmp/err
	"$kp" hook -v --root "$root" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# trusted: read by name, no copy (a TMPDIR that would refuse one is not used)
TMPDIR=$tmp/shared hook kp_use_prop
cp "$tmp/err" "$tmp/err.trusted"
is "a trusted root: read by name (no copy in TMPDIR)" "$rc $(ls -A "$tmp/shared" | wc -l)" "0 0"
grep -q "would inherit P: imports kp_prop_plain from proprietary module kp_prop_prov" "$tmp/err"
ok "... kp_use_prop inherits P from kp_prop_prov on its chain" $?
# check -b on the trusted root: what the copy must reproduce once others can write it
check_b() { # NAME -> $rc, $tmp/out, $tmp/err
	TMPDIR=$tmp/priv "$kp" check -b "$root" "$1" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}
mkdir -m 0700 "$tmp/priv"
check_b kp_use_prop
cp "$tmp/out" "$tmp/out.trusted"
hook kp-test-alias
is "... a modprobe.d alias of the root resolves" \
	"$rc $(grep -c '^kopolicy: kp-test-alias:   kp_plain extra/kp_plain.ko$' "$tmp/err")" "0 1"

hook kp-bl-alias
cp "$tmp/err" "$tmp/err.bl"
is "... a blacklisted module behind an alias of the root's modprobe.d is skipped" \
	"$rc $(grep -c kp_nolicense "$tmp/err")" "0 0"

# one trust walk with the caches (cache/trusted-dir.h): a link in the root's modprobe.d is
# followed by name only when root or the run's user owns it; another user's: a copy (refused
# in $tmp/shared, so it shows)
link=$root/etc/modprobe.d/zz-link.conf
echo "# a comment" >"$root/etc/kp-linked.conf"
ln -s ../kp-linked.conf "$link"
if [ "$(id -u)" -eq 0 ]; then
	chown -h 65534 "$link"
	TMPDIR=$tmp/shared hook kp_use_prop
	is "a link of another user's in the root's modprobe.d: not read by name (a copy)" \
		"$rc $(grep -c \
			"libkmod's copy of $md refused: TMPDIR=$tmp/shared" "$tmp/err")" "0 1"
	chown -h 0 "$link"
else
	skip "a link of another user's in the root's modprobe.d: not read by name" "not root"
fi
TMPDIR=$tmp/shared hook kp_use_prop
cmp -s "$tmp/err" "$tmp/err.trusted"
is "... root's own link to a trusted file: read by name (no copy), the same answer" \
	"$? $(ls -A "$tmp/shared" | wc -l)" "0 0"
rm -f "$link" "$root/etc/kp-linked.conf"

# the module files kmod opens by name after the hook (system/module-trust.h): a file or a
# directory another user can change gets the on-error answer; a sticky directory whose files
# are root's is accepted (what nobody cannot rename or remove there cannot be swapped)
ext=$md/extra
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	chmod 0711 "$tmp" # nobody walks to the root's files
	chown 65534 "$ext/kp_prop_prov.ko"
	# its mode as copied (0644; 0444 from distcheck's read-only source tree)
	fmode=$(stat -c %04a "$ext/kp_prop_prov.ko")
	TMPDIR=$tmp/shared hook kp_use_prop
	is "a dependency's file of uid 65534: exit 0 (fail open), one line naming it" \
		"$rc $(grep -cxF "kopolicy: kp_use_prop: cannot decide: $ext/kp_prop_prov.ko can be changed by uid 65534 (mode $fmode); letting the load go on (on-error fail-open, default)" "$tmp/err") $(grep -c 'inherit P' "$tmp/err")" \
		"0 1 0"
	[ "$rc" = 0 ] || sed 's/^/#   /' "$tmp/err"
	TMPDIR=$tmp/shared hook --on-error fail-closed kp_use_prop
	is "... fail-closed: exit 2, the load blocked" \
		"$rc $(grep -cxF "kopolicy: kp_use_prop: cannot decide: $ext/kp_prop_prov.ko can be changed by uid 65534 (mode $fmode); blocking the load (on-error fail-closed, --on-error)" "$tmp/err")" \
		"2 1"
	chown 0 "$ext/kp_prop_prov.ko"
	chmod 0777 "$ext"
	TMPDIR=$tmp/shared hook --on-error fail-closed kp_use_prop
	a=$rc:$(grep -cxF "kopolicy: kp_use_prop: cannot decide: $ext can be changed by users other than uid 0 (mode 0777); blocking the load (on-error fail-closed, --on-error)" "$tmp/err")
	nobody mv "$ext/kp_prop_prov.ko" "$ext/swapped.ko" 2>/dev/null
	b=$?
	mv "$ext/swapped.ko" "$ext/kp_prop_prov.ko" 2>/dev/null
	is "extra/ 0777 (nobody renames root's files there): exit 2 (fail-closed), one line" \
		"$a $b" "2:1 0"
	chmod 1777 "$ext"
	TMPDIR=$tmp/shared hook kp_use_prop
	cmp -s "$tmp/err" "$tmp/err.trusted"
	a=$rc:$?
	nobody mv "$ext/kp_prop_prov.ko" "$ext/swapped.ko" 2>/dev/null
	is "extra/ sticky (1777), root's files (nobody cannot rename them): the same answer" \
		"$a $?" "0:0 1"
	[ "$a" = 0:0 ] || sed 's/^/#   /' "$tmp/err"
	mv "$ext/kp_prop_prov.ko" "$tmp/prov.ko"
	nobody cp "$tmp/prov.ko" "$ext/kp_prop_prov.ko"
	fmode=$(stat -c %04a "$ext/kp_prop_prov.ko")
	TMPDIR=$tmp/shared hook --on-error fail-closed kp_use_prop
	is "... a file nobody made there: exit 2 (fail-closed), one line naming it" \
		"$rc $(grep -cxF "kopolicy: kp_use_prop: cannot decide: $ext/kp_prop_prov.ko can be changed by uid 65534 (mode $fmode); blocking the load (on-error fail-closed, --on-error)" "$tmp/err")" \
		"2 1"
	mv -f "$tmp/prov.ko" "$ext/kp_prop_prov.ko"
	chmod 0755 "$ext"
	chmod 0777 "$root/lib/modules" # libkmod reads a copy (in $tmp/priv), the hook refuses
	TMPDIR=$tmp/priv hook --on-error fail-closed kp_use_prop
	is "lib/modules 0777 (above the release directory): exit 2 (fail-closed), one line" \
		"$rc $(grep -cxF "kopolicy: kp_use_prop: cannot decide: $root/lib/modules can be changed by users other than uid 0 (mode 0777); blocking the load (on-error fail-closed, --on-error)" "$tmp/err")" \
		"2 1"
	chmod 0755 "$root/lib/modules"
	TMPDIR=$tmp/shared hook kp_use_prop
	cmp -s "$tmp/err" "$tmp/err.trusted"
	ok "... all back to root's 0755: the same answer as before" $?
	# a module file that is root's link: followed inside the root, its target walked too
	mkdir -p "$root/opt/kp"
	mv "$ext/kp_prop_prov.ko" "$root/opt/kp/"
	ln -s /opt/kp/kp_prop_prov.ko "$ext/kp_prop_prov.ko"
	TMPDIR=$tmp/shared hook kp_use_prop
	cmp -s "$tmp/err" "$tmp/err.trusted"
	ok "a dependency that is root's link to a trusted file inside the root: the same answer" $?
	chmod 0777 "$root/opt/kp"
	TMPDIR=$tmp/shared hook --on-error fail-closed kp_use_prop
	is "... its target's directory 0777: exit 2 (fail-closed), one line naming it" \
		"$rc $(grep -cxF "kopolicy: kp_use_prop: cannot decide: $root/opt/kp can be changed by users other than uid 0 (mode 0777); blocking the load (on-error fail-closed, --on-error)" "$tmp/err")" \
		"2 1"
	chmod 0755 "$root/opt/kp"
	chown -h 65534 "$ext/kp_prop_prov.ko"
	TMPDIR=$tmp/shared hook --on-error fail-closed kp_use_prop
	is "... the link nobody's: exit 2 (fail-closed), one line naming it" \
		"$rc $(grep -cxF "kopolicy: kp_use_prop: cannot decide: $ext/kp_prop_prov.ko can be changed by uid 65534 (mode 0777); blocking the load (on-error fail-closed, --on-error)" "$tmp/err")" \
		"2 1"
	rm "$ext/kp_prop_prov.ko"
	mv "$root/opt/kp/kp_prop_prov.ko" "$ext/"
	rm -r "$root/opt/kp"
	chmod 0700 "$tmp"
else
	for t in "a dependency's file of uid 65534" "... fail-closed" "extra/ 0777" \
		"extra/ sticky (1777)" "... a file nobody made there" "lib/modules 0777" \
		"... all back" "a dependency that is root's link" "... its target's directory 0777" \
		"... the link nobody's"; do
		skip "$t" "not root, or no setpriv"
	done
fi

# untrusted: the copy, the same answers, nothing left behind
chmod 0777 "$md"
touch -d @1000000000 "$tmp/shared" # a directory made and removed in it would move its mtime
TMPDIR=$tmp/shared hook kp_use_prop
is "an untrusted root with a TMPDIR others can change: refused, exit 0 (fail open)" \
	"$rc $(grep -c \
		"libkmod's copy of $md refused: TMPDIR=$tmp/shared: $tmp/shared is writable by others (set TMPDIR to a directory only root can change); letting the load go on" "$tmp/err")" "0 1"
is "... the message says what happened, not an unknown kernel" \
	"$(grep -c 'unknown kernel' "$tmp/err") $(ls -A "$tmp/shared" | wc -l)" "0 0"
is "... TMPDIR walked before anything is made in it: nothing made there even for a moment" \
	"$(stat -c %Y "$tmp/shared")" 1000000000
check_b kp_use_prop
cmp -s "$tmp/out" "$tmp/out.trusted"
is "check -b on an untrusted root read from the copy: the same report as by name" \
	"$? $(grep -c '^  kp_use_prop: E: unknown-symbol: kp_prop_plain ' "$tmp/out")" "0 1"
is "... the copy removed" "$(ls -A "$tmp/priv" | wc -l)" 0
# the hook: kmod would open the chain's files by name in a directory others can change
open_line="kopolicy: kp_use_prop: cannot decide: $md can be changed by users other than uid 0 (mode 0777); letting the load go on (on-error fail-open, default)"
TMPDIR=$tmp/priv hook kp_use_prop
is "the hook on a release directory others can write: exit 0 (fail open) and one line" \
	"$rc $(grep -cxF "$open_line" "$tmp/err") $(grep -c 'inherit P' "$tmp/err")" "0 1 0"
[ "$rc" = 0 ] || sed 's/^/#   /' "$tmp/err"
TMPDIR=$tmp/priv hook --on-error fail-closed kp_use_prop
is "... fail-closed: exit 2, the load blocked, the copy removed" \
	"$rc $(grep -cxF "kopolicy: kp_use_prop: cannot decide: $md can be changed by users other than uid 0 (mode 0777); blocking the load (on-error fail-closed, --on-error)" "$tmp/err") $(ls -A "$tmp/priv" | wc -l)" \
	"2 1 0"
# without TMPDIR, nowhere to go: the line says what was tried and why the last was refused
# (a private mount namespace: /run and /dev/shm a directory others can write, /tmp a tmpfs
# others can write without the sticky bit, the test directory seen at /mnt)
nowhere='mount --bind "$1" /mnt && mount --bind /mnt/shared /run &&
	mount --bind /mnt/shared /dev/shm && mount -t tmpfs -o mode=0777 none /tmp && shift && exec "$@"'
if [ -d /mnt ] && unshare -m --propagation private sh -c "$nowhere" sh "$tmp" true 2>/dev/null; then
	# the binary run from /mnt: a build directory under /tmp is hidden by the new /tmp
	cp "$kp" "$tmp/kp-copy"
	env -u TMPDIR unshare -m --propagation private sh -c "$nowhere" sh "$tmp" \
		/mnt/kp-copy hook -v --root /mnt/root kp_use_prop >"$tmp/out" 2>"$tmp/err"
	rc=$?
	why=$(stat -f -c %T "$tmp/shared" | sed 's/^tmpfs$//')
	why=${why:+not a tmpfs}
	why=${why:-/mnt/shared is writable by others}
	is "TMPDIR unset, /run, /dev/shm and /tmp refused: each named with why, exit 0 (fail open)" \
		"$rc $(grep -c \
			"libkmod's copy of /mnt/root/lib/modules/$rel refused: TMPDIR unset, tried /run ($why), /dev/shm ($why), then /tmp: /tmp is writable by others (set TMPDIR" "$tmp/err")" "0 1"
	[ "$rc" = 0 ] || sed 's/^/#   /' "$tmp/err"
	# mount(8) itself leaves /run/mount (its utab): only the copy's name counts
	is "... nothing left behind" "$(ls -A "$tmp/shared" | grep -c kopolicy-kmod)" 0
	rm -rf "$tmp/shared/mount"
else
	skip "TMPDIR unset, /run, /dev/shm and /tmp refused: each named" \
		"no private mount namespace"
	skip "... nothing left behind" "as above"
fi
# without TMPDIR the copy goes to a tmpfs: /run (root's), else /dev/shm, before /tmp
tmpfs() { [ "$(stat -f -c %T "$1" 2>/dev/null)" = tmpfs ]; }
want=/tmp
if tmpfs /run && [ "$(id -u)" -eq 0 ] && [ "$(stat -c %u:%a /run)" = 0:755 ]; then
	want=/run
elif tmpfs /dev/shm && [ "$(stat -c %u:%a /dev/shm)" = 0:1777 ]; then
	want=/dev/shm
fi
# made_in DIR: the copy directories the traced run ($tmp/strace, strace -y) made in DIR (by
# path, or in a descriptor of DIR); DIR "" counts them wherever they were made
made_in() {
	grep -cE "^[0-9]+ +mkdir(at)?\(([0-9]+<$1[^>]*>, \"|\"$1[^\"]*/)kopolicy-kmod\.[^/\"]*\"" \
		"$tmp/strace"
}
# strace may be there and still refused ptrace (a container's seccomp profile)
if command -v strace >/dev/null && strace -qq -o /dev/null true 2>/dev/null &&
	[ "$want" != /tmp ]; then
	# LeakSanitizer (the sanitizer build) refuses to run under ptrace: leaks off here only
	env -u TMPDIR ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -y -e trace=mkdir,mkdirat -o "$tmp/strace" \
		"$kp" hook -v --root "$root" kp_use_prop >"$tmp/out" 2>"$tmp/err"
	rc=$?
	same=$(grep -cxF "$open_line" "$tmp/err")
	made=$(made_in "")
	there=$(made_in "$want")
	# one copy a run: the tree's blacklist and the chain read the same (two before)
	is "without TMPDIR: one copy a run, made in $want (a tmpfs), the on-error answer" \
		"$rc $same $made $there" "0 1 1 1"
	is "... and removed" "$(ls -d "$want"/kopolicy-kmod.* 2>/dev/null | wc -l)" 0
else
	skip "without TMPDIR: one copy a run, made in a tmpfs" \
		"no strace (or no ptrace), or no tmpfs at /run or /dev/shm"
	skip "... and removed" "as above"
fi
# check -b ROOT NAME: the tree's blacklist and the names' chain read one copy too
if command -v strace >/dev/null && strace -qq -o /dev/null true 2>/dev/null; then
	TMPDIR=$tmp/priv ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -y -e trace=mkdir,mkdirat -o "$tmp/strace" \
		"$kp" check -b "$root" kp_use_prop >"$tmp/out" 2>"$tmp/err"
	rc=$?
	is "check -b ROOT NAME on an untrusted root: one copy, removed, the same verdict" \
		"$rc $(made_in "$tmp/priv") $(ls -A \
			"$tmp/priv" | wc -l) $(grep -c \
			'^  kp_use_prop: E: unknown-symbol: kp_prop_plain ' "$tmp/out")" \
		"1 1 0 1"
	[ "$rc" = 1 ] || sed 's/^/#   /' "$tmp/err"
	# a policy that blocks more than symbol-get, a chain that calls symbol_get(): the hook
	# decides without tracing first, then traces in a second pass; both read the one copy
	# (made for a modprobe.d others can write: the module files trusted, the hook answers)
	printf 'block inherit-taint\n' >"$tmp/policy.conf"
	chmod 0755 "$md"
	chmod 0777 "$root/etc/modprobe.d"
	TMPDIR=$tmp/priv ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -y -e trace=mkdir,mkdirat -o "$tmp/strace" \
		"$kp" hook -v --timeout 0 --config "$tmp/policy.conf" --root "$root" kp_symget \
		>"$tmp/out" 2>"$tmp/err"
	rc=$?
	is "the hook's two passes (untraced, then traced): one copy, removed" \
		"$rc $(made_in "$tmp/priv") $(ls -A \
			"$tmp/priv" | wc -l) $(grep -c \
			'^kopolicy: kp_symget: kp_symget: loads' "$tmp/err")" \
		"0 1 0 1"
	[ "$rc" = 0 ] || sed 's/^/#   /' "$tmp/err"
	chmod 0755 "$root/etc/modprobe.d"
	chmod 0777 "$md"
	# check --running --root: the running kernel's tree and the names' chain, one copy too
	TMPDIR=$tmp/priv ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -y -e trace=mkdir,mkdirat -o "$tmp/strace" \
		"$kp" check --running --root "$root" kp_use_prop >"$tmp/out" 2>"$tmp/err"
	rc=$?
	is "check --running --root ROOT NAME on an untrusted root: one copy, removed, the verdict" \
		"$rc $(made_in "$tmp/priv") $(ls -A \
			"$tmp/priv" | wc -l) $(grep -c \
			'^  kp_use_prop: E: unknown-symbol: kp_prop_plain ' "$tmp/out")" \
		"1 1 0 1"
	[ "$rc" = 1 ] || sed 's/^/#   /' "$tmp/err"
else
	skip "check -b ROOT NAME on an untrusted root: one copy" "no strace (or no ptrace)"
	skip "the hook's two passes (untraced, then traced): one copy" "as above"
	skip "check --running --root ROOT NAME on an untrusted root: one copy" "as above"
fi
# the deadline: its answer first, then the copy removed (by a child of the hook's, so that
# a stalled removal cannot stall the answer); strace holds the third link into the copy
# 1.5 s, past --timeout 1
if command -v strace >/dev/null &&
	strace -qq -o /dev/null -e inject=getpid:delay_exit=1 true 2>/dev/null; then
	TMPDIR=$tmp/priv ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -qq -o /dev/null -e trace=symlinkat \
		-e inject=symlinkat:delay_exit=1500000:when=3 \
		"$kp" hook -v --timeout 1 --root "$root" kp_use_prop >"$tmp/out" 2>"$tmp/err"
	rc=$?
	for _ in $(seq 50); do [ -z "$(ls -A "$tmp/priv")" ] && break; sleep 0.1; done
	is "the deadline while the copy is made: the on-error answer, the copy removed" \
		"$rc $(grep -c \
			'^kopolicy: kp_use_prop: cannot decide: no answer within 1 s (timeout); letting the load go on (on-error fail-open, default)$' "$tmp/err") $(ls -A "$tmp/priv" | wc -l)" \
		"0 1 0"
	rm -rf "${tmp:?}/priv/"*
else
	skip "the deadline while the copy is made: the copy removed" "no strace fault injection"
fi
# copies that killed runs left: the next run that makes a copy removes those of its user
# that no run holds (flock(2), dropped by the kernel when the owner dies) and that have not
# changed for ten minutes; a live run's copy is kept, and what is not a copy of the user's own
stale() { # DIR: a copy as a run leaves it, unchanged for an hour
	mkdir -m 0700 "$1" "$1/mod" "$1/conf.0"
	echo x >"$1/mod/modules.dep.bin"
	ln -s /nonexistent "$1/mod/kernel"
	echo x >"$1/conf.0/a.conf"
	touch -d '1 hour ago' "$1"
}
stale "$tmp/priv/kopolicy-kmod.Stale1"
stale "$tmp/priv/kopolicy-kmod.young1"
touch "$tmp/priv/kopolicy-kmod.young1"
stale "$tmp/priv/kopolicy-kmod.Open01"
chmod 0755 "$tmp/priv/kopolicy-kmod.Open01"
stale "$tmp/priv/kopolicy-kmod.Long012"
stale "$tmp/elsewhere"
ln -s "$tmp/elsewhere" "$tmp/priv/kopolicy-kmod.Link01"
kept="kopolicy-kmod.Link01 kopolicy-kmod.Long012 kopolicy-kmod.Open01 kopolicy-kmod.young1"
if [ "$(id -u)" -eq 0 ]; then
	stale "$tmp/priv/kopolicy-kmod.Other1"
	chown -R 65534 "$tmp/priv/kopolicy-kmod.Other1"
	touch -d '1 hour ago' "$tmp/priv/kopolicy-kmod.Other1"
	kept="kopolicy-kmod.Link01 kopolicy-kmod.Long012 kopolicy-kmod.Open01"
	kept="$kept kopolicy-kmod.Other1 kopolicy-kmod.young1"
fi
TMPDIR=$tmp/priv hook kp_use_prop
is "a copy left by a killed run, unchanged for an hour: removed by the next run's copy" \
	"$rc $(ls -A "$tmp/priv" | sort | tr '\n' ' ')" "0 $kept "
is "... a link named as a copy: not followed" "$(ls -A "$tmp/elsewhere" | tr '\n' ' ')" \
	"conf.0 mod "
rm -rf "${tmp:?}/priv/"* "$tmp/elsewhere"
# held DELAY [LAUNCHER...]: a hook run in the background (started by LAUNCHER) whose third
# link into its copy strace holds DELAY microseconds: $spid (strace), $kpid (the hook),
# $live (its copy, once it holds a link; empty if none appeared)
held() {
	local delay=$1 link=
	shift
	TMPDIR=$tmp/priv ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		"$@" strace -qq -o /dev/null -e trace=symlinkat \
		-e inject=symlinkat:delay_exit="$delay":when=3 \
		"$kp" hook -v --timeout 0 --root "$root" kp_use_prop >/dev/null 2>&1 &
	spid=$!
	for _ in $(seq 100); do
		link=$(find "$tmp/priv" -mindepth 3 -maxdepth 3 -type l 2>/dev/null | sed -n 1p)
		[ -n "$link" ] && break
		sleep 0.1
	done
	live=${link%/mod/*}
	kpid=$(ps -o pid= --ppid "$spid" | tr -d ' ')
}
# a real run killed with SIGKILL while its copy is made: its copy is left; while it lived,
# its copy aged by hand was kept by the next run (its lock)
if command -v strace >/dev/null &&
	strace -qq -o /dev/null -e inject=getpid:delay_exit=1 true 2>/dev/null; then
	held 20000000 env
	if [ -n "$live" ]; then touch -d '1 hour ago' "$live"; fi
	TMPDIR=$tmp/priv hook kp_use_prop
	is "a live run's copy, unchanged for an hour by its clock: kept by the next run" \
		"$rc $(ls -A "$tmp/priv" | wc -l) ${live:+found}" "0 1 found"
	[ -n "$kpid" ] && kill -KILL "$kpid"
	wait "$spid" 2>/dev/null
	is "... that run killed with SIGKILL: its copy left" \
		"$(ls -A "$tmp/priv" | wc -l) $([ -n "$live" ] && [ -d "$live" ] && echo there)" \
		"1 there"
	TMPDIR=$tmp/priv hook kp_use_prop
	is "... the next run removes it" "$rc $(ls -A "$tmp/priv" | wc -l)" "0 0"
	rm -rf "${tmp:?}/priv/"*
	# SIGTERM, SIGINT, SIGHUP while the copy is made: the hook dies of it, its copy removed
	# first (by a child of its own; strace holds the tracee 2 s after the third link); a
	# background job starts with SIGINT ignored: the default put back for the hook, then
	# (IGN) left ignored: the hook answers
	# (and SIGHUP, SIGTERM defaulted too: a test run under nohup has SIGHUP ignored)
	dfl='import os, signal, sys
for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
    signal.signal(s, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])'
	for sig in TERM INT HUP IGN; do
		launch=(python3 -c "$dfl")
		want=$((128 + $(kill -l "${sig/IGN/INT}")))
		if [ "$sig" = IGN ]; then
			launch=(env)
			want=0
		fi
		held 2000000 "${launch[@]}"
		[ -n "$kpid" ] && kill -"${sig/IGN/INT}" "$kpid"
		wait "$spid"
		rc=$?
		for _ in $(seq 50); do [ -z "$(ls -A "$tmp/priv")" ] && break; sleep 0.1; done
		is "SIG$sig while the copy is made: the hook dies of it (ignored: answers), copy removed" \
			"$rc ${live:+made} $(ls -A "$tmp/priv" | wc -l)" "$want made 0"
		rm -rf "${tmp:?}/priv/"*
	done
else
	skip "a live run's copy: kept by the next run" "no strace fault injection"
	skip "... that run killed with SIGKILL: its copy left" "as above"
	skip "... the next run removes it" "as above"
	for sig in TERM INT HUP IGN; do
		skip "SIG$sig while the copy is made: its copy removed" "as above"
	done
fi
# libkmod stat()s a module's dependencies by name on the host: extra/ swapped for a link to
# a host path ($tmp/probe; inside the root, ROOT$tmp/probe holds the modules) must not let
# the answer tell whether that host path exists (a copy for a modprobe.d others can write;
# the module files, the link and what it leads to inside the root trusted: the hook answers)
chmod 0755 "$md"
chmod 0777 "$root/etc/modprobe.d"
mkdir -p "$root$tmp/probe" "$tmp/probe"
cp -R "$md/extra/." "$root$tmp/probe/"
mv "$md/extra" "$tmp/extra.real"
ln -s "$tmp/probe" "$md/extra"
TMPDIR=$tmp/priv hook kp_use_prop
a=$rc:$(grep -c "would inherit P: imports kp_prop_plain from proprietary module kp_prop_prov" \
	"$tmp/err"):$(grep -c 'cannot decide' "$tmp/err")
cp "$root$tmp/probe/kp_prop_prov.ko" "$tmp/probe/"
TMPDIR=$tmp/priv hook kp_use_prop
b=$rc:$(grep -c "would inherit P: imports kp_prop_plain from proprietary module kp_prop_prov" \
	"$tmp/err"):$(grep -c 'cannot decide' "$tmp/err")
is "a link below the release directory to a host path: the root's answer, host file absent or there" \
	"$a $b" "0:1:0 0:1:0"
[ "$a" = 0:1:0 ] || sed 's/^/#   /' "$tmp/err"
rm "$md/extra"
mv "$tmp/extra.real" "$md/extra"
rm -rf "$root$tmp" "$tmp/probe"
TMPDIR=$tmp/priv hook kp-test-alias
is "... the root's modprobe.d copied: its alias resolves" \
	"$rc $(grep -c '^kopolicy: kp-test-alias:   kp_plain extra/kp_plain.ko$' "$tmp/err")" "0 1"
TMPDIR=$tmp/priv hook kp-bl-alias
cmp -s "$tmp/err" "$tmp/err.bl"
ok "... the blacklist read from the copy (the tree's libkmod too): the same answer" $?
chmod 0755 "$root/etc/modprobe.d"
chmod 0777 "$md"

# the race: modules.dep.bin swapped for a link to another system's index once opened
ln -s "$tmp/other/lib/modules/$rel/modules.dep.bin" "$md/.swap"
cat >"$tmp/watch.py" <<'PY'
import ctypes, os, struct, sys
d, name, link = sys.argv[1:4]
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
if fd < 0 or libc.inotify_add_watch(fd, d.encode(), 0x20) < 0:  # IN_OPEN
    sys.exit(1)
print("ready", flush=True)
while True:
    buf, i = os.read(fd, 65536), 0
    while i < len(buf):
        _, _, _, n = struct.unpack_from("iIII", buf, i)
        hit = buf[i + 16:i + 16 + n].rstrip(b"\0").decode() == name
        i += 16 + n
        if hit:
            os.rename(link, os.path.join(d, name))
            print("swapped", flush=True)
            sys.exit(0)
PY
python3 "$tmp/watch.py" "$md" modules.dep.bin "$md/.swap" >"$tmp/watch.out" 2>&1 &
wpid=$!
for _ in $(seq 100); do grep -q ready "$tmp/watch.out" && break; sleep 0.05; done
check_b kp_use_prop
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null
is "the race: the index was swapped once opened" \
	"$(grep -c swapped "$tmp/watch.out") $(readlink "$md/modules.dep.bin")" \
	"1 $tmp/other/lib/modules/$rel/modules.dep.bin"
cmp -s "$tmp/out" "$tmp/out.trusted"
ok "... libkmod read the checked copy (check -b): the root's chain, the same report" $?
cmp -s "$tmp/out" "$tmp/out.trusted" || sed 's/^/#   /' "$tmp/out" "$tmp/err"
# afterwards the link out of the root is refused, as before
TMPDIR=$tmp/priv hook kp_use_prop
grep -q "modules.dep.bin: a symlink that leads out of $root (or loops): refused as a depmod index" \
	"$tmp/err"
ok "... the next run: the link out of the root refused" $?

tap_done
