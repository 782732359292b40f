#!/usr/bin/env bash
# check --provider: modules (files, directories) and symbol files (another package's
# Module.symvers) the checked modules resolve against, read and simulated but never reported.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
fx=$top/fixtures/ko/6.1
rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
args=(-k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release "$rel"
	--color never)
. "$top/tests/lib/tap.sh"
tap_tmpdir

is() { # description got want
	if [ "$2" = "$3" ]; then ok "$1" 0; else ok "$1 (got '$2', want '$3')" 1; fi
}
check() { # OUT ARGS...: kopolicy check, stdout to OUT, stderr to OUT.err; prints the status
	local out=$1
	shift
	"$kp" check "${args[@]}" "$@" > "$out" 2> "$out.err"
	echo $?
}
# json_names FILE: the module names of a JSON report, one line
json_names() {
	python3 -c 'import json, sys
print(" ".join(m["name"] for m in json.load(open(sys.argv[1]))["modules"]))' "$1"
}

# 1. without its provider, kp_ns_ok cannot resolve kp_gpl_prov_ns
is "no provider: unknown-symbol, exit 1" "$(check "$tmp/none" "$fx/kp_ns_ok.ko")" 1
grep -q "kp_ns_ok: E: unknown-symbol: kp_gpl_prov_ns" "$tmp/none"
ok "no provider: the unknown-symbol finding" $?

# 2. a provider file: resolved, not reported
is "--provider FILE: exit 0" \
	"$(check "$tmp/file" --provider "$fx/kp_gpl_prov.ko" "$fx/kp_ns_ok.ko")" 0
grep -q "^1 module: 0 fail to load, 0 proprietary (P)$" "$tmp/file"
ok "--provider FILE: the summary counts the checked module only" $?
! grep -q kp_gpl_prov "$tmp/file"
ok "--provider FILE: the provider is not reported" $?

# 3. a provider directory (compressed modules, a file that is not a module), JSON
mkdir -p "$tmp/prov/sub"
cp "$fx/kp_gpl_prov.ko.xz" "$fx/kp_prop_prov.ko" "$tmp/prov/sub/"
cp "$top/fixtures/bad/text.ko" "$tmp/prov/broken.ko"
is "--provider DIR: exit 0" "$(check "$tmp/dir.json" -f json --provider "$tmp/prov" \
	"$fx/kp_ns_ok.ko" "$fx/kp_use_prop.ko")" 0
is "--provider DIR: JSON lists the checked modules only" "$(json_names "$tmp/dir.json")" \
	"kp_ns_ok kp_use_prop"
grep -q "broken.ko: provider not used: not an ELF file" "$tmp/dir.json.err"
ok "--provider DIR: an unreadable provider is said, not fatal" $?
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["errors"] == [], d["errors"]
m = [m for m in d["modules"] if m["name"] == "kp_use_prop"][0]
assert any(f["id"] == "inherit-taint" for f in m["findings"]), m' "$tmp/dir.json"
ok "--provider DIR: the proprietary provider's taint is inherited (2020 rule), no errors[]" $?

# 4. a provider of the same name as a checked module is left out (an older installed build)
mkdir -p "$tmp/old"
cp "$fx/kp_gpl_prov.ko" "$tmp/old/"
is "same name: exit 0" "$(check "$tmp/same.json" -f json --provider "$tmp/old" \
	"$fx/kp_gpl_prov.ko.zst" "$fx/kp_ns_ok.ko")" 0
python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(m["path"].rsplit("/", 1)[1] for m in d["modules"]))' "$tmp/same.json" \
	> "$tmp/same.paths"
is "same name: the checked file is used, the provider dropped" "$(cat "$tmp/same.paths")" \
	"kp_gpl_prov.ko.zst kp_ns_ok.ko"

# 5. a failing provider: its dependent fails, the provider itself is not reported
is "a failing provider nothing imports from: exit 0" "$(check "$tmp/crc" \
	--provider "$fx/kp_gpl_prov.ko" \
	--provider "$fx/kp_crc_bad.ko" "$fx/kp_ns_ok.ko")" 0
is "a provider's own failure is not reported" "$(grep -c kp_crc_bad "$tmp/crc")" 0
is "checking kp_crc_bad against its provider: exit 1" \
	"$(check "$tmp/crc2" --provider "$fx/kp_gpl_prov.ko" "$fx/kp_crc_bad.ko")" 1
grep -q "kp_crc_bad: E: crc-mismatch: was built against kp_gpl_prov_plain" "$tmp/crc2"
ok "the checked module's crc-mismatch against the provider's export" $?

# 6. a symbol file: another package's Module.symvers (KBUILD_EXTRA_SYMBOLS)
printf '0x5a1c53f9\tkp_gpl_prov_ns\t/build/prov/kp_gpl_prov\tEXPORT_SYMBOL_GPL\tKP_NS\n' \
	> "$tmp/Module.symvers"
is "--provider Module.symvers: exit 0" \
	"$(check "$tmp/sv" --provider "$tmp/Module.symvers" "$fx/kp_ns_ok.ko")" 0
printf '0x00000001\tkp_gpl_prov_ns\t/build/prov/kp_gpl_prov\tEXPORT_SYMBOL_GPL\tKP_NS\n' \
	> "$tmp/bad.symvers"
is "--provider Module.symvers, other CRC: exit 1" \
	"$(check "$tmp/sv2" --provider "$tmp/bad.symvers" "$fx/kp_ns_ok.ko")" 1
grep -q "kp_ns_ok: E: crc-mismatch: .*kp_gpl_prov_ns" "$tmp/sv2"
ok "--provider Module.symvers: its CRC is checked" $?

# 7. SARIF and JUnit leave providers out too
check "$tmp/s.sarif" -f sarif --provider "$fx/kp_crc_bad.ko" --provider "$fx/kp_gpl_prov.ko" \
	"$fx/kp_ns_ok.ko" > /dev/null
is "SARIF: no result for a provider" "$(grep -c kp_crc_bad "$tmp/s.sarif")" 0
check "$tmp/j.xml" -f junit --provider "$fx/kp_gpl_prov.ko" "$fx/kp_ns_ok.ko" > /dev/null
grep -q 'tests="1" failures="0"' "$tmp/j.xml"
ok "JUnit: one test case, the checked module" $?

# 8. usage errors
is "--provider without FILE: exit 2" "$(check "$tmp/u1" --provider "$fx")" 2
grep -q "provider takes module FILEs to check" "$tmp/u1.err"
ok "--provider without FILE: says why" $?
is "a provider that does not exist: exit 2" \
	"$(check "$tmp/u2" --provider "$tmp/nothing.ko" "$fx/kp_ns_ok.ko")" 2
grep -q "nothing.ko: provider: No such file or directory" "$tmp/u2.err"
ok "a provider that does not exist: named in the error" $?
is "a provider that is not a symbol file: exit 2" \
	"$(check "$tmp/u3" --provider "$fx/kernel.txt" "$fx/kp_ns_ok.ko")" 2
grep -q "kernel.txt" "$tmp/u3.err"
ok "a provider that is not a symbol file: named in the error" $?

tap_done
