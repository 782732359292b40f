# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The fake root of the install-rules tests (sourced, after tap.sh's fixture variables):
#   rules_root ROOT   ROOT/lib/modules/$rel with the 6.12 fixtures $fx indexed by `depmod -b`:
#                     an out-of-tree proprietary provider in updates/, an out-of-tree GPL
#                     module in extra/, an in-tree module using the provider and one that does
#                     not; and ROOT/etc/modprobe.d
#   lines FILE        the modules with an install line in FILE, on one line
lines() { sed -n 's/^install \([^ ]*\) .*/\1/p' "$1" | tr '\n' ' '; }

rules_root() {
	local m=$1/lib/modules/$rel
	mkdir -p "$m/updates" "$m/extra" "$m/kernel/drivers/misc" "$1/etc/modprobe.d"
	cp "$fx/kp_prop_prov.ko" "$m/updates/"
	cp "$fx/kp_gpl_prov.ko" "$m/extra/"
	cp "$fx/kp_use_prop.ko" "$fx/kp_plain.ko" "$m/kernel/drivers/misc/"
	depmod -b "$1" "$rel" 2>/dev/null
}
