#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# kopolicy's own RPMs: rpmbuild -ta on the release tarball ($PKG_DIST, from make dist; the
# spec is its top-level kopolicy.spec) builds kopolicy and the source RPM (--nodeps: this is
# Debian's rpm, the BuildRequires are Fedora names; --without check: make check runs on its
# own in CI); the contents are where rpm and kernel-install read them, and the RPM installed
# into a test root (rpm --root) gives %kopolicy_check to a kmod spec
# (tests/packaging/test-rpm.sh against that root).
set -u
. "$(dirname "$0")/lib.sh"
command -v rpmbuild >/dev/null || skip_all "no rpmbuild (rpm)"
[ -f "${PKG_DIST:-}" ] || skip_all "no release tarball (PKG_DIST, make dist)"
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
ver=$(basename "$PKG_DIST")
ver=${ver#kopolicy-}
ver=${ver%.tar.*}
tar -xOf "$PKG_DIST" "kopolicy-$ver/kopolicy.spec" > "$tmp/kopolicy.spec" 2>/dev/null
ok "the tarball has kopolicy.spec at its top" $?
is "the spec's version is the release's" \
	"$(sed -n 's/^Version:[[:space:]]*//p' "$tmp/kopolicy.spec")" "$ver"

rpmbuild -ta --nodeps --without check --define "_topdir $tmp/top" \
	--define "_smp_mflags -j${MAKEJOBS:-2}" "$PKG_DIST" > "$tmp/build.log" 2>&1
is "rpmbuild -ta kopolicy-$ver.tar.*" $? 0
rpm=$(ls "$tmp"/top/RPMS/*/kopolicy-"$ver"-1*.rpm 2>/dev/null | head -n1)
[ -n "$rpm" ]
ok "the binary RPM was built (${rpm##*/})" $?
ls "$tmp"/top/SRPMS/kopolicy-"$ver"-1*.src.rpm >/dev/null 2>&1
ok "the source RPM was built" $?
[ -n "$rpm" ] || { finish; exit; }

list=$(rpm -qlp "$rpm" 2>/dev/null)
macrodir=$(rpm --eval %_rpmmacrodir)
libexec=$(rpm --eval %_libexecdir)/kopolicy
for f in /usr/bin/kopolicy "$libexec/check-built" "$libexec/brp-kopolicy" \
	"$libexec/dkms-post-build" "$libexec/kernel-postinst" "$macrodir/macros.kopolicy" \
	/usr/lib/kernel/install.d/90-kopolicy.install /etc/dkms/kopolicy.conf \
	/usr/share/bash-completion/completions/kopolicy /usr/share/zsh/site-functions/_kopolicy \
	/usr/share/doc/kopolicy/README.md /usr/share/doc/kopolicy/examples/dkms.conf.example \
	"$libexec/dkms-pre-install" /usr/sbin/kopolicy-dkms /usr/share/kopolicy/dkms-hook.conf \
	"$libexec/update-install-rules"; do
	echo "$list" | grep -qxF "$f"
	ok "the RPM has $f" $?
done
echo "$list" | grep -q '^/usr/share/man/man1/kopolicy\.1'
ok "the RPM has kopolicy(1)" $?
! echo "$list" | grep -q -E 'postinst\.d|postrm\.d|apt\.conf\.d|dh_kopolicy|Debhelper'
ok "no Debian-only integration (postinst.d, postrm.d, apt, debhelper addon) in the RPM" $?
rpm -qp --filetriggers "$rpm" > "$tmp/filetriggers" 2>/dev/null
is "file triggers on /lib/modules and /usr/lib/modules, added and removed, run update-install-rules" \
	"$(grep -c "$libexec/update-install-rules rpm" "$tmp/filetriggers")" 2
is "config files" "$(rpm -qp --configfiles "$rpm" 2>/dev/null | tr '\n' ' ')" \
	"/etc/dkms/kopolicy.conf "
# libhogweed is dlopen()ed (ECDSA), so rpm's automatic dependencies cannot see it
is "Requires nettle" "$(rpm -qp --requires "$rpm" 2>/dev/null | grep -E '^nettle(\(|[[:space:]])' |
	sed 's/([^)]*)//')" "nettle >= 3.7.2"
# ... and so are the libraries loaded on first use (lib/dl/lazy-lib.h)
rpm -qp --requires "$rpm" 2>/dev/null | sed 's/([^)]*)//' >"$tmp/requires"
for dep in 'openssl-libs >= 3.0' 'kmod-libs >= 25' 'elfutils-libelf >= 0.170' \
	'xz-libs >= 5.2' 'libzstd >= 1.4' 'zlib >= 1.2.8' 'json-c >= 0.13'; do
	grep -qxF "$dep" "$tmp/requires"
	ok "Requires $dep" $?
done
is "%__brp_kopolicy in the packaged macros" \
	"$(rpm2cpio "$rpm" | cpio -i --quiet --to-stdout ".$macrodir/macros.kopolicy" |
		sed -n 's/^%__brp_kopolicy //p')" "$libexec/brp-kopolicy"

# rpm -i into a test root; %kopolicy_check from it (test-rpm.sh against that root)
root=$tmp/root
mkdir -p "$root"
if rpm --root "$root" --initdb 2>"$tmp/rpm-i.log" &&
	rpm --root "$root" --nodeps -i "$rpm" >>"$tmp/rpm-i.log" 2>&1; then
	ok "rpm --root -i ${rpm##*/}" 0
	is "rpm -q in the test root" "$(rpm --root "$root" -q kopolicy 2>/dev/null)" \
		"$(rpm -qp "$rpm" 2>/dev/null)"
else
	ok "rpm --root -i ${rpm##*/}" 1
	(cd "$root" && rpm2cpio "$rpm" | cpio -idm --quiet)
fi
"$root/usr/bin/kopolicy" --version > /dev/null 2>&1
is "the installed kopolicy runs" $? 0
log=$tmp/test-rpm.log
PKGROOT=$root PKG_BINDIR=/usr/bin PKG_LIBEXECDIR=$libexec PKG_RPMMACRODIR=$macrodir \
	bash "$(dirname "$0")/test-rpm.sh" > "$log" 2>&1
st=$?
if grep -q '^1\.\.0 # SKIP' "$log"; then
	ok "# SKIP test-rpm.sh with the RPM: $(sed -n 's/^1\.\.0 # SKIP //p' "$log")" 0
else
	is "test-rpm.sh with the packaged kopolicy \
($(grep -c '^ok' "$log") ok, $(grep -c '^not ok' "$log") not ok)" "$st" 0
fi

if [ "$failed" -ne 0 ]; then
	for l in "$tmp"/*.log; do echo "# --- $l"; tail -30 "$l" | sed 's/^/# /'; done
fi
finish
