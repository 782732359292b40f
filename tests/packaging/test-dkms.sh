#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# kopolicy's DKMS hook end to end with the real dkms (3.x): `dkms install`/`autoinstall` of
# fixture modules built against the installed headers ($KREL), in private dkms, source and
# install trees (--no-depmod: the system's modules.dep is not touched).
#  A. the package's dkms.conf sources kopolicy's fragment (dkms-hook.conf: PRE_INSTALL):
#   1. clean module, mode=fail: installed, checked against $KREL;
#   2. a module failing the 2020 rule, mode=warn: installed, findings shown;
#   3. mode=fail: `dkms install` exits 101, nothing installed, the build kept; recovery
#      without touching dkms's tree: admin overrides then `dkms install`; `dkms remove`;
#      `dkms install --force`;
#   4. the package's own PRE_INSTALL runs after a passing check, not after a refusal;
#   5. BUILD_DEPENDS: a module importing from another DKMS module resolves against it;
#   6. autoinstall (what the kernel's postinst runs for a new kernel): exits non-zero for a
#      refused module, installs the others; after `dkms remove` of the refused one, 0;
#   7. a kernel upgrade: a second kernel (a copy of $KREL's headers with another release,
#      built against with --kernelsourcedir) gets its modules from autoinstall as the kernel's
#      postinst does; checked against that kernel's headers; a refused module fails the
#      autoinstall, the old kernel's modules stay; overrides then autoinstall: 0;
#   8. the POST_BUILD hook only reports: it never removes built modules.
#  B. `kopolicy-dkms enable` (a block in /etc/dkms/NAME.conf; the package's files untouched):
#   9. enable --mode fail refuses; status; disable; other lines of the file kept; a block
#      without its END line left alone; bad names.
# /etc/dkms is dkms's fixed path: part B writes /etc/dkms/kpt<PID>*.conf, removed on exit.
set -u
. "$(dirname "$0")/lib.sh"
command -v dkms >/dev/null || skip_all "no dkms"
[ "$(id -u)" = 0 ] || skip_all "dkms needs root"
tmp=$(mktemp -d)
id=kpt$$
cleanup() {
	rm -f /etc/dkms/"$id"*.conf
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
export KOPOLICY_DKMS_CONF=$tmp/etc/kopolicy.conf
export KOPOLICY_DKMS_HOOK=$PKGROOT$PKG_LIBEXECDIR/dkms-pre-install
export KOPOLICY_ROOT=$tmp/root
hookconf=$PKGROOT$PKG_PKGDATADIR/dkms-hook.conf
export KOPOLICY_DKMS_HOOKCONF=$hookconf
kpdkms=$PKGROOT$PKG_SBINDIR/kopolicy-dkms
trees=(--dkmstree "$tmp/dkms" --sourcetree "$tmp/src" --installtree "$tmp/root/lib/modules"
	--no-depmod)
mkdir -p "$tmp/dkms" "$tmp/src" "$tmp/root/lib/modules/$KREL" "$tmp/etc"
mode() { echo "mode=$1" > "$KOPOLICY_DKMS_CONF"; }

# make_dkms NAME [--hook|--no-hook] [--pre] [--depends DEP] [--post-build] [--post-install]
# MODULE...:
# a DKMS source tree NAME-1.0 with the fixture sources, added to the private dkms tree
make_dkms() {
	local name=$1 d=$tmp/src/$1-1.0 i=0 m hook=1 pre=0 dep='' post=0 postinst=0
	shift
	while :; do
		case $1 in
		--no-hook) hook=0; shift ;;
		--pre) pre=1; shift ;;
		--depends) dep=$2; shift 2 ;;
		--post-build) post=1; shift ;;
		--post-install) postinst=1; shift ;;
		*) break ;;
		esac
	done
	make_module_src "$d" "$@"
	{
		echo "PACKAGE_NAME=\"$name\""
		echo 'PACKAGE_VERSION="1.0"'
		if [ -n "$dep" ]; then
			echo "BUILD_DEPENDS[0]=\"$dep\""
			echo "MAKE[0]=\"make -C \$kernel_source_dir M=\$dkms_tree/\$PACKAGE_NAME/\$PACKAGE_VERSION/build KBUILD_EXTRA_SYMBOLS=$tmp/provbuild/Module.symvers modules\""
		else
			echo 'MAKE[0]="make -C $kernel_source_dir M=$dkms_tree/$PACKAGE_NAME/$PACKAGE_VERSION/build modules"'
		fi
		echo 'CLEAN="true"'
		for m in "$@"; do
			echo "BUILT_MODULE_NAME[$i]=\"$m\""
			echo "DEST_MODULE_LOCATION[$i]=\"/updates/dkms\""
			i=$((i + 1))
		done
		echo 'AUTOINSTALL="yes"'
		[ $pre = 1 ] && echo 'PRE_INSTALL="pkg-pre-install $kernelver"'
		[ $post = 1 ] && echo 'POST_BUILD="kopolicy-post-build $kernelver $arch"'
		[ $postinst = 1 ] && echo 'POST_INSTALL="pkg-post-install $kernelver"'
		[ $hook = 1 ] && echo "[ -r $hookconf ] && . $hookconf"
	} > "$d/dkms.conf"
	printf '#!/bin/sh\necho "package pre_install for $1" > %s\n' "$tmp/$name.pre-ran" \
		> "$d/pkg-pre-install"
	chmod +x "$d/pkg-pre-install"
	printf '#!/bin/sh\necho "package post_install for $1" > %s\n' "$tmp/$name.post-ran" \
		> "$d/pkg-post-install"
	chmod +x "$d/pkg-post-install"
	printf '#!/bin/sh\nexec %s "$@"\n' "$PKGROOT$PKG_LIBEXECDIR/dkms-post-build" \
		> "$d/kopolicy-post-build"
	chmod +x "$d/kopolicy-post-build"
	dkms add "${trees[@]}" -m "$name" -v 1.0 > "$tmp/$name.add.log" 2>&1
}
installed() { # NAME MODULE: 0 if MODULE is in the install tree's updates/dkms
	ls "$tmp/root/lib/modules/$KREL/updates/dkms/$2".ko* > /dev/null 2>&1
}
built() { # NAME: the modules dkms keeps built for $KREL
	ls "$tmp/dkms/$1/1.0/$KREL"/*/module/ 2>/dev/null | grep -c '\.ko'
}
state() { # NAME: dkms status's word for $KREL (built, installed) or nothing
	dkms status "${trees[@]}" -m "$1" -k "$KREL" 2>/dev/null | sed -n 's/.*: \([a-z]*\).*/\1/p'
}
forget() { # NAME...: dkms remove (the next scenario's module names are free again)
	local n
	for n in "$@"; do
		dkms remove "${trees[@]}" -m "$n" -v 1.0 --all > /dev/null 2>&1
	done
}
install_log() { # NAME LOG [dkms options]: dkms install, status
	local name=$1 log=$2
	shift 2
	dkms install "${trees[@]}" -m "$name" -v 1.0 -k "$KREL" "$@" > "$tmp/$log.log" 2>&1
}

