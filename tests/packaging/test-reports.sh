#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The CI reports with real validators, and the plain shell CI step (contrib/ci/kopolicy-ci.sh):
#  - SARIF against the official SARIF 2.1.0 schema (sarif-2.1.0-rtm.5.json as shipped in the
#    npm package @microsoft/jest-sarif; JSON schema draft-04) with ajv, ajv-draft-04 and
#    ajv-formats (npm, cached in $HOME/.cache/kopolicy/npm; validate-sarif.js), plus the
#    fields code scanning relies on;
#  - JUnit with xmllint (libxml2-utils): XML 1.0, control characters gone, UTF-8 kept,
#    same-named modules distinct.
set -u
. "$(dirname "$0")/lib.sh"
fx=$srcdir/fixtures/ko/6.1
rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
kern=(-k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release "$rel")
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT

# modules under odd names, relative to the working directory
mkdir -p "$tmp/work/mods/a dir/ü%#" "$tmp/work/mods/other" "$tmp/outside"
cp "$fx/kp_prop_prov.ko" "$tmp/work/mods/a dir/ü%#/"
cp "$fx/kp_gplonly_then_prop.ko" "$tmp/work/mods/other/"
cp "$fx/kp_plain.ko" "$tmp/work/mods/other/"
cp "$fx/kp_plain_prop.ko" "$tmp/outside/"  # module name kp_plain too, outside the checkout
cp "$fx/kp_plain.ko" "$tmp/work/mods/ctl$(printf '\001')name.ko"
cd "$tmp/work" || exit 1

"$KOPOLICY" check -f sarif "${kern[@]}" mods "$tmp/outside/kp_plain_prop.ko" > r.sarif
[ $? -eq 1 ]
ok "check -f sarif exits 1 (findings)" $?
"$KOPOLICY" check -f sarif "${kern[@]}" mods "$tmp/outside/kp_plain_prop.ko" > r2.sarif
python3 - r.sarif r2.sarif "$tmp/work" "$tmp/outside" <<'PY' > sarif.out
import json, sys, urllib.parse
d = json.load(open(sys.argv[1])); d2 = json.load(open(sys.argv[2]))
run = d["runs"][0]; rules = run["tool"]["driver"]["rules"]
res = run["results"]
def check(name, cond): print(("ok" if cond else "FAIL") + " " + name)
base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
check("originalUriBaseIds %SRCROOT% is the working directory as a file: URI",
      base == "file://" + urllib.parse.quote(sys.argv[3]) + "/")
uris = {r["locations"][0]["physicalLocation"]["artifactLocation"].get("uri"): r["locations"][0]["physicalLocation"]["artifactLocation"] for r in res}
check("a path under the checkout: relative, percent-encoded URI with uriBaseId",
      uris.get("mods/a%20dir/%C3%BC%25%23/kp_prop_prov.ko", {}).get("uriBaseId") == "%SRCROOT%")
outside = "file://" + urllib.parse.quote(sys.argv[4]) + "/kp_plain_prop.ko"
check("a path outside it: absolute file: URI, no uriBaseId",
      outside in uris and "uriBaseId" not in uris[outside])
check("every result has a ruleIndex pointing at its rule",
      all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in res))
check("every rule has a helpUri", all(":" in r.get("helpUri", "") for r in rules))
check("the 2020 rule's help is the kernel commit",
      any(r["id"] == "gpl-proprietary-mix" and r["helpUri"].endswith("262e6ae7081d") for r in rules))
fps = [r["partialFingerprints"]["kopolicyFinding/v1"] for r in res]
check("every result has partialFingerprints", len(fps) == len(res) and all(len(f) == 16 for f in fps))
check("fingerprints are stable across runs",
      fps == [r["partialFingerprints"]["kopolicyFinding/v1"] for r in d2["runs"][0]["results"]])
check("distinct findings have distinct fingerprints",
      len(set(fps)) == len({(r["ruleId"], r["message"]["text"]) for r in res}))
PY
while read -r st name; do ok "SARIF: $name" "$([ "$st" = ok ] && echo 0 ||
	echo 1)"; done < sarif.out

npmdir=${KOPOLICY_NPM_CACHE:-$HOME/.cache/kopolicy/npm}
if [ ! -d "$npmdir/node_modules/ajv-draft-04" ] && command -v npm >/dev/null; then
	mkdir -p "$npmdir"
	timeout 600 npm install --no-audit --no-fund --prefix "$npmdir" ajv@8.17.1 \
		ajv-draft-04@1.0.0 ajv-formats@3.0.1 \
			@microsoft/jest-sarif@1.0.0-beta.0 > npm.log 2>&1
