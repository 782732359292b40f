#!/usr/bin/env bash
# The command line as users and build farms see it: exit statuses, error lines, formats.
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.12
kern=(-k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release "$rel")

json() { python3 -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }

# info: exit 0, JSON schema, all files read
"$kp" info --json "$fx/kp_gpl_prov.ko" "$fx/kp_use_prop.ko.zst" > "$tmp/info.json"
ok "info exits 0 on good modules" $?
json "$tmp/info.json" \
	"d['schema_version']==1 and [m['name'] for m in d['modules']]==['kp_gpl_prov','kp_use_prop'] and d['errors']==[]"
ok "info --json lists both modules in order" $?
json "$tmp/info.json" \
	"d['modules'][0]['exports'][2]=={'name':'kp_gpl_prov_gplonly','gpl_only':True,'table':'__ksymtab_gpl','namespace':None,'crc':'0xc1bb5f9e'}"
ok "info --json export object" $?
json "$tmp/info.json" \
	"d['modules'][1]['compression']=='zstd' and d['modules'][1]['imports'][2]=={'name':'kp_prop_plain','weak':False}"
ok "info --json compression and imports" $?

# bad input: one line per bad file, the others still processed, exit 2
"$kp" info --json "$top/fixtures/bad/empty.ko" "$fx/kp_plain.ko" "$top/fixtures/bad/trunc.ko.xz" \
	> "$tmp/mixed.json" 2> "$tmp/mixed.err"
ok "info exits 2 when a file is bad" $(( $? == 2 ? 0 : 1 ))
[ "$(wc -l < "$tmp/mixed.err")" -eq 2 ] && grep -q \
	"^kopolicy: $top/fixtures/bad/empty.ko: empty file$" "$tmp/mixed.err"
ok "one error line per bad file, naming it" $?
json "$tmp/mixed.json" "len(d['modules'])==1 and len(d['errors'])==2"
ok "good files are still reported" $?
"$kp" info "$tmp/does-not-exist.ko" 2> "$tmp/enoent.err" >/dev/null
ok "missing file exits 2" $(( $? == 2 ? 0 : 1 ))
grep -q "cannot open: No such file or directory" "$tmp/enoent.err"
ok "missing file message" $?
"$kp" info --bogus 2>/dev/null
ok "unknown option exits 2" $(( $? == 2 ? 0 : 1 ))
"$kp" info "$top/fixtures/bad" > /dev/null 2> "$tmp/dir.err"
[ "$(wc -l < "$tmp/dir.err")" -ge 20 ]
ok "a directory is searched for modules" $?

# check: exit statuses follow --fail-on
"$kp" check "${kern[@]}" "$fx/kp_gpl_prov.ko" "$fx/kp_ns_ok.ko" > "$tmp/clean.txt"
ok "check of clean modules exits 0" $?
"$kp" check "${kern[@]}" "$fx/kp_prop_prov.ko" "$fx/kp_gplonly_then_prop.ko" > "$tmp/fail.txt"
ok "check exits 1 on a load failure" $(( $? == 1 ? 0 : 1 ))
grep -q "kp_gplonly_then_prop: E: gpl-proprietary-mix" "$tmp/fail.txt"
ok "text names module and rule id" $?
"$kp" check "${kern[@]}" "$fx/kp_prop_prov.ko" "$fx/kp_use_prop.ko" > /dev/null
ok "inheriting P alone is below the default --fail-on" $?
"$kp" check --fail-on warning "${kern[@]}" "$fx/kp_prop_prov.ko" "$fx/kp_use_prop.ko" > /dev/null
ok "--fail-on warning counts inherit-taint" $(( $? == 1 ? 0 : 1 ))
"$kp" check --fail-on never "${kern[@]}" "$fx/kp_prop_prov.ko" \
	"$fx/kp_gplonly_then_prop.ko" > /dev/null
ok "--fail-on never exits 0" $?

