#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The kernel install hooks on a fake root: /etc/kernel/postinst.d/zz-kopolicy run by
# run-parts exactly as a Debian kernel package's postinst calls it (--report --exit-on-error
# --arg=RELEASE --arg=IMAGE), and the kernel-install(8) plugin run by the real kernel-install.
# The root holds the running kernel (6.12 fixtures) and a new 7.2 kernel: kp_gpl_prov (no
# __kflagstab) fails on 7.2, kp_plain (kp_plain_prop.ko) has no 7.2 build (DKMS did not
# rebuild it). mode=fail refuses a kernel whose modules break, and when kopolicy is missing;
# with the running kernel not installed (chroot) or installed again, it judges the new kernel's
# modules only.
set -u
. "$(dirname "$0")/lib.sh"
command -v run-parts >/dev/null || skip_all "no run-parts (debianutils)"
fx=$srcdir/fixtures/ko/6.12
old=$(sed -n 's/^release=//p' "$fx/kernel.txt")
new=7.2.13+deb14-amd64
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
libexec=$PKGROOT$PKG_LIBEXECDIR
r=$tmp/root
for k in "$old" "$new"; do
	m=$r/lib/modules/$k
	mkdir -p "$m/updates/dkms" "$m/kernel/drivers" "$m/build"
	cp "$fx/kp_gpl_prov.ko" "$fx/kp_prop_prov.ko" "$m/updates/dkms/"
	cp "$fx/kp_plain.ko" "$m/kernel/drivers/"
	zcat "$fx/Module.symvers.gz" > "$m/build/Module.symvers"
done
# the 6.12 config only for 6.12 (its version line would make 7.2 a 6.12 kernel)
zcat "$fx/config.gz" > "$r/lib/modules/$old/build/.config"
cp "$fx/kp_plain_prop.ko" "$r/lib/modules/$old/updates/dkms/"
# the installed hooks, pointed at the DESTDIR installation
mkdir -p "$tmp/postinst.d" "$tmp/install.d"
sed "s|$PKG_LIBEXECDIR|$libexec|g" "$PKGROOT$PKG_POSTINSTDIR/zz-kopolicy" \
	> "$tmp/postinst.d/zz-kopolicy"
sed "s|$PKG_LIBEXECDIR|$libexec|g" \
	"$PKGROOT$PKG_KERNELINSTALLDIR/90-kopolicy.install" > "$tmp/install.d/90-kopolicy.install"
chmod +x "$tmp/postinst.d/zz-kopolicy" "$tmp/install.d/90-kopolicy.install"
export KOPOLICY_ROOT=$r KOPOLICY_RUNNING_RELEASE=$old KOPOLICY_KERNEL_HOOK_CONF=$tmp/hook.conf

# postinst NAME: the kernel's postinst.d run for $new as its postinst runs it, into $tmp/NAME.log
postinst() {
	run-parts --report --exit-on-error --arg="$new" --arg="/boot/vmlinuz-$new" "$tmp/postinst.d" \
		> "$tmp/$1.log" 2>&1
}
postinst warn
is "postinst.d (mode=warn): the kernel installation goes on" $? 0
grep -q "^kopolicy: out-of-tree modules of $old on the new kernel $new:" "$tmp/warn.log"
ok "compares the running kernel's out-of-tree modules with $new" $?
grep -q "^  kp_gpl_prov: fails: loads now, fails with ENOEXEC" "$tmp/warn.log"
ok "reports the module that fails on the new kernel, with its errno" $?
grep -q "^  kp_plain: missing: no out-of-tree build for the new kernel" "$tmp/warn.log"
ok "reports the module with no build for the new kernel" $?
[ "$(grep '^  ' "$tmp/warn.log" | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')" = \
	"kp_gpl_prov kp_plain kp_prop_prov " ]
ok "exactly the 3 out-of-tree modules that break (kp_prop_prov: no __kflagstab either)" $?
grep -q "kopolicy: some out-of-tree modules break on $new" "$tmp/warn.log"
ok "a summary line on stderr" $?

echo mode=fail > "$tmp/hook.conf"
postinst fail
st=$?
[ $st -ne 0 ]
ok "postinst.d (mode=fail): run-parts fails (status $st), so the kernel postinst does" $?
# a quoted value is the same mode (read as [a-z]*, mode="fail" was warn, without a word)
echo 'mode="fail"' > "$tmp/hook.conf"
postinst fail-quoted
st=$?
[ $st -ne 0 ]
ok "postinst.d (mode=\"fail\"): run-parts fails (status $st)" $?
echo 'mode=Fail' > "$tmp/hook.conf"
postinst fail-bad
is "postinst.d (mode=Fail): warn, the installation goes on" $? 0
grep -q "kopolicy: kernel hook: mode must be warn or fail, not 'Fail'" "$tmp/fail-bad.log"
ok "... and says so" $?
# kopolicy missing: mode=fail refuses (it exited 0, the gate open), mode=warn goes on
echo mode=fail > "$tmp/hook.conf"
KOPOLICY=$tmp/no-kopolicy postinst fail-missing
st=$?
[ $st -ne 0 ] && grep -q "no-kopolicy not found: refusing $new (mode=fail)" "$tmp/fail-missing.log"
ok "postinst.d (mode=fail), kopolicy missing: run-parts fails (status $st) and says why" $?
rm "$tmp/hook.conf"
KOPOLICY=$tmp/no-kopolicy postinst warn-missing
is "postinst.d (mode=warn), kopolicy missing: the installation goes on" $? 0
grep -q "no-kopolicy not found: $new not checked (mode=warn)" "$tmp/warn-missing.log"
ok "... and says the new kernel was not checked" $?

