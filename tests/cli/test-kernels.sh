#!/usr/bin/env bash
# The loader of each kernel generation (5.10 … 7.2) on the same modules: version-gated
# branches of lib/sim/rules/ (module: namespaces, __kflagstab, string-table and st_shndx checks,
# message texts), driven by --kernel-version over the 6.12 fixtures and edited copies of them.
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.12

# check VERSION SYMVERS OUT MODULE...: JSON prediction for kernel VERSION
check() {
	local ver=$1 symvers=$2 out=$3
	shift 3
	"$kp" check -f json --fail-on never -k "$symvers" --kernel-config "$fx/config.gz" \
		--kernel-release "$rel" --kernel-version "$ver" "$@" > "$out" 2> "$out.err"
}
# verdict FILE MODULE PYTHON-EXPR over m (the module's JSON object)
verdict() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = next(x for x in d["modules"] if x["name"] == sys.argv[2])
ids = [f["id"] for f in m["findings"]]
sys.exit(0 if eval(sys.argv[3]) else 1)
PY
}

# --- module: namespaces (v6.16+: verify_module_namespace(), mod_strncmp()) -------------------
# kp_ns_missing imports kp_gpl_prov_ns without MODULE_IMPORT_NS(); here vmlinux exports it
# in a module namespace.
symvers_ns() { # NAMESPACE -> a Module.symvers path
	local f="$tmp/symvers-$(echo "$1" | tr -c 'a-zA-Z0-9_\n' '_')"
	{ zcat "$fx/Module.symvers.gz"; printf \
		'0x5a1c53f9\tkp_gpl_prov_ns\tvmlinux\tEXPORT_SYMBOL_GPL\t%s\n' "$1"; } > "$f"
	echo "$f"
}
for ns in "module:kp_ns_missing" "module:other,kp-ns-missing" "module:kp_ns*" \
	"module:kp-ns_m*,x" "module:*"; do
	check 7.2.13 "$(symvers_ns "$ns")" "$tmp/ns.json" "$fx/kp_ns_missing.ko"
	verdict "$tmp/ns.json" kp_ns_missing "m['loads'] and m['findings'] == []"
	ok "7.2: $ns grants kp_gpl_prov_ns to kp_ns_missing" $?
done
for ns in "module:kp_ns_ok" "module:kp_ns_missin" "module:kp_ns_missing_x" "module:" "module:,"; do
	check 7.2.13 "$(symvers_ns "$ns")" "$tmp/ns.json" "$fx/kp_ns_missing.ko"
	verdict "$tmp/ns.json" kp_ns_missing \
		"not m['loads'] and m['errno'] == 'EINVAL' and 'kp_ns_missing: module uses symbol (kp_gpl_prov_ns) from namespace $ns, but does not import it.' in m['messages'] and 'missing-namespace' in ids"
	ok "7.2: $ns does not grant it (EINVAL)" $?
done
check 6.16.0 "$(symvers_ns module:kp_ns_missing)" "$tmp/ns.json" "$fx/kp_ns_missing.ko"
verdict "$tmp/ns.json" kp_ns_missing "m['loads']"
ok "6.16: first kernel with module namespaces" $?
check 6.12.118 "$(symvers_ns module:kp_ns_missing)" "$tmp/ns.json" "$fx/kp_ns_missing.ko"
verdict "$tmp/ns.json" kp_ns_missing "not m['loads'] and m['errno'] == 'EINVAL'"
ok "6.12: module:kp_ns_missing is an ordinary namespace (macro-only backport)" $?

# --- setup_modinfo(): MODULE_IMPORT_NS("module:...") is -EPERM on 6.16+ ---------------------
cp "$fx/kp_ns_ok.ko" "$tmp/kp_ns_ok.ko"
python3 "$top/tests/cli/elf-poke.py" "$tmp/kp_ns_ok.ko" replace \
	"description=kopolicy test fixture kp_ns_ok" "import_ns=module:kvm"