fi
schema=$npmdir/node_modules/@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json
if command -v node >/dev/null && [ -d "$npmdir/node_modules/ajv-draft-04" ] && [ -f "$schema" ]
then
	ajv() {
		NODE_PATH=$npmdir/node_modules node "$srcdir/tests/packaging/validate-sarif.js" \
			"$schema" "$1" > "$1.ajv" 2>&1
	}
	ajv r.sarif
	ok "ajv: the SARIF report validates against the SARIF 2.1.0 schema" $?
	"$KOPOLICY" check -f sarif "${kern[@]}" "$fx/kp_plain.ko" > clean.sarif
	ajv clean.sarif
	ok "ajv: a report without findings validates too" $?
	printf 'gpl-proprietary-mix\n' > w
	"$KOPOLICY" check -f sarif --waivers w "${kern[@]}" mods > waived.sarif 2>/dev/null
	ajv waived.sarif && grep -q '"suppressions"' waived.sarif
	ok "ajv: a report with suppressions (waivers) validates" $?
	# --compare and unreadable inputs in SARIF (issue 26): still a valid SARIF file
	printf 'not a module' > bad.ko
	mkdir -p emptydir
	"$KOPOLICY" check -f sarif --compare 2020,2023 "${kern[@]}" "$fx/kp_symget.ko" \
		"$fx/kp_gpl_prov.ko" "$fx/kp_prop_prov.ko" bad.ko emptydir > cmp.sarif 2>/dev/null
	[ $? -eq 2 ] && ajv cmp.sarif
	ok "ajv: check --compare -f sarif with unreadable inputs validates (exit 2)" $?
	python3 - cmp.sarif <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
res = run["results"]
inv = run["invocations"][0]
notes = inv["toolExecutionNotifications"]
paths = sorted(n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for n in notes)
assert [r["ruleId"] for r in res] == ["rule-set-change"] * 3, res
assert {r["level"] for r in res} == {"warning"}
assert "symbol_get(kp_prop_plain) ok -> NULL (rules 2020 -> 2023)" in res[1]["message"]["text"]
assert inv["executionSuccessful"] is False
assert paths == ["bad.ko", "emptydir"], paths
assert all(n["level"] == "error" for n in notes)
PY
	ok "SARIF --compare: one rule-set-change per difference, unreadable inputs as notifications" $?
	# the validator is real: a broken report is refused
	sed 's/"level":"error"/"level":"fatal"/' r.sarif > broken.sarif
	! ajv broken.sarif
	ok "ajv refuses a report with an invalid level (the check is real)" $?
else
	echo "# SKIP SARIF schema validation: no node, ajv-draft-04 or schema in $npmdir (npm)"
fi

"$KOPOLICY" check -f junit "${kern[@]}" mods "$tmp/outside/kp_plain_prop.ko" > r.xml
if command -v xmllint >/dev/null; then
	xmllint --noout r.xml 2> xmllint.err
	ok "xmllint: the JUnit report is well-formed XML 1.0" $?
else
	echo "# SKIP xmllint (libxml2-utils) is not installed"