KOPOLICY_RUNNING_RELEASE=5.10.0-99-amd64 "$tmp/postinst.d/zz-kopolicy" "$new" \
	> "$tmp/chroot.log" 2>&1
is "running kernel not installed (chroot): exits 0" $? 0
grep -q "^kopolicy: out-of-tree modules of the new kernel $new:" "$tmp/chroot.log" &&
	grep -q "^$new  *kp_gpl_prov  *fails" "$tmp/chroot.log"
ok "then the new kernel's out-of-tree modules (--all-kernels --kernel-release NEW)" $?
# mode=fail there judges the new kernel only: with every installed kernel's modules (before),
# 7.2's broken kp_gpl_prov refused the installation of 6.12, whose modules all load, and the
# hook said they broke on 6.12
echo mode=fail > "$tmp/hook.conf"
KOPOLICY_RUNNING_RELEASE=5.10.0-99-amd64 "$tmp/postinst.d/zz-kopolicy" "$old" \
	> "$tmp/chroot-fail.log" 2>&1
is "running kernel not installed, mode=fail: 6.12 (all load) is installed" $? 0
! grep -q "^$new " "$tmp/chroot-fail.log" && grep -q "^$old  *kp_gpl_prov  *loads" \
	"$tmp/chroot-fail.log"
ok "... and only 6.12's modules are reported, not 7.2's" $?
KOPOLICY_RUNNING_RELEASE=$old "$tmp/postinst.d/zz-kopolicy" "$old" > "$tmp/again.log" 2>&1
is "the running kernel installed again, mode=fail: goes on (7.2's modules not judged)" $? 0
KOPOLICY_RUNNING_RELEASE=5.10.0-99-amd64 "$tmp/postinst.d/zz-kopolicy" "$new" \
	> "$tmp/chroot-fail2.log" 2>&1
st=$?
[ $st -ne 0 ]
ok "running kernel not installed, mode=fail: 7.2 (kp_gpl_prov fails) refused (status $st)" $?
KOPOLICY_RUNNING_RELEASE=5.10.0-99-amd64 "$tmp/postinst.d/zz-kopolicy" 7.9.0-1-amd64 \
	> "$tmp/nomods.log" 2>&1
is "a new kernel with no modules directory, mode=fail: nothing to check, exit 0" $? 0
grep -q "no modules installed for 7.9.0-1-amd64" "$tmp/nomods.log"
ok "... and says so" $?
rm "$tmp/hook.conf"

KOPOLICY_RUNNING_RELEASE=$new "$tmp/postinst.d/zz-kopolicy" "$old" > "$tmp/down.log" 2>&1
grep -q "^  kp_gpl_prov: loads: fails now, loads on the new kernel" "$tmp/down.log"
ok "the other way round (7.2 running, 6.12 installed): kp_gpl_prov loads again" $?

if command -v kernel-install >/dev/null; then
	mkdir -p "$tmp/boot"
	: > "$tmp/vmlinuz"
	KERNEL_INSTALL_PLUGINS="$tmp/install.d/90-kopolicy.install" \
		KERNEL_INSTALL_BOOT_ROOT=$tmp/boot \
			KERNEL_INSTALL_MACHINE_ID=0123456789abcdef0123456789abcdef \
		KERNEL_INSTALL_LAYOUT=other \
		kernel-install add "$new" "$tmp/vmlinuz" > "$tmp/ki.log" 2>&1
	is "kernel-install add with the plugin exits 0" $? 0
	grep -q "^  kp_gpl_prov: fails: loads now, fails with ENOEXEC" "$tmp/ki.log"
	ok "kernel-install's plugin reports the same breakage" $?
fi

# the install rules: postinst.d (kernel-postinst) and postrm.d keep
# /etc/modprobe.d/zz-kopolicy.conf current once it exists, and never create it
rules=$r/etc/modprobe.d/zz-kopolicy.conf
mkdir -p "$r/etc/modprobe.d" "$tmp/postrm.d"
sed "s|$PKG_LIBEXECDIR|$libexec|g" "$PKGROOT$PKG_POSTRMDIR/zz-kopolicy" \
	> "$tmp/postrm.d/zz-kopolicy"
chmod +x "$tmp/postrm.d/zz-kopolicy"
export KOPOLICY_RULES_HOOK=$libexec/update-install-rules
postinst rules0
[ ! -e "$rules" ]
ok "install rules: postinst.d creates no rules file" $?
"$KOPOLICY" hook --root "$r" --update-install-rules > "$tmp/rules1.log" 2>&1
is "install rules: the admin writes them (exit 0)" $? 0
cp "$fx/kp_plain_prop.ko" "$r/lib/modules/$new/updates/dkms/kp_new_build.ko"
postinst rules2
is "install rules: postinst.d still exits 0" $? 0
grep -q "^install kp_new_build " "$rules"
ok "install rules: postinst.d added the new kernel's module" $?
mv "$r/lib/modules/$new" "$tmp/removed-kernel"
run-parts --report --exit-on-error --arg="$new" --arg="/boot/vmlinuz-$new" "$tmp/postrm.d" \
	> "$tmp/rules3.log" 2>&1
is "install rules: postrm.d exits 0" $? 0
! grep -q "^install kp_new_build " "$rules" && grep -q "^install kp_gpl_prov " "$rules"
ok "install rules: postrm.d dropped the removed kernel's module, kept the others" $?
mv "$tmp/removed-kernel" "$r/lib/modules/$new"
unset KOPOLICY_RULES_HOOK

if [ "$failed" -ne 0 ]; then
	for l in "$tmp"/*.log; do echo "# --- $l"; tail -30 "$l" | sed 's/^/# /'; done
fi
finish
