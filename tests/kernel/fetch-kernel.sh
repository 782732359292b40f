#!/bin/bash
# fetch-kernel.sh SERIES [ARCH]
#
# Fetch a stock Debian kernel (image + headers + kbuild) of SERIES for ARCH (amd64
# (default) | arm64 | i386 | s390x) into the kopolicy cache and print eval-able shell
# assignments on stdout:
#
#   KP_ABI KP_RELEASE KP_KDIR KP_VMLINUZ KP_CONFIG KP_SYMVERS KP_SYSTEMMAP
#   (plus KP_ARCH KP_FLAVOUR KP_VERSION KP_IMAGE_DEB KP_SUITE for convenience, and
#   KP_MODULES_DEB: the package holding the module tree, empty for sid's linux-modules-<abi>
#   unless KP_FETCH_MODULES=1)
#
# SERIES and the suite it comes from:
#   5.10  bullseye (+ -updates, -security)     5.10.0-NN
#   6.1   bookworm (+ -updates, -security)     6.1.0-NN
#   6.12  bookworm (+ -updates, -security)     6.12.NNN+deb12
#   7.2   sid                                  7.2.NN+deb14 (split packages: the kernel image
#         is under usr/lib/modules/<abi>/, not boot/)
#
# Nothing is installed: the packages are `apt-get download`ed with a private apt state
# (one per architecture and suite, $KOPOLICY_CACHE/apt/<arch>/fetch-kernel-<suite>/, no
# `dpkg --add-architecture`; the mirror is the one this machine's /etc/apt/sources.list(.d)
# names, see tests/kernel/debian-mirror.sh) into $KOPOLICY_CACHE/debs/<arch>/ (SHA256-checked
# against the archive index, shared with tests/corpus/fetch-trees.sh) and unpacked with
# dpkg -x into $KOPOLICY_CACHE/kernels/<abi>/.
#
# Picks the newest ABI of the series for which a signed image and the headers exist.
# s390x has no signed kernels in Debian: there the (only) unsigned image is accepted.
# The kbuild host tools (scripts/, tools/) always come from the *amd64* linux-kbuild
# package (the build host), of the same version as the headers when the archive still
# carries it, else the newest of that name.
#
# Environment:
#   KOPOLICY_CACHE        cache root (default $HOME/.cache/kopolicy)
#   KOPOLICY_APT_MAX_AGE  refresh the private apt lists when older than this many
#                         seconds (default 21600); 0 = always refresh
#   KOPOLICY_OFFLINE=1    never run apt-get update; use the cached lists as they are
#   KP_FETCH_MODULES=1    also fetch sid's linux-modules-<abi> (KP_MODULES_DEB; ~110 MB)
#
# Exit status: 0 on success, 1 on any failure or usage error (message on stderr).
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "fetch-kernel: error: line $LINENO: exit status $?" >&2' ERR

prog=${0##*/}

die() {
	echo "$prog: error: $*" >&2
	exit 1
}

usage() {
	echo "usage: $prog SERIES [ARCH]   (SERIES: 5.10|6.1|6.12|7.2, ARCH: amd64|arm64|i386|s390x)" >&2
	exit 1
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then usage; fi
SERIES=$1
ARCH=${2:-amd64}
HOST_ARCH=amd64

case $SERIES in
5.10) SUITE=bullseye ;;
6.1 | 6.12) SUITE=bookworm ;;
7.2) SUITE=sid ;;
*) usage ;;
esac

# ARCH -> Debian flavour; whether a signed image is required
case $ARCH in
amd64) FLAVOUR=amd64 NEED_SIGNED=1 ;;
arm64) FLAVOUR=arm64 NEED_SIGNED=1 ;;
i386) FLAVOUR=686-pae NEED_SIGNED=1 ;;
s390x) FLAVOUR=s390x NEED_SIGNED=0 ;;
*) usage ;;
esac

CACHE=${KOPOLICY_CACHE:-$HOME/.cache/kopolicy}
MAX_AGE=${KOPOLICY_APT_MAX_AGE:-21600}
OFFLINE=${KOPOLICY_OFFLINE:-0}

mkdir -p "$CACHE/debs" "$CACHE/kernels" "$CACHE/apt" ||
	die "cannot create cache directories under $CACHE"
CACHE=$(cd "$CACHE" && pwd -P)

