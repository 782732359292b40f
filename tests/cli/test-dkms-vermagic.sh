#!/usr/bin/env bash
# A DKMS build's module cannot escape the PRE_INSTALL check by naming another kernel in its
# vermagic. dkms installs every module it built for KERNELVER into KERNELVER's tree, and with
# MODVERSIONS the kernel loads one whose vermagic names another release (same_magic() skips
# the release when the module has CRCs). check-built grouped the modules by their vermagic and
# skipped the group "not for a --release kernel" with a line on stderr: mode=fail let such a
# module be installed unchecked. The DKMS hooks now pass --one-kernel: every module is
# checked as KERNELVER. Runs the built dkms-pre-install and check-built on a dkms tree laid
# out as dkms lays it out (no dkms needed), as root or as a user. Also check-built's other
# ways of leaving a module unchecked: a path with a newline, a directory find cannot read.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
build=$(cd "$(dirname "$kp")/.." && pwd)
fx=$top/fixtures/ko/6.12
rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
. "$top/tests/lib/tap.sh"
tap_tmpdir

has() { # description, fixed string the output of the last run must contain
	if grep -qF -- "$2" "$tmp/out"; then ok "$1" 0; else
		ok "$1" 1; echo "#   want: $2"; sed 's/^/#   got:  /' "$tmp/out"; fi
}

# headers for $rel; a dkms tree NAME/1.0/$rel/x86_64/module with a clean module and one that
# fails to load (kp_gplonly_then_prop: an unknown symbol) whose vermagic names 6.12.999
hdr=$tmp/hdr
mkdir -p "$hdr/include/generated" "$tmp/root/lib/modules/$rel"
zcat "$fx/Module.symvers.gz" > "$hdr/Module.symvers"
zcat "$fx/config.gz" > "$hdr/.config"
echo "#define UTS_RELEASE \"$rel\"" > "$hdr/include/generated/utsrelease.h"
mdir=$tmp/dkms/kpvm/1.0
mod=$mdir/$rel/x86_64/module
mkdir -p "$mod" "$mdir/source"
cp "$fx/kp_plain.ko" "$mod/"
python3 - "$fx/kp_gplonly_then_prop.ko" "$mod/kp_other.ko" "$rel" << 'EOF'
import sys
src, dst, rel = sys.argv[1:]
d = open(src, "rb").read()
old = ("vermagic=" + rel + " ").encode()
new = ("vermagic=" + "6.12.999" + rel[len("6.12.999"):] + " ").encode()
assert len(old) == len(new) and d.count(old) == 1
open(dst, "wb").write(d.replace(old, new))
EOF
ok "a module whose vermagic names another release (6.12.999...)" $?
printf 'mode=fail\n' > "$tmp/kopolicy.conf"

export KOPOLICY=$kp KOPOLICY_ROOT=$tmp/root KOPOLICY_DKMS_CONF=$tmp/kopolicy.conf
export KOPOLICY_CHECK_BUILT=$build/contrib/scripts/check-built
# the runs stay out of the user's caches
export KOPOLICY_CHECK_ARGS=--no-cache
# pre_install [OPTION...]: the hook on the module directory for $rel, its output in $tmp/out
pre_install() {
	sh "$build/contrib/dkms/dkms-pre-install" "$@" --headers "$hdr" "$mdir" "$rel" x86_64 \
		> "$tmp/out" 2>&1
}

pre_install
is "dkms-pre-install, mode=fail: refused (1)" "$?" 1
has "... both modules checked as $rel" "checking 2 module(s) against kernel $rel"
has "... the other-vermagic module's failure reported" \
	"kp_gplonly_then_prop: E: unknown-symbol: kp_prop_plain"
if grep -qF "not checked" "$tmp/out"; then ok "... none skipped" 1; else ok "... none skipped" 0; fi

