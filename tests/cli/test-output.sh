#!/usr/bin/env bash
# Human output (issue 16): the text report grouped by outcome, paths when module names
# collide, DOT keyed by file with P-inherited nodes coloured and a legend, colour rules
# (NO_COLOR, TERM=dumb), option errors, and a directory without modules.
set -uo pipefail
top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.1
kern=(-k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release "$rel")

# --- text report grouped by outcome ---------------------------------------------------------
# kp_prop_then_gplonly inherits P and then fails: all its findings go under "Fails to load"
"$kp" check "${kern[@]}" "$fx/kp_prop_prov.ko" "$fx/kp_prop_then_gplonly.ko" "$fx/kp_use_prop.ko" \
	> "$tmp/t.txt"
awk '/^[A-Z]/{g=$0} /^  kp_prop_then_gplonly:/{print g}' "$tmp/t.txt" | sort -u > "$tmp/groups"
[ "$(cat "$tmp/groups")" = "Fails to load:" ]
ok "a module that fails is listed only under 'Fails to load'" $?
grep -A3 "^Fails to load:" "$tmp/t.txt" | grep "kp_prop_then_gplonly: W: inherit-taint" >/dev/null
ok "... with the P inheritance that causes the failure" $?
awk '/^[A-Z]/{g=$0} /^  kp_use_prop:/{print g}' "$tmp/t.txt" | grep -x "Loads, tainted (P, E):" >/dev/null
ok "a module that loads with inherited P is under 'Loads, tainted'" $?

# --- names that collide: the paths are shown ---------------------------------------------------
"$kp" check -v "${kern[@]}" "$fx/kp_plain.ko" "$fx/kp_plain_prop.ko" > "$tmp/dup.txt"
grep -q "^  kp_plain ($fx/kp_plain_prop.ko): " "$tmp/dup.txt" &&
	grep -q "^kp_plain ($fx/kp_plain.ko): loads" "$tmp/dup.txt" &&
	grep -q "^kp_plain ($fx/kp_plain_prop.ko): fails" "$tmp/dup.txt"
ok "same-named modules are shown with their paths" $?
"$kp" check -v "${kern[@]}" "$fx/kp_plain.ko" > "$tmp/one.txt"
grep -q "^kp_plain: loads" "$tmp/one.txt"
ok "a unique name is shown without its path" $?

# --- DOT ------------------------------------------------------------------------------------
"$kp" graph -f dot "${kern[@]}" "$fx/kp_prop_prov.ko" "$fx/kp_use_prop.ko" "$fx/kp_plain.ko" \
	"$fx/kp_plain_prop.ko" > "$tmp/g.dot"
grep -q "^	\"file:$fx/kp_plain.ko\" \[label=\"kp_plain\\\\n$fx/kp_plain.ko\"" "$tmp/g.dot" &&
	grep -q "^	\"file:$fx/kp_plain_prop.ko\" \[label=\"kp_plain\\\\n$fx/kp_plain_prop.ko" \
		"$tmp/g.dot"
ok "DOT: nodes keyed by file, same-named modules distinct and labelled with their paths" $?
grep -q "^	\"file:$fx/kp_use_prop.ko\" \[label=\"kp_use_prop\\\\nP inherited\", fillcolor=\"#fde2b8\", color=darkorange\]" "$tmp/g.dot"
ok "DOT: the P-inherited module is coloured" $?
grep -q "^	\"file:$fx/kp_prop_prov.ko\" \[label=\"kp_prop_prov\", fillcolor=\"#f4c7c3\", color=red\]" "$tmp/g.dot"
ok "DOT: the proprietary module is red" $?
grep -q "subgraph cluster_legend" "$tmp/g.dot" && grep -q \
	'"legend:inh" \[label="P inherited (2020 rule)"' "$tmp/g.dot"
ok "DOT: a legend in the picture" $?
if command -v dot >/dev/null; then
	dot -Tsvg "$tmp/g.dot" > /dev/null 2>&1
	ok "DOT: Graphviz renders it" $?
fi

