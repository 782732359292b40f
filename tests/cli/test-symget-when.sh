#!/usr/bin/env bash
# Issue 26: when symbol_get() calls run (the call graph from init: at load, or when called
# through a pointer, with the kernel's line printed then) in info, check (text, JSON, SARIF)
# and explain; and check's MODULE operands resolved by name as modprobe resolves them.
set -uo pipefail
top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.12
kern=(-k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release "$rel")
py() { python3 - "$@"; }

# --- the call graph: info ----------------------------------------------------------------------
# kp_symget_lazy: ktime_get and kp_gpl_prov_gplonly from init -> kp_lazy_setup ->
# kp_lazy_probe_clock; msleep only from a module_param_cb set callback (a pointer)
"$kp" info --json "$fx/kp_symget_lazy.ko" > "$tmp/i.json"
py "$tmp/i.json" <<'PY'
import json, sys
g = {e["symbol"]: e for e in json.load(open(sys.argv[1]))["modules"][0]["symbol_get"]}
assert set(g) == {"msleep", "ktime_get", "kp_gpl_prov_gplonly"}, g
assert (g["msleep"]["when"], g["msleep"]["path"], g["msleep"]["function"]) == \
    ("called", None, "kp_lazy_trigger"), g["msleep"]
chain = ["kp_symget_lazy_init", "kp_lazy_setup", "kp_lazy_probe_clock"]
for s in ("ktime_get", "kp_gpl_prov_gplonly"):
    assert (g[s]["when"], g[s]["path"]) == ("load", chain), g[s]
PY
ok "info --json: when each call runs, with the direct calls from init" $?
"$kp" info "$fx/kp_symget_lazy.ko" > "$tmp/i.txt"
grep -qx "    msleep  at .text+0x1c in kp_lazy_trigger \[exact\], runs when called (from kp_lazy_trigger, not reached from init by direct calls)" "$tmp/i.txt" &&
	grep -qx "    ktime_get  at .text+0xcc in kp_lazy_probe_clock \[exact\], runs at load (kp_symget_lazy_init -> kp_lazy_setup -> kp_lazy_probe_clock)" "$tmp/i.txt"
ok "info: the same in text" $?
# every call of kp_symget runs in its init (.init.text); the other architectures' back ends
"$kp" info --json "$fx/kp_symget.ko" \
	"$top"/fixtures/ko/{6.12-arm64,6.1-i386,6.1-s390x}/kp_symget_multi.ko \
	> "$tmp/i2.json"
py "$tmp/i2.json" <<'PY'
import json, sys
ms = json.load(open(sys.argv[1]))["modules"]
assert len(ms) == 4
for m in ms:
    for e in m["symbol_get"]:
        assert e["when"] == "load", (m["path"], e)
        assert e["path"] and e["path"][0] == m["name"] + "_init", (m["path"], e)
multi = {e["symbol"]: e["path"] for e in ms[1]["symbol_get"]}
assert multi["msleep"] == ["kp_symget_multi_init", "kp_inlined_b"], multi
PY
ok "info --json: at load on x86_64, arm64, i386 and s390x (through called helpers)" $?

# without init_module (the symbol renamed; .strtab holds it as the tail of __pfx_init_module):
# nothing is reached from init; a site in .init.text still runs at load (the loader frees
# .init.text after init), with no path
for m in kp_symget kp_symget_lazy; do
	python3 - "$fx/$m.ko" "$tmp/$m-noinit.ko" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
assert b.count(b"init_module\0") == 1
open(sys.argv[2], "wb").write(b.replace(b"init_module\0", b"init_modulx\0"))
PY
done
"$kp" info --json "$tmp/kp_symget-noinit.ko" "$tmp/kp_symget_lazy-noinit.ko" > "$tmp/i3.json"
py "$tmp/i3.json" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1]))["modules"]
assert a["symbol_get"] and all((e["when"], e["path"]) == ("load", None) for e in a["symbol_get"]), a
assert all(e["when"] == "called" for e in b["symbol_get"]), b["symbol_get"]
PY
ok "info --json: no init_module: .init.text sites at load without a path, the others when called" $?

