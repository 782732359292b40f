#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Install paths (issue 23, item 4): configure asks each tool where it reads its files, and
# `make install DESTDIR=...` puts every integration there, with the same paths baked into
# the scripts, for
#  1. the default prefix (/usr/local, the README's plain ./configure);
#  2. a system install (--prefix=/usr --sysconfdir=/etc, what the packages use).
# Each configuration is built in a temporary directory from $srcdir (a full build each).
# A path is "read by its tool" when the tool says so on this machine: perl's @INC, rpm's
# macro path, the kernel-install script, dkms, run-parts' fixed /etc/kernel/postinst.d,
# bash-completion's XDG_DATA_DIRS default.
set -u
. "$(dirname "$0")/lib.sh"
[ -x "$srcdir/configure" ] || skip_all "no $srcdir/configure (./autogen.sh)"
[ ! -f "$srcdir/config.status" ] || skip_all "$srcdir is configured in tree"
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
jobs=${MAKEJOBS:-2}

# build NAME CONFIGURE-ARGS...: configure, build and install into $tmp/NAME/root
build() {
	local name=$1
	shift
	mkdir -p "$tmp/$name/build"
	(cd "$tmp/$name/build" && "$srcdir/configure" "$@" &&
		make -j"$jobs" && make install DESTDIR="$tmp/$name/root") > "$tmp/$name.log" 2>&1
}

# has_file DESCRIPTION PATH: the file is installed (PATH without the DESTDIR)
has_file() {
	[ -f "$root$2" ]
	ok "$1: $2" $?
}

# baked DESCRIPTION FILE PATTERN WANT: the first match of sed's PATTERN in FILE is WANT
baked() {
	is "$1" "$(sed -n "s|$3|\\1|p" "$root$2" | head -n1)" "$4"
}

# paths_resolve FILE...: every absolute path under the prefix, libexec or the configuration
# directories named in an installed script resolves to an installed file
paths_resolve() {
	local f p bad=
	for f in "$@"; do
		for p in $(grep -o -E "($prefix|/etc)/[A-Za-z0-9_./-]*kopolicy[A-Za-z0-9_./-]*" \
			"$root$f" | sed 's/[.]*$//' | sort -u); do
			case $p in
			*/hook.conf | */kernel-hook.conf | */kopolicy.conf | */modprobe.d/* | \
				*/dkms | /etc/kopolicy/* | */framework.conf)
				continue ;; # configuration the admin writes
			esac
			[ -e "$root$p" ] || bad="$bad $f:$p"
		done
	done
	is "every installed path named in the scripts is installed" "${bad# }" ""
}