# --- colour -------------------------------------------------------------------------------
# script(1) gives kopolicy a terminal; --color auto colours there unless NO_COLOR / TERM=dumb
if command -v script >/dev/null; then
	tty_run() { # ENV... -> output of check on a terminal (exit status 1: findings)
		env "$@" script -qec \
			"$kp check ${kern[*]} $fx/kp_prop_prov.ko $fx/kp_prop_then_gplonly.ko" \
			/dev/null > "$tmp/tty.out" 2>&1
	}
	tty_run TERM=xterm
	grep -q $'\033\\[1;31m' "$tmp/tty.out"
	ok "--color auto on a terminal: coloured" $?
	tty_run TERM=xterm NO_COLOR=1
	! grep -q $'\033\\[' "$tmp/tty.out"
	ok "NO_COLOR=1: no colour" $?
	tty_run TERM=dumb
	! grep -q $'\033\\[' "$tmp/tty.out"
	ok "TERM=dumb: no colour" $?
fi
NO_COLOR=1 "$kp" check --color always "${kern[@]}" "$fx/kp_prop_prov.ko" \
	"$fx/kp_prop_then_gplonly.ko" \
	> "$tmp/always.out"
grep -q $'\033\\[1;31m' "$tmp/always.out"
ok "--color always wins over NO_COLOR" $?

