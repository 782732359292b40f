# shellcheck shell=bash
# Sourced by the hook's tests: a fake root for `kopolicy hook --root`.
#
# hook_root DIR MODULE...: tests/unit/policy/root's skeleton (proc, sys, etc) copied to DIR,
# the fixtures MODULE.ko of $fx in lib/modules/$rel/extra, empty modules.builtin and
# modules.builtin.modinfo, $fx's Module.symvers and config in boot/, proc/sys/kernel/osrelease
# saying $rel, and depmod run on it (its errors, if it fails, on stderr). The caller sets $top,
# $fx, $rel and $tmp (tap_tmpdir).
hook_root() {
	local r=$1 m
	shift
	mkdir -p "$r"
	cp -R "$top/tests/unit/policy/root/." "$r/"
	mkdir -p "$r/lib/modules/$rel/extra" "$r/boot"
	for m in "$@"; do cp "$fx/$m.ko" "$r/lib/modules/$rel/extra/"; done
	: > "$r/lib/modules/$rel/modules.builtin"
	: > "$r/lib/modules/$rel/modules.builtin.modinfo"
	cp "$fx/Module.symvers.gz" "$r/boot/symvers-$rel.gz"
	cp "$fx/config.gz" "$r/boot/config-$rel"
	echo "$rel" > "$r/proc/sys/kernel/osrelease"
	depmod -b "$r" "$rel" 2> "$tmp/depmod.err" || cat "$tmp/depmod.err" >&2
}
