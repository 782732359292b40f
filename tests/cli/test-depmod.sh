#!/usr/bin/env bash
# depmod's view of an installed tree (-b ROOT): the file used under each module name is the
# one kmod's depmod puts in modules.dep (updates/ before the rest, depmod.d search, override,
# exclude), and the others are reported as unused, never as load failures.
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.12

# tree NAME FILE:DIR...: a root with the fixture FILEs copied to lib/modules/<rel>/DIR/
tree() {
	local root=$tmp/$1 spec f d
	shift
	mkdir -p "$root/lib/modules/$rel"
	for spec in "$@"; do
		f=${spec%%:*} d=${spec#*:}
		mkdir -p "$root/lib/modules/$rel/$d"
		cp "$fx/$f.ko" "$root/lib/modules/$rel/$d/"
	done
	echo "$root"
}
# used ROOT: the module files kopolicy reads, relative to the module directory, sorted
used() {
	"$kp" check -f json --fail-on never -b "$1" -k \
		"$fx/Module.symvers.gz" > "$1.json" 2>/dev/null
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
pre = sys.argv[2] + '/'
print('\n'.join(sorted(m['path'].replace(pre, '') for m in d['modules'])))" "$1.json" "$1/lib/modules/$rel"
}
# depmod_used ROOT: the same according to kmod's depmod, with ROOT's depmod.d
depmod_used() {
	local cfg=()
	[ -d "$1/etc/depmod.d" ] && cfg=(-C "$1/etc/depmod.d")
	depmod -b "$1" "${cfg[@]}" "$rel" 2>/dev/null
	sed 's/:.*//' "$1/lib/modules/$rel/modules.dep" | sort
}
same_as_depmod() { # description ROOT
	local a b
	a=$(used "$2")
	b=$(depmod_used "$2")
	[ "$a" = "$b" ]
	ok "$1: kopolicy uses what depmod puts in modules.dep" $?
	[ "$a" = "$b" ] || { echo "# kopolicy: $a"; echo "# depmod:   $b"; }
}

if ! command -v depmod > /dev/null; then
	echo "1..0 # SKIP depmod (kmod) is not installed"
	exit 0
fi

# 1. The DKMS layout: an in-tree driver rebuilt into updates/dkms/.
r=$(tree dkms kp_gpl_prov:kernel/drivers/misc kp_gpl_prov:updates/dkms kp_ns_ok:kernel/drivers/misc)
same_as_depmod "updates/dkms before kernel/" "$r"
"$kp" check -b "$r" -k "$fx/Module.symvers.gz" > "$r.txt" 2>&1
ok "no false already-loaded failure (exit 0)" $?
grep -q "^  kp_gpl_prov: $r/lib/modules/$rel/kernel/drivers/misc/kp_gpl_prov.ko: depmod uses $r/lib/modules/$rel/updates/dkms/kp_gpl_prov.ko$" "$r.txt"
ok "the shadowed in-tree file is reported with the file depmod uses" $?
python3 -c \
	"import json,sys; s=json.load(open(sys.argv[1]))['shadowed']; sys.exit(0 if len(s)==1 and s[0]['name']=='kp_gpl_prov' and s[0]['used'].endswith('/updates/dkms/kp_gpl_prov.ko') and not s[0]['order_decides'] else 1)" "$r.json"
ok "JSON shadowed[] names the file used" $?

# 2. depmod.d: search order puts extra/ first, then updates, then the rest.
r=$(tree search kp_plain:kernel/a kp_plain:extra kp_plain:updates \
	kp_ns_ok:updates kp_ns_ok:kernel/b)
mkdir -p "$r/etc/depmod.d"
printf 'search extra updates built-in\n' > "$r/etc/depmod.d/10-order.conf"
same_as_depmod "search extra updates built-in" "$r"

# 3. override: a module pinned to a directory, whatever the search order says.
r=$(tree override kp_plain:kernel/a kp_plain:updates kp_gpl_prov:updates kp_gpl_prov:kernel/b)
mkdir -p "$r/etc/depmod.d"
printf '# pin\noverride kp_plain * kernel/a\noverride kp_gpl_prov 9.9.* kernel/b\n' \
	> "$r/etc/depmod.d/pin.conf"
same_as_depmod "override (matching and non-matching kernel patterns)" "$r"

# 4. exclude: a directory depmod never enters.
r=$(tree exclude kp_plain:kernel/a kp_ns_ok:kernel/old kp_gpl_prov:updates)
mkdir -p "$r/etc/depmod.d"
printf 'exclude old\n' > "$r/etc/depmod.d/ex.conf"
same_as_depmod "exclude" "$r"

# 5. --all-kernels: the out-of-tree modules of every installed kernel, each against its own.
r=$tmp/all
for k in "$rel" 7.2.13+deb14-amd64; do
	m=$r/lib/modules/$k
	mkdir -p "$m/updates/dkms" "$m/kernel/drivers" "$m/build"
	cp "$fx/kp_gpl_prov.ko" "$fx/kp_prop_prov.ko" \
		"$fx/kp_gplonly_then_prop.ko" "$m/updates/dkms/"
	cp "$fx/kp_plain.ko" "$m/kernel/drivers/"
	zcat "$fx/Module.symvers.gz" > "$m/build/Module.symvers"
done
zcat "$fx/config.gz" > "$r/lib/modules/$rel/build/.config"
"$kp" check -b "$r" --all-kernels > "$r.txt" 2>&1
ok "--all-kernels exits 1 when an out-of-tree module fails" $(( $? == 1 ? 0 : 1 ))
[ "$(grep -c '^[0-9]' "$r.txt")" -eq 6 ] && ! grep -q kp_plain "$r.txt"
ok "--all-kernels lists 3 out-of-tree modules per kernel, no in-tree one" $?
python3 -c "
import sys
rows = [l.split() for l in open(sys.argv[1]) if l[0].isdigit()]
want = [[sys.argv[2], 'kp_gplonly_then_prop', 'fails', '(ENOENT),', 'gpl-proprietary-mix'],
        ['7.2.13+deb14-amd64', 'kp_gpl_prov', 'fails', '(ENOEXEC),', 'obsolete-export-table,',
         'no-export-flags']]
sys.exit(0 if all(any(r[:len(w)] == w for r in rows) for w in want) else 1)" "$r.txt" "$rel"
ok "--all-kernels: each kernel's own loader (6.12: 2020 rule; 7.2: no __kflagstab)" $?
"$kp" check -b "$r" --all-kernels -f json > "$r.json"
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
k = {x['release']: {m['name']: m for m in x['modules']} for x in d['kernels']}
ok = sorted(k) == sorted([sys.argv[2], '7.2.13+deb14-amd64']) and k[sys.argv[2]]['kp_prop_prov']['taint'] == 'POE' and not k[sys.argv[2]]['kp_gplonly_then_prop']['loads']
sys.exit(0 if ok else 1)" "$r.json" "$rel"
ok "--all-kernels -f json: one entry per kernel with its modules" $?
# --kernel-release R: kernel R's alone (the kernel install hook judges the new kernel only)
"$kp" check -b "$r" --all-kernels --kernel-release 7.2.13+deb14-amd64 > "$r.one" 2>&1
ok "--all-kernels --kernel-release 7.2: exits 1 (kp_gpl_prov fails there)" $(( $? == 1 ? 0 : 1 ))
[ "$(grep -c '^7\.2\.13+deb14-amd64 ' "$r.one")" -eq 3 ] && ! grep -q "^$rel " "$r.one"
ok "--all-kernels --kernel-release 7.2: its 3 out-of-tree modules, none of $rel" $?
"$kp" check -b "$r" --all-kernels --kernel-release 9.9.9 > "$r.none" 2>&1
ok "--all-kernels --kernel-release of a kernel not installed: exit 2" $(( $? == 2 ? 0 : 1 ))
grep -q "9.9.9: not installed" "$r.none"
ok "... and says so" $?

# 6. --upgrade-to: what changes for the current kernel's out-of-tree modules on another one.
"$kp" check -b "$r" --kernel-release "$rel" --upgrade-to 7.2.13+deb14-amd64 > "$r.up" 2>&1
ok "--upgrade-to exits 1 when something breaks" $(( $? == 1 ? 0 : 1 ))
grep -q "^  kp_gpl_prov: fails: loads now, fails with ENOEXEC: exports 2 symbols without a __kflagstab" "$r.up" &&
	[ "$(grep -c '^  ' "$r.up")" -eq 2 ]
ok "--upgrade-to names each module that loads now and fails then, with the reason" $?
"$kp" check -b "$r" --kernel-release "$rel" --upgrade-to "$rel" -f json > "$r.up.json"
ok "--upgrade-to the same kernel exits 0" $?
python3 -c \
	"import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d['changes']==[] and d['to']==sys.argv[2] else 1)" "$r.up.json" "$rel"
ok "--upgrade-to -f json: no changes" $?

# 7. --running uses depmod's view too: the running kernel's tree (a fake root) with an in-tree
# driver and its DKMS rebuild, checked without FILE or by naming lib/modules/<release>.
r=$(tree running kp_gpl_prov:kernel/drivers/misc kp_gpl_prov:updates/dkms kp_ns_ok:updates/dkms)
mkdir -p "$r/proc/sys/kernel" "$r/sys/module/module/parameters" "$r/lib/modules/$rel/build"
echo "$rel" > "$r/proc/sys/kernel/osrelease"
echo 0 > "$r/proc/sys/kernel/tainted"
echo "kp_prop_prov 16384 0 - Live 0x0000000000000000 (POE)" > "$r/proc/modules"
mkdir -p "$r/sys/module/kp_prop_prov" && echo POE > "$r/sys/module/kp_prop_prov/taint"
echo "console=ttyS0" > "$r/proc/cmdline"
zcat "$fx/Module.symvers.gz" > "$r/lib/modules/$rel/build/Module.symvers"
zcat "$fx/config.gz" > "$r/lib/modules/$rel/build/.config"
"$kp" check --running --root "$r" -f json --fail-on never > "$r.json" 2> "$r.err"
ok "--running without FILE checks the running kernel's tree" $?
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
paths = sorted(m['path'].replace(sys.argv[2] + '/', '') for m in d['modules'])
s = d['shadowed']
m = {x['name']: x for x in d['modules']}
ok = (paths == ['updates/dkms/kp_gpl_prov.ko', 'updates/dkms/kp_ns_ok.ko'] and len(s) == 1
      and s[0]['path'].endswith('/kernel/drivers/misc/kp_gpl_prov.ko')
      and s[0]['used'].endswith('/updates/dkms/kp_gpl_prov.ko')
      and m['kp_ns_ok']['loads'] and m['kp_ns_ok']['taint'] == 'OE')
sys.exit(0 if ok else 1)" "$r.json" "$r/lib/modules/$rel"
ok "--running: depmod's file under each name, the shadowed one reported, the loader's verdicts" $?
[ "$(depmod_used "$r" | tr '\n' ' ')" = "updates/dkms/kp_gpl_prov.ko updates/dkms/kp_ns_ok.ko " ]
ok "--running: depmod -b agrees" $?
"$kp" check --running --root "$r" -f json --fail-on never "$r/lib/modules/$rel" \
	> "$r.dir.json" 2>/dev/null
cmp -s "$r.json" "$r.dir.json"
ok "--running naming lib/modules/<release> is the same as no FILE" $?
"$kp" check --running --root "$r" -f json --fail-on never "$r/lib/modules/$rel/kernel" \
	> "$r.sub.json" 2>/dev/null
python3 -c \
	"import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if len(d['modules'])==1 and not d.get('shadowed') else 1)" "$r.sub.json"
ok "--running naming a subdirectory checks the files there as given" $?
rm -rf "$r/lib/modules/$rel"
cp "$top/tests/unit/system/root/proc/kallsyms" "$r/proc/kallsyms"
"$kp" check --running --root "$r" > "$r.txt" 2>&1
[ $? -eq 2 ] && grep -q -- "--running without FILE" "$r.txt"
ok "--running without FILE and without a modules tree: exit 2 with a message" $?

echo "1..$n"
echo "# $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
