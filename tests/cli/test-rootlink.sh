#!/usr/bin/env bash
# Module files that are symlinks under -b ROOT: read as the system at ROOT sees them (a
# chroot, the kernel-install case), never on the host. Every link points at a path that
# exists twice: inside ROOT, holding a GPL module (kp_gpl_prov), and on the host (under
# $tmp/host), holding a proprietary one (kp_prop_prov); the license judged tells which
# bytes were read. Built here from committed fixtures (fixtures/ko/6.12):
#   abs     abs.ko -> $tmp/host/abs.ko (absolute)
#   rel     rel.ko -> ../../../../../data/rel.ko (relative, inside ROOT on both views)
#   chain   chain.ko -> $tmp/host/l1.ko; inside ROOT that is a link to $tmp/host/l2.ko
#   climb   climb.ko -> ../../../../../../../../../../..$tmp/host/climb.ko ('..' above ROOT
#           stays at ROOT)
#   gone    gone.ko -> $tmp/host/gone.ko, absent inside ROOT: an error, not the host's file
#   loop    loop.ko -> loop-a, loop-a -> loop-b, loop-b -> loop-a: one error line, the
#           other modules still judged; loop-a and loop-b (not named as modules) a warning
#           each, as depmod's "ERROR: fstatat(...)" lines
# and, each in a root of its own, the release directory, modules.builtin, a depmod.d file and
# ROOT/etc as absolute links whose host targets would change the answer or fail the run;
# then the kernel's own files (boot/config-*, the headers' Module.symvers, boot/vmlinuz-*)
# as absolute links to host files whose content would change the verdict (a config forcing
# signatures, other CRCs, another certificate): the root's are read.
# Then the result and facts caches notice an absolute link pointed elsewhere in the root.
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.12
tap_own_cache

gpl=$fx/kp_gpl_prov.ko
prop=$fx/kp_prop_prov.ko
host=$tmp/host

# twice PATH: PATH on the host holds the proprietary module, ROOT/PATH the GPL one
twice() {
	mkdir -p "$(dirname "$1")" "$(dirname "$root$1")"
	cp "$prop" "$1"
	cp "$gpl" "$root$1"
}
# summary FILE: "NAME.ko LICENSE" per module judged, "NAME.ko: ERROR" per input error
summary() {
	python3 - "$1" <<'EOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
for m in d["modules"]:
    print(os.path.basename(m["path"]), m["license"])
for e in d["errors"]:
    print(os.path.basename(e["path"]) + ":", e["error"])
EOF
}
# line FILE NAME: the summary line of NAME.ko
line() { summary "$1" | grep "^$2.ko[: ]"; }

root=$tmp/root
ext=$root/lib/modules/$rel/kernel/extra
mkdir -p "$ext" "$host"
tap_kernel_files "$root"
cp "$gpl" "$ext/plain.ko" # no link: the control
twice "$host/abs.ko"
ln -s "$host/abs.ko" "$ext/abs.ko"
mkdir -p "$root/data"
cp "$gpl" "$root/data/rel.ko"
ln -s ../../../../../data/rel.ko "$ext/rel.ko"
twice "$host/l1.ko"
rm "$root$host/l1.ko"
ln -s "$host/l2.ko" "$root$host/l1.ko"
cp "$gpl" "$root$host/l2.ko"
ln -s "$host/l1.ko" "$ext/chain.ko"
twice "$host/climb.ko"
ln -s "../../../../../../../../../../..$host/climb.ko" "$ext/climb.ko"
cp "$prop" "$host/gone.ko"
ln -s "$host/gone.ko" "$ext/gone.ko"
ln -s loop-a "$ext/loop.ko"
ln -s loop-b "$ext/loop-a"
ln -s loop-a "$ext/loop-b"

"$kp" check -b "$root" -f json --fail-on never >"$tmp/links.json" 2>"$tmp/links.err"
is "a root with links: exit 2 (two inputs could not be read)" "$?" 2
summary "$tmp/links.json" >"$tmp/links.sum"
is "the control module: GPL" "$(line "$tmp/links.json" plain)" "plain.ko GPL"
is "absolute link: the root's file read, not the host's" "$(line "$tmp/links.json" abs)" \
	"abs.ko GPL"
is "relative link: the root's file" "$(line "$tmp/links.json" rel)" "rel.ko GPL"
is "link to a link: both followed inside the root" "$(line "$tmp/links.json" chain)" \
	"chain.ko GPL"
is "'..' past the root stays at the root" "$(line "$tmp/links.json" climb)" "climb.ko GPL"
is "a link to a file only the host has: cannot open, the host's file not read" \
	"$(line "$tmp/links.json" gone)" "gone.ko: cannot open: No such file or directory"