# --- option errors ------------------------------------------------------------------------
"$kp" check --bogus > "$tmp/o.out" 2> "$tmp/o.err"
[ $? -eq 2 ] && [ ! -s "$tmp/o.out" ] &&
	[ "$(cat "$tmp/o.err")" = "kopolicy: check: unrecognized option '--bogus'
Try 'kopolicy check --help' for more information." ]
ok "unknown option: 'kopolicy: check: ...' and 'Try ...', exit 2" $?
"$kp" --bogus 2> "$tmp/o2.err"
[ $? -eq 2 ] && [ "$(cat "$tmp/o2.err")" = "kopolicy: unrecognized option '--bogus'
Try 'kopolicy --help' for more information." ]
ok "unknown global option" $?
"$kp" graph --format 2> "$tmp/o3.err"
[ $? -eq 2 ] && head -n1 "$tmp/o3.err" | grep -qx \
	"kopolicy: graph: option '--format' requires an argument"
ok "missing argument of a long option" $?
"$kp" info -Z 2> "$tmp/o4.err"
[ $? -eq 2 ] && head -n1 "$tmp/o4.err" | grep -qx "kopolicy: info: invalid option -- 'Z'"
ok "unknown short option" $?
"$kp" frob 2> "$tmp/o5.err"
[ $? -eq 2 ] && tail -n1 "$tmp/o5.err" | grep -qx "Try 'kopolicy --help' for more information."
ok "unknown command" $?

# --- a directory with no modules is an error ----------------------------------------------
mkdir "$tmp/empty"
"$kp" check "${kern[@]}" "$tmp/empty" "$fx/kp_plain.ko" > "$tmp/e.txt" 2> "$tmp/e.err"
[ $? -eq 2 ]
ok "check: a directory without modules exits 2" $?
grep -qx "kopolicy: $tmp/empty: no kernel modules (\*.ko, \*.ko.xz, \*.ko.zst, \*.ko.gz) in this directory" "$tmp/e.err"
ok "... with one line naming it" $?
grep -q "^1 module: 0 fail to load" "$tmp/e.txt"
ok "... and the other operands are still checked" $?
"$kp" info "$tmp/empty" > /dev/null 2>&1
ok "info: the same, exit 2" $(( $? == 2 ? 0 : 1 ))
"$kp" graph "${kern[@]}" "$tmp/empty" > /dev/null 2>&1
ok "graph: the same, exit 2" $(( $? == 2 ? 0 : 1 ))

# --- small defects of issue 26 -------------------------------------------------------------
"$kp" chek 2> "$tmp/o6.err"
[ $? -eq 2 ] && sed -n 2p "$tmp/o6.err" | grep -qx "Did you mean 'kopolicy check'?"
ok "a mistyped command: did you mean" $?
"$kp" xyzzy 2> "$tmp/o7.err"
! grep -q "Did you mean" "$tmp/o7.err"
ok "... and no guess for a word far from every command" $?
"$kp" check "${kern[@]}" -o "$tmp/no/such/dir/r.txt" "$fx/kp_plain.ko" 2> "$tmp/o8.err"
[ $? -eq 2 ] && grep -qx \
	"kopolicy: $tmp/no/such/dir/r.txt: cannot write: No such file or directory" \
	"$tmp/o8.err"
ok "-o into a missing directory names the reason" $?
sd=$top/tests/data/sig
fx12=$top/fixtures/ko/6.12
kern12=(-k "$fx12/Module.symvers.gz" --kernel-config "$fx12/config.gz" --kernel-release
	"$(sed -n 's/^release=//p' "$fx12/kernel.txt")")
"$kp" check "${kern12[@]}" --trusted-cert "$sd/test-cert.pem" "$sd/6.12/kp_sig_unknown_key.ko" \
	> "$tmp/e1.txt"
grep -qx "Loads, tainted (E):" "$tmp/e1.txt"
ok "a module tainted only E is under 'Loads, tainted (E)', not '(P, E)'" $?
"$kp" graph -f dot "${kern[@]}" "$fx/kp_prop_prov.ko" "$fx/kp_gplonly_then_prop.ko" > "$tmp/f.dot"
grep -q "^	\"file:$fx/kp_gplonly_then_prop.ko\" \[label=\"kp_gplonly_then_prop\\\\nfails: ENOENT\", color=red, peripheries=2\]" "$tmp/f.dot"
ok "DOT: a failing module is drawn with a double red border, as the legend says" $?
# notes: one line per rule and module with a count; -v lists each
"$kp" check "${kern[@]}" --rules 2020 "$fx/kp_symget.ko" \
	"$fx/kp_gpl_prov.ko" "$fx/kp_prop_prov.ko" \
	> "$tmp/n.txt"
[ "$(grep -c 'latent-breakage' "$tmp/n.txt")" = 1 ] &&
	grep -q "^  kp_symget: I: latent-breakage: symbol_get(kp_gpl_prov_plain) returns NULL under the 2023 rules (and 2 more latent-breakage notes: -v lists them)$" "$tmp/n.txt"
ok "notes of one rule are one line with a count" $?
"$kp" check -v "${kern[@]}" --rules 2020 "$fx/kp_symget.ko" "$fx/kp_gpl_prov.ko" \
	"$fx/kp_prop_prov.ko" > "$tmp/n2.txt"
[ "$(grep -c 'I: latent-breakage' "$tmp/n2.txt")" = 3 ]
ok "... and -v lists each" $?
# --- explain: deciding facts, fixes, JSON, names as modprobe users type them (issue 26) ----
set3=("$fx/kp_prop_prov.ko" "$fx/kp_gplonly_then_prop.ko" "$fx/kp_use_prop.ko")
"$kp" explain "${kern[@]}" kp_use_prop "${set3[@]}" > "$tmp/x1.txt"
grep -qx "  deciding fact: kp_use_prop imports kp_prop_plain from proprietary module kp_prop_prov and so becomes proprietary (P), but it uses no GPL-only symbol: the 2020 rule has nothing to refuse, it loads" "$tmp/x1.txt"
ok "explain: a P-inherited module that loads says why it is safe" $?
"$kp" explain "${kern[@]}" kp_gplonly_then_prop "${set3[@]}" > "$tmp/x2.txt"
grep -q "^  deciding fact: kp_gplonly_then_prop uses GPL-only symbols (ktime_get_mono_fast_ns) and imports kp_prop_plain from proprietary module kp_prop_prov" "$tmp/x2.txt" &&
	grep -qx "    fix: stop importing kp_prop_plain from proprietary module kp_prop_prov (move the code that needs it to the proprietary side, or reach it through an interface the GPL side owns), or give kp_prop_prov a GPL-compatible MODULE_LICENSE() if its authors can" "$tmp/x2.txt"
ok "explain: a 2020-rule failure names the GPL-only symbols and the fix" $?
"$kp" explain --json "${kern[@]}" kp-gplonly-then-prop.ko "${set3[@]}" > "$tmp/x3.json"
python3 - "$tmp/x3.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = d["module"]
assert d["matched_by"] == "file name", d["matched_by"]
assert (m["name"], m["loads"], m["errno"]) == ("kp_gplonly_then_prop", False, "ENOENT")
assert m["gpl_only_symbols"] == ["ktime_get_mono_fast_ns"], m["gpl_only_symbols"]
assert m["imports_from_proprietary"] == [{"symbol": "kp_prop_plain", "provider": "kp_prop_prov"}]
f = [x for x in m["findings"] if x["id"] == "gpl-proprietary-mix"][0]
assert f["fix"].startswith("stop importing kp_prop_plain from proprietary module kp_prop_prov")
PY
ok "explain --json: deciding facts and fixes; a file name is accepted for the module" $?
"$kp" check -f json "${kern[@]}" "${set3[@]}" > "$tmp/x4.json"
json() { python3 -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }
json "$tmp/x4.json" \
	"[f['fix'][:38] for m in d['modules'] for f in m['findings'] if f['id']=='gpl-proprietary-mix']==['stop importing kp_prop_plain from prop']"
ok "check -f json: each finding carries its fix" $?
# -b ROOT: the names modprobe users type, through the tree's own indexes (modprobe.d alias)
root=$tmp/root
md=$root/lib/modules/$rel
mkdir -p "$md/updates/dkms" "$root/etc/modprobe.d" "$root/boot"
cp "$fx/kp_prop_prov.ko" "$md/updates/dkms/"
cp "$fx/kp_use_prop.ko" "$md/updates/dkms/kp-use-prop.ko"
mkdir -p "$md/build" && gzip -dc "$fx/Module.symvers.gz" > "$md/build/Module.symvers"
gzip -dc "$fx/config.gz" > "$root/boot/config-$rel"
echo "alias vendor-uvm kp_use_prop" > "$root/etc/modprobe.d/vendor.conf"
depmod -b "$root" "$rel" 2>/dev/null
"$kp" explain -b "$root" --kernel-release "$rel" vendor-uvm > "$tmp/x5.txt" 2> "$tmp/x5.err"
st=$?
[ $st -eq 0 ] && grep -q "^kp_use_prop (.*kp-use-prop.ko): loads, module taint POE" "$tmp/x5.txt"
ok "explain -b ROOT: a modprobe.d alias is resolved to its module" $?
"$kp" explain -b "$root" --kernel-release "$rel" kp-use-prop > /dev/null 2>&1
ok "explain -b ROOT: '-' and '_' alike" $?
"$kp" explain -b "$root" --kernel-release "$rel" nosuch 2> "$tmp/x6.err"
[ $? -eq 2 ] && grep -q \
	"explain: no module nosuch in $md (by module name, file name or what modprobe resolves it to)" "$tmp/x6.err"
ok "explain -b ROOT: an unknown name names the tree, not 'the files given'" $?
# --- load order: modprobe's (issue 26) ------------------------------------------------------
# named files: `modprobe -a` in the order named; a directory: what a boot asks for (the modules
# nothing else uses), each after its providers, so the per-boot lines go to the first module a
# boot loads (kp_prop_prov), not to the first file in sort order (kp_gpl_prov, used by z)
mkdir -p "$tmp/ord"
cp "$fx/kp_gpl_prov.ko" "$tmp/ord/a.ko"
cp "$fx/kp_use_prop.ko" "$tmp/ord/m.ko"
cp "$fx/kp_prop_prov.ko" "$tmp/ord/n.ko"
cp "$fx/kp_ns_ok.ko" "$tmp/ord/z.ko"
"$kp" check -f json "${kern[@]}" "$tmp/ord" > "$tmp/o1.json"
json "$tmp/o1.json" \
	"[m['name'] for m in d['modules']]==['kp_prop_prov','kp_use_prop','kp_gpl_prov','kp_ns_ok'] and d['modules'][0]['messages'][0]=='kp_prop_prov: loading out-of-tree module taints kernel.'"
ok "a directory loads as a boot would: the modules nothing uses, each after its providers" $?
"$kp" check -f json "${kern[@]}" "$tmp/ord/a.ko" "$tmp/ord/m.ko" "$tmp/ord/n.ko" "$tmp/ord/z.ko" \
	> "$tmp/o2.json"
json "$tmp/o2.json" \
	"[m['name'] for m in d['modules']]==['kp_gpl_prov','kp_prop_prov','kp_use_prop','kp_ns_ok']"
ok "named files load as modprobe -a in the order named" $?
# progress on a terminal only when it understands \r\033[K (script(1) gives a terminal)
if command -v script >/dev/null; then
	TERM=dumb script -qec "$kp --no-cache check ${kern[*]} $fx" /dev/null > "$tmp/p.txt" 2>&1
	! grep -q "reading modules" "$tmp/p.txt"
	ok "TERM=dumb: no progress line" $?
fi

tap_done
