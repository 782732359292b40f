#!/usr/bin/env bash
# A System.map (or kallsyms) as the kernel's exports: its __ksymtab_<sym> labels say which
# symbols vmlinux exports and, from the table bounds, which are GPL-only, but not their CRCs
# nor (v5.5+) their namespaces (lib/kernel/system-map.c). check_version() passes an export
# without a CRC, so such a base cannot predict a CRC mismatch or Debian's rejected missing
# __versions entry: that is said as an assumption, with the count, never silently.
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.1
tap_own_cache

json() { python3 -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }
# the fixture kernel's System.map excerpt: every vmlinux export of its Module.symvers as a
# label inside its table's bounds (no module lines: System.map has none)
python3 "$top/tests/unit/policy/gen-kallsyms.py" "$fx/Module.symvers.gz" | grep -v '\[' \
	>"$tmp/System.map"
nvml=$(zcat "$fx/Module.symvers.gz" | awk -F'\t' '$3 == "vmlinux"' | wc -l)
crc="$nvml vmlinux exports known only from a System.map or kallsyms have no CRC: their symbol \
versions are not checked (a CRC mismatch or a missing __versions entry is not predicted; give \
Module.symvers or the vmlinux)"
ns="$nvml vmlinux exports known only from a System.map or kallsyms have no namespace: a missing \
MODULE_IMPORT_NS() for them is not predicted (give Module.symvers or the vmlinux)"
C=(check --format json --fail-on never --kernel-config "$fx/config.gz" --kernel-release "$rel")

"$kp" "${C[@]}" -k "$fx/Module.symvers.gz" "$fx/kp_version_missing.ko" >"$tmp/symvers.json"
json "$tmp/symvers.json" "d['modules'][0]['errno']=='EINVAL' \
and d['modules'][0]['findings'][0]['id']=='missing-symbol-version' \
and not any('System.map' in s for s in d['kernel']['assumptions'])"
ok "Module.symvers: msleep's missing __versions entry fails the load, nothing assumed" $?

"$kp" "${C[@]}" -k "$tmp/System.map" "$fx/kp_version_missing.ko" >"$tmp/map.json"
json "$tmp/map.json" "d['modules'][0]['loads'] and d['kernel']['assumptions'].count('''$crc''')==1 \
and d['kernel']['assumptions'].count('''$ns''')==1"
ok "System.map: no CRC, so the load is predicted, and both unknowns are assumed ($nvml exports)" $?

"$kp" "${C[@]}" -k "$tmp/System.map" -k "$fx/Module.symvers.gz" "$fx/kp_version_missing.ko" \
	>"$tmp/both.json"
json "$tmp/both.json" "d['modules'][0]['errno']=='EINVAL' \
and not any('only from a System.map' in s for s in d['kernel']['assumptions'])"
ok "System.map with Module.symvers: the CRCs known, the load fails, nothing assumed" $?

zcat "$fx/config.gz" | sed 's/^CONFIG_MODVERSIONS=y$/# CONFIG_MODVERSIONS is not set/' \
	>"$tmp/config-nomodversions"
"$kp" check --format json --fail-on never --kernel-config "$tmp/config-nomodversions" \
	--kernel-release "$rel" -k "$tmp/System.map" "$fx/kp_plain.ko" >"$tmp/nomv.json"
json "$tmp/nomv.json" "not d['kernel']['modversions'] \
and not any('have no CRC' in s for s in d['kernel']['assumptions']) \
and d['kernel']['assumptions'].count('''$ns''')==1"
ok "System.map, MODVERSIONS not set: no CRC is missed, the namespaces still are" $?

"$kp" check --fail-on never --kernel-config "$fx/config.gz" --kernel-release "$rel" \
	-k "$tmp/System.map" "$fx/kp_plain.ko" >"$tmp/map.txt"
grep -qF "  assumed: $crc" "$tmp/map.txt"
ok "... the text report says it too" $?

tap_done