LOG=$(mktemp "${TMPDIR:-/tmp}/fetch-kernel.XXXXXX")
TMPD=""
cleanup() {
	rm -f "$LOG"
	if [ -n "$TMPD" ]; then rm -rf "$TMPD"; fi
}
trap cleanup EXIT

# Run a command with its output going to the log; on failure show the log and die.
logged() {
	if ! "$@" >>"$LOG" 2>&1; then
		cat "$LOG" >&2
		die "command failed: $*"
	fi
}

# Serialise concurrent runs (several engineers / CI jobs share one cache).
exec 9>"$CACHE/.fetch-kernel.lock"
flock 9

KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$KEYRING" ] || die "$KEYRING missing (install debian-archive-keyring)"
for tool in apt-get apt-cache dpkg-deb flock sha256sum tar; do
	command -v "$tool" >/dev/null || die "$tool not found"
done

# ---- private apt state, one per architecture and suite ---------------------------------
# shellcheck source=debian-mirror.sh
. "$(dirname "${BASH_SOURCE[0]}")/debian-mirror.sh"
MIRROR=$(debian_mirror main) || die "cannot find the Debian mirror in this machine's apt sources"
SECURITY_MIRROR=$(debian_mirror security 2>/dev/null) ||
	SECURITY_MIRROR=${MIRROR%/debian}/debian-security

apt_dir() { echo "$CACHE/apt/$1/fetch-kernel-$SUITE"; }

apt_opts() {
	local a=$1 d
	d=$(apt_dir "$a")
	printf '%s\n' \
		-o "Dir::Etc=$d/etc" \
		-o "Dir::Etc::sourcelist=$d/etc/sources.list" \
		-o "Dir::Etc::sourceparts=$d/etc/sources.list.d" \
		-o "Dir::Etc::preferences=$d/etc/preferences" \
		-o "Dir::Etc::preferencesparts=$d/etc/preferences.d" \
		-o "Dir::State=$d" \
		-o "Dir::State::lists=$d/lists" \
		-o "Dir::State::status=$d/status" \
		-o "Dir::Cache=$d/cache" \
		-o "Dir::Cache::archives=$d/cache/archives" \
		-o "Dir::Cache::pkgcache=$d/cache/pkgcache.bin" \
		-o "Dir::Cache::srcpkgcache=$d/cache/srcpkgcache.bin" \
		-o "APT::Architecture=$a" \
		-o "APT::Architectures::=$a" \
		-o "APT::Sandbox::User=root" \
		-o "Acquire::Languages=none" \
		-o "APT::Get::Show-Versions=false"
}

kp_apt_get() {
	local a=$1
	shift
	local -a o
	mapfile -t o < <(apt_opts "$a")
	apt-get -q "${o[@]}" "$@"
}

kp_apt_cache() {
	local a=$1
	shift
	local -a o
	mapfile -t o < <(apt_opts "$a")
	apt-cache "${o[@]}" "$@"
}

apt_setup() {
	local a=$1 d stamp age now
	d=$(apt_dir "$a")
	mkdir -p "$d/etc/sources.list.d" "$d/etc/preferences.d" "$d/lists/partial" \
		"$d/cache/archives/partial"
	[ -e "$d/status" ] || : >"$d/status"
	# The mirror is the machine's own (read at run time, never hard-coded).
	if [ "$SUITE" = sid ]; then
		echo "deb [signed-by=$KEYRING] $MIRROR $SUITE main" >"$d/etc/sources.list.new"
	else
		cat >"$d/etc/sources.list.new" <<EOF
deb [signed-by=$KEYRING] $MIRROR $SUITE main
deb [signed-by=$KEYRING] $MIRROR $SUITE-updates main
deb [signed-by=$KEYRING] $SECURITY_MIRROR $SUITE-security main
EOF
	fi
	if ! cmp -s "$d/etc/sources.list.new" "$d/etc/sources.list" 2>/dev/null; then
		mv "$d/etc/sources.list.new" "$d/etc/sources.list"
		rm -f "$d/lists/.updated"
	else
		rm -f "$d/etc/sources.list.new"
	fi
	stamp=$d/lists/.updated
	if [ "$OFFLINE" = 1 ]; then
		[ -e "$stamp" ] || die "KOPOLICY_OFFLINE=1 but no cached apt lists for $a in $d"
		return 0
	fi
	now=$(date +%s)
	if [ -e "$stamp" ]; then
		age=$((now - $(stat -c %Y "$stamp")))
		if [ "$MAX_AGE" -gt 0 ] && [ "$age" -lt "$MAX_AGE" ]; then
			return 0
		fi
	fi
	if kp_apt_get "$a" update >>"$LOG" 2>&1 && ! grep -q '^[WE]: ' "$LOG"; then
		touch "$stamp"
	elif [ -e "$stamp" ]; then
		# Keep working from the previous lists (offline machine); say so.
		echo "$prog: warning: apt-get update for $a failed, using cached lists from $(date \
			-r "$stamp")" >&2
	else
		cat "$LOG" >&2
		die "apt-get update for $a failed"
	fi
	: >"$LOG"
}

