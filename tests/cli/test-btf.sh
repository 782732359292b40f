#!/usr/bin/env bash
# Module BTF (btf_module_notify()) from the command line, over the sid 7.2 oracle's modules
# (fixtures/ko/7.2/btf/, tests/oracle/btf-modules.sh): --vmlinux-btf in its forms (xz, raw,
# a vmlinux ELF; unreadable), the assumption without it, MODULE_ALLOW_BTF_MISMATCH, the
# facts cache keeping .BTF only when asked, -b reading build/vmlinux.
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 7.2
bx=$fx/btf
export KOPOLICY_CACHE_DIR=$tmp/cache

# check OUT CONFIG ARGS...: JSON prediction for the 7.2 kernel
check() {
	local out=$1 config=$2
	shift 2
	"$kp" check -f json --fail-on never -k "$fx/Module.symvers.gz" --kernel-config "$config" \
		--kernel-release "$rel" "$@" > "$out" 2> "$out.err"
}
# verdict FILE PYTHON-EXPR over d (the JSON document) and m (module veth's object, or None)
verdict() {
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
mods = [m for m in d["modules"] if m.get("name") == "veth"]
m = mods[0] if mods else None
ids = [f["id"] for f in m["findings"]] if m else []
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)
PY
}

xz -dc "$bx/vmlinux.btf.xz" > "$tmp/vmlinux.btf"

check "$tmp/xz.json" "$fx/config.gz" --vmlinux-btf "$bx/vmlinux.btf.xz" "$bx/btf_veth_shift.ko"
verdict "$tmp/xz.json" "not m['loads'] and m['errno'] == 'EINVAL' and ids == ['btf-mismatch']
	and 'failed to validate module [veth] BTF: -22' in m['messages']"
ok "vmlinux.btf.xz: the shifted veth fails with EINVAL" $?
verdict "$tmp/xz.json" "not any('BTF' in a for a in d['kernel']['assumptions'])"
ok "vmlinux.btf.xz: nothing assumed about BTF" $?

check "$tmp/raw.json" "$fx/config.gz" --vmlinux-btf "$tmp/vmlinux.btf" "$bx/btf_veth_shift.ko" \
	"$bx/btf_dummy_shift.ko"
verdict "$tmp/raw.json" \
	"not m['loads'] and [x for x in d['modules'] if x['name'] == 'dummy'][0]['loads']"
ok "raw BTF: veth fails, dummy (its shifted names still valid) loads" $?

# a vmlinux ELF holding the BTF in .BTF (as Debian's headers' vmlinux)
if command -v objcopy >/dev/null && command -v gcc >/dev/null; then
	echo 'int x;' > "$tmp/v.c"
	gcc -c -o "$tmp/v.o" "$tmp/v.c" &&
		objcopy --add-section .BTF="$tmp/vmlinux.btf" "$tmp/v.o" "$tmp/vmlinux"
	check "$tmp/elf.json" "$fx/config.gz" --vmlinux-btf "$tmp/vmlinux" "$bx/btf_veth_shift.ko"
	verdict "$tmp/elf.json" "not m['loads'] and ids == ['btf-mismatch']"
	ok "an ELF vmlinux's .BTF section" $?
	# -b: the tree's build/vmlinux
	root=$tmp/root
	mkdir -p "$root/lib/modules/$rel/build"
	cp "$tmp/vmlinux" "$root/lib/modules/$rel/build/vmlinux"
	zcat "$fx/Module.symvers.gz" > "$root/lib/modules/$rel/build/Module.symvers"
	zcat "$fx/config.gz" > "$root/lib/modules/$rel/build/.config"
	"$kp" check -f json --fail-on never -b "$root" --kernel-release "$rel" \
		"$bx/btf_veth_shift.ko" > "$tmp/tree.json" 2> "$tmp/tree.err"
	verdict "$tmp/tree.json" "not m['loads'] and ids == ['btf-mismatch']"
	ok "-b: the tree's build/vmlinux" $?
else
	ok "an ELF vmlinux's .BTF section # SKIP no gcc/objcopy" 0
	ok "-b: the tree's build/vmlinux # SKIP no gcc/objcopy" 0
fi

