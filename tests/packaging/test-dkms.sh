#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The DKMS POST_BUILD hook end to end with the real dkms: `dkms build -k $KREL` of fixture
# modules against the installed headers, in a private dkms/source/install tree.
#  1. clean module (kp_plain): built, kopolicy checked it against $KREL, stays built;
#  2. a module failing the 2020 rule, mode=warn: kopolicy's finding in dkms's output, the
#     module stays built;
#  3. the same, mode=fail: the built modules are removed and `dkms install` fails.
set -u
. "$(dirname "$0")/lib.sh"
command -v dkms >/dev/null || skip_all "no dkms"
[ "$(id -u)" = 0 ] || skip_all "dkms needs root"
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
export KOPOLICY_DKMS_CONF=$tmp/kopolicy.conf
hook=$PKGROOT$PKG_LIBEXECDIR/dkms-post-build
trees=(--dkmstree "$tmp/dkms" --sourcetree "$tmp/src" --installtree "$tmp/lib-modules")
mkdir -p "$tmp/dkms" "$tmp/src" "$tmp/lib-modules"

# make_dkms NAME MODULE...: a DKMS source tree NAME-1.0 with the fixture sources
make_dkms() {
	local name=$1 d=$tmp/src/$1-1.0 i=0 m
	shift
	make_module_src "$d" "$@"
	{
		echo "PACKAGE_NAME=\"$name\""
		echo 'PACKAGE_VERSION="1.0"'
		echo 'MAKE[0]="make -C $kernel_source_dir M=$dkms_tree/$PACKAGE_NAME/$PACKAGE_VERSION/build modules"'
		echo 'CLEAN="true"'
		for m in "$@"; do
			echo "BUILT_MODULE_NAME[$i]=\"$m\""
			echo "DEST_MODULE_LOCATION[$i]=\"/updates/dkms\""
			i=$((i + 1))
		done
		echo 'AUTOINSTALL="yes"'
		echo 'POST_BUILD="kopolicy-post-build $kernelver $arch"'
	} > "$d/dkms.conf"
	printf '#!/bin/sh\n[ -x %s ] || exit 0\nexec %s "$@"\n' "$hook" "$hook" \
		> "$d/kopolicy-post-build"
	chmod +x "$d/kopolicy-post-build"
	dkms add "${trees[@]}" -m "$name" -v 1.0 > "$tmp/$name.add.log" 2>&1
}
built() { # NAME: the modules dkms keeps for $KREL
	ls "$tmp/dkms/$1/1.0/$KREL"/*/module/ 2>/dev/null | grep -c '\.ko'
}

# 1. clean
echo mode=fail > "$KOPOLICY_DKMS_CONF"
make_dkms kpgood kp_plain
dkms build "${trees[@]}" -m kpgood -v 1.0 -k "$KREL" > "$tmp/good.log" 2>&1
is "dkms build of a clean module exits 0" $? 0
grep -q "Running the post_build script" "$tmp/good.log"
ok "dkms ran the POST_BUILD hook" $?
grep -q "kopolicy-post-build: dkms $KREL: checking 1 module(s) against kernel $KREL" \
	"$tmp/good.log"
ok "the hook checked the module against the kernel it was built for ($KREL)" $?
grep -q "1 module: 0 fail to load, 0 proprietary (P)" "$tmp/good.log"
ok "kopolicy's summary: 1 module, 0 failing" $?
is "mode=fail leaves a clean module built" "$(built kpgood)" 1

# 2. failing, warn
echo mode=warn > "$KOPOLICY_DKMS_CONF"
make_dkms kpbadwarn kp_prop_prov kp_prop_then_gplonly
dkms build "${trees[@]}" -m kpbadwarn -v 1.0 -k "$KREL" > "$tmp/warn.log" 2>&1
is "mode=warn: dkms build exits 0" $? 0
grep -E -q "kp_prop_then_gplonly: E: (gpl-proprietary-mix|gpl-only-symbol):" "$tmp/warn.log"
ok "mode=warn: kopolicy's finding for kp_prop_then_gplonly in dkms's output" $?
grep -q "mode=warn: going on" "$tmp/warn.log"
ok "mode=warn says it goes on" $?
is "mode=warn: both modules stay built" "$(built kpbadwarn)" 2

# 3. failing, fail
echo mode=fail > "$KOPOLICY_DKMS_CONF"
make_dkms kpbadfail kp_prop_prov kp_prop_then_gplonly
dkms build "${trees[@]}" -m kpbadfail -v 1.0 -k "$KREL" > "$tmp/fail.log" 2>&1
grep -E -q "kp_prop_then_gplonly: E: (gpl-proprietary-mix|gpl-only-symbol):" "$tmp/fail.log"
ok "mode=fail: kopolicy's finding in dkms's output" $?
grep -q "mode=fail: removing the modules built for $KREL" "$tmp/fail.log"
ok "mode=fail: the hook says it removes the modules" $?
is "mode=fail: no module left built" "$(built kpbadfail)" 0
dkms install "${trees[@]}" -m kpbadfail -v 1.0 -k "$KREL" > "$tmp/install.log" 2>&1
st=$?
[ $st -ne 0 ]
ok "mode=fail: dkms install then fails (status $st)" $?
! find "$tmp/lib-modules" -name 'kp_prop_then_gplonly.ko*' | grep -q .
ok "mode=fail: nothing installed" $?

if [ "$failed" -ne 0 ]; then
	for l in "$tmp"/*.log; do echo "# --- $l"; tail -30 "$l" | sed 's/^/# /'; done
fi
finish