# check_layout: prefix, sysconfdir, perl_dir, zsh_dir set
check_layout() {
	local pl=$prefix/libexec/kopolicy m
	has_file "the binary" "$prefix/bin/kopolicy"
	for m in check-built dkms-post-build brp-kopolicy kernel-postinst; do
		[ -x "$root$pl/$m" ]
		ok "libexec: $pl/$m (executable)" $?
	done
	has_file "debhelper addon (perl @INC)" "$perl_dir/Debian/Debhelper/Sequence/kopolicy.pm"
	perl -e 'exit !grep { $_ eq $ARGV[0] } @INC' "$perl_dir"
	ok "$perl_dir is in perl's @INC" $?
	has_file "dh_kopolicy" "$prefix/bin/dh_kopolicy"
	has_file "dh_kopolicy(1)" "$prefix/share/man/man1/dh_kopolicy.1"
	if command -v rpm >/dev/null; then
		local rd
		rd=$(rpm --eval %_rpmmacrodir)
		has_file "rpm macros (rpm --eval %_rpmmacrodir)" "$rd/macros.kopolicy"
		rpm --showrc | grep -q "^Macro path: .*$rd/macros\\.\\*"
		ok "rpm reads $rd/macros.*" $?
	fi
	has_file "kernel postinst hook (run-parts)" /etc/kernel/postinst.d/zz-kopolicy
	[ -x "$root/etc/kernel/postinst.d/zz-kopolicy" ]
	ok "the postinst hook is executable" $?
	has_file "kernel postrm hook (run-parts)" /etc/kernel/postrm.d/zz-kopolicy
	has_file "apt hook (DPkg::Post-Invoke)" /etc/apt/apt.conf.d/80kopolicy
	[ -x "$root$pl/update-install-rules" ]
	ok "libexec: $pl/update-install-rules (executable)" $?
	baked "postrm.d/zz-kopolicy runs libexec's update-install-rules" \
		/etc/kernel/postrm.d/zz-kopolicy '^exec \([^ ]*\) .*' "$pl/update-install-rules"
	baked "update-install-rules: the binary" "$pl/update-install-rules" \
		'^KOPOLICY=${KOPOLICY:-\(.*\)}$' "$prefix/bin/kopolicy"
	m="if \\[ -x $pl/update-install-rules \\]; then $pl/update-install-rules apt || true; fi"
	grep -q "^DPkg::Post-Invoke { \"$m\"; };\$" "$root/etc/apt/apt.conf.d/80kopolicy"
	ok "80kopolicy runs libexec's update-install-rules and never fails apt" $?
	for m in retire-install-rules initramfs-rules; do
		[ -x "$root$pl/$m" ]
		ok "libexec: $pl/$m (executable)" $?
	done
	baked "retire-install-rules: the binary" "$pl/retire-install-rules" \
		'^KOPOLICY=${KOPOLICY:-\(.*\)}$' "$prefix/bin/kopolicy"
	has_file "initramfs-tools hook (mkinitramfs runs its hooks)" \
		/usr/share/initramfs-tools/hooks/kopolicy
	[ -x "$root/usr/share/initramfs-tools/hooks/kopolicy" ]
	ok "the initramfs-tools hook is executable" $?
	baked "the initramfs-tools hook runs libexec's initramfs-rules" \
		/usr/share/initramfs-tools/hooks/kopolicy '^exec \([^ ]*\) .*' "$pl/initramfs-rules"
	m=$(pkg-config --variable=dracutmodulesdir dracut 2>/dev/null)
	has_file "dracut module" "${m:-/usr/lib/dracut/modules.d}/99kopolicy/module-setup.sh"
	has_file "kernel-install plugin" /usr/lib/kernel/install.d/90-kopolicy.install
	if command -v kernel-install >/dev/null &&
		head -c2 "$(command -v kernel-install)" | grep -q '^#!'; then
		grep -q '/usr/lib/kernel/install.d' "$(command -v kernel-install)"
		ok "kernel-install reads /usr/lib/kernel/install.d" $?
	fi
	has_file "DKMS mode file" /etc/dkms/kopolicy.conf
	has_file "bash completion" "$prefix/share/bash-completion/completions/kopolicy"
	has_file "zsh completion" "$zsh_dir/_kopolicy"
	has_file "kopolicy(1)" "$prefix/share/man/man1/kopolicy.1"
	has_file "kopolicy.conf(5)" "$prefix/share/man/man5/kopolicy.conf.5"
	for m in dkms.conf.example kopolicy-post-build hook.conf zz-kopolicy.conf kernel-hook.conf \
		kopolicy-overrides.example ci/kopolicy-ci.sh; do
		has_file "example" "$prefix/share/doc/kopolicy/examples/$m"
	done

	# the paths baked into the scripts and the binary agree with where things landed
	baked "zz-kopolicy runs libexec's kernel-postinst" /etc/kernel/postinst.d/zz-kopolicy \
		'^exec \([^ ]*\) .*' "$pl/kernel-postinst"
	baked "90-kopolicy.install runs libexec's kernel-postinst" \
		/usr/lib/kernel/install.d/90-kopolicy.install '^exec \([^ ]*\) .*' \
		"$pl/kernel-postinst"
	baked "kernel-postinst: the binary" "$pl/kernel-postinst" \
		'^KOPOLICY=${KOPOLICY:-\(.*\)}$' "$prefix/bin/kopolicy"
	baked "kernel-postinst: SYSCONFDIR/kopolicy/kernel-hook.conf" "$pl/kernel-postinst" \
		'^conf=${KOPOLICY_KERNEL_HOOK_CONF:-\(.*\)}$' \
		"$sysconfdir/kopolicy/kernel-hook.conf"
	baked "check-built: the binary" "$pl/check-built" '^KOPOLICY=${KOPOLICY:-\(.*\)}$' \
		"$prefix/bin/kopolicy"
	baked "dh_kopolicy: check-built" "$prefix/bin/dh_kopolicy" \
		"^my \$check_built = '\\(.*\\)';\$" "$pl/check-built"
	m=$(rpm --eval %_rpmmacrodir 2>/dev/null || echo /usr/lib/rpm/macros.d)/macros.kopolicy
	baked "macros.kopolicy: %__kopolicy" "$m" '^%__kopolicy \(.*\)$' "$prefix/bin/kopolicy"
	baked "macros.kopolicy: %__brp_kopolicy" "$m" '^%__brp_kopolicy \(.*\)$' \
		"$pl/brp-kopolicy"
	baked "dkms-post-build: DKMS mode file" "$pl/dkms-post-build" \
		'^conf=${KOPOLICY_DKMS_CONF:-\(.*\)}$' /etc/dkms/kopolicy.conf
	baked "dkms-post-build: check-built" "$pl/dkms-post-build" \
		'^check=${KOPOLICY_CHECK_BUILT:-\(.*\)}$' "$pl/check-built"
	baked "examples/kopolicy-post-build runs libexec's dkms-post-build" \
		"$prefix/share/doc/kopolicy/examples/kopolicy-post-build" \
		'^for hook in \([^ ]*\) .*' "$pl/dkms-post-build"
	pd=$prefix/share/kopolicy
	grep -q "^	\. $pd/dkms-hook.conf$" \
		"$root$prefix/share/doc/kopolicy/examples/dkms.conf.example" &&
		[ -f "$root$pd/dkms-hook.conf" ]
	ok "examples/dkms.conf.example sources the installed $pd/dkms-hook.conf" $?
	! grep -q '/usr/libexec' "$root$prefix/share/doc/kopolicy/examples/dkms.conf.example" ||
		[ "$prefix" = /usr ]
	ok "examples/dkms.conf.example hard-codes no other libexec" $?
	m=$("$root$prefix/bin/kopolicy" hook --help | sed -n 's|^.*(default ROOT\(/[^;]*\);$|\1|p')
	is "kopolicy hook --help: the configured policy path" "$m" "$sysconfdir/kopolicy/hook.conf"
	grep -q "^\\.B $sysconfdir/kopolicy/hook.conf\$" "$root$prefix/share/man/man1/kopolicy.1"
	ok "the installed kopolicy(1) names $sysconfdir/kopolicy/hook.conf" $?
	grep -q "kopolicy/kernel\\\\-hook.conf" "$root$prefix/share/man/man1/kopolicy.1" &&
		! grep -q -E "(^|[^a-z])/etc/kopolicy/" "$root$prefix/share/man/man1/kopolicy.1" ||
		[ "$sysconfdir" = /etc ]
	ok "... and no other sysconfdir" $?
	for m in hook.conf kernel-hook.conf; do
		grep -q "^# $sysconfdir/kopolicy/$m: " "$root$prefix/share/doc/kopolicy/examples/$m"
		ok "examples/$m names $sysconfdir/kopolicy/$m" $?
	done
	paths_resolve /etc/kernel/postinst.d/zz-kopolicy /etc/kernel/postrm.d/zz-kopolicy \
		/etc/apt/apt.conf.d/80kopolicy "$pl/update-install-rules" \
		/usr/lib/kernel/install.d/90-kopolicy.install "$pl/kernel-postinst" "$pl/check-built" \
		"$pl/dkms-post-build" "$pl/brp-kopolicy" "$pl/retire-install-rules" \
		/usr/share/initramfs-tools/hooks/kopolicy \
		"$prefix/bin/dh_kopolicy" "$m"
}