# dependency order: the user's order does not matter
"$kp" check --format json "${kern[@]}" "$fx/kp_use_prop_chain.ko" "$fx/kp_use_prop.ko" \
	"$fx/kp_prop_prov.ko" > "$tmp/order.json"
json "$tmp/order.json" \
	"[m['name'] for m in d['modules']]==['kp_prop_prov','kp_use_prop','kp_use_prop_chain'] and all(m['loads'] and m['taint']=='POE' for m in d['modules'])"
ok "loads in dependency order; P inherited transitively" $?

# rule profiles
"$kp" check --format json --rules pre2020 "${kern[@]}" "$fx/kp_prop_prov.ko" \
	"$fx/kp_gplonly_then_prop.ko" > "$tmp/pre.json"
json "$tmp/pre.json" \
	"d['kernel']['rules']=='pre2020' and d['modules'][1]['loads'] and any(f['id']=='latent-breakage' for f in d['modules'][1]['findings'])"
ok "pre2020: loads, with a latent-breakage note" $?
"$kp" check --compare 2020,2023 "${kern[@]}" "$fx/kp_gpl_prov.ko" "$fx/kp_prop_prov.ko" \
	"$fx/kp_symget.ko" > "$tmp/cmp.txt"
ok "--compare exits 1 when something changes" $(( $? == 1 ? 0 : 1 ))
grep -q "kp_symget: symbol_get(kp_gpl_prov_plain) ok -> NULL" "$tmp/cmp.txt"
ok "--compare reports the symbol_get change" $?

# waivers
printf '# accepted\ngpl-proprietary-mix kp_gplonly_* kp_prop_*\nunknown-symbol kp_gplonly_then_prop\n' > "$tmp/waivers"
"$kp" check --waivers "$tmp/waivers" "${kern[@]}" "$fx/kp_prop_prov.ko" \
	"$fx/kp_gplonly_then_prop.ko" > "$tmp/w.txt" \
	2> "$tmp/w.err"
ok "waived findings do not fail the check" $?
grep -q "\[waived\]" "$tmp/w.txt"
ok "waived findings are still shown" $?
[ "$(cat "$tmp/w.err")" = \
	"kopolicy: $tmp/waivers:3: warning: unused waiver: unknown-symbol kp_gplonly_then_prop *" ]
ok "only the waiver that waived nothing is reported unused" $?
printf 'gpl-proprietary-mix\nsymbol-get-* kp_nothing\n' > "$tmp/w1"
"$kp" check --waivers "$tmp/w1" "${kern[@]}" "$fx/kp_prop_prov.ko" "$fx/kp_gplonly_then_prop.ko" \
	> "$tmp/w1.txt" 2> "$tmp/w1.err"

grep -q "gpl-proprietary-mix.*\[waived\]" "$tmp/w1.txt"
ok "a rule alone waives it for every module" $?
[ "$(cat "$tmp/w1.err")" = \
	"kopolicy: $tmp/w1:2: warning: unused waiver: symbol-get-* kp_nothing *" ]
ok "an unused waiver is reported with file and line" $?
grep -c . "$tmp/w1.err" | grep -x 1 >/dev/null
ok "only the unused waiver is reported" $?
printf 'a b c d\n' > "$tmp/badw"
"$kp" check --waivers "$tmp/badw" "${kern[@]}" "$fx/kp_plain.ko" 2> "$tmp/badw.err" >/dev/null
ok "a malformed waiver file exits 2" $(( $? == 2 ? 0 : 1 ))
grep -q "badw:1:" "$tmp/badw.err"
ok "waiver error names file and line" $?

# machine formats are well-formed
"$kp" check --format sarif "${kern[@]}" "$fx/kp_prop_prov.ko" \
	"$fx/kp_gplonly_then_prop.ko" > "$tmp/s.sarif"
json "$tmp/s.sarif" \
	"d['version']=='2.1.0' and any(r['ruleId']=='gpl-proprietary-mix' for r in d['runs'][0]['results'])"