# 1. clean, mode=fail
mode fail
make_dkms kpgood kp_plain
install_log kpgood good
is "clean module, mode=fail: dkms install exits 0" $? 0
grep -q "Running the pre_install script" "$tmp/good.log"
ok "dkms ran kopolicy's PRE_INSTALL hook (from the fragment sourced by dkms.conf)" $?
grep -q "kopolicy-dkms: dkms kpgood/1.0 $KREL: checking 1 module(s) against kernel $KREL" \
	"$tmp/good.log"
ok "the hook checked the built module against $KREL" $?
grep -q "1 module: 0 fail to load, 0 proprietary (P)" "$tmp/good.log"
ok "kopolicy's summary: 1 module, 0 failing" $?
installed kpgood kp_plain
ok "the clean module is installed" $?
is "dkms status: installed" "$(state kpgood)" installed

# 2. failing, mode=warn
mode warn
make_dkms kpwarn kp_prop_prov kp_prop_then_gplonly
install_log kpwarn warn
is "mode=warn: dkms install exits 0" $? 0
grep -E -q "kp_prop_then_gplonly: E: (gpl-proprietary-mix|gpl-only-symbol):" "$tmp/warn.log"
ok "mode=warn: kopolicy's finding in dkms's output" $?
grep -q "mode=warn: installing anyway" "$tmp/warn.log"
ok "mode=warn says it installs anyway" $?
installed kpwarn kp_prop_then_gplonly
ok "mode=warn: installed" $?