# --- check: the line at load only for calls that run at load ----------------------------------
set=("$fx/kp_gpl_prov.ko" "$fx/kp_symget_lazy.ko")
"$kp" check -v "${kern[@]}" "${set[@]}" > "$tmp/c.txt"
st=$?
sed -n '/^kp_symget_lazy: loads/,/^$/p' "$tmp/c.txt" > "$tmp/c-mod.txt"
[ $st -eq 0 ] && [ "$(cat "$tmp/c-mod.txt")" = "kp_symget_lazy: loads, taint OE
    when called (not at load):
      dmesg: failing symbol_get of non-GPLONLY symbol msleep.  (from kp_lazy_trigger)" ]
ok "check -v: msleep's line under 'when called', not among the load's dmesg lines" $?
grep -q "symbol-get-non-gpl: symbol_get(msleep) returns NULL: vmlinux exports it with EXPORT_SYMBOL, not EXPORT_SYMBOL_GPL (2023 rule); the kernel logs \"failing symbol_get of non-GPLONLY symbol msleep.\" when called (from kp_lazy_trigger, not reached from init by direct calls)$" "$tmp/c.txt"
ok "check: the finding says when the call runs" $?
"$kp" check -f json "${kern[@]}" "${set[@]}" > "$tmp/c.json"
py "$tmp/c.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["modules"][1]
assert m["name"] == "kp_symget_lazy"
assert not any("symbol_get" in x for x in m["messages"]), m["messages"]
g = {e["symbol"]: e for e in m["symbol_get"]}
assert (g["msleep"]["result"], g["msleep"]["when"], g["msleep"]["function"], g["msleep"]["dmesg"]) \
    == ("null", "called", "kp_lazy_trigger", "failing symbol_get of non-GPLONLY symbol msleep."), g
assert (g["ktime_get"]["result"], g["ktime_get"]["when"], g["ktime_get"]["dmesg"]) == ("ok", "load", None)
assert g["kp_gpl_prov_gplonly"]["path"] == ["kp_symget_lazy_init", "kp_lazy_setup",
                                            "kp_lazy_probe_clock"]
PY
ok "check -f json: no load message; when, path, function and the line when called" $?
# kp_symget: its calls run in init: the lines stay among the load's messages
"$kp" check -f json "${kern[@]}" "$fx/kp_gpl_prov.ko" "$fx/kp_prop_prov.ko" "$fx/kp_symget.ko" \
	> "$tmp/c2.json"
py "$tmp/c2.json" <<'PY'
import json, sys
m = [x for x in json.load(open(sys.argv[1]))["modules"] if x["name"] == "kp_symget"][0]
lines = [x for x in m["messages"] if "failing symbol_get" in x]
assert lines == ["failing symbol_get of non-GPLONLY symbol %s." % s
                 for s in ("kp_gpl_prov_plain", "kp_prop_plain", "msleep")], lines
assert all(e["when"] == "load" and e["path"] == ["kp_symget_init"] for e in m["symbol_get"])
PY
ok "check -f json: calls made by init keep their lines at load" $?
"$kp" check -f sarif "${kern[@]}" "${set[@]}" > "$tmp/c.sarif"
py "$tmp/c.sarif" <<'PY'
import json, sys
r = [x for x in json.load(open(sys.argv[1]))["runs"][0]["results"]
     if x["ruleId"] == "symbol-get-non-gpl"]
assert len(r) == 1
p = r[0]["properties"]
assert (p["symbolGetWhen"], p["symbolGetPath"], p["symbolGetFunction"]) == \
    ("called", None, "kp_lazy_trigger"), p
assert "when called (from kp_lazy_trigger" in r[0]["message"]["text"]
PY
ok "check -f sarif: symbolGetWhen/Path/Function and the message" $?
"$kp" explain "${kern[@]}" kp_symget_lazy "${set[@]}" > "$tmp/x.txt"
grep -qx "  symbol_get(msleep) = NULL: not an EXPORT_SYMBOL_GPL export, owner vmlinux; runs when called (from kp_lazy_trigger, not reached from init by direct calls)" "$tmp/x.txt" &&
	grep -qx "  symbol_get(ktime_get) = ok: EXPORT_SYMBOL_GPL export, owner vmlinux; runs at load (kp_symget_lazy_init -> kp_lazy_setup -> kp_lazy_probe_clock)" "$tmp/x.txt" &&
	grep -qx "  when called (not at load):" "$tmp/x.txt" &&
		! grep -q "^  dmesg: failing" "$tmp/x.txt"
ok "explain: which function and path, the line under 'when called'" $?
"$kp" explain --json "${kern[@]}" kp_symget_lazy "${set[@]}" > "$tmp/x.json"
py "$tmp/x.json" <<'PY'
import json, sys
g = {e["symbol"]: e for e in json.load(open(sys.argv[1]))["module"]["symbol_get"]}
assert g["msleep"]["when"] == "called" and g["ktime_get"]["when"] == "load", g
PY
ok "explain --json: when" $?

# the facts cache keeps when and path: a check reading the facts a first check stored (other
# arguments: no result-cache hit) says what a check without the cache says
cache=(env -u KOPOLICY_CACHE KOPOLICY_CACHE_DIR="$tmp/cache")
"${cache[@]}" "$kp" check --fail-on never "${kern[@]}" "${set[@]}" > /dev/null &&
	"${cache[@]}" KOPOLICY_CACHE_STATS=1 "$kp" check -f json "${kern[@]}" "${set[@]}" \
		> "$tmp/cc.json" 2> "$tmp/cc.err" &&
	grep -q "^kopolicy: cache: 2 hits" "$tmp/cc.err" &&
	"$kp" check --no-cache -f json "${kern[@]}" "${set[@]}" > "$tmp/cn.json" &&
	cmp -s "$tmp/cc.json" "$tmp/cn.json"
ok "facts cache: when, path and function read back as analysed" $?

# --- check MODULE: names resolved as modprobe resolves them -----------------------------------
root=$tmp/root
md=$root/lib/modules/$rel
mkdir -p "$md/updates/dkms" "$md/kernel/fs/ext4" "$root/etc/modprobe.d" "$root/boot" "$md/build"
cp "$fx/kp_gpl_prov.ko" "$md/updates/dkms/"
cp "$fx/kp_symget_lazy.ko" "$md/updates/dkms/kp-symget-lazy.ko"
cp "$fx/kp_prop_prov.ko" "$md/updates/dkms/"
gzip -dc "$fx/Module.symvers.gz" > "$md/build/Module.symvers"
gzip -dc "$fx/config.gz" > "$root/boot/config-$rel"
echo "kernel/fs/ext4/ext4.ko" > "$md/modules.builtin"
printf 'alias lazy-dev kp_symget_lazy\nalias prop-dev kp_prop_prov\nblacklist kp_prop_prov\n' \
	> "$root/etc/modprobe.d/vendor.conf"
depmod -b "$root" "$rel" 2>/dev/null
b=(-b "$root" --kernel-release "$rel")
"$kp" check -f json "${b[@]}" kp-symget-lazy kp_gpl_prov > "$tmp/n1.json" 2> "$tmp/n1.err"
st=$?
[ $st -eq 0 ] && [ ! -s "$tmp/n1.err" ] && py "$tmp/n1.json" "$md" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert [(m["name"], m["path"]) for m in d["modules"]] == [
    ("kp_symget_lazy", sys.argv[2] + "/updates/dkms/kp-symget-lazy.ko"),
    ("kp_gpl_prov", sys.argv[2] + "/updates/dkms/kp_gpl_prov.ko")], d["modules"]
PY
ok "check -b ROOT NAME...: module names ('-' and '_' alike) are the tree's files" $?
"$kp" check -f json "${b[@]}" lazy-dev > "$tmp/n2.json" 2> "$tmp/n2.err"
[ $? -eq 0 ] && json_name=$(python3 -c \
	"import json,sys; print(' '.join(m['name'] for m in json.load(open(sys.argv[1]))['modules']))" "$tmp/n2.json") &&
	[ "$json_name" = kp_symget_lazy ]
ok "check -b ROOT: a modprobe.d alias is resolved to its module" $?
"$kp" check -f json "${b[@]}" nosuch kp_gpl_prov > "$tmp/n3.json" 2> "$tmp/n3.err"
st=$?
[ $st -eq 2 ] && [ "$(cat "$tmp/n3.err")" = \
	"kopolicy: nosuch: no such file, and no module of that name in $md (module name, alias or modprobe.d alias, as modprobe resolves it)" ] &&
	py "$tmp/n3.json" <<'PY'
import json, sys
assert [m["name"] for m in json.load(open(sys.argv[1]))["modules"]] == ["kp_gpl_prov"]
PY
ok "check -b ROOT: an unknown name is an input error (exit 2), the others still checked" $?
"$kp" check "${b[@]}" nosuch > /dev/null 2> "$tmp/n4.err"
[ $? -eq 2 ] && grep -qx \
	"kopolicy: no module to check: the name matched no file and no module" "$tmp/n4.err"
ok "check -b ROOT: only unknown names: exit 2, not the whole tree" $?
"$kp" check "${b[@]}" ext4 kp_gpl_prov > /dev/null 2> "$tmp/n5.err"
[ $? -eq 2 ] && grep -qx \
	"kopolicy: ext4: built into the kernel (modules.builtin): no module file to check" \
	"$tmp/n5.err"
ok "check -b ROOT: a built-in module is said" $?
"$kp" check "${b[@]}" prop-dev > /dev/null 2> "$tmp/n6.err"
[ $? -eq 2 ] && grep -qx \
	"kopolicy: prop-dev: modprobe resolves it to no module file (every target blacklisted)" \
	"$tmp/n6.err"
ok "check -b ROOT: an alias whose targets are all blacklisted resolves to nothing" $?
# a file that exists stays a path, even with a module's name
mkdir -p "$tmp/cwd" && echo "not a module" > "$tmp/cwd/kp_gpl_prov"
kpabs=$(cd "$(dirname "$kp")" && pwd)/$(basename "$kp")
(cd "$tmp/cwd" && "$kpabs" check "${b[@]}" kp_gpl_prov > /dev/null 2> "$tmp/n7.err")
[ $? -eq 2 ] && grep -q "^kopolicy: kp_gpl_prov: " "$tmp/n7.err" &&
	! grep -q "no such file" "$tmp/n7.err"
ok "check -b ROOT: an existing file named like a module stays a path" $?
# without a modules tree a name is a path: the usual error
"$kp" check "${kern[@]}" kp_gpl_prov > /dev/null 2> "$tmp/n8.err"
[ $? -eq 2 ] && grep -q "^kopolicy: kp_gpl_prov: " "$tmp/n8.err"
ok "check --kernel FILE NAME: no tree, a name stays a path" $?

tap_done
