#!/usr/bin/env bash
# Linked directories in the module tree, walked as kmod's depmod walks them
# (tools/depmod.c depmod_modules_search_dir(): every link followed, into a directory too,
# "build" and "source" skipped), and under -b ROOT resolved inside the root, listed by
# descriptors. Each linked directory exists twice, like test-rootlink.sh's files: inside
# ROOT holding a GPL module (kp_gpl_prov), on the host holding a proprietary one
# (kp_prop_prov), so the license judged tells which directory was listed and read:
#   lrel   kernel/lrel -> ../../../../data/lrel (relative)
#   labs   kernel/labs -> $tmp/host/labs (absolute: the root's, not the host's)
#   nest   kernel/lrel/nest -> ../nest, a link inside a linked directory
#   up     kernel/up -> .. (a loop back to the release directory): one error line
#   self   kernel/self -> self (a link loop, not named as a module): a warning, as depmod's
#   loop   kernel/loop.ko -> loop.ko (named as a module): one error line
#   out    kernel/out -> $tmp/hostonly, only on the host: one error line, not read
#   build  build -> $tmp/host/labs (skipped by its name, as depmod does)
#   dang   kernel/dang -> nowhere: not a module, a warning (depmod: "ERROR: fstatat")
# Then the module paths are compared with `depmod -n -b` on a root with relative links only
# (depmod follows an absolute link on the host), and a release directory's only subdirectory
# as an absolute link to a host directory: the root's listed. (The race, a directory swapped
# for a link between the resolve and the listing: tests/unit/file/test-rootopen.)
# Last, --running --root: the running system's procfs files opened inside the root, a link
# there to a host path read at that path inside the root (or not at all), never the host's;
# and the hook's proc/config.gz likewise.
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.12
tap_own_cache

gpl=$fx/kp_gpl_prov.ko
prop=$fx/kp_prop_prov.ko
host=$tmp/host

# summary FILE: "PATH LICENSE" per module judged (PATH under the release directory),
# "PATH: ERROR" per input error, sorted
summary() {
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
pre = sys.argv[2] + "/"
out = [m["path"].replace(pre, "") + " " + m["license"] for m in d["modules"]]
out += [e["path"].replace(pre, "") + ": " + e["error"] for e in d["errors"]]
print("\n".join(sorted(out)))
PY
}

root=$tmp/root
mods=$root/lib/modules/$rel
mkdir -p "$mods/kernel/extra" "$root/data/lrel" "$root/data/nest" "$root$host/labs" "$host/labs" \
	"$tmp/hostonly"
tap_kernel_files "$root"
cp "$gpl" "$mods/kernel/extra/plain.ko"
cp "$gpl" "$root/data/lrel/m_rel.ko"
cp "$gpl" "$root/data/nest/m_nest.ko"
cp "$gpl" "$root$host/labs/m_abs.ko"
cp "$prop" "$host/labs/m_abs.ko"
cp "$prop" "$tmp/hostonly/m_out.ko"
ln -s ../../../../data/lrel "$mods/kernel/lrel"
ln -s ../nest "$root/data/lrel/nest"
ln -s "$host/labs" "$mods/kernel/labs"
ln -s .. "$mods/kernel/up"
ln -s self "$mods/kernel/self"
ln -s loop.ko "$mods/kernel/loop.ko"
ln -s "$tmp/hostonly" "$mods/kernel/out"
ln -s "$host/labs" "$mods/build"
ln -s nowhere "$mods/kernel/dang"

"$kp" check -b "$root" -f json --fail-on never >"$tmp/r.json" 2>"$tmp/r.err"
is "a tree with linked directories: exit 2 (three links said)" "$?" 2
summary "$tmp/r.json" "$mods" >"$tmp/r.sum"
sed 's/^/#   /' "$tmp/r.sum"
is "the control module" "$(grep '^kernel/extra/plain.ko' "$tmp/r.sum")" \
	"kernel/extra/plain.ko GPL"
is "a relative linked directory: entered, reported under the link's path" \
	"$(grep '^kernel/lrel/m_rel.ko' "$tmp/r.sum")" "kernel/lrel/m_rel.ko GPL"
is "a link inside a linked directory: both followed" \
	"$(grep '^kernel/lrel/nest/' "$tmp/r.sum")" "kernel/lrel/nest/m_nest.ko GPL"
