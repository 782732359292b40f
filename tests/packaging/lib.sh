# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the tests/packaging/test-*.sh scripts (sourced): TAP helpers, the kopolicy
# installation under test ($PKGROOT, from `make install DESTDIR=$PKGROOT`), the target
# kernel (installed linux-headers-* with Module.symvers) and the module sources.
#
# Environment: PKGROOT (DESTDIR of a `make install`), PKG_BINDIR, PKG_LIBEXECDIR,
# PKG_DEBHELPERDIR, PKG_RPMMACRODIR, PKG_POSTINSTDIR, PKG_POSTRMDIR, PKG_KERNELINSTALLDIR,
# PKG_PKGDATADIR, PKG_SBINDIR (the configured directories; defaults: those a plain ./configure picks
# on Debian 12), PKG_DIST (the release tarball, for test-own-*.sh), srcdir (the source tree),
# KREL (kernel release; default: the first /lib/modules/*/build with Module.symvers, else
# /usr/src/linux-headers-*).
n=0
failed=0
ok() { # description, status
	n=$((n + 1))
	if [ "$2" -eq 0 ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		failed=$((failed + 1))
	fi
}
is() { # description, got, want
	if [ "$2" = "$3" ]; then ok "$1" 0; else ok "$1 (got '$2', want '$3')" 1; fi
}
skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}
finish() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
}
: "${srcdir:?srcdir not set}" "${PKGROOT:?PKGROOT not set}"
PKG_BINDIR=${PKG_BINDIR:-/usr/local/bin}
PKG_LIBEXECDIR=${PKG_LIBEXECDIR:-/usr/local/libexec/kopolicy}
PKG_DEBHELPERDIR=${PKG_DEBHELPERDIR:-$(perl -MConfig -e 'print $Config{sitelib}' 2>/dev/null)}
PKG_RPMMACRODIR=${PKG_RPMMACRODIR:-/usr/lib/rpm/macros.d}
PKG_POSTINSTDIR=${PKG_POSTINSTDIR:-/etc/kernel/postinst.d}
PKG_POSTRMDIR=${PKG_POSTRMDIR:-/etc/kernel/postrm.d}
PKG_KERNELINSTALLDIR=${PKG_KERNELINSTALLDIR:-/usr/lib/kernel/install.d}
PKG_PKGDATADIR=${PKG_PKGDATADIR:-/usr/local/share/kopolicy}
PKG_SBINDIR=${PKG_SBINDIR:-/usr/local/sbin}
export KOPOLICY=$PKGROOT$PKG_BINDIR/kopolicy
export KOPOLICY_CHECK_BUILT=$PKGROOT$PKG_LIBEXECDIR/check-built
[ -x "$KOPOLICY" ] || skip_all "no installed kopolicy in $PKGROOT$PKG_BINDIR (make install)"
if [ -z "${KREL:-}" ]; then
	for d in /lib/modules/*/build /usr/src/linux-headers-*; do
		[ -f "$d/Module.symvers" ] && [ -f "$d/include/generated/utsrelease.h" ] || continue
		KREL=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
			"$d/include/generated/utsrelease.h")
		break
	done
fi
[ -n "${KREL:-}" ] || skip_all "no installed linux-headers-* with Module.symvers"
KDIR=/lib/modules/$KREL/build
[ -f "$KDIR/Module.symvers" ] || KDIR=/usr/src/linux-headers-$KREL
FXSRC=$srcdir/fixtures/src
# make_module_src DIR NAME...: a kbuild directory with the fixture sources NAME (obj-m of all).
make_module_src() {
	local dir=$1 name
	shift
	mkdir -p "$dir"
	: > "$dir/Kbuild"
	for name in "$@"; do
		cp "$FXSRC/$name/$name.c" "$dir/"
		echo "obj-m += $name.o" >> "$dir/Kbuild"
	done
}
# second_kernel DIR: a second kernel for multi-kernel build roots, from prebuilt fixtures of
# another release than $KREL (fixtures/ko/<series>/: its Module.symvers, config, release)
# made into a headers tree DIR (Module.symvers, .config, include/generated/utsrelease.h).
# Sets K2REL (its release), K2HDR (DIR) and K2KO (its prebuilt modules); 1 if none.
second_kernel() {
	local d
	K2REL='' K2HDR=$1 K2KO=''
	for d in "$srcdir"/fixtures/ko/6.12 "$srcdir"/fixtures/ko/*/; do
		d=${d%/}
		[ -f "$d/Module.symvers.gz" ] && [ -f "$d/config.gz" ] || continue
		grep -qx "arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)" \
			"$d/kernel.txt" 2>/dev/null || continue
		K2REL=$(sed -n 's/^release=//p' "$d/kernel.txt")
		[ -n "$K2REL" ] && [ "$K2REL" != "$KREL" ] && K2KO=$d && break
	done
	[ -n "$K2KO" ] || return 1
	mkdir -p "$K2HDR/include/generated"
	gzip -dc "$K2KO/Module.symvers.gz" > "$K2HDR/Module.symvers"
	gzip -dc "$K2KO/config.gz" > "$K2HDR/.config"
	echo "#define UTS_RELEASE \"$K2REL\"" > "$K2HDR/include/generated/utsrelease.h"
}
# fixture_ko RELEASE: the prebuilt fixtures directory whose kernel is RELEASE, or nothing
fixture_ko() {
	local d
	for d in "$srcdir"/fixtures/ko/*/; do
		grep -qx "release=$1" "$d/kernel.txt" 2>/dev/null && echo "${d%/}" && return 0
	done
	return 1
}
