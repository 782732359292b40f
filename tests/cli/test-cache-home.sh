#!/usr/bin/env bash
# Root with a user's HOME or XDG_CACHE_HOME (sudo -E, sudo keeping HOME, su without -): the
# user's cache directory is neither read nor written, and the run uses root's own cache, under
# the home directory the password database gives (kp_facts_cache_dir_own(), man kopolicy
# CACHE TRUST): the same output and status as a run without any cache, no line on stderr,
# the reason under KOPOLICY_CACHE_STATS and in `kopolicy cache show`. Root's home is a
# scratch directory bind-mounted over /root in a mount namespace of its own (unshare -m):
# root only, else each case is skipped with a TAP SKIP line.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
kp=$(cd "$(dirname "$kp")" && pwd)/$(basename "$kp")
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/hook-root.sh"
tap_tmpdir
unset KOPOLICY_CACHE KOPOLICY_CACHE_DIR KOPOLICY_CACHE_STATS KOPOLICY_RUN_CACHE XDG_CACHE_HOME
other=65534 # nobody
cases=("HOME another user's: root's own cache used, no line, the real answer"
	"... nothing read or written in the user's directory"
	"... root's own cache filled, and the next run replays from it"
	"... KOPOLICY_CACHE_STATS says which directory was not used and why"
	"XDG_CACHE_HOME another user's: the same"
	"cache show: root's own directory, with a note on the user's"
	"the hook (the system's cache): no word of the user's directory, the same verdict")
rh=$tmp/roothome vc=$tmp/varcache
mkdir -m 700 "$rh" && mkdir -m 755 "$vc"
# inroot CMD...: CMD with $rh as /root (root's home in the password database) and $vc as
# /var/cache/kopolicy (the hook's), neither of the machine's own touched
inroot() {
	unshare -m --propagation private sh -c 'mount --bind "$0" /root && mkdir -p \
		/var/cache/kopolicy && mount --bind "$1" /var/cache/kopolicy && shift &&
		exec "$@"' "$rh" "$vc" "$@"
}
if [ "$(id -u)" -ne 0 ] || ! inroot true 2>/dev/null ||
	[ "$(getent passwd 0 | cut -d: -f6)" != /root ]; then
	for t in "${cases[@]}"; do skip "$t" "needs root, unshare -m and root's home at /root"; done
	tap_done
	exit
fi

mkdir -p "$tmp/fx" && cp -R "$top/fixtures/ko/6.1/." "$tmp/fx/"
fx=$tmp/fx
sleep 1.1 # a file changed less than a second before a run is not stored by its state
C=(check -j1 -k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release
	"$(sed -n 's/^release=//p' "$fx/kernel.txt")" "$fx/kp_gplonly_then_prop.ko")
run() { # name env...: kopolicy "${C[@]}" with root's home in $rh, its outputs in $tmp/NAME.*
	local name=$1
	shift
	(cd "$tmp" && inroot env "$@" "$kp" "${C[@]}") >"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
}
same() { cmp -s "$tmp/$1.out" "$tmp/$2.out" && cmp -s "$tmp/$1.err" "$tmp/$2.err" &&
	cmp -s "$tmp/$1.rc" "$tmp/$2.rc"; }
files() { find "$1" -mindepth 1 -printf '%p %s %T@\n' | LC_ALL=C sort; }

run ref KOPOLICY_CACHE=off
# the user's home: a cache of theirs (one stored run)
h=$tmp/home
mkdir -p "$h/.cache"
KOPOLICY_CACHE_DIR=$h/.cache/kopolicy "$kp" "${C[@]}" >/dev/null 2>&1
chown -R "$other" "$h"
files "$h" >"$tmp/user.before"

run home HOME="$h"
same home ref
ok "${cases[0]}" $?
files "$h" | cmp -s - "$tmp/user.before"
ok "${cases[1]}" $?
run home2 HOME="$h" KOPOLICY_CACHE_STATS=1
ls "$rh"/.cache/kopolicy/facts-v*/packs/*.pack "$rh"/.cache/kopolicy/runs-v1/*.run \
	>/dev/null 2>&1 && grep -q '^kopolicy: result cache: hit, replayed' "$tmp/home2.err" &&
	cmp -s "$tmp/home2.out" "$tmp/ref.out" && cmp -s "$tmp/home2.rc" "$tmp/ref.rc"
ok "${cases[2]}" $?
why="kopolicy: cache: cache directory $h/.cache/kopolicy not used"
why+=" ($h is owned by uid $other, not by root): /root/.cache/kopolicy used instead"
[ "$(grep -c "^kopolicy: cache: cache directory" "$tmp/home2.err")" = 1 ] &&
	grep -qxF "$why" "$tmp/home2.err"
ok "${cases[3]}" $?
run xdg HOME=/nonexistent XDG_CACHE_HOME="$h/.cache" KOPOLICY_CACHE_STATS=1
grep -qxF "$why" "$tmp/xdg.err" &&
	grep -q '^kopolicy: result cache: hit, replayed' "$tmp/xdg.err" &&
	cmp -s "$tmp/xdg.out" "$tmp/ref.out" && files "$h" | cmp -s - "$tmp/user.before"
ok "${cases[4]}" $?
(cd "$tmp" && HOME=$h inroot "$kp" cache show) >"$tmp/show.out" 2>"$tmp/show.err"
echo $? >"$tmp/show.rc"
[ "$(cat "$tmp/show.rc")" = 0 ] && [ ! -s "$tmp/show.err" ] &&
	grep -qxF "note: ${why#kopolicy: cache: }" "$tmp/show.out" &&
	grep -qx "directory: /root/.cache/kopolicy/facts-v[0-9]*" "$tmp/show.out" &&
	grep -qx "results: 1" "$tmp/show.out"
ok "${cases[5]}" $?
# the hook as root uses /var/cache/kopolicy: the user's HOME is no reason for a note
if command -v depmod >/dev/null; then
	r=$tmp/hookroot
	(fx=$(cd "$top/fixtures/ko/6.12" && pwd) &&
		rel=$(sed -n 's/^release=//p' "$fx/kernel.txt") &&
		hook_root "$r" kp_gpl_prov kp_prop_prov kp_use_prop 2>/dev/null)
	C=(hook --root "$r" kp_use_prop)
	run hook-ref KOPOLICY_CACHE=off
	run hook HOME="$h" KOPOLICY_CACHE_STATS=1
	grep -v '^kopolicy: \(\(base \)\?cache\|depmod indexes\|libkmod\): [0-9]' "$tmp/hook.err" \
		>"$tmp/hook.rest"
	cmp -s "$tmp/hook.rest" "$tmp/hook-ref.err" && cmp -s "$tmp/hook.rc" "$tmp/hook-ref.rc" &&
		grep -q kp_use_prop "$tmp/hook.err" && ls "$vc"/base-v1/*.base >/dev/null 2>&1 &&
		files "$h" | cmp -s - "$tmp/user.before"
	ok "${cases[6]}" $?
else
	skip "${cases[6]}" "depmod (kmod) is not installed"
fi

tap_done