is "an absolute linked directory: the root's, not the host's" \
	"$(grep '^kernel/labs/' "$tmp/r.sum")" "kernel/labs/m_abs.ko GPL"
is "a directory loop: one error line, not entered" "$(grep '^kernel/up' "$tmp/r.sum")" \
	"kernel/up: a linked directory that loops back to one being walked, not entered"
is "a link loop named as a module: one error line" "$(grep '^kernel/loop' "$tmp/r.sum")" \
	"kernel/loop.ko: cannot resolve inside the root: Too many levels of symbolic links"
is "a link loop not named as a module: one warning" "$(grep '^kernel/self' "$tmp/r.sum")" \
	"kernel/self: a looping link, skipped: Too many levels of symbolic links"
is "a link leading out of the root: one error line, not followed" \
	"$(grep '^kernel/out' "$tmp/r.sum")" \
	"kernel/out: a link leading out of the root, not followed"
is "every module judged or said: 9 lines" "$(wc -l <"$tmp/r.sum")" 9
is "no proprietary module read (build skipped, the host's labs and hostonly not read)" \
	"$(grep -c Proprietary "$tmp/r.sum")" 0
is "the dangling link: one warning" "$(grep dang "$tmp/r.sum")" \
	"kernel/dang: a dangling link, skipped: No such file or directory"
"$kp" check -b "$root" --fail-on never >"$tmp/r.txt" 2>&1
is "text: the loop is one line" "$(grep -c "$mods/kernel/up" "$tmp/r.txt")" 1

# the module paths depmod takes, on a root whose links are relative (inside ROOT both ways)
root=$tmp/dep
mods=$root/lib/modules/$rel
mkdir -p "$mods/kernel/extra" "$root/data/lrel" "$root/data/nest" "$root/data/other"
tap_kernel_files "$root"
cp "$gpl" "$mods/kernel/extra/plain.ko"
cp "$gpl" "$root/data/lrel/m_rel.ko"
cp "$gpl" "$root/data/nest/m_nest.ko"
cp "$gpl" "$root/data/other/m_file.ko"
ln -s ../../../../data/lrel "$mods/kernel/lrel"
ln -s ../nest "$root/data/lrel/nest"
ln -s ../../../../../data/other/m_file.ko "$mods/kernel/extra/m_link.ko"
ln -s ../../../../data/other "$mods/source"
if command -v depmod >/dev/null 2>&1; then
	depmod -n -b "$root" "$rel" 2>/dev/null | sed -n 's/^\([^#][^:]*\.ko\):.*/\1/p' | sort \
		>"$tmp/depmod.list"
	"$kp" check -b "$root" -f json --fail-on never >"$tmp/d.json" 2>"$tmp/d.err"
	summary "$tmp/d.json" "$mods" | sed 's/ .*//' >"$tmp/kp.list"
	sed 's/^/#   depmod: /' "$tmp/depmod.list"
	is "depmod -n -b lists 4 module paths" "$(wc -l <"$tmp/depmod.list")" 4
	diff "$tmp/depmod.list" "$tmp/kp.list" >&2
	ok "check -b walks the module paths depmod -n -b takes" $?
else
	skip "depmod -n -b lists 4 module paths" "depmod (kmod) is not installed"
	skip "check -b walks the module paths depmod -n -b takes" "depmod (kmod) is not installed"
fi

# a subdirectory as an absolute link: the root's directory of that name listed, not the host's
root=$tmp/swap
mods=$root/lib/modules/$rel
mkdir -p "$mods/kernel" "$root/data/x" "$root$host/x" "$host/x"
tap_kernel_files "$root"
cp "$gpl" "$root$host/x/m_swap.ko"
cp "$prop" "$host/x/m_swap.ko"
ln -s "$host/x" "$mods/kernel/x"
"$kp" check -b "$root" -f json --fail-on never >"$tmp/s.json" 2>"$tmp/s.err"
is "a subdirectory as an absolute link: the root's listed, not the host's" \
	"$(summary "$tmp/s.json" "$mods")" "kernel/x/m_swap.ko GPL"

