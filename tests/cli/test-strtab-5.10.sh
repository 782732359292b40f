#!/usr/bin/env bash
# The 5.10 symbol-name fixtures (fixtures/ko/5.10/strtab/, tests/oracle/strtab-modules.py from
# the committed kp_plain.ko): what the 5.10.0-46-amd64 loader (5.10.262) does with them, from
# its boots (tests/oracle/observed/5.10/strtab_page.json, strtab_sig.json; oracle-replay.sh
# compares those too). These checks are the finer ones: findings, texts, exit status.
#
# kp_strtab_page.ko: msleep's name "kp_name_page" is the last 12 bytes of an 8192-byte file:
# simplify_symbols()'s "Unknown symbol" printk reads it on into the guard page. 6.1 oopses
# and kills the loader (test-fixtures-6.1.sh); 5.10 formats that printk holding logbuf_lock
# with interrupts off, the oops leaves the lock held and the guest hangs (the recorded boot:
# the two taint lines, then nothing; with oops=panic the oops in string() under printk()).
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 5.10
st=$fx/strtab

. "$top/tests/lib/fixture-check.sh"

[ "$rel" = 5.10.0-46-amd64 ]
ok "the 5.10 fixtures are for 5.10.0-46-amd64" $?

check "$tmp/page.json" "$st/kp_strtab_page.ko"
verdict "$tmp/page.json" kp_plain \
	"not m['loads'] and m['oops'] and m['hang'] and m['errno'] is None and m['errno_value'] == 0 and ids == ['bad-symbol-strtab', 'kernel-hang'] and m['findings'][1]['severity'] == 'error' and m['findings'][1]['consequence'] == 'load-fail' and m['findings'][1]['symbol'] == 'kp_name_page' and 'logbuf_lock' in m['findings'][1]['message'] and m['messages'] == o and m['global_taint_added'] == 'DOE'"
ok "5.10 kp_strtab_page: oops and hang, kernel-hang (error), only the taint lines logged, D" $?
"$kp" check -k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release "$rel" \
	"$st/kp_strtab_page.ko" > "$tmp/page.txt" 2>&1
[ $? -eq 1 ] && grep -q \
	"^  kp_plain: E: kernel-hang: the name of undefined symbol 32 (kp_name_page...) runs to the end of the file, which fills its last page" "$tmp/page.txt" &&
	! grep -q "kernel-oops" "$tmp/page.txt"
ok "5.10 kp_strtab_page: text output names the symbol, no kernel-oops, exit status 1" $?
"$kp" check -v -k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release "$rel" \
	"$st/kp_strtab_page.ko" > "$tmp/page-v.txt" 2>&1
grep -q "kp_plain: the kernel oopses holding printk's lock and the machine hangs (taint D), taint OE" "$tmp/page-v.txt"
ok "5.10 kp_strtab_page: -v's load order says the machine hangs" $?
"$kp" explain -k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release "$rel" \
	kp_plain "$st/kp_strtab_page.ko" > "$tmp/page-explain.txt" 2>&1
grep -A1 "^  - kernel-hang: the name of undefined symbol 32" "$tmp/page-explain.txt" |
	grep "^    fix: rebuild the module with kbuild against 5.10.0-46-amd64's headers" >/dev/null
ok "5.10 kp_strtab_page: explain gives kernel-hang a fix (rebuild with kbuild)" $?
# the same binary judged as 5.13 (no logbuf_lock): the 6.1 oops, the fault line, no hang
check "$tmp/page13.json" --kernel-version 5.13.0 "$st/kp_strtab_page.ko"
verdict "$tmp/page13.json" kp_plain \
	"not m['loads'] and m['oops'] and not m['hang'] and 'kernel-oops' in ids and 'kernel-hang' not in ids and m['messages'][-1] == 'BUG: unable to handle page fault for address: (past the module image)'"
ok "5.13 on kp_strtab_page: an oops without the hang" $?
# kp_strtab_defpage.ko: kp_plain_exit (.exit.text, kallsyms keeps it) named to the page end:
# layout_symtab()'s strlen() oopses in layout_and_allocate(), after check_modinfo()'s O and
# before the E taint (strtab_defpage on 5.10.262: the O notice, the fault, global O + D)
check "$tmp/defpage.json" "$st/kp_strtab_defpage.ko"
verdict "$tmp/defpage.json" kp_plain \
	"not m['loads'] and m['oops'] and not m['hang'] and ids == ['bad-symbol-strtab', 'kernel-oops'] and 'layout_symtab()' in m['findings'][1]['message'] and m['findings'][1]['symbol'] is None and m['messages'] == o[:1] + ['BUG: unable to handle page fault for address: (past the module image)'] and m['global_taint_added'] == 'DO'"
ok "5.10 kp_strtab_defpage: layout_symtab() oopses after O, before E (kernel-oops, D)" $?
# kp_strtab_gap.ko: msleep's name starts 16 bytes past the file, in its zeroed last page: ""
check "$tmp/gap.json" "$st/kp_strtab_gap.ko"
verdict "$tmp/gap.json" kp_plain \
	"not m['loads'] and m['errno'] == 'ENOENT' and not m['oops'] and m['messages'] == o + ['kp_plain: Unknown symbol  (err -2)']"
ok "5.10 kp_strtab_gap: the empty name, Unknown symbol (err -2), ENOENT" $?
# kp_strtab_sig.ko: "msl" ends the ELF image, the trailer (id_type 0) begins "eep\0": msleep
check "$tmp/sig.json" "$st/kp_strtab_sig.ko"
verdict "$tmp/sig.json" kp_plain \
	"m['loads'] and not m['oops'] and not m['hang'] and m['taint'] == 'OE' and 'kernel-oops' not in ids and 'unknown-symbol' not in ids and m['messages'] == ['module: not signed with expected PKCS#7 message'] + o"
ok "5.10 kp_strtab_sig: the name runs on into the signature trailer: msleep, loads OE" $?

tap_done