check 7.2.13 "$fx/Module.symvers.gz" "$tmp/imp.json" "$fx/kp_gpl_prov.ko" "$tmp/kp_ns_ok.ko"
verdict "$tmp/imp.json" kp_ns_ok \
	"m['errno'] == 'EPERM' and m['messages'][-1] == 'kp_ns_ok: module tries to import module namespace: module:kvm' and ids[-1] == 'module-namespace-import'"
ok "7.2: import_ns=module:kvm is EPERM" $?
verdict "$tmp/imp.json" kp_ns_ok "not any('Unknown symbol' in s for s in m['messages'])"
ok "7.2: EPERM comes before symbol resolution" $?
check 6.12.118 "$fx/Module.symvers.gz" "$tmp/imp.json" "$fx/kp_gpl_prov.ko" "$tmp/kp_ns_ok.ko"
verdict "$tmp/imp.json" kp_ns_ok "m['loads'] and ids == []"
ok "6.12: no such check (import_ns=module:kvm is just another namespace)" $?

# --- __kflagstab (v7.1+) -------------------------------------------------------------------
check 7.2.13 "$fx/Module.symvers.gz" "$tmp/fl.json" "$fx/kp_gpl_prov.ko"
verdict "$tmp/fl.json" kp_gpl_prov \
	"m['errno'] == 'ENOEXEC' and m['messages'] == ['kp_gpl_prov: loading out-of-tree module taints kernel.', 'kp_gpl_prov: module verification failed: signature and/or required key missing - tainting kernel', 'kp_gpl_prov: ignoring obsolete section __ksymtab_gpl', 'kp_gpl_prov: ignoring obsolete section __kcrctab_gpl', 'kp_gpl_prov: no flags for exported symbols'] and 'no-export-flags' in ids"
ok "7.2: a module built before 7.1 with plain exports: no flags for exported symbols" $?
check 7.0.5 "$fx/Module.symvers.gz" "$tmp/fl.json" "$fx/kp_gpl_prov.ko"
verdict "$tmp/fl.json" kp_gpl_prov "m['loads']"
ok "7.0: the same module loads" $?

# --- simplify_symbols(): SHN_COMMON and st_shndx >= e_shnum ----------------------------------
cp "$fx/kp_plain.ko" "$tmp/kp_plain.ko"
python3 "$top/tests/cli/elf-poke.py" "$tmp/kp_plain.ko" shndx __pfx_kp_plain_exit common
for v in 5.10.223 6.1.176 7.2.13; do
	check $v "$fx/Module.symvers.gz" "$tmp/com.json" "$tmp/kp_plain.ko"
	verdict "$tmp/com.json" kp_plain \
		"m['errno'] == 'ENOEXEC' and 'kp_plain: please compile with -fno-common' in m['messages'] and 'common-symbol' in ids"
	ok "$v: an SHN_COMMON symbol is ENOEXEC" $?
done
cp "$fx/kp_plain.ko" "$tmp/kp_plain.ko"
python3 "$top/tests/cli/elf-poke.py" "$tmp/kp_plain.ko" shndx __pfx_kp_plain_exit shnum+3
shnum=$(python3 -c \
	"import struct,sys; d=open(sys.argv[1],'rb').read(); print(struct.unpack_from('<H', d, 0x3c)[0])" "$tmp/kp_plain.ko")
for v in 6.1.168 6.12.80 7.0.0 7.2.13; do
	check $v "$fx/Module.symvers.gz" "$tmp/idx.json" "$tmp/kp_plain.ko"
	verdict "$tmp/idx.json" kp_plain \
		"m['errno'] == 'ENOEXEC' and 'kp_plain: Symbol __pfx_kp_plain_exit has an invalid section index $((shnum + 3)) (max $((shnum - 1)))' in m['messages']"
	ok "$v: an out-of-range section index is ENOEXEC" $?