# --running --root ROOT: proc/sys/kernel/osrelease and proc/modules as absolute links; the
# host's files name another release (no such tree in ROOT: the run would fail) and another
# module, ROOT's copies at the same paths the tree's release
root=$tmp/run
mods=$root/lib/modules/$rel
mkdir -p "$mods/kernel/extra" "$mods/build" "$root/proc/sys/kernel" "$root$host/proc"
mkdir -p "$host/proc"
cp "$gpl" "$mods/kernel/extra/plain.ko"
gzip -dc "$fx/Module.symvers.gz" >"$mods/build/Module.symvers"
gzip -dc "$fx/config.gz" >"$mods/build/.config"
echo 9.9.9-host >"$host/proc/osrelease"
echo "$rel" >"$root$host/proc/osrelease"
echo "kp_hostonly 16384 0 - Live 0x0000000000000000 (POE)" >"$host/proc/modules"
: >"$root$host/proc/modules"
echo 0 >"$root/proc/sys/kernel/tainted"
ln -s "$host/proc/osrelease" "$root/proc/sys/kernel/osrelease"
ln -s "$host/proc/modules" "$root/proc/modules"
"$kp" check --running --root "$root" -f json --fail-on never >"$tmp/run.json" 2>"$tmp/run.err"
st=$?
sed 's/^/#   /' "$tmp/run.err"
is "--running --root: procfs files as absolute links: the root's release, exit 0" \
	"$st $(summary "$tmp/run.json" "$mods" 2>/dev/null)" "0 kernel/extra/plain.ko GPL"
rm "$root$host/proc/osrelease"
"$kp" check --running --root "$root" -f json --fail-on never >"$tmp/run.json" 2>"$tmp/run.err"
st=$?
is "--running --root: osrelease leading out of the root: not read, the release unknown" \
	"$st $(grep -c 'cannot tell the kernel release: no proc/sys/kernel/osrelease$' \
		"$tmp/run.err") $(grep -c 9.9.9 "$tmp/run.err")" "2 1 0"

# hook --root ROOT, no boot/config-*: the kernel's config is ROOT's proc/config.gz, here an
# absolute link; the host's file at that path forces module signatures (the unsigned module
# would be refused: blocked under "block load-failure"), ROOT's copy at the path does not
if command -v depmod >/dev/null; then
	root=$tmp/hook
	mods=$root/lib/modules/$rel
	mkdir -p "$mods/extra" "$root$host/hook" "$host/hook" "$root/usr/src/linux-headers-$rel"
	cp -R "$top/tests/unit/policy/root/." "$root/"
	rm -f "$root/sys/module/module/parameters/sig_enforce" # the config decides
	gzip -dc "$fx/Module.symvers.gz" >"$root/usr/src/linux-headers-$rel/Module.symvers"
	echo "$rel" >"$root/proc/sys/kernel/osrelease"
	: >"$mods/modules.builtin"
	: >"$mods/modules.builtin.modinfo"
	cp "$top/tests/data/sig/6.12/kp_sig_unsigned.ko" "$mods/extra/"
	depmod -b "$root" "$rel" 2>/dev/null
	cp "$fx/config.gz" "$root$host/hook/config.gz"
	{ gzip -dc "$fx/config.gz" && echo CONFIG_MODULE_SIG_FORCE=y; } | gzip >"$host/hook/config.gz"
	ln -s "$host/hook/config.gz" "$root/proc/config.gz"
	printf 'block load-failure\n' >"$tmp/hook.conf"
	"$kp" hook --root "$root" --config "$tmp/hook.conf" kp_sig_unsigned >/dev/null \
		2>"$tmp/hook.err"
	st=$?
	sed 's/^/#   /' "$tmp/hook.err"
	is "hook --root: proc/config.gz as an absolute link: the root's config, the load passes" \
		"$st $(grep -c EKEYREJECTED "$tmp/hook.err")" "0 0"
	# the other way round: ROOT's copy forces signatures, the host's does not
	mv "$host/hook/config.gz" "$tmp/force.gz"
	mv "$root$host/hook/config.gz" "$host/hook/config.gz"
	mv "$tmp/force.gz" "$root$host/hook/config.gz"
	"$kp" hook --root "$root" --config "$tmp/hook.conf" kp_sig_unsigned >/dev/null \
		2>"$tmp/hook.err"
	is "hook --root: ... the root's config forcing signatures: the load blocked" \
		"$? $(grep -c EKEYREJECTED "$tmp/hook.err")" "1 1"
else
	skip "hook --root: proc/config.gz as an absolute link" "depmod (kmod) is not installed"
	skip "hook --root: ... the root's config forcing signatures" "depmod (kmod) is not installed"
fi

tap_done