# field PKG[=VER] FIELD ARCH -> value of FIELD of the candidate (or given) version
field() {
	kp_apt_cache "$3" show --no-all-versions "$1" 2>/dev/null |
		sed -n "s/^$2: //p" | sed -n 1p
}

# deb_fetch ARCH PKG VER -> prints the cached .deb path (downloads if missing or corrupt)
deb_fetch() {
	local a=$1 pkg=$2 ver=$3 fname sha dir path dl
	fname=$(field "$pkg=$ver" Filename "$a")
	sha=$(field "$pkg=$ver" SHA256 "$a")
	if [ -z "$fname" ] || [ -z "$sha" ]; then die "$pkg=$ver is not in the $a archive lists"; fi
	fname=${fname##*/}
	dir=$CACHE/debs/$a
	path=$dir/$fname
	mkdir -p "$dir"
	if [ -f "$path" ] && printf '%s  %s\n' "$sha" "$path" | sha256sum -c --status; then
		echo "$path"
		return 0
	fi
	dl=$(mktemp -d "$dir/.dl.XXXXXX")
	if ! (cd "$dl" && kp_apt_get "$a" download "$pkg=$ver") >>"$LOG" 2>&1; then
		rm -rf "$dl"
		cat "$LOG" >&2
		die "apt-get download $pkg=$ver ($a) failed"
	fi
	if ! printf '%s  %s\n' "$sha" "$dl/$fname" | sha256sum -c --status; then
		rm -rf "$dl"
		die "apt-get download $pkg=$ver: $fname missing or SHA256 mismatch"
	fi
	mv -f "$dl/$fname" "$path"
	rm -rf "$dl"
	echo "$path"
}

apt_setup "$ARCH"
if [ "$ARCH" != "$HOST_ARCH" ]; then
	apt_setup "$HOST_ARCH"
fi

# ---- pick the ABI -----------------------------------------------------------------------
series_re=${SERIES//./\\.}
# 6.1.0-57 / 6.12.118+deb12 (flavour suffix checked separately, so -cloud-amd64 etc. drop out)
abi_re="^${series_re}\.[0-9]+(-[0-9]+)?(\+deb[0-9]+)?$"

mapfile -t candidates < <(
	kp_apt_cache "$ARCH" pkgnames linux-headers- 2>/dev/null |
		sed -n "s/^linux-headers-\(.*\)-${FLAVOUR}\$/\1/p" |
		grep -E "$abi_re" | sort -Vr -u || true
)
[ "${#candidates[@]}" -gt 0 ] || die \
	"no linux-headers-<abi>-$FLAVOUR of series $SERIES in the $ARCH archive"

ABI_BASE=""
for base in "${candidates[@]}"; do
	img=linux-image-$base-$FLAVOUR
	hdr=linux-headers-$base-$FLAVOUR
	hver=$(field "$hdr" Version "$ARCH")
	[ -n "$hver" ] || continue
	iver=$(field "$img=$hver" Version "$ARCH")
	[ "$iver" = "$hver" ] || continue
	if [ "$NEED_SIGNED" = 1 ]; then
		src=$(field "$img=$hver" Source "$ARCH")
		case $src in linux-signed-*) ;; *) continue ;; esac
	fi
	ABI_BASE=$base
	VERSION=$hver
	break
done
[ -n "$ABI_BASE" ] || die "series $SERIES/$ARCH: no ABI with both a $([ "$NEED_SIGNED" = 1 ] &&
	echo signed) image and headers (candidates: ${candidates[*]})"

ABI=$ABI_BASE-$FLAVOUR
IMG_PKG=linux-image-$ABI
HDR_PKG=linux-headers-$ABI