fi
python3 - r.xml "$tmp/outside" <<'PY' > junit.out
import re, sys, xml.etree.ElementTree as E
raw = open(sys.argv[1], "rb").read()
def check(name, cond): print(("ok" if cond else "FAIL") + " " + name)
check("no control character other than tab/newline in the bytes",
      not re.search(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", raw))
check("non-ASCII kept as UTF-8", "ü%#".encode() in raw)
s = E.fromstring(raw).find("testsuite")
cases = s.findall("testcase")
check("testsuite has tests, failures, errors, skipped and time",
      all(s.get(a) is not None for a in ("tests", "failures", "errors", "skipped", "time")) and
      int(s.get("tests")) == len(cases) == 5)
check("failures counts the failing test cases",
      int(s.get("failures")) == sum(1 for c in cases if c.find("failure") is not None))
plain = [c for c in cases if c.get("name") in ("kp_plain.ko", "kp_plain_prop.ko")]
check("same-named modules (kp_plain) stay distinct: classname is the directory",
      len({(c.get("classname"), c.get("name")) for c in plain}) == 2 and
      {c.get("classname") for c in plain} == {"mods/other", sys.argv[2]})
check("the control character in a file name is escaped", any("ctl\\x01name.ko" == c.get("name") for c in cases))
check("every testcase has time", all(c.get("time") is not None for c in cases))
PY
while read -r st name; do ok "JUnit: $name" "$([ "$st" = ok ] && echo 0 ||
	echo 1)"; done < junit.out
printf 'gpl-proprietary-mix\nunknown-symbol\ndependency-failed\nlicense-taint\n' > w2
"$KOPOLICY" check -f junit --fail-on note --waivers w2 "${kern[@]}" "$fx/kp_prop_prov.ko" \
	"$fx/kp_gplonly_then_prop.ko" > waived.xml 2>/dev/null
python3 -c "
import sys, xml.etree.ElementTree as E
s = E.parse(sys.argv[1]).getroot().find('testsuite')
sys.exit(0 if s.get('skipped') == '2' and s.get('failures') == '0' and len(s.findall('testcase/skipped')) == 2 else 1)" waived.xml
ok "JUnit: modules whose findings are all waived are skipped, not failed" $?

# --compare and unreadable inputs in JUnit and JSON (issue 26)
printf 'not a module' > bad2.ko
mkdir -p emptydir2
"$KOPOLICY" check -f junit --compare 2020,2023 "${kern[@]}" "$fx/kp_symget.ko" \
	"$fx/kp_gpl_prov.ko" "$fx/kp_prop_prov.ko" bad2.ko emptydir2 > cmp.xml 2>/dev/null
st=$?
python3 - cmp.xml <<'PY'
import sys, xml.etree.ElementTree as E
s = E.parse(sys.argv[1]).getroot().find("testsuite")
cases = s.findall("testcase")
assert s.get("name").startswith("kopolicy rules 2020 to 2023"), s.get("name")
assert (s.get("tests"), s.get("failures"), s.get("errors")) == ("5", "1", "2"), s.attrib
f = [c for c in cases if c.find("failure") is not None]
assert [c.get("name") for c in f] == ["kp_symget.ko"]
assert f[0].find("failure").get("type") == "rule-set-change"
assert f[0].find("failure").text.count("\n") == 3
e = {c.get("name"): c.find("error").get("message") for c in cases if c.find("error") is not None}
assert e == {"bad2.ko": "not an ELF file",
             "emptydir2": "no kernel modules (*.ko, *.ko.xz, *.ko.zst, *.ko.gz) in this directory"}, e
PY
[ $? -eq 0 ] && [ $st -eq 2 ]
ok "JUnit --compare: a failure per changed module, an error per unreadable input (exit 2)" $?
"$KOPOLICY" check -f json "${kern[@]}" "$fx/kp_plain.ko" bad2.ko emptydir2 > errs.json 2>/dev/null
st=$?
"$KOPOLICY" check -f json --compare 2020,2023 "${kern[@]}" "$fx/kp_symget.ko" \
	"$fx/kp_gpl_prov.ko" "$fx/kp_prop_prov.ko" > cmp.json 2>/dev/null
st2=$?
python3 - errs.json cmp.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert [e["path"] for e in d["errors"]] == ["emptydir2", "bad2.ko"], d["errors"]
c = json.load(open(sys.argv[2]))
assert c["compare"]["from"] == "2020" and c["compare"]["to"] == "2023"
assert [(x["name"], x["kind"], x["symbol"], x["from"], x["to"]) for x in c["changes"]] == [
    ("kp_symget", "symbol_get", "kp_gpl_prov_plain", "ok", "NULL"),
    ("kp_symget", "symbol_get", "kp_prop_plain", "ok", "NULL"),
    ("kp_symget", "symbol_get", "msleep", "ok", "NULL")], c["changes"]
assert c["errors"] == []
PY
[ $? -eq 0 ] && [ $st -eq 2 ] && [ $st2 -eq 1 ]
ok "JSON: an empty directory operand is an error; --compare -f json is JSON" $?

# the plain shell CI step, as the GitHub/GitLab examples run it
mkdir -p hdr
zcat "$fx/Module.symvers.gz" > hdr/Module.symvers
zcat "$fx/config.gz" > hdr/.config
mkdir -p hdr/include/generated
printf '#define UTS_RELEASE "%s"\n' "$rel" > hdr/include/generated/utsrelease.h
KOPOLICY_REPORT_DIR=reports sh "$srcdir/contrib/ci/kopolicy-ci.sh" mods/other hdr > ci.log 2>&1
[ $? -eq 1 ]
ok "kopolicy-ci.sh exits 1 on kp_gplonly_then_prop's error" $?
[ -s reports/kopolicy.sarif ] && [ -s reports/kopolicy-junit.xml ] && [ -s reports/kopolicy.txt ]
ok "kopolicy-ci.sh writes the SARIF, JUnit and text reports" $?
grep -q "kernel $rel" ci.log
ok "kopolicy-ci.sh checks against the headers' release" $?
KOPOLICY_REPORT_DIR=reports2 sh "$srcdir/contrib/ci/kopolicy-ci.sh" "mods/a dir" hdr > ci2.log 2>&1
st=$?
[ $st -eq 0 ]
ok "kopolicy-ci.sh exits 0 with only a proprietary module (notes)" $?
finish