done
for v in 5.10.223 6.1.167 6.12.79 6.19.0; do
	check $v "$fx/Module.symvers.gz" "$tmp/idx.json" "$tmp/kp_plain.ko"
	verdict "$tmp/idx.json" kp_plain \
		"m['loads'] and ids == ['invalid-section-index'] and m['findings'][0]['severity'] == 'warning'"
	ok "$v: not checked (a warning, no failure)" $?
done

# --- elf_validity_cache_strtab() (v6.13+) ----------------------------------------------------
cp "$fx/kp_plain.ko" "$tmp/kp_plain.ko"
python3 "$top/tests/cli/elf-poke.py" "$tmp/kp_plain.ko" strtab-first 0x78
check 7.2.13 "$fx/Module.symvers.gz" "$tmp/st.json" "$tmp/kp_plain.ko"
verdict "$tmp/st.json" kp_plain \
	"m['errno'] == 'ENOEXEC' and m['messages'] == ['symbol string table missing leading NUL'] and ids == ['bad-symbol-strtab']"
ok "7.2: symbol string table missing leading NUL" $?
check 6.12.118 "$fx/Module.symvers.gz" "$tmp/st.json" "$tmp/kp_plain.ko"
verdict "$tmp/st.json" kp_plain "m['loads']"
ok "6.12: not checked" $?
cp "$fx/kp_plain.ko" "$tmp/kp_plain.ko"
python3 "$top/tests/cli/elf-poke.py" "$tmp/kp_plain.ko" strtab-last 0x78
check 6.13.0 "$fx/Module.symvers.gz" "$tmp/st.json" "$tmp/kp_plain.ko"
verdict "$tmp/st.json" kp_plain \
	"m['errno'] == 'ENOEXEC' and m['messages'] == [\"symbol string table isn't NUL terminated\"]"
ok "6.13: symbol string table isn't NUL terminated" $?

check 7.2.13 "$fx/Module.symvers.gz" "$tmp/st.json" "$top/fixtures/bad/sym-name-oob.ko"
verdict "$tmp/st.json" kp_plain \
	"m['errno'] == 'ENOEXEC' and m['messages'] == [] and ids == ['bad-symbol-strtab']"
ok "7.2: a symbol name past the string table is ENOEXEC (its pr_err has no newline: no line)" $?
# before 6.13 simplify_symbols() reads info->strtab + st_name, info->strtab being the file at
# .strtab's sh_offset (setup_load_info()): msleep's name is the NUL at size + 0x100, the empty
# name, which nothing exports: "Unknown symbol  (err -2)"
check 6.12.118 "$fx/Module.symvers.gz" "$tmp/st.json" "$top/fixtures/bad/sym-name-oob.ko"
verdict "$tmp/st.json" kp_plain \
	"ids == ['bad-symbol-strtab', 'unknown-symbol'] and m['findings'][0]['severity'] == 'warning' and m['findings'][1]['symbol'] == '' and m['errno'] == 'ENOENT' and m['messages'][-1] == 'kp_plain: Unknown symbol  (err -2)'"
ok "6.12: not checked, the name read from the file (empty): Unknown symbol, ENOENT" $?
# sym-name-tail.ko: msleep's st_name points at 12 bytes appended to the file, no NUL after
check 7.2.13 "$fx/Module.symvers.gz" "$tmp/st.json" "$top/fixtures/bad/sym-name-tail.ko"
verdict "$tmp/st.json" kp_plain \
	"m['errno'] == 'ENOEXEC' and m['messages'] == [] and ids == ['bad-symbol-strtab']"
ok "7.2: a symbol name past the end of the file is ENOEXEC (out of bounds in string table)" $?
check 6.12.118 "$fx/Module.symvers.gz" "$tmp/st.json" "$top/fixtures/bad/sym-name-tail.ko"
verdict "$tmp/st.json" kp_plain \
	"ids == ['bad-symbol-strtab', 'unknown-symbol'] and m['findings'][0]['severity'] == 'warning' and m['findings'][0]['message'].startswith('1 symbol name, read where this kernel reads them') and 'rest of the last page, zeroed if init_on_alloc is on' in m['findings'][0]['message'] and 'not predictable' not in m['findings'][0]['message'] and m['findings'][1]['symbol'] == 'kp_name_tail'"
