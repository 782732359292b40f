#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# kopolicy's own Debian packages: contrib/packaging/debian/ copied to debian/ in the unpacked
# release tarball ($PKG_DIST, from make dist), then dpkg-buildpackage -us -uc -b builds
# kopolicy and dh-kopolicy (nocheck: make check runs on its own in CI), lintian finds nothing,
# the contents are where Debian's tools read them, and the packages installed with dpkg into a
# test root (dpkg --root) build a module package with the packaged dh-kopolicy
# (tests/packaging/test-deb.sh against that root).
set -u
. "$(dirname "$0")/lib.sh"
command -v dpkg-buildpackage >/dev/null || skip_all "no dpkg-buildpackage (dpkg-dev)"
command -v dh >/dev/null || skip_all "no debhelper"
[ -f "${PKG_DIST:-}" ] || skip_all "no release tarball (PKG_DIST, make dist)"
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
ver=$(basename "$PKG_DIST")
ver=${ver#kopolicy-}
ver=${ver%.tar.*}
tar -C "$tmp" -xf "$PKG_DIST"
src=$tmp/kopolicy-$ver
cp -a "$src/contrib/packaging/debian" "$src/debian"
is "debian/changelog's version is the release's" \
	"$(cd "$src" && dpkg-parsechangelog -S Version)" "$ver"

(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=${MAKEJOBS:-2}" \
	dpkg-buildpackage -us -uc -b) > "$tmp/build.log" 2>&1
is "dpkg-buildpackage -us -uc -b" $? 0
arch=$(dpkg --print-architecture)
deb=$tmp/kopolicy_${ver}_$arch.deb
dhdeb=$tmp/dh-kopolicy_${ver}_all.deb
[ -f "$deb" ] && [ -f "$dhdeb" ]
ok "built kopolicy_${ver}_$arch.deb and dh-kopolicy_${ver}_all.deb" $?

if command -v lintian >/dev/null; then
	lint=$(lintian --fail-on error,warning "$tmp/kopolicy_${ver}_$arch.changes" 2>/dev/null)
	st=$?
	is "lintian: no errors or warnings (status $st)" "$lint" ""
else
	ok "# SKIP no lintian" 0
fi

contents() { dpkg-deb -c "$1" | awk '{print $6}' | sed 's|^\./|/|'; }
k=$(contents "$deb")
for f in /usr/bin/kopolicy /usr/libexec/kopolicy/check-built /usr/libexec/kopolicy/dkms-post-build \
	/usr/libexec/kopolicy/brp-kopolicy /usr/libexec/kopolicy/kernel-postinst \
	/etc/kernel/postinst.d/zz-kopolicy /usr/lib/kernel/install.d/90-kopolicy.install \
	/etc/dkms/kopolicy.conf /usr/lib/rpm/macros.d/macros.kopolicy \
	/usr/share/bash-completion/completions/kopolicy \
	/usr/share/zsh/vendor-completions/_kopolicy \
	/usr/share/man/man1/kopolicy.1.gz /usr/share/man/man5/kopolicy.conf.5.gz \
	/usr/share/doc/kopolicy/examples/kopolicy-post-build /usr/share/doc/kopolicy/copyright \
	/usr/libexec/kopolicy/dkms-pre-install /usr/sbin/kopolicy-dkms \
	/usr/share/kopolicy/dkms-hook.conf /usr/share/man/man8/kopolicy-dkms.8.gz \
	/usr/libexec/kopolicy/update-install-rules /etc/kernel/postrm.d/zz-kopolicy \
	/etc/apt/apt.conf.d/80kopolicy /usr/libexec/kopolicy/retire-install-rules \
	/usr/libexec/kopolicy/initramfs-rules /usr/share/initramfs-tools/hooks/kopolicy \
	/usr/lib/dracut/modules.d/99kopolicy/module-setup.sh; do
	echo "$k" | grep -qxF "$f"
	ok "kopolicy.deb has $f" $?
done
d=$(contents "$dhdeb")
for f in /usr/bin/dh_kopolicy /usr/share/perl5/Debian/Debhelper/Sequence/kopolicy.pm \
	/usr/share/man/man1/dh_kopolicy.1.gz; do
	echo "$d" | grep -qxF "$f"
	ok "dh-kopolicy.deb has $f" $?
done
! echo "$k" | grep -q -E 'dh_kopolicy|perl5'
ok "kopolicy.deb does not carry the debhelper addon" $?
cf="/etc/apt/apt.conf.d/80kopolicy /etc/dkms/kopolicy.conf /etc/kernel/postinst.d/zz-kopolicy"
is "conffiles of kopolicy" "$(dpkg-deb -I "$deb" conffiles | sort | tr '\n' ' ')" \
	"$cf /etc/kernel/postrm.d/zz-kopolicy "
# the initramfs-tools hook: initramfs images rebuilt when it comes or goes (dh_installinitramfs)
is "kopolicy triggers update-initramfs" \
	"$(dpkg-deb -I "$deb" triggers 2>/dev/null | grep -v '^#')" "activate-noawait update-initramfs"
# removal drops the generated install lines (retire-install-rules), purge the file
dpkg-deb -I "$deb" prerm 2>/dev/null | grep -q '^		/usr/libexec/kopolicy/retire-install-rules "dpkg remove"'
ok "kopolicy's prerm runs retire-install-rules on remove" $?
dpkg-deb -I "$deb" postrm 2>/dev/null | grep -q '^	rm -rf /var/cache/kopolicy$'
ok "kopolicy's postrm purges the caches" $?
is "dh-kopolicy Provides" "$(dpkg-deb -f "$dhdeb" Provides)" "dh-sequence-kopolicy"
is "dh-kopolicy Depends on kopolicy" \
	"$(dpkg-deb -f "$dhdeb" Depends | grep -o 'kopolicy (>= [^)]*)')" "kopolicy (>= $ver)"
# libhogweed is dlopen()ed (ECDSA), so dpkg-shlibdeps cannot see it: declared by hand
# (libhogweed6t64 from trixie on, where armhf's does not provide libhogweed6; libhogweed6 before)
is "kopolicy Depends on libhogweed6t64 | libhogweed6" \
	"$(dpkg-deb -f "$deb" Depends | grep -o 'libhogweed6t64 | libhogweed6 (>= [^)]*)')" \
	"libhogweed6t64 | libhogweed6 (>= 3.7.2)"
# ... and so are the libraries loaded on first use (lib/dl/lazy-lib.h)
for dep in 'libssl3t64 | libssl3 (>= 3.0.0)' 'libkmod2 (>= 25)' \
	'libelf1t64 | libelf1 (>= 0.170)' 'liblzma5 (>= 5.2)' 'libzstd1 (>= 1.4)' \
	'zlib1g (>= 1:1.2.8)' 'libjson-c5 (>= 0.13)'; do
	dpkg-deb -f "$deb" Depends | tr '\n' ' ' | grep -qF "$dep"
	ok "kopolicy Depends on $dep" $?
done

# dpkg -i into a test root (the host's libraries run the binary; dependencies not installed)
root=$tmp/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
: > "$root/var/lib/dpkg/status"
: > "$root/var/lib/dpkg/available"
if [ "$(id -u)" = 0 ]; then
	dpkg --root="$root" --force-depends --log=/dev/null -i "$deb" "$dhdeb" \
		> "$tmp/dpkg.log" 2>&1
	is "dpkg --root -i kopolicy dh-kopolicy" $? 0
	is "dpkg-query in the test root: both installed" \
		"$(dpkg-query --root="$root" -W -f='${Package} ${Status}\n' | sort | tr '\n' ';')" \
		"dh-kopolicy install ok installed;kopolicy install ok installed;"
else
	dpkg-deb -x "$deb" "$root" && dpkg-deb -x "$dhdeb" "$root"
	is "dpkg-deb -x kopolicy dh-kopolicy (not root: no dpkg --root)" $? 0
fi
"$root/usr/bin/kopolicy" --version > "$tmp/version" 2>&1
is "the installed kopolicy runs" $? 0
is "... and reads /etc/kopolicy/hook.conf" \
	"$("$root/usr/bin/kopolicy" hook --help | sed -n 's|^.*(default ROOT\(/[^;]*\);$|\1|p')" \
	/etc/kopolicy/hook.conf

# the packaged debhelper addon builds a module package (test-deb.sh against the test root)
log=$tmp/test-deb.log
PKGROOT=$root PKG_BINDIR=/usr/bin PKG_LIBEXECDIR=/usr/libexec/kopolicy \
	PKG_DEBHELPERDIR=/usr/share/perl5 bash "$(dirname "$0")/test-deb.sh" > "$log" 2>&1
st=$?
if grep -q '^1\.\.0 # SKIP' "$log"; then
	ok "# SKIP test-deb.sh with the packages: $(sed -n 's/^1\.\.0 # SKIP //p' "$log")" 0
else
	is "test-deb.sh with the packaged kopolicy and dh-kopolicy \
($(grep -c '^ok' "$log") ok, $(grep -c '^not ok' "$log") not ok)" "$st" 0
fi

# removal and purge in the test root, the maintainer scripts run by dpkg (chrooted there, with
# a static busybox as their shell and tools): the install rules the packaged kopolicy wrote
# lose their lines on removal, keeping the file and its options; purge removes it
bb=$(command -v busybox || true)
if [ "$(id -u)" != 0 ] || [ -z "$bb" ] || ! LC_ALL=C ldd "$bb" 2>&1 | grep -q 'not a dynamic'
then
	ok "# SKIP dpkg -r and -P in the test root: root and busybox-static needed" 0
else
	mkdir -p "$root/bin"
	cp "$bb" "$root/bin/busybox"
	for a in sh head grep ls id dirname mv chmod rm cat sed tr; do
		ln -sf busybox "$root/bin/$a"
	done
	# the prerm runs the packaged kopolicy (--retire-install-rules): its shared libraries
	# (the ones it links; those it dlopen()s are not used there) and the dynamic loader
	for l in $(ldd "$root/usr/bin/kopolicy" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$l")" && cp -L "$l" "$root$l"
	done
	frel=$(sed -n 's/^release=//p' "$srcdir/fixtures/ko/6.12/kernel.txt")
	mkdir -p "$root/lib/modules/$frel/updates" "$root/etc/modprobe.d"
	cp "$srcdir/fixtures/ko/6.12/kp_prop_prov.ko" "$root/lib/modules/$frel/updates/"
	# a soft dependency on a module of the kernel's own tree (the GPU passthrough shape,
	# softdep nvidia pre: vfio-pci): the rules come with their softdep overrides
	# (0-kopolicy-softdeps.conf), which removal must take away with the lines (left alone,
	# modprobe would load kp_prop_prov without kp_plain), and a purge after a failed removal
	mkdir -p "$root/lib/modules/$frel/kernel"
	cp "$srcdir/fixtures/ko/6.12/kp_plain.ko" "$root/lib/modules/$frel/kernel/"
	echo "softdep kp_prop_prov pre: kp_plain" > "$root/etc/modprobe.d/gpu.conf"
	depmod -b "$root" "$frel" 2>/dev/null
	rules=$root/etc/modprobe.d/zz-kopolicy.conf
	sdo=$root/etc/modprobe.d/0-kopolicy-softdeps.conf
	"$root/usr/bin/kopolicy" hook --root "$root" --on-error fail-closed \
		--update-install-rules > "$tmp/rules.log" 2>&1
	is "the packaged kopolicy writes install rules naming /usr/bin/kopolicy" \
		"$(sed -n 's/^install \([^ ]*\) \([^ ]*\) .*/\1 \2/p' "$rules" | tr '\n' ' ')" \
		"kp_prop_prov /usr/bin/kopolicy "
	is "... and the softdep override of kp_prop_prov" "$(grep -v '^#' "$sdo" 2>&1)" \
		"softdep [k]p_prop_prov pre:"
	cp "$sdo" "$tmp/sdo.kept"
	# (lib.sh's KOPOLICY, the build's, must not reach the maintainer scripts)
	env -u KOPOLICY dpkg --root="$root" --force-depends --log=/dev/null -r dh-kopolicy kopolicy \
		> "$tmp/remove.log" 2>&1
	is "dpkg --root -r kopolicy" $? 0
	grep -q "zz-kopolicy.conf: 1 install line dropped (it runs kopolicy)" "$tmp/remove.log"
	ok "... its prerm said it dropped the install lines" $?
	[ ! -e "$sdo" ]
	ok "... and removed the softdep overrides" $?
	is "... the rules file kept, without install lines, with its options" \
		"$(grep -c '^install ' "$rules"):$(grep -c '^# options: --on-error fail-closed$' "$rules")" \
		"0:1"
	[ ! -e "$root/usr/bin/kopolicy" ]
	ok "... /usr/bin/kopolicy removed" $?
	# overrides a removal could not take away (its kopolicy killed, say) go with the purge:
	# the file as kopolicy wrote it, taken from the rules' first run
	cp "$tmp/sdo.kept" "$sdo"
	dpkg --root="$root" --force-depends --log=/dev/null -P kopolicy > "$tmp/purge.log" 2>&1
	is "dpkg --root -P kopolicy" $? 0
	[ ! -e "$rules" ]
	ok "... the rules file removed with the purge" $?
	[ ! -e "$sdo" ]
	ok "... the softdep overrides left by a failed removal, too" $?
	is "... the admin's softdep entry kept" "$(cat "$root/etc/modprobe.d/gpu.conf")" \
		"softdep kp_prop_prov pre: kp_plain"
fi

if [ "$failed" -ne 0 ]; then
	for l in "$tmp"/*.log; do echo "# --- $l"; tail -30 "$l" | sed 's/^/# /'; done
fi
finish
