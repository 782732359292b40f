#!/usr/bin/env bash
# Kernel layouts under -b ROOT and --running --root: where Debian (and usrmerge
# systems) keep the release, config, System.map, Module.symvers and modules.
# Every root is built here from committed fixtures:
#   classic   bullseye: lib/modules/<r>, boot/config-<r>, boot/System.map-<r> (stub),
#             build -> /usr/src/... (absolute link, must stay inside ROOT)
#   merged    trixie: lib -> usr/lib, usr/lib/modules/<r>, build -> ../../../src/... (relative)
#   sid       lib -> usr/lib; usr/lib/modules/<r>/{config,System.map (stub),vmlinuz,build};
#             no boot/; Module.symvers only through the build link
#   split     sid packages on a root without usrmerge: an empty lib/modules beside
#             usr/lib/modules/<r>; Module.symvers only in usr/src/linux-headers-<r>/
#   abslib    lib -> /usr/lib (absolute): read inside ROOT, never the host's /usr/lib
#   loop      lib -> lib (a symlink loop): skipped, usr/lib/modules used
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.12
stub="ffffffffffffffff B The real System.map is in the linux-image-$rel-dbg package"

json() { python3 -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }

mods() { # DIR: three modules of the fixtures, one of which fails to load
	mkdir -p "$1/kernel/extra"
	cp "$fx"/kp_prop_prov.ko "$fx"/kp_use_prop.ko \
		"$fx"/kp_gplonly_then_prop.ko "$1/kernel/extra/"
}
symvers() { mkdir -p "$(dirname "$1")" && gzip -dc "$fx/Module.symvers.gz" > "$1"; }
config() { mkdir -p "$(dirname "$1")" && gzip -dc "$fx/config.gz" > "$1"; }

mk_root() { # LAYOUT ROOT
	local r=$2
	case $1 in
	classic)
		mods "$r/lib/modules/$rel"
		config "$r/boot/config-$rel"
		echo "$stub" > "$r/boot/System.map-$rel"
		symvers "$r/usr/src/kbuild-$rel/Module.symvers"
		ln -s "/usr/src/kbuild-$rel" "$r/lib/modules/$rel/build" ;;
	merged)
		mods "$r/usr/lib/modules/$rel"
		ln -s usr/lib "$r/lib"
		config "$r/boot/config-$rel"
		echo "$stub" > "$r/boot/System.map-$rel"
		symvers "$r/usr/src/linux-headers-$rel/Module.symvers"
		ln -s "../../../src/linux-headers-$rel" "$r/usr/lib/modules/$rel/build" ;;
	sid)
		mods "$r/usr/lib/modules/$rel"
		ln -s usr/lib "$r/lib"
		config "$r/usr/lib/modules/$rel/config"
		echo "$stub" > "$r/usr/lib/modules/$rel/System.map"
		# an image found there and read: a compressed Image holding no certificate (a
		# file no header describes, without one, is an error: a cut image, kopolicy(1))
		printf 'not a vmlinux\n' | gzip -n > "$r/usr/lib/modules/$rel/vmlinuz"
		symvers "$r/usr/src/kbuild-$rel/Module.symvers"
		ln -s "../../../src/kbuild-$rel" "$r/usr/lib/modules/$rel/build" ;;
	split)
		mkdir -p "$r/lib/modules"
		mods "$r/usr/lib/modules/$rel"
		config "$r/usr/lib/modules/$rel/config"
		echo "$stub" > "$r/usr/lib/modules/$rel/System.map"
		symvers "$r/usr/src/linux-headers-$rel/Module.symvers" ;;
	abslib)
		mods "$r/usr/lib/modules/$rel"
		ln -s /usr/lib "$r/lib"
		config "$r/usr/lib/modules/$rel/config"
		symvers "$r/usr/src/kbuild-$rel/Module.symvers"
		ln -s "/usr/src/kbuild-$rel" "$r/usr/lib/modules/$rel/build" ;;
	loop)
		mods "$r/usr/lib/modules/$rel"
		ln -s lib "$r/lib"
		config "$r/boot/config-$rel"
		symvers "$r/usr/src/linux-headers-$rel/Module.symvers" ;;
	esac
}

# The expected answer is the same for every layout: release and version from the
# tree, config read (no "no kernel config" assumption), exports from Module.symvers
# (no stub note), three modules, kp_gplonly_then_prop failing.
want="d['kernel']['release']=='$rel' and d['kernel']['version']=='6.12.118' \
and d['kernel']['modversions'] and d['kernel']['vermagic'].startswith('$rel ') \
and not any('no kernel config' in s or 'System.map' in s for s in d['kernel']['assumptions']) \
and sorted(m['name'] for m in d['modules'])==['kp_gplonly_then_prop','kp_prop_prov','kp_use_prop'] \
and [m['loads'] for m in d['modules'] if m['name']=='kp_gplonly_then_prop']==[False] \
and all(m['path'].startswith('$tmp/') for m in d['modules'])"