# a quoted mode is the same mode (read as [a-z]*, mode="fail" was warn, without a word); a
# value neither warn nor fail is said
printf 'mode=warn\nmode.kpvm="fail"\n' > "$tmp/quoted.conf"
KOPOLICY_DKMS_CONF=$tmp/quoted.conf pre_install
is "dkms-pre-install, mode.kpvm=\"fail\": refused (1)" "$?" 1
printf "mode='fail'\n" > "$tmp/quoted.conf"
KOPOLICY_DKMS_CONF=$tmp/quoted.conf pre_install
is "dkms-pre-install, mode='fail': refused (1)" "$?" 1
printf 'mode=Fail\n' > "$tmp/quoted.conf"
KOPOLICY_DKMS_CONF=$tmp/quoted.conf pre_install
is "dkms-pre-install, mode=Fail: warn, installed (0)" "$?" 0
has "... said" "mode must be warn or fail, not 'Fail'"

# a check that cannot run does not let mode=fail install: check-built missing refused the
# installation as its exit 2 does (before: "not checked" and exit 0); mode=warn goes on
KOPOLICY_CHECK_BUILT=$tmp/no-check-built pre_install
is "dkms-pre-install, mode=fail, check-built missing: refused (1)" "$?" 1
has "... said" "no-check-built not found: refusing the installation (mode=fail)"
KOPOLICY_CHECK_BUILT=$tmp/no-check-built pre_install --mode warn
is "... mode=warn: installed (0)" "$?" 0
has "... said" "no-check-built not found: not checked (mode=warn)"

# no temporary directory: mode=warn goes on (it exited 1: dkms refused the installation in
# any mode), mode=fail refuses
TMPDIR=$tmp/no-such-dir pre_install --mode warn
is "dkms-pre-install, mode=warn, no temporary directory: installed (0)" "$?" 0
has "... said" "cannot make a temporary directory: not checked (mode=warn)"
TMPDIR=$tmp/no-such-dir pre_install
is "... mode=fail: refused (1)" "$?" 1

# a "tmp" in the environment is not the hook's temporary directory: it was removed (rm -rf)
# when the hook ended before making its own (no build for the kernel, check-built missing)
# and ran the package's PRE_INSTALL
mkdir -p "$tmp/inherited"
printf '#!/bin/sh\necho "package pre_install $*"\n' > "$tmp/pkg-pre-install"
chmod +x "$tmp/pkg-pre-install"
tmp=$tmp/inherited sh "$build/contrib/dkms/dkms-pre-install" "$mdir" 0.0-none x86_64 \
	-- "$tmp/pkg-pre-install" 0.0-none > "$tmp/out" 2>&1
is "dkms-pre-install, no build for the kernel: exits 0" "$?" 0
has "... the package's PRE_INSTALL ran" "package pre_install 0.0-none"
[ -d "$tmp/inherited" ]
ok "... an inherited \$tmp is left alone" $?

# a module whose name holds a newline is not read as other paths: "a<NL>b.ko" (failing) was
# read as the clean a beside it and a clean b.ko in the working directory (dkms's: the
# package's source tree): exit 0, the failing module never checked
nlmod=$tmp/nl/1.0/$rel/x86_64/module
mkdir -p "$nlmod" "$tmp/nl/1.0/source"
cp "$fx/kp_plain.ko" "$nlmod/a"
cp "$fx/kp_gplonly_then_prop.ko" "$nlmod/a
b.ko"
cp "$fx/kp_gpl_prov.ko" "$tmp/nl/1.0/source/b.ko"
(cd "$tmp/nl/1.0/source" && sh "$build/contrib/dkms/dkms-pre-install" --headers "$hdr" \
	"$tmp/nl/1.0" "$rel" x86_64) > "$tmp/out" 2>&1
is "dkms-pre-install, mode=fail, a module named a<NL>b.ko: refused (1)" "$?" 1
has "... said" "1 module(s) whose path holds a newline: not checked"
(cd "$tmp/nl/1.0/source" && sh "$KOPOLICY_CHECK_BUILT" --release "$rel" --one-kernel \
	--headers "$hdr" --mode warn -- "$nlmod") > "$tmp/out" 2>&1
