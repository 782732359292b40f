#!/usr/bin/env bash
# The kernel's page size decides where a read past a module lands (lib/sim/rules/oob-read.c):
# the rest of the loader's page-rounded vmalloc() copy (leftover bytes, zeroed) or the guard
# page after it (an oops). It comes from the kernel config (CONFIG_PAGE_SHIFT since v6.9, the
# architecture's PAGE_SIZE_*/ARM64_*_PAGES/PPC_*_PAGES before), else from a Debian release's
# flavour (-16k, -64k). The 6.1 strtab fixtures (fixtures/ko/6.1/strtab/) are near a 4 KiB
# boundary: the 6.1.0-57-amd64 oracle oopses on kp_strtab_page/defpage/guard (4 KiB pages);
# the same files are inside one 16 or 64 KiB page. The 16 and 64 KiB configs below are the
# 6.1 fixture config with CONFIG_PAGE_SHIFT=14 or 16 appended (no x86 kernel has them: only
# the page size the config states is exercised, the lines are the ones arm64-16k-7.2 and
# ppc64el-64k-7.2's configs carry).
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.1
st=$fx/strtab

. "$top/tests/lib/fixture-check.sh"

gzip -dc "$fx/config.gz" > "$tmp/config-4k"
{ cat "$tmp/config-4k"; echo CONFIG_PAGE_SHIFT=14; } > "$tmp/config-16k"
{ cat "$tmp/config-4k"; echo CONFIG_PAGE_SHIFT=16; } > "$tmp/config-64k"

# check_cfg OUT CONFIG MODULE...: check in JSON with that config
check_cfg() {
	local out=$1 cfg=$2
	shift 2
	"$kp" check -f json --fail-on never -k "$fx/Module.symvers.gz" --kernel-config "$cfg" \
		--kernel-release "$rel" "$@" > "$out" 2> "$out.err"
}

# 4 KiB (the real 6.1 config): the oracle's oopses
for m in page defpage guard; do
	check_cfg "$tmp/$m-4k.json" "$tmp/config-4k" "$st/kp_strtab_$m.ko"
	verdict "$tmp/$m-4k.json" kp_plain "not m['loads'] and m['oops'] and 'kernel-oops' in ids"
	ok "4 KiB pages: kp_strtab_$m oopses (kernel-oops)" $?
done

for sz in 16k 64k; do
	# kp_strtab_page (8192 bytes): kp_name_page ends in the zeroed rest of the page
	check_cfg "$tmp/page-$sz.json" "$tmp/config-$sz" "$st/kp_strtab_page.ko"
	verdict "$tmp/page-$sz.json" kp_plain \
		"not m['loads'] and not m['oops'] and m['errno'] == 'ENOENT' and ids == ['bad-symbol-strtab', 'unknown-symbol'] and 'into the rest of the last page' in m['findings'][0]['message'] and m['findings'][1]['symbol'] == 'kp_name_page'"
	ok "$sz pages: kp_strtab_page: leftover bytes, no oops: Unknown symbol kp_name_page, ENOENT" $?
	# kp_strtab_defpage (8192 bytes): the kept name ends there too: it loads
	check_cfg "$tmp/defpage-$sz.json" "$tmp/config-$sz" "$st/kp_strtab_defpage.ko"
	verdict "$tmp/defpage-$sz.json" kp_plain \
		"m['loads'] and not m['oops'] and m['taint'] == 'OE' and ids == ['bad-symbol-strtab']"
	ok "$sz pages: kp_strtab_defpage: no oops in layout_symtab(), loads OE" $?
	# kp_strtab_guard (5128 bytes, a name starting at byte 8208): an empty name, ENOENT
	check_cfg "$tmp/guard-$sz.json" "$tmp/config-$sz" "$st/kp_strtab_guard.ko"
	verdict "$tmp/guard-$sz.json" kp_plain \
		"not m['loads'] and not m['oops'] and m['errno'] == 'ENOENT' and 'kernel-oops' not in ids and m['messages'][-1] == 'kp_plain: Unknown symbol  (err -2)'"
	ok "$sz pages: kp_strtab_guard: the name starts in the zeroed page: empty, ENOENT" $?
done

# no config: a Debian release's -16k flavour says 16 KiB; the plain -arm64 one does not, and
# an x86 module's page is 4 KiB whatever the flavour (x86 has no other)
"$kp" check -f json --fail-on never -k "$fx/Module.symvers.gz" \
	--kernel-release 6.12.117+deb13-arm64-16k "$st/kp_strtab_page.ko" > "$tmp/rel16.json" 2>&1
verdict "$tmp/rel16.json" kp_plain "not m['oops'] and m['errno'] == 'ENOENT'"
ok "no config, release -arm64-16k: 16 KiB pages, no oops" $?
"$kp" check -f json --fail-on never -k "$fx/Module.symvers.gz" \
	--kernel-release 6.12.117+deb13-arm64 "$st/kp_strtab_page.ko" > "$tmp/rel4.json" 2>&1
verdict "$tmp/rel4.json" kp_plain "m['oops'] and 'kernel-oops' in ids"
ok "no config, release -arm64, an x86 module: 4 KiB, the oops" $?

# text output: the finding names the leftover bytes, exit status 1 (a load fails)
"$kp" check -k "$fx/Module.symvers.gz" --kernel-config "$tmp/config-64k" --kernel-release "$rel" \
	"$st/kp_strtab_page.ko" > "$tmp/page-64k.txt" 2>&1
[ $? -eq 1 ] && grep -q \
	"^  kp_plain: E: unknown-symbol: kp_name_page is not exported" "$tmp/page-64k.txt" &&
	! grep -q "kernel-oops" "$tmp/page-64k.txt"
ok "64k pages, text: unknown-symbol kp_name_page, no kernel-oops, exit status 1" $?

tap_done