ok "6.12: a name no NUL ends in the file: read to the file's end (the rest of the page is zeroed)" $?
# every symbol named by 1 MiB of 'A' appended to the file: the names read outside the table
# are bounded (2 x the file + 64 KiB), past that the file is refused, the others still read
python3 - "$fx/kp_plain.ko" "$tmp/names-bomb.ko" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
shoff, n = struct.unpack_from("<Q", d, 0x28)[0], struct.unpack_from("<H", d, 0x3c)[0]
secs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + 64 * i) for i in range(n)]
st = next(s for s in secs if s[1] == 2)
tail = len(d) - secs[st[6]][4]
d += b"A" * (1 << 20)
for off in range(st[4] + 24, st[4] + st[5], 24):
    struct.pack_into("<I", d, off, tail)
open(sys.argv[2], "wb").write(d)
PY
"$kp" --no-cache info "$tmp/names-bomb.ko" "$fx/kp_plain.ko" > "$tmp/bomb.out" 2> "$tmp/bomb.err"
rc=$?
[ $rc -eq 2 ] && grep -q \
	"^kopolicy: $tmp/names-bomb.ko: symbol 3: the names read outside the symbol string table add up to more than [0-9]* bytes$" "$tmp/bomb.err" &&
	[ "$(wc -l < "$tmp/bomb.err")" -eq 1 ] && grep -q "^$fx/kp_plain.ko:$" "$tmp/bomb.out"
ok "names read outside the string table are bounded: a one-line error, exit 2, the other file read" $?
# info says how the table is malformed and which names run past the file; nothing for a good one
"$kp" --no-cache info "$top/fixtures/bad/sym-name-tail.ko" > "$tmp/tail.txt" 2>&1 &&
	grep -qx "  symbol strtab:   a name outside it: names read as before 6.13, from the file at its offset + st_name (6.13+ refuses the module)" "$tmp/tail.txt" &&
	grep -qx "                   1 name no NUL ends before the end of the file (shown up to it; the kernel reads on)" "$tmp/tail.txt" &&
	grep -qx "    kp_name_tail" "$tmp/tail.txt"
ok "info: sym-name-tail.ko's table and its name past the file, kp_name_tail listed" $?
"$kp" --no-cache info "$top/fixtures/ko/6.12/kp_strtab_empty.ko" "$fx/kp_plain.ko" \
	> "$tmp/empty.txt" 2>&1 &&
	[ "$(grep -c "symbol strtab:" "$tmp/empty.txt")" -eq 1 ] &&
	grep -qx "  symbol strtab:   empty: names read as before 6.13, from the file at its offset + st_name (6.13+ refuses the module)" "$tmp/empty.txt" &&
	grep -qx "    msleep" "$tmp/empty.txt"
ok "info: kp_strtab_empty's empty table said once (not for kp_plain), msleep listed" $?

# --- elf_validity_check() (v5.12, 5.10.28; v6.13 and 6.12.117+: _cache_sechdrs, _secstrings) -----
# ext-shnum0.ko: e_shnum 0 / e_shstrndx SHN_XINDEX (extended numbering, which libelf follows)
bad=$top/fixtures/bad
for v in 6.1.129 6.12.116; do
	check $v "$fx/Module.symvers.gz" "$tmp/xn.json" "$bad/ext-shnum0.ko"
	verdict "$tmp/xn.json" kp_plain \
		"not m['loads'] and m['errno'] == 'ENOEXEC' and m['messages'] == ['Invalid ELF section name index: 65535 || e_shstrndx (65535) >= e_shnum (0)'] and ids == ['bad-section-headers']"
	ok "$v: e_shnum 0 (extended numbering) is ENOEXEC, \"Invalid ELF section name index\"" $?
