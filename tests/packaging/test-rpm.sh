#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# %kopolicy_check end to end: rpmbuild (Debian's rpm package) builds a kmod-style spec that
# installs prebuilt fixture modules (fixtures/ko/<series>/, built against $KREL's headers)
# and calls %kopolicy_check in %install.
#  1. kp_plain: the package builds; 2. kp_prop_prov + kp_prop_then_gplonly (2020 rule): the
#  build fails with kopolicy's message; 3. the same with -o overrides: builds;
#  4. kmodtool style: the same modules for two kernels in one build root (-k R1,R2, -H for
#  the second kernel's headers tree): each checked against its own kernel, builds;
#  5. a module importing from a module the package does not ship: fails; with -p: builds.
set -u
. "$(dirname "$0")/lib.sh"
command -v rpmbuild >/dev/null || skip_all "no rpmbuild (rpm)"
# the prebuilt fixtures whose vermagic is $KREL
fxko=
for d in "$srcdir"/fixtures/ko/*/; do
	grep -qx "release=$KREL" "$d/kernel.txt" 2>/dev/null && fxko=${d%/} && break
done
[ -n "$fxko" ] || skip_all "no prebuilt fixtures for $KREL (fixtures/ko/*/kernel.txt)"
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
macros=$PKGROOT$PKG_RPMMACRODIR/macros.kopolicy
brp=$PKGROOT$PKG_LIBEXECDIR/brp-kopolicy

# make_spec NAME CHECKARGS MODULE...
make_spec() {
	local name=$1 args=$2 i=0 m
	shift 2
	mkdir -p "$tmp/$name/SOURCES" "$tmp/$name/SPECS"
	{
		echo "Name: kmod-$name"
		echo "Version: 1.0"
		echo "Release: 1"
		echo "Summary: kopolicy RPM test ($name)"
		echo "License: GPL-2.0-only"
		for m in "$@"; do
			cp "$fxko/$m.ko" "$tmp/$name/SOURCES/"
			echo "Source$i: $m.ko"
			i=$((i + 1))
		done
		[ -f "$tmp/$name.overrides" ] && cp "$tmp/$name.overrides" "$tmp/$name/SOURCES/" &&
			echo "Source99: $name.overrides"
		cat <<SPEC
%global debug_package %{nil}
%global __os_install_post %{nil}
%description
Prebuilt kernel modules for $KREL.
%install
mkdir -p %{buildroot}/lib/modules/$KREL/extra/$name
install -m644 %{_sourcedir}/*.ko %{buildroot}/lib/modules/$KREL/extra/$name/
%kopolicy_check $args
%files
/lib/modules/$KREL/extra/$name
SPEC
	} > "$tmp/$name/SPECS/$name.spec"
}
rpm_build() { # NAME
	rpmbuild --load "$macros" --define "_topdir $tmp/$1" --define "__brp_kopolicy $brp" \
		--nodeps -bb "$tmp/$1/SPECS/$1.spec" > "$tmp/$1.log" 2>&1
}

make_spec good "" kp_plain
rpm_build good
is "kmod spec with a clean module builds" $? 0
grep -q "kopolicy_check: checking 1 module(s) against kernel $KREL" "$tmp/good.log"
ok "%kopolicy_check found the module and its kernel ($KREL, from the vermagic)" $?
ls "$tmp"/good/RPMS/*/kmod-good-1.0-1.*.rpm >/dev/null 2>&1
ok "the rpm was produced" $?

make_spec bad "" kp_prop_prov kp_prop_then_gplonly
rpm_build bad
st=$?
[ $st -ne 0 ]
ok "kmod spec with a module failing the 2020 rule: rpmbuild fails (status $st)" $?
grep -E -q "kp_prop_then_gplonly: E: (gpl-proprietary-mix|gpl-only-symbol):" "$tmp/bad.log"
ok "rpmbuild's log has kopolicy's finding" $?
grep -q "Bad exit status from .*(%install)" "$tmp/bad.log"
ok "rpmbuild stops in %install" $?
! ls "$tmp"/bad/RPMS/*/*.rpm >/dev/null 2>&1
ok "no rpm was produced" $?

printf 'gpl-proprietary-mix kp_prop_then_gplonly\ngpl-only-symbol kp_prop_then_gplonly\n' \
	> "$tmp/waived.overrides"
make_spec waived "-k $KREL -o %{SOURCE99}" kp_prop_prov kp_prop_then_gplonly
rpm_build waived
is "with -k and -o overrides the same spec builds" $? 0
grep -q "\[waived\]" "$tmp/waived.log"
ok "overridden findings are printed, marked [waived]" $?

make_spec warn "-w" kp_prop_prov kp_prop_then_gplonly
rpm_build warn
is "-w (warn only) builds" $? 0

# 4. two kernels in one build root
if second_kernel "$tmp/headers2"; then
	mkdir -p "$tmp/multi/SOURCES/k1" "$tmp/multi/SOURCES/k2" "$tmp/multi/SPECS"
	cp "$fxko/kp_gpl_prov.ko" "$fxko/kp_ns_ok.ko" "$tmp/multi/SOURCES/k1/"
	cp "$K2KO/kp_gpl_prov.ko" "$K2KO/kp_ns_ok.ko" "$tmp/multi/SOURCES/k2/"
	cat > "$tmp/multi/SPECS/multi.spec" <<SPEC
Name: kmod-multi
Version: 1.0
Release: 1
Summary: kopolicy RPM test (two kernels)
License: GPL-2.0-only
%global debug_package %{nil}
%global __os_install_post %{nil}
%description
Prebuilt kernel modules for $KREL and $K2REL.
%install
mkdir -p %{buildroot}/lib/modules/$KREL/extra/multi %{buildroot}/lib/modules/$K2REL/extra/multi
install -m644 %{_sourcedir}/k1/*.ko %{buildroot}/lib/modules/$KREL/extra/multi/
install -m644 %{_sourcedir}/k2/*.ko %{buildroot}/lib/modules/$K2REL/extra/multi/
%kopolicy_check -k $KREL,$K2REL -H $K2HDR
%files
/lib/modules/$KREL/extra/multi
/lib/modules/$K2REL/extra/multi
SPEC
	rpm_build multi
	is "two kernels in one build root: the package builds" $? 0
	grep -q "kopolicy_check: checking 2 module(s) against kernel $KREL (/" "$tmp/multi.log"
	ok "the $KREL modules checked against $KREL" $?
	grep -q "kopolicy_check: checking 2 module(s) against kernel $K2REL ($K2HDR)" \
		"$tmp/multi.log"
	ok "the $K2REL modules checked against $K2REL" $?
	! grep -E -q "crc-mismatch|module-layout" "$tmp/multi.log"
	ok "two kernels: no false crc-mismatch or module-layout" $?
else
	echo "# no prebuilt fixtures of a second kernel: two-kernel case skipped"
fi

# 5. providers
make_spec user "" kp_ns_ok
rpm_build user
st=$?
[ $st -ne 0 ]
ok "a module importing from a module not shipped: rpmbuild fails (status $st)" $?
grep -q "kp_ns_ok: E: unknown-symbol: kp_gpl_prov_ns" "$tmp/user.log"
ok "unknown-symbol in the log" $?
make_spec userprov "-p $fxko/kp_gpl_prov.ko" kp_ns_ok
rpm_build userprov
is "with -p PROVIDER the same spec builds" $? 0

if [ "$failed" -ne 0 ]; then
	for l in "$tmp"/*.log; do echo "# --- $l"; tail -30 "$l" | sed 's/^/# /'; done
fi
finish