# Dependencies of the per-flavour headers: the -common tree and linux-kbuild.
deps=$(field "$HDR_PKG=$VERSION" Depends "$ARCH" | tr ',|' '\n' | sed 's/^ *//; s/ .*//')
COMMON_PKG=$(grep -E '^linux-headers-.*-common$' <<<"$deps" | sed -n 1p || true)
KBUILD_PKG=$(grep -E '^linux-kbuild-' <<<"$deps" | sed -n 1p || true)
[ -n "$COMMON_PKG" ] || die "$HDR_PKG=$VERSION: no linux-headers-*-common dependency"
[ -n "$KBUILD_PKG" ] || die "$HDR_PKG=$VERSION: no linux-kbuild-* dependency"
COMMON_VER=$VERSION
[ -n "$(field "$COMMON_PKG=$COMMON_VER" Version "$ARCH")" ] ||
	die "$COMMON_PKG=$COMMON_VER not in the archive"
# host tools: amd64 kbuild, same version if available
KBUILD_VER=$VERSION
if [ -z "$(field "$KBUILD_PKG=$KBUILD_VER" Version "$HOST_ARCH")" ]; then
	KBUILD_VER=$(field "$KBUILD_PKG" Version "$HOST_ARCH")
	[ -n "$KBUILD_VER" ] || die "$KBUILD_PKG ($HOST_ARCH) not in the archive"
	echo "$prog: warning: $KBUILD_PKG=$VERSION not available for $HOST_ARCH, using $KBUILD_VER" >&2
fi

IMG_DEB=$(deb_fetch "$ARCH" "$IMG_PKG" "$VERSION")
# sid's linux-image-<abi> is a meta package: the kernel is in linux-binary-<abi>, config and
# System.map in linux-base-<abi> (usr/lib/modules/<abi>/). Fetch those too when it has them.
BOOT_DEBS=("$IMG_DEB")
for p in $(field "$IMG_PKG=$VERSION" Depends "$ARCH" | tr ',|' '\n' | sed 's/^ *//; s/ .*//' |
	grep -F -x -e "linux-binary-$ABI" -e "linux-base-$ABI" || true); do
	BOOT_DEBS+=("$(deb_fetch "$ARCH" "$p" "$VERSION")")
done
# The module tree (kernel/): in the image package, or in sid's linux-modules-<abi>, fetched only
# when asked for (KP_FETCH_MODULES=1; the oracle's signature scenarios take dummy.ko from it).
MODULES_DEB=$IMG_DEB
if [ -n "$(field "$IMG_PKG=$VERSION" Depends "$ARCH" | tr ',|' '\n' | sed 's/^ *//; s/ .*//' |
	grep -F -x -e "linux-modules-$ABI" || true)" ]; then
	MODULES_DEB=""
	if [ "${KP_FETCH_MODULES:-0}" = 1 ]; then
		MODULES_DEB=$(deb_fetch "$ARCH" "linux-modules-$ABI" "$VERSION")
	fi
fi
HDR_DEB=$(deb_fetch "$ARCH" "$HDR_PKG" "$VERSION")
COMMON_DEB=$(deb_fetch "$ARCH" "$COMMON_PKG" "$COMMON_VER")
KBUILD_DEB=$(deb_fetch "$HOST_ARCH" "$KBUILD_PKG" "$KBUILD_VER")
BOOT_NAMES=""
for d in "${BOOT_DEBS[@]}"; do BOOT_NAMES+="${d##*/}"$'\n'; done

# ---- unpack -------------------------------------------------------------------------------
DEST=$CACHE/kernels/$ABI
# (the first line is the layout of the unpacked tree: bump it when the unpacking changes)
STAMP_WANT=$(printf '%s\n' "layout 2" "${HDR_DEB##*/}" "${COMMON_DEB##*/}" \
	"${KBUILD_DEB##*/}" $BOOT_NAMES)