done
for v in 6.12.118 6.13.0 7.2.13; do
	check $v "$fx/Module.symvers.gz" "$tmp/xn.json" "$bad/ext-shnum0.ko"
	verdict "$tmp/xn.json" kp_plain \
		"m['errno'] == 'ENOEXEC' and m['messages'] == ['ELF Spec violation: section 0 type(0)!=SH_NULL or non-zero len or addr'] and ids == ['bad-section-headers']"
	ok "$v: e_shnum 0 is ENOEXEC at the section 0 check (it holds the count)" $?
done
check 5.10.223 "$fx/Module.symvers.gz" "$tmp/xn.json" "$bad/ext-shnum0.ko"
verdict "$tmp/xn.json" kp_plain \
	"m['errno'] == 'ENOEXEC' and m['messages'] == [] and ids == ['bad-section-headers']"
ok "5.10.223: ENOEXEC without a line" $?
check 7.2.13 "$fx/Module.symvers.gz" "$tmp/xn.json" "$bad/shstrndx-xindex.ko"
verdict "$tmp/xn.json" kp_plain \
	"m['errno'] == 'ENOEXEC' and m['messages'] == ['Invalid ELF section name index: 65535 || e_shstrndx (65535) >= e_shnum (36)']"
ok "7.2: e_shstrndx SHN_XINDEX alone is ENOEXEC" $?
check 7.2.13 "$fx/Module.symvers.gz" "$tmp/xn.json" "$fx/kp_plain.ko"
verdict "$tmp/xn.json" kp_plain "m['loads'] and 'bad-section-headers' not in ids"
ok "7.2: the unedited module loads" $?
"$kp" check --fail-on never -k "$fx/Module.symvers.gz" --kernel-version 6.12.118 \
	"$bad/ext-shnum0.ko" > "$tmp/xn.txt" 2>&1
grep -q "bad-section-headers" "$tmp/xn.txt"
ok "text report names bad-section-headers" $?

# --- symbol_get() tracing past the module's analysis budget (fixtures/bad/symget-bomb.ko.xz) ---
fx61=$top/fixtures/ko/6.1
"$kp" info --json "$bad/symget-bomb.ko.xz" > "$tmp/sg.json" 2> "$tmp/sg.err"
python3 - "$tmp/sg.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["modules"][0]
n = m["symbol_get_unanalysed"]
sys.exit(0 if n > 0 and len(m["symbol_get"]) + n == 4096 else 1)
PY
ok "info --json: symbol_get_unanalysed counts the call sites past the budget (4096 in all)" $?
"$kp" info "$bad/symget-bomb.ko.xz" 2>&1 | grep -E \
	"^    [0-9]+ more call site\(s\) not analysed: the module's analysis budget ran out$" \
	> /dev/null
ok "info: says how many call sites were not analysed" $?
xz -dc "$bad/symget-bomb.ko.xz" > "$tmp/kp_symget_bomb.ko"
python3 "$top/tests/cli/elf-poke.py" "$tmp/kp_symget_bomb.ko" replace \
	"license=Proprietary" "license=GPL"
"$kp" check -f json --fail-on never -k "$fx61/Module.symvers.gz" --kernel-config "$fx61/config.gz" \
	--kernel-release "$(sed -n 's/^release=//p' "$fx61/kernel.txt")" "$tmp/kp_symget_bomb.ko" \
	> "$tmp/sg.json" 2> "$tmp/sg.err"
verdict "$tmp/sg.json" kp_symget_bomb \
	"m['loads'] and 'symbol-get-not-analysed' in ids and m['findings'][ids.index('symbol-get-not-analysed')]['severity'] == 'warning'"
ok "check: a symbol-get-not-analysed warning (the GPL copy loads)" $?

# --- message texts and tables per generation -------------------------------------------------
check 5.10.223 "$fx/Module.symvers.gz" "$tmp/inh.json" "$fx/kp_prop_prov.ko" "$fx/kp_use_prop.ko"
verdict "$tmp/inh.json" kp_use_prop \
	"'P' in m['taint'] and 'kp_use_prop: module uses symbols from proprietary module kp_prop_prov, inheriting taint.' in m['messages']"
