#!/usr/bin/env bash
# modprobe.d directories of the same file name under a root whose /usr is not merged: the file
# of the first directory in libkmod's order hides the others (kmod's conf_files_list(), the
# default config paths of kmod 32 to 34: etc, run, usr/local/lib, usr/lib, then lib; kmod 30
# and 31 read no usr/lib/modprobe.d at all, and on a merged /usr the two are one directory).
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/hook-root.sh"
PATH=$PATH:/sbin:/usr/sbin
if ! command -v depmod >/dev/null; then
	echo "1..0 # SKIP depmod (kmod) is not installed"
	exit 0
fi
tap_fixture 6.12
export KOPOLICY_CACHE_DIR=$tmp/cache KOPOLICY_RUN_CACHE=off

r=$tmp/root
hook_root "$r" kp_plain kp_nolicense
mkdir -p "$r/usr/lib/modprobe.d" "$r/lib/modprobe.d" "$r/usr/local/lib/modprobe.d"
# hook NAME: kopolicy hook -v on the root, its status and messages
hook() {
	"$kp" hook -v --root "$r" --on-error fail-closed "$1" >/dev/null 2>"$tmp/err"
	echo $?
}

echo 'blacklist kp_plain' >"$r/lib/modprobe.d/dup.conf"
hook kp_plain >/dev/null
grep -q "kp_plain.*blacklisted in modprobe.d" "$tmp/err"
ok "lib/modprobe.d/dup.conf alone: its blacklist line is read" $?

: >"$r/usr/lib/modprobe.d/dup.conf"
hook kp_plain >/dev/null
grep -q "blacklisted" "$tmp/err"
is "usr/lib/modprobe.d/dup.conf (empty) beside it: it hides lib's file of that name" $? 1

echo 'blacklist kp_plain' >"$r/usr/lib/modprobe.d/dup.conf"
: >"$r/lib/modprobe.d/dup.conf"
hook kp_plain >/dev/null
grep -q "kp_plain.*blacklisted in modprobe.d" "$tmp/err"
ok "... and the other way round: usr/lib's blacklist line is read, lib's empty file hidden" $?

: >"$r/usr/local/lib/modprobe.d/dup.conf"
hook kp_plain >/dev/null
grep -q "blacklisted" "$tmp/err"
is "usr/local/lib/modprobe.d/dup.conf (empty) hides usr/lib's" $? 1

tap_done