for layout in classic merged sid split abslib loop; do
	r=$tmp/$layout
	mk_root "$layout" "$r"
	"$kp" check --format json -b "$r" > "$tmp/$layout.json" 2> "$tmp/$layout.err"
	ok "$layout: check -b exits 1 on the failing module" $(( $? == 1 ? 0 : 1 ))
	json "$tmp/$layout.json" "$want"
	ok "$layout: release, version, config, Module.symvers and modules found" $?
	[ ! -s "$tmp/$layout.err" ]
	ok "$layout: nothing on stderr" $?
	"$kp" graph --format json -b "$r" > "$tmp/$layout.graph.json"
	json "$tmp/$layout.graph.json" \
		"[m['depends'] for m in d['modules'] if m['name']=='kp_use_prop']==[['kp_prop_prov']]"
	ok "$layout: graph -b has the dependency" $?
	"$kp" explain -b "$r" kp_use_prop > "$tmp/$layout.explain"
	grep -q "kp_use_prop inherits P: imports kp_prop_plain from kp_prop_prov" \
		"$tmp/$layout.explain"
	ok "$layout: explain -b gives the inheritance" $?
done

# modules are reported under the path as written (ROOT/lib/modules through the relative link)
json "$tmp/merged.json" \
	"all(m['path'].startswith('$tmp/merged/lib/modules/$rel/') for m in d['modules'])"
ok "merged: module paths keep ROOT/lib/modules" $?
json "$tmp/abslib.json" \
	"all(m['path'].startswith('$tmp/abslib/usr/lib/modules/$rel/') for m in d['modules'])"
ok "abslib: module paths are inside ROOT" $?

# -k overrides the tree's exports; the tree still gives config and modules
"$kp" check --format json -k "$fx/Module.symvers.gz" -b "$tmp/sid" > "$tmp/sid-k.json"
json "$tmp/sid-k.json" "$want"
ok "sid: -k with -b" $?

# a stub (or any file without symbol lines) is no symbol source: without Module.symvers
# the error says why; with a real source next in line it is skipped with one note
r=$tmp/stubonly
mk_root sid "$r"
rm -rf "$r/usr/src" "$r/usr/lib/modules/$rel/build"
"$kp" check -b "$r" > /dev/null 2> "$tmp/stubonly.err"
ok "stub only: check -b exits 2" $(( $? == 2 ? 0 : 1 ))
[ "$(wc -l < "$tmp/stubonly.err")" -eq 1 ] && grep -q \
	"no kernel exports for $rel" "$tmp/stubonly.err" &&
	grep -q "only Debian's stub System.map" "$tmp/stubonly.err"
ok "stub only: one error line naming the stub" $?
r=$tmp/emptymap
mk_root classic "$r"
rm -rf "$r/usr/src" "$r/lib/modules/$rel/build"
printf '# nothing here\n\n' > "$r/boot/System.map-$rel"
"$kp" check -b "$r" > /dev/null 2> "$tmp/emptymap.err"
ok "System.map without symbol lines: exit 2" $(( $? == 2 ? 0 : 1 ))
grep -q "no kernel exports for $rel" "$tmp/emptymap.err"
ok "System.map without symbol lines is not read as one" $?
"$kp" check --kernel "$r/boot/System.map-$rel" --kernel-release "$rel" "$fx/kp_plain.ko" \
	> /dev/null 2> "$tmp/k-stub.err"
ok "--kernel naming a file without symbols exits 2" $(( $? == 2 ? 0 : 1 ))

# --running --root on usrmerge roots: release from proc, config and Module.symvers from
# usr/lib/modules/<release>; with no Module.symvers the stub is skipped for kallsyms
base=$top/tests/unit/system/root
r=$tmp/run-sid
mkdir -p "$r/usr/lib/modules"
cp -a "$base/proc" "$base/sys" "$base/etc" "$r/"
cp -a "$base/lib/modules/5.10.0-test" "$r/usr/lib/modules/"
ln -s usr/lib "$r/lib"
cp "$base/boot/config-5.10.0-test" "$r/usr/lib/modules/5.10.0-test/config"
echo "$stub" > "$r/usr/lib/modules/5.10.0-test/System.map"
cp -a "$base/usr/src" "$r/usr/"
rm "$r/usr/lib/modules/5.10.0-test/build"
ln -s ../../../src/linux-headers-5.10.0-test "$r/usr/lib/modules/5.10.0-test/build"
"$kp" check --format json --running --root "$r" "$fx/kp_plain.ko" > "$tmp/run-sid.json"
json "$tmp/run-sid.json" "d['kernel']['release']=='5.10.0-test' and d['kernel']['modversions'] \
and not any('no kernel config' in s or 'System.map' in s for s in d['kernel']['assumptions']) \
and d['modules'][0]['errno']=='EKEYREJECTED'"
ok "--running, sid layout: release, config, sig_enforce" $?
rm -rf "$r/usr/src"
"$kp" check --format json --running --root "$r" "$fx/kp_plain.ko" \
	> "$tmp/run-stub.json" 2> "$tmp/run-stub.err"
ok "--running without Module.symvers falls back to kallsyms" $(( $? == 1 ? 0 : 1 ))
json "$tmp/run-stub.json" "d['kernel']['modversions'] and \
sum('System.map' in s and 'not used as a symbol source' in s for s in d['kernel']['assumptions'])==1"
ok "--running: the stub System.map is noted once, config still read" $?

tap_done