ok "5.10: inherit_taint() text without the symbol name" $?
check 7.0.5 "$fx/Module.symvers.gz" "$tmp/inh.json" "$fx/kp_prop_prov.ko" "$fx/kp_use_prop.ko"
verdict "$tmp/inh.json" kp_use_prop \
	"'P' in m['taint'] and 'kp_use_prop: module uses symbols kp_prop_plain from proprietary module kp_prop_prov, inheriting taint.' in m['messages']"
ok "7.0: inherit_taint() text names the symbol" $?

# --- a dependency used only through weak symbols (simplify_symbols(): weak stays 0) ---------
cp "$fx/kp_ns_ok.ko" "$tmp/kp_ns_ok.ko"
python3 "$top/tests/cli/elf-poke.py" "$tmp/kp_ns_ok.ko" weak kp_gpl_prov_ns
"$kp" check -f json -k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" \
	--kernel-release "$rel" \
	--kernel-cmdline module_blacklist=kp_gpl_prov "$fx/kp_gpl_prov.ko" \
		"$tmp/kp_ns_ok.ko" > "$tmp/weak.json"
ok "exit 1: the blacklisted provider is an error" $(( $? == 1 ? 0 : 1 ))
verdict "$tmp/weak.json" kp_gpl_prov "m['errno'] == 'EPERM' and ids == ['blacklisted']"
ok "blacklisted provider: EPERM, rule blacklisted" $?
verdict "$tmp/weak.json" kp_ns_ok \
	"m['loads'] and ids == ['weak-dependency-failed'] and m['findings'][0]['severity'] == 'warning' and 'kp_gpl_prov fails to load: the weak symbols this module imports from it (kp_gpl_prov_ns) stay NULL' == m['findings'][0]['message']"
ok "it is a warning naming the weak symbols" $?
"$kp" check -f junit -k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" \
	--kernel-release "$rel" \
	--kernel-cmdline module_blacklist=kp_gpl_prov "$fx/kp_gpl_prov.ko" \
		"$tmp/kp_ns_ok.ko" > "$tmp/weak.xml"
python3 -c \
	"import sys,xml.etree.ElementTree as E; r=E.parse(sys.argv[1]).getroot(); s=r if r.tag=='testsuite' else r.find('testsuite'); sys.exit(0 if s.get('failures')=='1' else 1)" "$tmp/weak.xml"
ok "JUnit counts only the blacklisted provider as a failure" $?

# --- never guess silently: kernels newer than the newest modelled one -----------------------
"$kp" check -f json -k "$fx/Module.symvers.gz" --kernel-version 7.3.1 "$fx/kp_plain.ko" \
	> "$tmp/new.json" 2> "$tmp/new.err"
ok "7.3: exit 0 at the default --fail-on" $?
grep -qx "kopolicy: warning: kernel 7.3 is newer than the newest loader kopolicy models (7.2): the 7.2 behaviour is assumed \[unverified-kernel\]" "$tmp/new.err"
ok "7.3: one warning line on stderr" $?
python3 -c \
	"import json,sys; k=json.load(open(sys.argv[1]))['kernel']; sys.exit(0 if k['beyond_modelled'] and k['newest_modelled']=='7.2' and any('newer than the newest loader' in a for a in k['assumptions']) else 1)" "$tmp/new.json"
ok "7.3: JSON says so in kernel.assumptions" $?
"$kp" check --fail-on warning -k "$fx/Module.symvers.gz" --kernel-version 7.3.1 \
	"$fx/kp_plain.ko" > /dev/null 2>&1
ok "7.3: --fail-on warning fails on it" $(( $? == 1 ? 0 : 1 ))
"$kp" check -k "$fx/Module.symvers.gz" --kernel-version 7.2.13 "$fx/kp_plain.ko" \
	> /dev/null 2> "$tmp/72.err"
! grep -q unverified-kernel "$tmp/72.err"
ok "7.2: no such warning" $?

echo "1..$n"
echo "# $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
