#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# check-built (the back end of every packaging hook) and brp-kopolicy with build roots holding
# the same modules for two kernels: $KREL (installed headers) and a second kernel from the
# prebuilt fixtures of another release (a headers tree made from its Module.symvers and config).
# Each group of modules is checked against its own kernel; providers (--provider,
# KBUILD_EXTRA_SYMBOLS, --installed-providers) are resolved against, not reported.
set -u
. "$(dirname "$0")/lib.sh"
fx1=$(fixture_ko "$KREL") || skip_all "no prebuilt fixtures for $KREL (fixtures/ko/*/kernel.txt)"
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
second_kernel "$tmp/headers2" || skip_all "no prebuilt fixtures of a second kernel"
cb=$KOPOLICY_CHECK_BUILT
brp=$PKGROOT$PKG_LIBEXECDIR/brp-kopolicy
root=$tmp/root
mkdir -p "$root/lib/modules/$KREL/extra" "$root/lib/modules/$K2REL/extra"
for m in kp_gpl_prov kp_ns_ok; do
	cp "$fx1/$m.ko" "$root/lib/modules/$KREL/extra/"
	cp "$K2KO/$m.ko" "$root/lib/modules/$K2REL/extra/"
done
run() { # LOG COMMAND...: status of COMMAND, its output in $tmp/LOG
	local log=$tmp/$1
	shift
	"$@" > "$log" 2>&1
	echo $?
}

# 1. each kernel's modules against that kernel
is "two kernels in one build root: exit 0" "$(run both.log "$cb" --headers "$K2HDR" -- "$root")" 0
grep -q "^kopolicy: checking 2 module(s) against kernel $KREL (/" "$tmp/both.log"
ok "the $KREL modules were checked against $KREL" $?
grep -q "^kopolicy: checking 2 module(s) against kernel $K2REL ($K2HDR)" "$tmp/both.log"
ok "the $K2REL modules were checked against $K2REL (its --headers tree)" $?
! grep -E -q "crc-mismatch|module-layout" "$tmp/both.log"
ok "no false crc-mismatch or module-layout finding" $?

# 2. the control: the second kernel's modules against the first kernel (what checking
#    everything against the first module's kernel did)
is "control: $K2REL's modules checked as $KREL: exit 1" \
	"$(run control.log "$cb" --release "$KREL" -- "$root/lib/modules/$K2REL")" 1
grep -q "kp_gpl_prov: E: module-layout:" "$tmp/control.log"
ok "control: module-layout finding" $?

# 3. --release restricts
is "--release $KREL: exit 0" "$(run rel.log "$cb" --release "$KREL" -- "$root")" 0
grep -q "not checked: 2 module(s) built for $K2REL, not for a --release kernel" "$tmp/rel.log"
ok "--release: the other kernel's modules are said to be skipped" $?
is "--release $KREL: one kernel checked" "$(grep -c '^kopolicy: checking' "$tmp/rel.log")" 1

# 4. a kernel without headers: exit 2, the other kernel still checked; warn mode: 0
is "no headers for $K2REL: exit 2" "$(run nohdr.log "$cb" -- "$root")" 2
grep -q "no headers with Module.symvers for kernel $K2REL" "$tmp/nohdr.log"
ok "no headers: said, with the kernel" $?
grep -q "^kopolicy: checking 2 module(s) against kernel $KREL" "$tmp/nohdr.log"
ok "no headers for one kernel: the other is checked" $?
is "no headers, --mode warn: exit 0" "$(run nohdrw.log "$cb" --mode warn -- "$root")" 0

# 5. outside lib/modules: grouped by vermagic
mkdir -p "$tmp/flat/a" "$tmp/flat/b"
cp "$fx1/kp_plain.ko" "$tmp/flat/a/"
cp "$K2KO/kp_plain.ko" "$tmp/flat/b/"
is "by vermagic: exit 0" "$(run flat.log "$cb" --headers "$K2HDR" -- "$tmp/flat")" 0
is "by vermagic: both kernels checked, one module each" \
	"$(grep -c '^kopolicy: checking 1 module(s) against kernel' "$tmp/flat.log")" 2

# 6. brp-kopolicy (%kopolicy_check -k "R1 R2" -H DIR)
is "brp-kopolicy --release \"$KREL $K2REL\" --headers: exit 0" \
	"$(run brp.log "$brp" --release "$KREL $K2REL" --headers "$K2HDR" "$root")" 0
is "brp-kopolicy: both kernels checked" "$(grep -c '^brp-kopolicy: checking 2' "$tmp/brp.log")" 2

# 7. providers: kp_ns_ok imports kp_gpl_prov_ns from a module the package does not ship
mkdir -p "$tmp/user/lib/modules/$KREL/extra"
cp "$fx1/kp_ns_ok.ko" "$tmp/user/lib/modules/$KREL/extra/"
is "without its provider: exit 1" "$(run noprov.log "$cb" -- "$tmp/user")" 1
grep -q "kp_ns_ok: E: unknown-symbol: kp_gpl_prov_ns" "$tmp/noprov.log"
ok "without its provider: unknown-symbol" $?
is "--provider FILE: exit 0" \
	"$(run prov.log "$cb" --provider "$fx1/kp_gpl_prov.ko" -- "$tmp/user")" 0
grep -q "^1 module: 0 fail to load" "$tmp/prov.log"
ok "--provider: the provider is not reported" $?
crc=$("$KOPOLICY" info --json "$fx1/kp_ns_ok.ko" |
	sed -n 's/.*"name":"kp_gpl_prov_ns","crc":"\(0x[0-9a-f]*\)".*/\1/p')
printf '%s\tkp_gpl_prov_ns\t/build/prov/kp_gpl_prov\tEXPORT_SYMBOL_GPL\tKP_NS\n' "$crc" \
	> "$tmp/Module.symvers"
is "KBUILD_EXTRA_SYMBOLS=Module.symvers: exit 0" \
	"$(KBUILD_EXTRA_SYMBOLS="$tmp/Module.symvers" run extra.log "$cb" -- "$tmp/user")" 0
mkdir -p "$tmp/sys/lib/modules/$KREL/updates/dkms"
cp "$fx1/kp_gpl_prov.ko" "$tmp/sys/lib/modules/$KREL/updates/dkms/"
is "--installed-providers (the target's updates/ holds the provider): exit 0" \
	"$(KOPOLICY_ROOT=$tmp/sys run inst.log "$cb" --installed-providers -- "$tmp/user")" 0
is "--installed-providers, nothing installed: exit 1" \
	"$(KOPOLICY_ROOT=$tmp/none run inst0.log "$cb" --installed-providers -- "$tmp/user")" 1

if [ "$failed" -ne 0 ]; then
	for l in "$tmp"/*.log; do echo "# --- $l"; tail -20 "$l" | sed 's/^/# /'; done
fi
finish