if [ ! -f "$DEST/.kopolicy-unpacked" ] || [ "$(cat "$DEST/.kopolicy-unpacked")" \
	!= "$STAMP_WANT" ]; then
	TMPD=$(mktemp -d "$CACHE/kernels/.unpack.XXXXXX")
	logged dpkg -x "$HDR_DEB" "$TMPD"
	logged dpkg -x "$COMMON_DEB" "$TMPD"
	logged dpkg -x "$KBUILD_DEB" "$TMPD"
	# From the image only vmlinuz, config and System.map are needed (boot/ up to 7.1,
	# usr/lib/modules/<abi>/ in sid's split packages); the module tree stays in the cached .deb
	# (KP_IMAGE_DEB).
	for d in "${BOOT_DEBS[@]}"; do
		mapfile -t members < <(dpkg-deb --fsys-tarfile "$d" | tar -t 2>>"$LOG" |
			grep -E "^\./(boot/[^/]+|usr/lib/modules/[^/]+/(vmlinuz|config|System\.map))\$" || true)
		[ ${#members[@]} -gt 0 ] || continue
		if ! dpkg-deb --fsys-tarfile "$d" |
			tar -x -C "$TMPD" "${members[@]}" 2>>"$LOG"; then
			cat "$LOG" >&2
			die "cannot unpack the kernel image from $d"
		fi
	done
	# The per-flavour Makefile includes the -common tree by absolute path: point it at DEST.
	mk=$TMPD/usr/src/$HDR_PKG/Makefile
	[ -f "$mk" ] || die "$HDR_DEB: no usr/src/$HDR_PKG/Makefile"
	# 7.x also names its own location as KBUILD_OUTPUT.
	sed -i -e "s|^include /usr/src/|include $DEST/usr/src/|" \
		-e "s|^KBUILD_OUTPUT=/usr/src/|KBUILD_OUTPUT=$DEST/usr/src/|" "$mk"
	grep -q "^include $DEST/usr/src/" "$mk" ||
		die "$mk: unexpected content, cannot fix the include path"
	! grep -q "^KBUILD_OUTPUT=/usr/src/" "$mk" || die "$mk: cannot fix the KBUILD_OUTPUT path"
	printf '%s\n' "$STAMP_WANT" >"$TMPD/.kopolicy-unpacked"
	rm -rf "$DEST"
	mv "$TMPD" "$DEST"
	TMPD=""
fi

KDIR=$DEST/usr/src/$HDR_PKG
[ -f "$KDIR/Module.symvers" ] || die "$KDIR/Module.symvers missing"
[ -e "$KDIR/scripts/Makefile.build" ] || die "$KDIR/scripts is dangling (kbuild not unpacked?)"
# UTS_RELEASE is what `uname -r` prints and what vermagic starts with (Debian's
# include/config/kernel.release holds the upstream version, e.g. 6.1.192, on 6.1).
RELEASE=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
	"$KDIR/include/generated/utsrelease.h" 2>/dev/null || true)
if [ -z "$RELEASE" ] && [ -f "$KDIR/.kernelvariables" ]; then
	RELEASE=$(sed -n 's/^override KERNELRELEASE = //p' "$KDIR/.kernelvariables")
fi
[ -n "$RELEASE" ] || die "cannot determine the kernel release from $KDIR"

VMLINUZ=""
for f in "$DEST/boot/vmlinuz-$RELEASE" "$DEST/boot/vmlinux-$RELEASE" "$DEST/boot/Image-$RELEASE" \
	"$DEST/usr/lib/modules/$RELEASE/vmlinuz"; do
	if [ -f "$f" ]; then
		VMLINUZ=$f
		break
	fi
done
[ -n "$VMLINUZ" ] || die \
	"no kernel image for $RELEASE in $DEST/boot or $DEST/usr/lib/modules/$RELEASE"
CONFIG=$DEST/boot/config-$RELEASE
SYSTEMMAP=$DEST/boot/System.map-$RELEASE
if [ ! -f "$CONFIG" ]; then
	# split packages (sid): config and a stub System.map next to vmlinuz
	CONFIG=$DEST/usr/lib/modules/$RELEASE/config
	SYSTEMMAP=$DEST/usr/lib/modules/$RELEASE/System.map
fi
[ -f "$CONFIG" ] || die "$CONFIG missing"
[ -f "$SYSTEMMAP" ] || die "$SYSTEMMAP missing"

q() { printf '%q' "$1"; }
cat <<EOF
KP_ABI=$(q "$ABI")
KP_RELEASE=$(q "$RELEASE")
KP_KDIR=$(q "$KDIR")
KP_VMLINUZ=$(q "$VMLINUZ")
KP_CONFIG=$(q "$CONFIG")
KP_SYMVERS=$(q "$KDIR/Module.symvers")
KP_SYSTEMMAP=$(q "$SYSTEMMAP")
KP_ARCH=$(q "$ARCH")
KP_FLAVOUR=$(q "$FLAVOUR")
KP_VERSION=$(q "$VERSION")
KP_IMAGE_DEB=$(q "$IMG_DEB")
KP_MODULES_DEB=$(q "$MODULES_DEB")
KP_SUITE=$(q "$SUITE")
EOF
