#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dh_kopolicy end to end: dpkg-buildpackage builds a Debian package of out-of-tree modules
# against the installed linux-headers-$KREL, with the real debhelper and the kopolicy
# sequence loaded from Build-Depends: dh-sequence-kopolicy.
#  1. clean module (kp_plain): the build passes, dh_kopolicy ran after dh_install, and an
#     unused override is reported;
#  2. a GPL module importing from a proprietary module in the same package (kp_prop_prov +
#     kp_prop_then_gplonly, the 2020 rule): the build fails with kopolicy's message;
#  3. the same with debian/<pkg>.kopolicy-overrides accepting those findings: passes;
#  4. a package holding modules for two kernels (built for $KREL, and prebuilt fixtures of a
#     second kernel; dh_kopolicy --headers for its headers tree): each group is checked
#     against its own kernel and the package builds;
#  5. a module importing from a module of another package: dh_kopolicy --provider;
#  6. a package directory the build cannot read (as a user): dh_kopolicy fails.
set -u
. "$(dirname "$0")/lib.sh"
command -v dpkg-buildpackage >/dev/null || skip_all "no dpkg-buildpackage (dpkg-dev)"
command -v dh >/dev/null || skip_all "no debhelper"
export PATH=$PKGROOT$PKG_BINDIR:$PATH
export PERL5LIB=$PKGROOT$PKG_DEBHELPERDIR${PERL5LIB:+:$PERL5LIB}
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT

# make_pkg DIR PKGNAME MODULE...
make_pkg() {
	local d=$1 pkg=$2
	shift 2
	make_module_src "$d/src" "$@"
	mkdir -p "$d/debian"
	cat > "$d/debian/control" <<CTL
Source: $pkg
Section: kernel
Priority: optional
Maintainer: kopolicy tests <kopolicy@localhost>
Build-Depends: debhelper-compat (= 13), dh-sequence-kopolicy, linux-headers-$KREL
Standards-Version: 4.6.2

Package: $pkg
Architecture: any
Depends: \${misc:Depends}
Description: kopolicy test modules
 Out-of-tree kernel modules for kopolicy's packaging test.
CTL
	cat > "$d/debian/changelog" <<CL
$pkg (1.0) unstable; urgency=medium

  * Test.

 -- kopolicy tests <kopolicy@localhost>  Fri, 04 Dec 2026 00:00:00 +0000
CL
	cat > "$d/debian/rules" <<'RULES'
#!/usr/bin/make -f
%:
	dh $@
override_dh_auto_build:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/src modules
override_dh_auto_install:
	install -D -m644 -t debian/$(PKG)/lib/modules/$(KREL)/updates src/*.ko
	$(EXTRA_INSTALL)
override_dh_kopolicy:
	dh_kopolicy $(KOPOLICY_DH_ARGS)
override_dh_auto_clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/src clean || true
RULES
	chmod +x "$d/debian/rules"
}

build_pkg() { # DIR PKG [EXTRA_INSTALL [DH_KOPOLICY ARGS]] -> status, log in DIR.log
	(cd "$1" && KDIR=$KDIR KREL=$KREL PKG=$2 EXTRA_INSTALL=${3:-} KOPOLICY_DH_ARGS=${4:-} \
		dpkg-buildpackage -us -uc -b -d) > "$1.log" 2>&1
}

# 1. clean
make_pkg "$tmp/good" kp-good kp_plain
printf 'symbol-get-non-gpl kp_plain\n' > "$tmp/good/debian/kp-good.kopolicy-overrides"
build_pkg "$tmp/good" kp-good
is "clean module package builds" $? 0
grep -q '^ *dh_kopolicy' "$tmp/good.log"
ok "dh_kopolicy ran (sequence from Build-Depends: dh-sequence-kopolicy)" $?
# (dh skips dh_install when a package has no debian/*.install: then dh_auto_install's step)
i=$(grep -n -E '^ +(dh_install|debian/rules override_dh_auto_install)( |$)' "$tmp/good.log" |
	tail -n1 | cut -d: -f1)
k=$(grep -n -E '^ +(dh_kopolicy|debian/rules override_dh_kopolicy)( |$)' "$tmp/good.log" |
	head -n1 | cut -d: -f1)
d=$(grep -n -E '^ +dh_installdocs( |$)' "$tmp/good.log" | head -n1 | cut -d: -f1)
[ -n "$i" ] && [ -n "$k" ] && [ -n "$d" ] && [ "$k" -gt "$i" ] && [ "$k" -lt "$d" ]
ok "dh_kopolicy runs after dh_install, before dh_installdocs" $?
grep -q "dh_kopolicy: kp-good: checking 1 module(s) against kernel $KREL" "$tmp/good.log"
ok "checked against the installed headers' kernel $KREL" $?
grep -q "kp-good.kopolicy-overrides:1: warning: unused waiver: symbol-get-non-gpl kp_plain" \
	"$tmp/good.log"
ok "an unused override is reported with file and line" $?
ls "$tmp"/kp-good_1.0_*.deb >/dev/null 2>&1
ok "the .deb was produced" $?
dpkg-deb -c "$tmp"/kp-good_1.0_*.deb 2>/dev/null | grep -q "lib/modules/$KREL/updates/kp_plain.ko"
ok "the .deb holds the module" $?

# 2. the 2020 rule breaks the GPL module
make_pkg "$tmp/bad" kp-bad kp_prop_prov kp_prop_then_gplonly
build_pkg "$tmp/bad" kp-bad
st=$?
[ $st -ne 0 ]
ok "package with a module failing the 2020 rule: build fails (status $st)" $?
grep -E -q "kp_prop_then_gplonly: E: (gpl-proprietary-mix|gpl-only-symbol):.*(proprietary)" \
	"$tmp/bad.log"
ok "the build log has kopolicy's finding for kp_prop_then_gplonly" $?
grep -q "dh_kopolicy: error: .*check-built .*returned exit code 1" "$tmp/bad.log"
ok "debhelper reports dh_kopolicy's failure" $?
! ls "$tmp"/kp-bad_1.0_*.deb >/dev/null 2>&1
ok "no .deb was produced" $?

# 3. overrides accept the findings
make_pkg "$tmp/waived" kp-waived kp_prop_prov kp_prop_then_gplonly
printf '# known: uses our own proprietary core\ngpl-proprietary-mix kp_prop_then_gplonly\ngpl-only-symbol kp_prop_then_gplonly ktime_get\n' \
	> "$tmp/waived/debian/kp-waived.kopolicy-overrides"
build_pkg "$tmp/waived" kp-waived
is "with kopolicy-overrides the same package builds" $? 0
grep -q "\[waived\]" "$tmp/waived.log"
ok "overridden findings are still printed, marked [waived]" $?

# 4. two kernels in one package
if second_kernel "$tmp/headers2"; then
	make_pkg "$tmp/multi" kp-multi kp_gpl_prov kp_ns_ok
	mkdir -p "$tmp/k2"
	cp "$K2KO/kp_gpl_prov.ko" "$K2KO/kp_ns_ok.ko" "$tmp/k2/"
	build_pkg "$tmp/multi" kp-multi \
		"install -D -m644 -t debian/kp-multi/lib/modules/$K2REL/updates $tmp/k2/*.ko" \
		"--headers $K2HDR"
	is "a package with modules for $KREL and $K2REL builds" $? 0
	grep -q "dh_kopolicy: kp-multi: checking 2 module(s) against kernel $KREL (/" \
		"$tmp/multi.log"
	ok "the $KREL modules checked against $KREL" $?
	grep -q "dh_kopolicy: kp-multi: checking 2 module(s) against kernel $K2REL ($K2HDR)" \
		"$tmp/multi.log"
	ok "the $K2REL modules checked against $K2REL" $?
	! grep -E -q "crc-mismatch|module-layout" "$tmp/multi.log"
	ok "two kernels: no false crc-mismatch or module-layout" $?
else
	echo "# no prebuilt fixtures of a second kernel: two-kernel case skipped"
fi

# 5. a provider from another package (its Module.symvers, as a -dev package ships it)
make_module_src "$tmp/provbuild" kp_gpl_prov
make -C "$KDIR" M="$tmp/provbuild" modules > "$tmp/provbuild.log" 2>&1
make_pkg "$tmp/user" kp-user kp_ns_ok
sed -i 's|M=$(CURDIR)/src modules|M=$(CURDIR)/src KBUILD_EXTRA_SYMBOLS='"$tmp"'/provbuild/Module.symvers modules|' \
	"$tmp/user/debian/rules"
build_pkg "$tmp/user" kp-user
st=$?
[ $st -ne 0 ]
ok "a module importing from another package's module, no provider: build fails ($st)" $?
grep -q "kp_ns_ok: E: unknown-symbol: kp_gpl_prov_ns" "$tmp/user.log"
ok "no provider: unknown-symbol in the log" $?
build_pkg "$tmp/user" kp-user "" "--provider $tmp/provbuild/Module.symvers"
is "dh_kopolicy --provider Module.symvers: the package builds" $? 0

# 6. a directory of the package the build cannot read (built as a user: a mode 000 directory):
# File::Find only warned, the package had no modules and dh_kopolicy exited 0 with a failing
# module in it unchecked. dh_kopolicy run directly (as nobody when root), with the built
# check-built
ur=$tmp/unreadable
mkdir -p "$ur/debian/kp-ur/lib/modules/$KREL/updates/hidden"
sed -n '1,/^$/p' "$tmp/good/debian/control" > "$ur/debian/control"
printf '\nPackage: kp-ur\nArchitecture: any\nDescription: x\n x\n' >> "$ur/debian/control"
sed 's/^kp-good/kp-ur/' "$tmp/good/debian/changelog" > "$ur/debian/changelog"
cp "$tmp/bad/src/kp_prop_then_gplonly.ko" "$ur/debian/kp-ur/lib/modules/$KREL/updates/hidden/"
as_user() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent "$@"
	else
		env "$@"
	fi
}
chmod 755 "$tmp"
chmod -R a+rX "$ur"
chmod 777 "$ur/debian"
chmod 000 "$ur/debian/kp-ur/lib/modules/$KREL/updates/hidden"
if as_user test -x "$PKGROOT$PKG_BINDIR/dh_kopolicy" &&
	! as_user test -r "$ur/debian/kp-ur/lib/modules/$KREL/updates/hidden"; then
	(cd "$ur" && as_user KOPOLICY_CHECK_BUILT="$PKGROOT$PKG_LIBEXECDIR/check-built" \
		KOPOLICY_CHECK_ARGS=--no-cache dh_kopolicy) > "$tmp/unreadable.log" 2>&1
	st=$?
	[ $st -ne 0 ]
	ok "a package directory dh_kopolicy cannot read: dh_kopolicy fails ($st)" $?
	grep -q "cannot read all of it" "$tmp/unreadable.log"
	ok "... check-built says it could not read it" $?
else
	echo "# no user that cannot read a mode 000 directory: unreadable case skipped"
fi
chmod 755 "$ur/debian/kp-ur/lib/modules/$KREL/updates/hidden"

if [ "$failed" -ne 0 ]; then
	for l in "$tmp"/*.log; do echo "# --- $l"; tail -30 "$l" | sed 's/^/# /'; done
fi
finish