is "a link loop: one error naming the file" "$(line "$tmp/links.json" loop)" \
	"loop.ko: cannot resolve inside the root: Too many levels of symbolic links"
is "the loop's links not named as modules: a warning each" \
	"$(grep '^loop-' "$tmp/links.sum")" \
	"loop-a: a looping link, skipped: Too many levels of symbolic links
loop-b: a looping link, skipped: Too many levels of symbolic links"
is "every module judged or said: 9 lines" "$(wc -l <"$tmp/links.sum")" 9
is "no proprietary module anywhere" "$(grep -c Proprietary "$tmp/links.sum")" 0
# the text report names each module by the link's path, the one in the root's tree
"$kp" check -b "$root" --fail-on never >"$tmp/links.txt" 2>&1
grep -q "($ext/chain.ko)" "$tmp/links.txt" && ! grep -q "$root$host/l2.ko" "$tmp/links.txt"
ok "the report names the link's path, not its target's" $?
grep -q "^kopolicy: $ext/loop.ko: cannot resolve inside the root" "$tmp/links.txt"
ok "the loop is one line naming the link" $?

# the files beside the modules, each in a root of its own: the host's target would fail the
# run or change the answer
# one ROOT: the kernel, and kp_one.ko (GPL) in lib/modules/<release>/kernel/extra
one() {
	tap_kernel_files "$1"
	mkdir -p "$1/lib/modules/$rel/kernel/extra"
	cp "$gpl" "$1/lib/modules/$rel/kernel/extra/kp_one.ko"
}
# beside NAME WHAT: checks $tmp/NAME, "exit STATUS: SUMMARY" (one line)
beside() {
	"$kp" check -b "$tmp/$1" -f json --fail-on never >"$tmp/$1.json" 2>"$tmp/$1.err"
	echo "exit $?: $(summary "$tmp/$1.json" 2>/dev/null | tr '\n' ' ')"
}
# the release directory: a link to the host's, which holds the proprietary module
root=$tmp/rdir
tap_kernel_files "$root"
mkdir -p "$root/lib/modules" "$host/modules/$rel/kernel/extra"
cp "$prop" "$host/modules/$rel/kernel/extra/kp_one.ko"
mkdir -p "$root$host/modules/$rel/kernel/extra"
cp "$gpl" "$root$host/modules/$rel/kernel/extra/kp_one.ko"
ln -s "$host/modules/$rel" "$root/lib/modules/$rel"
is "the release directory as an absolute link: the root's" "$(beside rdir)" "exit 0: kp_one.ko GPL "
grep -q "\"path\": *\"$root$host/modules/$rel/kernel/extra/kp_one.ko\"" "$tmp/rdir.json"
ok "... named where it resolves inside the root" $?
# modules.builtin: the host's is malformed (the run fails), the root's lists one module
root=$tmp/builtin
one "$root"
printf 'not a module path\n' >"$host/builtin"
mkdir -p "$root$host"
printf 'kernel/fs/ext4/ext4.ko\n' >"$root$host/builtin"
ln -s "$host/builtin" "$root/lib/modules/$rel/modules.builtin"
is "modules.builtin as an absolute link: the root's" "$(beside builtin)" "exit 0: kp_one.ko GPL "
# depmod.d: the host's file excludes the modules' directory, the root's excludes nothing
root=$tmp/depmod
one "$root"
mkdir -p "$root/etc/depmod.d" "$root$host"
echo "exclude extra" >"$host/depmod.conf"
echo "# nothing" >"$root$host/depmod.conf"
ln -s "$host/depmod.conf" "$root/etc/depmod.d/local.conf"
is "a depmod.d file as an absolute link: the root's" "$(beside depmod)" "exit 0: kp_one.ko GPL "
# the depmod.d directory itself: ROOT/etc -> the host's etc holding that file
root=$tmp/etc
one "$root"
mkdir -p "$host/etc/depmod.d" "$root$host/etc"
echo "exclude extra" >"$host/etc/depmod.d/local.conf"
ln -s "$host/etc" "$root/etc"
is "ROOT/etc as an absolute link: the root's (no depmod.d)" "$(beside etc)" "exit 0: kp_one.ko GPL "