check "$tmp/none.json" "$fx/config.gz" "$bx/btf_veth_shift.ko"
verdict "$tmp/none.json" \
	"m['loads'] and any('assumed to match the kernel' in a for a in d['kernel']['assumptions'])"
ok "no vmlinux BTF: loads, the match is an assumption" $?

check "$tmp/bad.json" "$fx/config.gz" --vmlinux-btf "$tmp/missing" "$bx/btf_veth_shift.ko"
rc=$?
[ $rc -eq 2 ] && grep -q "missing" "$tmp/bad.json.err"
ok "an unreadable --vmlinux-btf is an error (exit 2) naming the file" $?

head -c 4096 /dev/urandom > "$tmp/garbage"
check "$tmp/garbage.json" "$fx/config.gz" --vmlinux-btf "$tmp/garbage" "$bx/btf_veth_shift.ko"
[ $? -eq 2 ] && grep -q "garbage: neither raw BTF nor an ELF file" "$tmp/garbage.json.err"
ok "a --vmlinux-btf that is neither BTF nor ELF: a one-line error" $?

# a vmlinux BTF the kernel would not parse: an assumption, not a verdict
printf '\x9f\xeb\x01\x00\x18\x00\x00\x00' > "$tmp/short.btf"
check "$tmp/short.json" "$fx/config.gz" --vmlinux-btf "$tmp/short.btf" "$bx/btf_veth_shift.ko"
verdict "$tmp/short.json" \
	"m['loads'] and any('does not parse' in a for a in d['kernel']['assumptions'])"
ok "a vmlinux BTF that does not parse: loads, assumed" $?

# MODULE_ALLOW_BTF_MISMATCH=y: a warning, the module loads
zcat "$fx/config.gz" > "$tmp/config-allow"
echo CONFIG_MODULE_ALLOW_BTF_MISMATCH=y >> "$tmp/config-allow"
check "$tmp/allow.json" "$tmp/config-allow" --vmlinux-btf \
	"$bx/vmlinux.btf.xz" "$bx/btf_veth_shift.ko"
verdict "$tmp/allow.json" \
	"m['loads'] and ids == ['btf-mismatch'] and m['findings'][0]['severity'] == 'warning'
	and 'Kernel module BTF mismatch detected, BTF debug info may be unavailable for some modules' in m['messages']"
ok "MODULE_ALLOW_BTF_MISMATCH: a warning, loads" $?

# the facts cache: a module read without its .BTF (no vmlinux BTF) is read again when needed
check "$tmp/c1.json" "$fx/config.gz" "$bx/btf_veth_shift.ko"
check "$tmp/c2.json" "$fx/config.gz" --vmlinux-btf "$bx/vmlinux.btf.xz" "$bx/btf_veth_shift.ko"
verdict "$tmp/c2.json" "not m['loads'] and ids == ['btf-mismatch']"
ok "facts cache: .BTF read when it is needed after a run that did not keep it" $?
check "$tmp/c3.json" "$fx/config.gz" --vmlinux-btf "$bx/vmlinux.btf.xz" "$bx/btf_veth_shift.ko"
cmp -s "$tmp/c2.json" "$tmp/c3.json"
ok "facts cache: the same verdict from a cached read" $?
# the verdict kept beside the facts (cache/btf-memo.h): a cached read loads no .BTF (the
# result cache off: a replayed run would not read the module at all)
export KOPOLICY_RUN_CACHE=off
KOPOLICY_CACHE_STATS=1 check "$tmp/c4.json" "$fx/config.gz" --vmlinux-btf "$bx/vmlinux.btf.xz" \
	"$bx/btf_veth_shift.ko"
cmp -s "$tmp/c2.json" "$tmp/c4.json" &&
	grep -q "module BTF: 0 checked, 1 from the cache" "$tmp/c4.json.err"
ok "BTF verdict memo: a cached read takes the verdict, checks nothing" $?
memo=$(ls "$KOPOLICY_CACHE_DIR"/facts-v*/sigs/btf-*.memo 2>/dev/null | sed -n 1p)
[ -n "$memo" ] && rm -f "$memo"
KOPOLICY_CACHE_STATS=1 check "$tmp/c5.json" "$fx/config.gz" --vmlinux-btf "$bx/vmlinux.btf.xz" \
	"$bx/btf_veth_shift.ko"