forget kpgood kpwarn

# 3. failing, mode=fail: refused; recovery through dkms alone
# (dkms runs PRE_INSTALL only when its first module passes the version sanity check: none of
# these names may be installed already)
mode fail
make_dkms kpfail kp_prop_prov kp_prop_then_gplonly
install_log kpfail fail
is "mode=fail: dkms install exits 101 (pre_install failed)" $? 101
grep -q "pre_install failed, aborting install" "$tmp/fail.log"
ok "mode=fail: dkms says the installation was aborted" $?
grep -q "kopolicy-dkms: dkms kpfail/1.0 $KREL: refusing the installation (mode=fail)" \
	"$tmp/fail.log"
ok "mode=fail: the hook says it refuses, and why" $?
grep -q "dkms install --force -m kpfail -v 1.0 -k $KREL" "$tmp/fail.log"
ok "mode=fail: the refusal says how to go on" $?
! find "$tmp/root/lib/modules" -name 'kp_prop_*.ko*' | grep -q .
ok "mode=fail: nothing installed" $?
is "mode=fail: the modules stay built in dkms's tree" "$(built kpfail)" 2
is "mode=fail: dkms status: built" "$(state kpfail)" built
install_log kpfail fail2
is "a second dkms install: refused again (101), not stuck" $? 101
mkdir -p "$tmp/etc/kopolicy-overrides"
printf 'gpl-proprietary-mix kp_prop_then_gplonly\ngpl-only-symbol kp_prop_then_gplonly\n' \
	> "$tmp/etc/kopolicy-overrides/kpfail"
install_log kpfail accepted
is "admin overrides, then dkms install: exits 0" $? 0
grep -q "\[waived\]" "$tmp/accepted.log"
ok "the accepted findings are printed, marked [waived]" $?
installed kpfail kp_prop_then_gplonly
ok "installed after the overrides" $?
dkms remove "${trees[@]}" -m kpfail -v 1.0 --all > "$tmp/remove.log" 2>&1
is "dkms remove of the module: exits 0" $? 0
is "removed: no dkms status" "$(state kpfail)" ""
mode fail
make_dkms kpforce kp_prop_prov kp_prop_then_gplonly
install_log kpforce force1
is "another refused module: 101" $? 101
install_log kpforce force2 --force
is "dkms install --force installs it anyway: exits 0" $? 0
installed kpforce kp_prop_then_gplonly
ok "--force: installed" $?
forget kpforce

# 4. the package's own PRE_INSTALL is kept
make_dkms kppre --pre kp_plain
install_log kppre pre
is "package PRE_INSTALL + kopolicy, clean: exits 0" $? 0
grep -q "package pre_install for $KREL" "$tmp/kppre.pre-ran" 2>/dev/null
ok "the package's PRE_INSTALL ran after the check, with its arguments" $?
make_dkms kpprebad --pre kp_prop_prov kp_prop_then_gplonly
install_log kpprebad prebad
is "package PRE_INSTALL + kopolicy, refused: 101" $? 101
[ ! -e "$tmp/kpprebad.pre-ran" ]
ok "after a refusal the package's PRE_INSTALL does not run" $?
forget kppre kpprebad

# 5. BUILD_DEPENDS: kp_ns_ok imports kp_gpl_prov_ns from another DKMS module (built with the
# provider's Module.symvers, as a -dev package would ship it)
make_module_src "$tmp/provbuild" kp_gpl_prov
make -C "$KDIR" M="$tmp/provbuild" modules > "$tmp/provbuild.log" 2>&1
make_dkms kpprov kp_gpl_prov
make_dkms kpuser --depends kpprov kp_ns_ok
dkms build "${trees[@]}" -m kpprov -v 1.0 -k "$KREL" > "$tmp/prov-build.log" 2>&1
dkms build "${trees[@]}" -m kpuser -v 1.0 -k "$KREL" > "$tmp/user-build.log" 2>&1
is "BUILD_DEPENDS: the user module builds (KBUILD_EXTRA_SYMBOLS)" "$(built kpuser)" 1
install_log kpuser user
is "BUILD_DEPENDS: dkms install of the user module (its provider only built) exits 0" $? 0
! grep -q "unknown-symbol" "$tmp/user.log"
ok "BUILD_DEPENDS: kp_gpl_prov_ns resolves against the provider's build" $?
grep -q "^1 module: 0 fail to load" "$tmp/user.log"
ok "BUILD_DEPENDS: the provider is not reported" $?

