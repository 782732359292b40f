# shellcheck shell=bash
# Sourced by bench/bench-hook.sh and bench/bench-hook-all.sh: the scratch root the hook and
# `modprobe --dry-run` are timed on.
#
# bench_root TREE ROOT REL: under ROOT (made by the caller), TREE's lib/modules/REL/kernel as
# ROOT's own files (hard links when TREE is on the same file system, else a copy: `hook
# --root` resolves every path inside ROOT, so a link out of it leads nowhere and the hook would
# be timed answering "cannot decide"), the release directory's modules.builtin*,
# modules.order, boot/config-REL, the headers' Module.symvers, a fake proc/ and sys/ with
# nothing loaded, depmod run. Exit status: 0, or 2 with a line on stderr.
bench_root() {
	local tree=$1 root=$2 rel=$3 f
	local md=$root/lib/modules/$rel hdr=$tree/usr/src/linux-headers-$rel
	mkdir -p "$md/extra" "$root/boot" "$root/usr/src" "$root/proc/sys/kernel" \
		"$root/sys/module/module/parameters" || return 2
	if ! cp -al "$tree/lib/modules/$rel/kernel" "$md/kernel" 2>/dev/null; then
		rm -rf "$md/kernel"
		cp -a "$tree/lib/modules/$rel/kernel" "$md/kernel" || {
			echo "bench: cannot copy $tree/lib/modules/$rel/kernel into $root" >&2
			return 2
		}
	fi
	for f in modules.builtin modules.builtin.modinfo modules.order; do
		[ ! -e "$tree/lib/modules/$rel/$f" ] || cp "$tree/lib/modules/$rel/$f" "$md/"
	done
	[ ! -e "$tree/boot/config-$rel" ] || cp "$tree/boot/config-$rel" "$root/boot/"
	if [ -e "$hdr/Module.symvers" ]; then
		mkdir -p "$root/usr/src/linux-headers-$rel"
		cp "$hdr/Module.symvers" "$root/usr/src/linux-headers-$rel/"
	fi
	echo "$rel" >"$root/proc/sys/kernel/osrelease"
	echo N >"$root/sys/module/module/parameters/sig_enforce"
	echo 0 >"$root/proc/sys/kernel/tainted"
	echo "BOOT_IMAGE=/boot/vmlinuz-$rel root=/dev/vda1 ro quiet" >"$root/proc/cmdline"
	: >"$root/proc/modules"
}

# bench_decides KOPOLICY ROOT MODULE: the hook decides MODULE on ROOT (no "cannot decide":
# a bench timing that answer times nothing the hook is for). 0, or 2 with its line on stderr.
bench_decides() {
	local out
	out=$("$1" hook -v --root "$2" "$3" 2>&1 >/dev/null)
	case $out in
	*"cannot decide"*)
		echo "bench: the hook cannot decide $3 on the scratch root:" >&2
		grep -m 1 'cannot decide' <<<"$out" >&2
		return 2
		;;
	esac
	return 0
}