ok "SARIF 2.1.0 with results" $?
"$kp" check --format junit "${kern[@]}" "$fx/kp_prop_prov.ko" \
	"$fx/kp_gplonly_then_prop.ko" > "$tmp/j.xml"
python3 -c \
	"import xml.etree.ElementTree as E; r=E.parse('$tmp/j.xml').getroot(); s=r.find('testsuite'); assert s.get('tests')=='2' and s.get('failures')=='1'"
ok "JUnit XML parses, one failing module" $?
"$kp" check "${kern[@]}" "$fx/kp_plain.ko" "$top/fixtures/bad/text.ko" > /dev/null 2>&1
ok "check exits 2 when an input is unreadable" $(( $? == 2 ? 0 : 1 ))
"$kp" check --kernel-cmdline module.sig_enforce=1 --format json "${kern[@]}" \
	"$fx/kp_plain.ko" > "$tmp/sig.json"
json "$tmp/sig.json" \
	"d['modules'][0]['errno']=='EKEYREJECTED' and d['modules'][0]['messages']==['Loading of unsigned module is rejected']"
ok "module.sig_enforce=1 rejects unsigned modules" $?

"$kp" check "${kern[@]}" "$tmp/missing.ko" > /dev/null 2> "$tmp/only-missing.err"
ok "check with nothing readable exits 2" $(( $? == 2 ? 0 : 1 ))
[ "$(wc -l < "$tmp/only-missing.err")" -eq 1 ]
ok "... with one error line, naming the file" $?

# -b ROOT: a system image (as depmod -b): kernel exports, config and modules from the tree
img=$tmp/img
mkdir -p "$img/lib/modules/$rel/extra" "$img/boot" "$img/usr/src/linux-headers-$rel"
cp "$fx"/kp_prop_prov.ko "$fx"/kp_use_prop.ko "$fx"/kp_gplonly_then_prop.ko \
	"$img/lib/modules/$rel/extra/"
gzip -dc "$fx/config.gz" > "$img/boot/config-$rel"
gzip -dc "$fx/Module.symvers.gz" > "$img/usr/src/linux-headers-$rel/Module.symvers"
"$kp" check --format json -b "$img" > "$tmp/img.json"
ok "check -b ROOT exits 1 on the failing module in the tree" $(( $? == 1 ? 0 : 1 ))
json "$tmp/img.json" \
	"d['kernel']['release']=='$rel' and d['kernel']['version']=='6.12.118' and sorted(m['name'] for m in d['modules'])==['kp_gplonly_then_prop','kp_prop_prov','kp_use_prop'] and [m['loads'] for m in d['modules'] if m['name']=='kp_gplonly_then_prop']==[False]"
ok "check -b ROOT finds release, version, config and modules" $?
"$kp" explain -b "$img" kp_use_prop > "$tmp/explain.txt"
grep -q "kp_use_prop inherits P: imports kp_prop_plain from kp_prop_prov" "$tmp/explain.txt" &&
	grep -q "kp_prop_prov is proprietary: license 'Proprietary'" "$tmp/explain.txt"
ok "explain gives the inheritance chain" $?
"$kp" graph --format json -b "$img" > "$tmp/graph.json"
json "$tmp/graph.json" \
	"[m['depends'] for m in d['modules'] if m['name']=='kp_use_prop']==[['kp_prop_prov']] and d['cycles']==[]"
ok "graph -b ROOT: dependencies" $?
"$kp" graph --format dot -b "$img" | grep \
	"^	\"file:$img/lib/modules/$rel/extra/kp_use_prop.ko\" -> \"file:$img/lib/modules/$rel/extra/kp_prop_prov.ko\"" \
	>/dev/null
ok "graph --format dot has the edge (nodes keyed by file)" $?