forget kpprov kpuser

# 6. autoinstall, as the kernel's postinst runs it: a refused module fails it
make_dkms kpauto1 kp_plain
make_dkms kpauto2 kp_prop_prov kp_prop_then_gplonly
make_dkms kpautoprov kp_gpl_prov
make_dkms kpautouser --depends kpautoprov kp_ns_ok
dkms autoinstall "${trees[@]}" -k "$KREL" > "$tmp/auto.log" 2>&1
st=$?
[ $st -ne 0 ]
ok "autoinstall with a refused module exits non-zero ($st)" $?
grep -q "One or more modules failed to install during autoinstall" "$tmp/auto.log"
ok "autoinstall says a module failed" $?
installed kpauto1 kp_plain && installed kpautouser kp_ns_ok && installed kpautoprov kp_gpl_prov
ok "autoinstall installed the other modules (the BUILD_DEPENDS pair in order)" $?
! installed kpauto2 kp_prop_then_gplonly
ok "autoinstall did not install the refused module" $?
is "the refused module stays built" "$(state kpauto2)" built
dkms remove "${trees[@]}" -m kpauto2 -v 1.0 --all > "$tmp/auto-remove.log" 2>&1
is "dkms remove of the refused module: exits 0" $? 0
dkms autoinstall "${trees[@]}" -k "$KREL" > "$tmp/auto2.log" 2>&1
is "autoinstall again: exits 0" $? 0
forget kpauto1 kpautoprov kpautouser

# 7. a kernel upgrade: modules installed for $KREL (the refused one with mode=warn), then a new
# kernel NEW; autoinstall for NEW with mode=fail
new=$KREL-kpnext
hnew=$tmp/headers-$new
mkdir -p "$tmp/root/lib/modules/$new"
cp -a "$KDIR/." "$hnew"
for l in scripts tools; do
	[ -L "$hnew/$l" ] && ln -sfn "$(readlink -f "$KDIR/$l")" "$hnew/$l"
done
echo "#define UTS_RELEASE \"$new\"" > "$hnew/include/generated/utsrelease.h"
mode warn
make_dkms kpupgood kp_plain
make_dkms kpupbad kp_prop_prov kp_prop_then_gplonly
install_log kpupgood upold1 && install_log kpupbad upold2
ok "on $KREL both modules are installed (mode=warn)" $?
mode fail
dkms autoinstall "${trees[@]}" -k "$new" --kernelsourcedir "$hnew" > "$tmp/upgrade.log" 2>&1
st=$?
[ $st -ne 0 ]
ok "kernel upgrade: autoinstall for $new with a refused module exits non-zero ($st)" $?
grep -q "kopolicy-dkms: dkms kpupgood/1.0 $new: checking 1 module(s) against kernel $new ($hnew)" \
	"$tmp/upgrade.log"
ok "kernel upgrade: checked against the new kernel's headers" $?
ls "$tmp/root/lib/modules/$new/updates/dkms/kp_plain.ko"* > /dev/null 2>&1
ok "kernel upgrade: the clean module is installed for $new" $?
! ls "$tmp/root/lib/modules/$new/updates/dkms/kp_prop_then_gplonly.ko"* > /dev/null 2>&1
ok "kernel upgrade: the refused module is not installed for $new" $?
installed kpupbad kp_prop_then_gplonly
ok "kernel upgrade: the old kernel's installation is untouched" $?
printf 'gpl-proprietary-mix kp_prop_then_gplonly\ngpl-only-symbol kp_prop_then_gplonly\n' \
	> "$tmp/etc/kopolicy-overrides/kpupbad"
dkms autoinstall "${trees[@]}" -k "$new" --kernelsourcedir "$hnew" > "$tmp/upgrade2.log" 2>&1
is "kernel upgrade: with the admin's overrides autoinstall exits 0" $? 0
ls "$tmp/root/lib/modules/$new/updates/dkms/kp_prop_then_gplonly.ko"* > /dev/null 2>&1
ok "kernel upgrade: now installed for $new" $?
forget kpupgood kpupbad