# the kernel's own files as absolute links to host paths holding other content: the root's
# files are read (opened inside the root, lib/system/kernel-tree.h), never the host's. Each
# in a root of its own; $tmp/kimg holds a vmlinux-like image with one certificate each.
sd=$top/tests/data/sig
python3 - "$sd/test-cert.pem" "$sd/other-cert.pem" "$tmp" <<'PY'
import base64, os, sys
for pem, name in ((sys.argv[1], 'root'), (sys.argv[2], 'host')):
    b64 = ''.join(l for l in open(pem).read().splitlines() if '-----' not in l)
    raw = b'\x7fELF' + bytes(4096) + b'\x30\x82junk' + base64.b64decode(b64) + bytes(1000)
    open(os.path.join(sys.argv[3], 'vmlinux-' + name), 'wb').write(raw)
PY
# kfile NAME MODULE: ROOT $tmp/NAME with MODULE.ko (one: the two export the same symbols)
kfile() {
	tap_kernel_files "$tmp/$1"
	mkdir -p "$tmp/$1/lib/modules/$rel/kernel/extra" "$tmp/$1$host/k-$1" "$host/k-$1"
	cp "$sd/6.12/$2.ko" "$tmp/$1/lib/modules/$rel/kernel/extra/"
	cp "$tmp/vmlinux-root" "$tmp/$1/boot/vmlinuz-$rel"
}
# moveout NAME FILE: ROOT's FILE moved to ROOT/<host>/k-NAME/, FILE an absolute link to
# <host>/k-NAME/ (the host's file there is written by the caller)
moveout() {
	mv "$tmp/$1/$2" "$tmp/$1$host/k-$1/"
	ln -s "$host/k-$1/$(basename "$2")" "$tmp/$1/$2"
}
# verdicts NAME: "MODULE LOADS TAINT" per module of $tmp/NAME.json
verdicts() {
	python3 -c 'import json,os,sys
d=json.load(open(sys.argv[1]))
print(" ".join("%s:%s:%s" % (os.path.basename(m["path"]), m["loads"], m["taint"])
               for m in d["modules"]))' "$tmp/$1.json"
}
kcheck() {
	"$kp" check -b "$tmp/$1" -f json --fail-on never --no-cache >"$tmp/$1.json" 2>"$tmp/$1.err"
	echo "exit $?: $(verdicts "$1")"
}
# the controls: every file in place
kfile kctl kp_sig_sha256
is "kernel files in place: the signed module loads, O" "$(kcheck kctl)" \
	"exit 0: kp_sig_sha256.ko:True:O"
kfile kctl2 kp_sig_unsigned
is "kernel files in place: the unsigned module loads, OE" "$(kcheck kctl2)" \
	"exit 0: kp_sig_unsigned.ko:True:OE"
# the config: the host's forces signatures (the unsigned module would be refused)
kfile kcfg kp_sig_unsigned
moveout kcfg "boot/config-$rel"
{ cat "$tmp/kcfg$host/k-kcfg/config-$rel"; echo CONFIG_MODULE_SIG_FORCE=y; } \
	>"$host/k-kcfg/config-$rel"
is "boot/config-* as an absolute link: the root's config (no CONFIG_MODULE_SIG_FORCE)" \
	"$(kcheck kcfg)" "exit 0: kp_sig_unsigned.ko:True:OE"
# Module.symvers: every CRC of the host's differs (each import would disagree)
kfile ksv kp_sig_sha256
moveout ksv "usr/src/linux-headers-$rel/Module.symvers"
sed 's/^0x[0-9a-f]*/0x12345678/' "$tmp/ksv$host/k-ksv/Module.symvers" \
	>"$host/k-ksv/Module.symvers"
is "Module.symvers as an absolute link: the root's CRCs" "$(kcheck ksv)" \
	"exit 0: kp_sig_sha256.ko:True:O"
# the image: the host's holds another certificate (the signed module's key untrusted: OE)
kfile kimg kp_sig_sha256
moveout kimg "boot/vmlinuz-$rel"
cp "$tmp/vmlinux-host" "$host/k-kimg/vmlinuz-$rel"
is "boot/vmlinuz-* as an absolute link: the root's certificate" "$(kcheck kimg)" \
	"exit 0: kp_sig_sha256.ko:True:O"
# ... and a link to an image only the host has: no key source, the host's not read
rm "$tmp/kimg$host/k-kimg/vmlinuz-$rel"
is "boot/vmlinuz-* leading to a file only the host has: no image, the host's not read" \
	"$(kcheck kimg) $(python3 -c 'import json,sys
print(json.load(open(sys.argv[1]))["kernel"]["key_sources"])' "$tmp/kimg.json")" \
	"exit 0: kp_sig_sha256.ko:True:O []"