is "check-built --mode warn: goes on (0)" "$?" 0
has "... said" "1 module(s) whose path holds a newline: not checked"

# a directory find cannot read (a build root's mode 000 directory, built as a user: rpmbuild,
# dpkg-buildpackage): find's status was lost in its pipeline, the failing module there was
# never seen, and "no kernel modules" exited 0 in mode=fail. As root the check runs as nobody.
ur=$tmp/unreadable
mkdir -p "$ur/lib/modules/$rel/extra/hidden"
cp "$fx/kp_gplonly_then_prop.ko" "$ur/lib/modules/$rel/extra/hidden/"
as_user() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	else
		"$@"
	fi
}
chmod 755 "$tmp"
chmod -R go+rX "$hdr" "$ur"
chmod 000 "$ur/lib/modules/$rel/extra/hidden"
if ! as_user test -x "$kp" || ! as_user test -r "$KOPOLICY_CHECK_BUILT" ||
	as_user test -r "$ur/lib/modules/$rel/extra/hidden"; then
	skip "check-built, an unreadable directory: refused (2)" "no user that cannot read it"
	skip "... said" "no user that cannot read it"
	skip "check-built --mode warn, an unreadable directory: goes on (0)" "no such user"
else
	as_user sh "$KOPOLICY_CHECK_BUILT" --headers "$hdr" -- "$ur" > "$tmp/out" 2>&1
	is "check-built, an unreadable directory: refused (2)" "$?" 2
	has "... said" "$ur: cannot read all of it (see above): modules there may be left unchecked"
	as_user sh "$KOPOLICY_CHECK_BUILT" --headers "$hdr" --mode warn -- "$ur" > "$tmp/out" 2>&1
	is "check-built --mode warn, an unreadable directory: goes on (0)" "$?" 0
fi
chmod 755 "$ur/lib/modules/$rel/extra/hidden"
chmod 700 "$tmp"

sh "$KOPOLICY_CHECK_BUILT" --release "$rel" --one-kernel --headers "$hdr" -- "$mod" \
	> "$tmp/out" 2>&1
is "check-built --one-kernel: the findings' status (1)" "$?" 1

# killed while kopolicy runs (a kopolicy that waits for the signal): the temporary directory
# goes (dash runs no EXIT trap for a signal) and the status says so, never 0 (not SIGINT: a
# command started in the background by a script ignores it, and so would its trap)
mkdir -p "$tmp/sigtmp"
printf '#!/bin/sh
touch "%s/started"
exec sleep 30
' "$tmp" > "$tmp/slow-kopolicy"
chmod +x "$tmp/slow-kopolicy"
for sig in TERM HUP; do
	rm -f "$tmp/started"
	TMPDIR=$tmp/sigtmp KOPOLICY=$tmp/slow-kopolicy sh "$KOPOLICY_CHECK_BUILT" --release "$rel" \
		--one-kernel --headers "$hdr" -- "$mod" > "$tmp/out" 2>&1 &
	pid=$!
	for _ in $(seq 100); do [ -e "$tmp/started" ] && break; sleep 0.1; done
	kill -s "$sig" "$pid"
	wait "$pid"
	st=$?
	is "check-built killed (SIG$sig) during the check: non-zero, its temporary directory gone" \
		"$([ "$st" -ne 0 ] && echo failed):$(ls "$tmp/sigtmp")" "failed:"
	pkill -f "sleep 30" 2>/dev/null
done
sh "$KOPOLICY_CHECK_BUILT" --release "$rel" --release 6.12.999 --one-kernel -- "$mod" \
	> "$tmp/out" 2>&1
is "check-built --one-kernel with two --release: a usage error (2)" "$?" 2
has "... said" "--one-kernel takes one --release"
# without it, modules are grouped by kernel as before (a package for several kernels)
sh "$KOPOLICY_CHECK_BUILT" --release "$rel" --headers "$hdr" -- "$mod" > "$tmp/out" 2>&1
has "check-built without --one-kernel: the other release's module is skipped, said" \
	"not checked: 1 module(s) built for 6.12.999"

tap_done
