#!/usr/bin/env bash
# A Module.symvers owner is a kbuild module path; its module is KBUILD_MODNAME, kbuild's
# name-fix of the path's basename: '-' and ',' both become '_' (scripts/Makefile.lib
# name-fix-token; Debian sid 7.2 riscv64's drivers/firmware/thead,th1520-aon is the module
# thead_th1520_aon). The module checked against its own Module.symvers line must not be told
# apart from it (a "duplicate-export" ENOEXEC); another owner must.
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.1

# run OWNER: kp_gpl_prov.ko checked against the fixture kernel's Module.symvers plus its
# export kp_gpl_prov_plain under OWNER; prints the exit status, the report in $tmp/out
run() {
	gzip -dc "$fx/Module.symvers.gz" > "$tmp/Module.symvers"
	printf '0x4939de36\tkp_gpl_prov_plain\t%s\tEXPORT_SYMBOL\t\n' "$1" >> "$tmp/Module.symvers"
	"$kp" check -k "$tmp/Module.symvers" --kernel-config "$fx/config.gz" \
		--kernel-release "$rel" \
		--color never "$fx/kp_gpl_prov.ko" > "$tmp/out" 2>&1
	echo $?
}

st=$(run drivers/misc/kp,gpl-prov)
ok "owner kp,gpl-prov is the module kp_gpl_prov: loads, exit 0 (got $st)" "$((st != 0))"
! grep -q duplicate-export "$tmp/out"
ok "... no duplicate-export finding" $?

st=$(run drivers/misc/kp-gpl-prov)
ok "owner kp-gpl-prov is the module kp_gpl_prov: exit 0 (got $st)" "$((st != 0))"

st=$(run drivers/misc/kp,other)
ok "owner kp,other is another module: exit 1 (got $st)" "$((st != 1))"
grep -q "kp_gpl_prov: E: duplicate-export: exports kp_gpl_prov_plain, already exported by kp_other" \
	"$tmp/out"
ok "... duplicate-export, the owner named kp_other as the kernel names it" $?

tap_done