root=$tmp/root
# the caches: an absolute link pointed elsewhere inside the root is seen (the result
# cache's manifest records the link and the file it leads to; the facts cache is keyed by
# the file read)
cp "$prop" "$root/data/prop.ko"
sleep 1.1 # an input changed less than a second before a run is not stored
unset KOPOLICY_RUN_CACHE
# runc NAME: a check of ROOT into $tmp/NAME.json; prints the result cache's line
runc() {
	KOPOLICY_CACHE_STATS=1 "$kp" check -b "$root" -f json --fail-on never \
		>"$tmp/$1.json" 2>"$tmp/$1.err"
	sed -n 's/^kopolicy: result cache: //p' "$tmp/$1.err"
}
# like WHAT GOT PATTERN
like() {
	# shellcheck disable=SC2254
	case $2 in $3) ok "$1 ($2)" 0 ;; *) ok "$1 ($2)" 1 ;; esac
}
like "result cache: first run stored" "$(runc c1)" "miss, stored*"
is "result cache: the same root replayed" "$(runc c2)" "hit, replayed"
ln -sfn /data/prop.ko "$ext/rel.ko"
sleep 1.1
like "result cache: the link pointed elsewhere: a miss" "$(runc c3)" "miss*"
is "... and the new target judged" "$(line "$tmp/c3.json" rel)" "rel.ko Proprietary"
# the target's bytes replaced behind the same link
cp "$gpl" "$root/data/prop.ko.new" && mv "$root/data/prop.ko.new" "$root/data/prop.ko"
sleep 1.1
like "result cache: the link's target replaced: a miss" "$(runc c4)" "miss*"
is "... and its new bytes judged" "$(line "$tmp/c4.json" rel)" "rel.ko GPL"
# the facts cache alone (no result cache): warm, then the link pointed back
export KOPOLICY_RUN_CACHE=off
ln -sfn /data/rel.ko "$ext/rel.ko"
cp "$prop" "$root/data/rel.ko"
"$kp" check -b "$root" -f json --fail-on never >"$tmp/f1.json" 2>/dev/null
is "facts cache: the link's new target judged" "$(line "$tmp/f1.json" rel)" \
	"rel.ko Proprietary"
ln -sfn /data/prop.ko "$ext/rel.ko"
"$kp" check -b "$root" -f json --fail-on never >"$tmp/f2.json" 2>/dev/null
is "facts cache: pointed back, the other file's facts" "$(line "$tmp/f2.json" rel)" \
	"rel.ko GPL"

# the hook with --root: modprobe's chain names the module's file (modules.dep); a link there
# is followed inside the root, and a depmod index libkmod would follow out of it is refused
if command -v depmod >/dev/null; then
	root=$tmp/hook
	mkdir -p "$root/lib/modules/$rel/extra" "$root$host"
	cp -R "$top/tests/unit/policy/root/." "$root/"
	tap_kernel_files "$root"
	echo "$rel" >"$root/proc/sys/kernel/osrelease"
	: >"$root/lib/modules/$rel/modules.builtin"
	: >"$root/lib/modules/$rel/modules.builtin.modinfo"
	# depmod -b follows the link on the host: it indexes kp_gpl_prov.ko by its name
	cp "$gpl" "$root$host/kp_gpl_prov.ko"
	cp "$prop" "$host/kp_gpl_prov.ko"
	ln -s "$host/kp_gpl_prov.ko" "$root/lib/modules/$rel/extra/kp_gpl_prov.ko"
	depmod -b "$root" "$rel" 2>/dev/null
	printf 'block proprietary\n' >"$tmp/hook.conf"
	"$kp" hook --root "$root" --config "$tmp/hook.conf" kp_gpl_prov >/dev/null 2>"$tmp/hook.err"
	st=$?
	is "hook --root: a module file linked to an absolute path: the root's file passes" \
		"$st $(wc -c <"$tmp/hook.err")" "0 0"
	[ "$st" = 0 ] || sed 's/^/#   /' "$tmp/hook.err"
	mv "$root/lib/modules/$rel/modules.dep.bin" "$host/modules.dep.bin"
	ln -s "$host/modules.dep.bin" "$root/lib/modules/$rel/modules.dep.bin"
	"$kp" hook --root "$root" --config "$tmp/hook.conf" kp_gpl_prov >/dev/null 2>"$tmp/hook.err"
	want="modules.dep.bin: a symlink that leads out of $root (or loops): refused as a depmod index"
	grep -qF "$want" "$tmp/hook.err"
	st=$?
	ok "hook --root: modules.dep.bin linked out of the root: refused, said" "$st"
	[ "$st" = 0 ] || sed 's/^/#   /' "$tmp/hook.err"
else
	skip "hook --root: a module file linked to an absolute path" \
		"depmod (kmod) is not installed"
	skip "hook --root: modules.dep.bin linked out of the root" "depmod (kmod) is not installed"
fi

tap_done