# ppc64: .TOC. is defined by the loader (module_frob_arch_sections), never unresolved
umt=$top/fixtures/ko/real/dvb-usb-umt-010-ppc64el.ko.xz
"$kp" graph --format json --pretty -k "$fx/Module.symvers.gz" "$umt" > "$tmp/toc.json"
json "$tmp/toc.json" \
	"[(i['kind'],i['provider']) for i in d['modules'][0]['imports'] if i['symbol']=='.TOC.']==[('loader','loader')] and [u['name'] for u in d['modules'][0]['unresolved']]==['udelay']"
ok "graph: ppc64 .TOC. is the loader's (on an amd64 kernel only udelay is unresolved)" $?
"$kp" graph -k "$fx/Module.symvers.gz" "$umt" > "$tmp/toc.txt"
grep -qx "  unresolved: udelay" "$tmp/toc.txt"
ok "graph text does not list .TOC. as unresolved" $?

# -b ROOT that is not a system: one error line naming the root once
mkdir -p "$tmp/notroot"
"$kp" check -b "$tmp/notroot" > /dev/null 2> "$tmp/notroot.err"
ok "check -b on a directory without lib/modules exits 2" $(( $? == 2 ? 0 : 1 ))
[ "$(cat "$tmp/notroot.err")" = \
	"kopolicy: $tmp/notroot: no lib/modules or usr/lib/modules (is it the root of a system?)" ]
ok "the error names the root once" $?

# --running under a fake root: the live kernel enforces signatures
"$kp" check --format json --running --root "$top/tests/unit/system/root" \
	"$fx/kp_plain.ko" > "$tmp/run.json"
json "$tmp/run.json" \
	"d['kernel']['release']=='5.10.0-test' and d['modules'][0]['errno']=='EKEYREJECTED'"
ok "--running reads the release and sig_enforce under --root" $?

# --force (modprobe --force): F from the ignored versions, the vermagic not compared, the
# signature of a signed module not verified (E); x86_64 relocations (6.1 oracle fixture)
f61=$top/fixtures/ko/6.1
k61=(-k "$f61/Module.symvers.gz" --kernel-config "$f61/config.gz" --kernel-release 6.1.0-57-amd64)
"$kp" check --format json --force "${k61[@]}" "$f61/kp_vermagic_bad.ko" > "$tmp/force.json"
json "$tmp/force.json" \
	"d['modules'][0]['loads'] and d['modules'][0]['taint']=='FOE' and d['modules'][0]['oops'] is False"
ok "check --force: a bad vermagic is forced (F), taint FOE" $?
"$kp" check --format json "${k61[@]}" "$f61/kp_bad_reloc.ko" > "$tmp/reloc.json"
json "$tmp/reloc.json" \
	"d['modules'][0]['errno']=='ENOEXEC' and 'module: kp_bad_reloc: Unknown rela relocation: 9' in d['modules'][0]['messages'] and [f['id'] for f in d['modules'][0]['findings']]==['unsupported-relocation']"
ok "check: R_X86_64_GOTPCREL is ENOEXEC with the kernel's line" $?

# the 5.10 oops the QEMU oracle observed (tests/oracle/testdata/oops-5.10/README.md)
f510=$top/fixtures/ko/5.10
oops=$top/tests/oracle/testdata/oops-5.10
"$kp" check --format json -k "$f510/Module.symvers.gz" --kernel-config "$f510/config.gz" \
	--kernel-release 5.10.0-46-amd64 "$oops/kp_bad_shndx.ko" > "$tmp/oops.json"
json "$tmp/oops.json" \
	"d['modules'][0]['oops'] is True and d['modules'][0]['errno'] is None and 'D' in d['modules'][0]['global_taint']"
ok "5.10: a section index that reads into the guard page: the kernel oopses" $?
python3 "$top/tests/oracle/compare.py" "$oops/bad_shndx_guard.json" "$tmp/oops.json" > /dev/null
ok "5.10 oops: the prediction matches the observed boot (compare.py)" $?

tap_done