# 1. the default prefix
name=default
build default
is "default prefix: configure, build, make install DESTDIR" $? 0
root=$tmp/default/root prefix=/usr/local sysconfdir=/usr/local/etc
perl_dir=$(perl -MConfig -e 'print $Config{sitelib}')
zsh_dir=$prefix/share/zsh/site-functions
command -v zsh >/dev/null && ! zsh -fc 'print -l -- $fpath' | grep -qx "$zsh_dir" &&
	zsh_dir=$prefix/share/zsh/vendor-completions
bash_dirs=$(sed -n 's/.*XDG_DATA_DIRS:-\([^}]*\)}.*/\1/p' \
	/usr/share/bash-completion/bash_completion 2>/dev/null | head -n1)
case :$bash_dirs: in
*:/usr/local/share:*) ok "bash-completion reads /usr/local/share/bash-completion" 0 ;;
*) ok "# SKIP bash-completion's XDG_DATA_DIRS default not found" 0 ;;
esac
check_layout
# the DKMS wrapper says so when kopolicy is not where it was configured
if [ ! -e /usr/libexec/kopolicy/dkms-post-build ] &&
	[ ! -e /usr/local/libexec/kopolicy/dkms-post-build ]; then
	out=$(sh "$root$prefix/share/doc/kopolicy/examples/kopolicy-post-build" 6.1.0-0-amd64 \
		x86_64 2>&1)
	st=$?
	is "kopolicy-post-build without kopolicy: exit status" "$st" 0
	is "... and a line on stderr" "$out" "kopolicy-post-build: kopolicy is not installed \
(no $prefix/libexec/kopolicy/dkms-post-build): modules built for 6.1.0-0-amd64 not checked"
fi