cmp -s "$tmp/c2.json" "$tmp/c5.json" &&
	grep -q "module BTF: 1 checked, 0 from the cache" "$tmp/c5.json.err" && [ -f "$memo" ]
ok "BTF verdict memo removed: the module is read again and checked, the memo rewritten" $?
# a forged memo (the verdict turned into "validates", CRC fixed): believed only from its owner
python3 "$top/tests/cli/btf-memo-edit.py" forge "$memo"
check "$tmp/c6.json" "$fx/config.gz" --vmlinux-btf "$bx/vmlinux.btf.xz" "$bx/btf_veth_shift.ko"
verdict "$tmp/c6.json" "m['loads'] and ids == []"
ok "BTF verdict memo: a verdict in the memo is what the run reports (the forgery test's control)" $?
if [ "$(id -u)" -eq 0 ]; then
	chown 65534:65534 "$memo"
	check "$tmp/c7.json" "$fx/config.gz" --vmlinux-btf \
		"$bx/vmlinux.btf.xz" "$bx/btf_veth_shift.ko"
	cmp -s "$tmp/c2.json" "$tmp/c7.json"
	ok "BTF verdict memo owned by another user: ignored, the module checked again" $?
else
	ok "BTF verdict memo owned by another user # SKIP not root" 0
fi
rm -f "$memo" # the forged verdict must not reach the tests below
unset KOPOLICY_RUN_CACHE

# a kernel without DEBUG_INFO_BTF_MODULES reads no BTF at all (a file not there is no error)
zcat "$fx/config.gz" | grep -v '^CONFIG_DEBUG_INFO_BTF_MODULES=' > "$tmp/config-nobtf"
check "$tmp/nobtf.json" "$tmp/config-nobtf" --vmlinux-btf "$tmp/missing" "$bx/btf_veth_shift.ko"
verdict "$tmp/nobtf.json" "m['loads'] and ids == []"
ok "no DEBUG_INFO_BTF_MODULES: no check, the BTF file not even read" $?

# --running and the hook: the running kernel's /sys/kernel/btf/vmlinux under --root
r=$tmp/live
mkdir -p "$r/proc/sys/kernel" "$r/sys/kernel/btf" "$r/sys/module/module/parameters" \
	"$r/lib/modules/$rel/build" "$r/lib/modules/$rel/kernel/drivers/net"
echo "$rel" > "$r/proc/sys/kernel/osrelease"
: > "$r/proc/modules"
echo 0 > "$r/proc/sys/kernel/tainted"
echo "root=/dev/sda1" > "$r/proc/cmdline"
echo N > "$r/sys/module/module/parameters/sig_enforce"
cp "$tmp/vmlinux.btf" "$r/sys/kernel/btf/vmlinux"
zcat "$fx/config.gz" > "$r/lib/modules/$rel/config"
zcat "$fx/Module.symvers.gz" > "$r/lib/modules/$rel/build/Module.symvers"
"$kp" check -f json --fail-on never --running --root "$r" "$bx/btf_veth_shift.ko" \
	> "$tmp/live.json" 2> "$tmp/live.err"
verdict "$tmp/live.json" \
	"not m['loads'] and ids == ['btf-mismatch'] and '/sys/kernel/btf/vmlinux' in m['findings'][0]['message']"
ok "--running: the running kernel's /sys/kernel/btf/vmlinux" $?
if command -v depmod >/dev/null || [ -x /sbin/depmod ]; then
	cp "$bx/btf_veth_shift.ko" "$r/lib/modules/$rel/kernel/drivers/net/veth.ko"
	PATH=$PATH:/sbin:/usr/sbin depmod -b "$r" "$rel" 2>/dev/null
	"$kp" hook --root "$r" veth > "$tmp/hook.out" 2> "$tmp/hook.err"
	grep -q "veth: warning: would fail to load with EINVAL: the module's .BTF does not validate" "$tmp/hook.err"
	ok "hook: the chain's modules keep .BTF, judged against /sys/kernel/btf/vmlinux" $?
else
	ok "hook: the chain's modules keep .BTF # SKIP no depmod" 0
fi

tap_done