# 8. the POST_BUILD hook reports only
make_dkms kppost --no-hook --post-build kp_prop_prov kp_prop_then_gplonly
dkms build "${trees[@]}" -m kppost -v 1.0 -k "$KREL" > "$tmp/post.log" 2>&1
is "POST_BUILD, mode=fail: dkms build exits 0" $? 0
grep -E -q "kp_prop_then_gplonly: E: (gpl-proprietary-mix|gpl-only-symbol):" "$tmp/post.log"
ok "POST_BUILD: kopolicy's finding in dkms's output" $?
is "POST_BUILD: the built modules are left alone" "$(built kppost)" 2
grep -q "the PRE_INSTALL hook refuses the installation" "$tmp/post.log"
ok "POST_BUILD: says where a refusal happens" $?

# 9. kopolicy-dkms enable/disable: /etc/dkms/NAME.conf, the package's files untouched
mode warn
make_dkms "${id}en" --no-hook kp_prop_prov kp_prop_then_gplonly
cp "$tmp/src/${id}en-1.0/dkms.conf" "$tmp/dkms.conf.orig"
printf '# the admin'"'"'s line\nSTRIP[0]="no"\n' > "/etc/dkms/${id}en.conf"
"$kpdkms" enable --mode fail "${id}en" > "$tmp/enable.log" 2>&1
is "kopolicy-dkms enable --mode fail: exits 0" $? 0
grep -q "STRIP\[0\]=\"no\"" "/etc/dkms/${id}en.conf" &&
	grep -q "BEGIN kopolicy" "/etc/dkms/${id}en.conf"
ok "enable: the block is added, the admin's line kept" $?
"$kpdkms" status "${id}en" > "$tmp/status.log" 2>&1
grep -q "^${id}en: enabled, mode fail (/etc/dkms/${id}en.conf)" "$tmp/status.log"
ok "status: enabled, mode fail" $?
install_log "${id}en" en
is "enabled (mode fail, kopolicy.conf says warn): dkms install exits 101" $? 101
cmp -s "$tmp/dkms.conf.orig" "$tmp/src/${id}en-1.0/dkms.conf"
ok "the package's dkms.conf is unchanged" $?
"$kpdkms" enable --mode fail "${id}en" > /dev/null 2>&1
is "enable twice: one block" "$(grep -c 'BEGIN kopolicy' "/etc/dkms/${id}en.conf")" 1
"$kpdkms" disable "${id}en" > "$tmp/disable.log" 2>&1
is "disable: exits 0" $? 0
! grep -q kopolicy "/etc/dkms/${id}en.conf" && grep -q "STRIP\[0\]=\"no\"" "/etc/dkms/${id}en.conf"
ok "disable: the block is gone, the admin's line kept" $?
install_log "${id}en" dis
is "disabled: dkms install exits 0 (no check)" $? 0
! grep -q "kopolicy-dkms: dkms" "$tmp/dis.log"
ok "disabled: no kopolicy check" $?
"$kpdkms" enable "${id}new" > /dev/null 2>&1 && "$kpdkms" disable "${id}new" > /dev/null 2>&1
[ ! -e "/etc/dkms/${id}new.conf" ]
ok "enable then disable of a file kopolicy created: the file is removed" $?
# a BEGIN line whose END line an edit removed: where the block ends is not known, so neither
# disable nor enable touches the file (they cut everything after BEGIN, the admin's lines too)
printf '# BEGIN kopolicy (kopolicy-dkms enable)\nkopolicy_mode=fail\nADMIN_LINE=1\n' \
	> "/etc/dkms/${id}cut.conf"
cp "/etc/dkms/${id}cut.conf" "$tmp/cut.orig"
"$kpdkms" disable "${id}cut" > "$tmp/cut.log" 2>&1
is "disable, a BEGIN line without its END line: exits 1" $? 1
cmp -s "$tmp/cut.orig" "/etc/dkms/${id}cut.conf" &&
	grep -q "without its '# END kopolicy' line after it: left alone" "$tmp/cut.log"
