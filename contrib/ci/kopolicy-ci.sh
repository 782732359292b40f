#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Plain shell CI step: check the kernel modules a build produced against the target kernel and
# write the reports CI systems read. Used as is by the GitHub and GitLab examples beside it.
#
#   kopolicy-ci.sh MODULE-DIR [KERNEL-HEADERS-DIR]
#
# Writes kopolicy.sarif (GitHub code scanning), kopolicy-junit.xml (GitLab, Jenkins) and
# kopolicy.txt (the text report, also printed) in $KOPOLICY_REPORT_DIR (default: the current
# directory). Exit status: kopolicy's (0 clean, 1 findings at or above $KOPOLICY_FAIL_ON,
# default error; 2 unreadable input). $KOPOLICY_WAIVERS: accepted findings.
# Paths in the SARIF file are relative to the current directory (the checkout), so run it
# from the repository root.
set -u
mods=${1:?usage: kopolicy-ci.sh MODULE-DIR [KERNEL-HEADERS-DIR]}
kdir=${2:-/lib/modules/$(uname -r)/build}
out=${KOPOLICY_REPORT_DIR:-.}
kp=${KOPOLICY:-kopolicy}
set -- -k "$kdir/Module.symvers" --fail-on "${KOPOLICY_FAIL_ON:-error}"
[ -f "$kdir/.config" ] && set -- "$@" --kernel-config "$kdir/.config"
if [ -f "$kdir/include/generated/utsrelease.h" ]; then
	rel=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$kdir/include/generated/utsrelease.h")
	[ -n "$rel" ] && set -- "$@" --kernel-release "$rel"
fi
[ -n "${KOPOLICY_WAIVERS:-}" ] && set -- "$@" --waivers "$KOPOLICY_WAIVERS"
mkdir -p "$out"
"$kp" check "$@" -f sarif -o "$out/kopolicy.sarif" "$mods"
"$kp" check "$@" -f junit -o "$out/kopolicy-junit.xml" "$mods"
"$kp" check "$@" --color never -o "$out/kopolicy.txt" "$mods"
rc=$?
cat "$out/kopolicy.txt"
exit $rc