# 2. a system install
name=system
build system --prefix=/usr --sysconfdir=/etc
is "--prefix=/usr --sysconfdir=/etc: configure, build, make install DESTDIR" $? 0
root=$tmp/system/root prefix=/usr sysconfdir=/etc
perl_dir=$(perl -MConfig -e 'print $Config{vendorlib}')
zsh_dir=/usr/share/zsh/site-functions
if command -v zsh >/dev/null; then
	zsh -fc 'print -l -- $fpath' | grep -qx /usr/share/zsh/vendor-completions &&
		zsh_dir=/usr/share/zsh/vendor-completions
elif [ -d /usr/share/zsh/vendor-completions ]; then
	zsh_dir=/usr/share/zsh/vendor-completions
fi
check_layout
# nothing lands outside the standard places
std='^/usr/(bin|sbin|libexec/kopolicy|lib/(rpm|kernel|dracut/modules\.d/99kopolicy)|'
std+='share/(man|doc/kopolicy|kopolicy|bash-completion|zsh|perl5|initramfs-tools/hooks))/'
stray=$(cd "$root" && find . -type f | sed 's|^\.||' |
	grep -v -E "$std|^/etc/(dkms|kernel/postinst\\.d|kernel/postrm\\.d|apt/apt\\.conf\\.d)/")
is "a system install puts nothing elsewhere" "$stray" ""

# 3. --without-NAMEdir leaves an integration out, the scripts keep their paths
mkdir -p "$tmp/without"
(cd "$tmp/system/build" && "$srcdir/configure" --prefix=/usr --sysconfdir=/etc \
	--without-debhelperdir --without-rpmmacrodir --without-kernelpostinstdir \
	--without-dkmsdir --without-kernelpostrmdir --without-aptconfdir \
	--without-initramfstoolsdir --without-dracutmoduledir &&
	make install DESTDIR="$tmp/without") > "$tmp/without.log" 2>&1
is "--without-*dir: configure and install" $? 0
left=$(cd "$tmp/without" && find . -type f |
	grep -E 'perl5|dh_kopolicy|rpm/macros|postinst\.d|postrm\.d|apt\.conf\.d|etc/dkms|initramfs-tools|dracut')
is "--without-*dir: those integrations are not installed" "$left" ""
grep -q '^conf=${KOPOLICY_DKMS_CONF:-/etc/dkms/kopolicy.conf}$' \
	"$tmp/without/usr/libexec/kopolicy/dkms-post-build"
ok "--without-dkmsdir: dkms-post-build still reads /etc/dkms/kopolicy.conf" $?
[ -f "$tmp/without/usr/lib/kernel/install.d/90-kopolicy.install" ]
ok "--without-*dir: the others are installed" $?

if [ "$failed" -ne 0 ]; then
	for l in "$tmp"/*.log; do echo "# --- $l"; tail -30 "$l" | sed 's/^/# /'; done
fi
finish