ok "... the file left alone (the admin's line after it kept), and said" $?
"$kpdkms" enable "${id}cut" > "$tmp/cut.log" 2>&1
is "... enable on it: exits 1" $? 1
cmp -s "$tmp/cut.orig" "/etc/dkms/${id}cut.conf"
ok "... the file left alone" $?
forget "${id}en"
printf 'mode=warn\nmode.%s=fail\n' "${id}per" > "$KOPOLICY_DKMS_CONF"
make_dkms "${id}per" --no-hook kp_prop_prov kp_prop_then_gplonly
"$kpdkms" enable "${id}per" > /dev/null 2>&1
"$kpdkms" status "${id}per" > "$tmp/per-status.log" 2>&1
grep -q "^${id}per: enabled, mode fail" "$tmp/per-status.log"
ok "mode.NAME=fail in kopolicy.conf: status says fail" $?
# a quoted value is the same mode (read as [a-z]*, "fail" was an empty mode: warn)
printf 'mode=warn\nmode.%s="fail"\n' "${id}per" > "$KOPOLICY_DKMS_CONF"
"$kpdkms" status "${id}per" > "$tmp/per-status.log" 2>&1
grep -q "^${id}per: enabled, mode fail" "$tmp/per-status.log"
ok "mode.NAME=\"fail\" (quoted): status says fail" $?
install_log "${id}per" per
is "mode.NAME=fail (mode=warn for the others): dkms install exits 101" $? 101
forget "${id}per"
# a package whose dkms.conf sources the fragment, then `enable --mode fail`: the block's mode
# is used (it was dropped as "hooked already": the hook ran in warn, status said fail)
mode warn
make_dkms "${id}both" kp_prop_prov kp_prop_then_gplonly
"$kpdkms" enable --mode fail "${id}both" > /dev/null 2>&1
install_log "${id}both" both
is "dkms.conf's hook and enable --mode fail (kopolicy.conf: warn): dkms install exits 101" $? 101
is "... the hook ran once" "$(grep -c "kopolicy-dkms: dkms ${id}both/1.0 $KREL: checking" \
	"$tmp/both.log")" 1
forget "${id}both"
"$kpdkms" frobnicate > /dev/null 2>&1
is "an unknown command: exit 2" $? 2
"$kpdkms" enable ../evil > "$tmp/bad.log" 2>&1
is "a NAME with a slash: exit 2" $? 2
ln -s /dev/null "/etc/dkms/${id}link.conf"
"$kpdkms" enable "${id}link" > "$tmp/link.log" 2>&1
is "a conf file that is a symlink: exit 1" $? 1
grep -q "not a regular file: left alone" "$tmp/link.log" && [ -L "/etc/dkms/${id}link.conf" ]
ok "a symlinked conf file is left alone" $?

# 10. the install rules: POST_INSTALL and POST_REMOVE keep ROOT/etc/modprobe.d/zz-kopolicy.conf
# current once it exists (dkms runs them before depmod), and never create it
export KOPOLICY_RULES_HOOK=$PKGROOT$PKG_LIBEXECDIR/update-install-rules
rules=$tmp/root/etc/modprobe.d/zz-kopolicy.conf
mode warn
make_dkms "${id}r" --post-install kp_prop_prov
install_log "${id}r" rules0
is "install rules: dkms install without a rules file exits 0" $? 0
[ ! -e "$rules" ]
ok "install rules: POST_INSTALL creates no rules file" $?
grep -q "package post_install for $KREL" "$tmp/${id}r.post-ran" 2>/dev/null
ok "install rules: the package's own POST_INSTALL still runs" $?
forget "${id}r"
mkdir -p "$tmp/root/etc/modprobe.d"
"$KOPOLICY" hook --root "$tmp/root" --update-install-rules > "$tmp/rules1.log" 2>&1
is "install rules: written by the admin (exit 0)" $? 0
grep -q "^install kp_prop_prov " "$rules"
is "install rules: no line for the removed module yet" $? 1
make_dkms "${id}r" --post-install kp_prop_prov
install_log "${id}r" rules2
is "install rules: dkms install exits 0" $? 0
grep -q "^install kp_prop_prov " "$rules"
ok "install rules: POST_INSTALL added the installed module's line" $?
dkms remove "${trees[@]}" -m "${id}r" -v 1.0 --all > "$tmp/rules3.log" 2>&1
is "install rules: dkms remove exits 0" $? 0
grep -q "^install kp_prop_prov " "$rules"
is "install rules: POST_REMOVE dropped its line" $? 1
unset KOPOLICY_RULES_HOOK

if [ "$failed" -ne 0 ]; then
	for l in "$tmp"/*.log; do echo "# --- $l"; tail -25 "$l" | sed 's/^/# /'; done
fi
finish
