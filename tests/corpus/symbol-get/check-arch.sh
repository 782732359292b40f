#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-arch.sh KOPOLICY_BIN [REF_TREE [TREE...]]
#
# The symbol_get() targets of each architecture's tree of one kernel build,
# compared (compare-arch.py) with the amd64 tree of the same build (REF_TREE,
# default amd64-6.12t: which symbols a driver looks up is decided by its
# source, not the architecture) and with the objdump call-site references of
# the tree itself (objdump-sites.py, binutils-multiarch's objdump). Default
# TREEs: amd64-6.12t (in effect objdump only) arm64-6.12t armhf-6.12t
# ppc64el-6.12t riscv64-6.12t s390x-6.12t (Debian trixie 6.12,
# tests/corpus/fetch-trees.sh). A TREE is a name under
# ${KOPOLICY_CACHE:-$HOME/.cache/kopolicy}/trees/ or a directory holding
# lib/modules/<release>/ (or usr/lib/modules/); a tree that is not present is
# skipped. One test per tree: recall and precision >= 99% against both
# references, every target exact, every difference with amd64 explained
# (arch-explained.tsv). Ends with "N passed, N failed"; exit 1 if any failed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: check-arch.sh KOPOLICY_BIN [REF_TREE [TREE...]]}
shift
cache=${KOPOLICY_CACHE:-$HOME/.cache/kopolicy}
ref=${1:-amd64-6.12t}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- amd64-6.12t arm64-6.12t armhf-6.12t ppc64el-6.12t riscv64-6.12t s390x-6.12t
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

moddir() { # TREE -> the modules directory
	local t=$1
	[ -d "$t" ] || t=$cache/trees/$t
	ls -d "$t"/lib/modules/*/ "$t"/usr/lib/modules/*/ 2>/dev/null | head -n 1
}

command -v objdump >/dev/null || {
	echo "objdump not found (apt-get install binutils-multiarch)"
	exit 2
}
# binutils' own objdump disassembles the build machine's architecture only: every
# foreign tree would silently have no objdump reference
objdump -i 2>/dev/null | grep -q 'elf64-littleaarch64' || {
	echo "objdump reads no foreign architecture (apt-get install binutils-multiarch)"
	exit 2
}
refdir=$(moddir "$ref")
if [ -z "$refdir" ]; then
	echo "reference tree $ref: not present, nothing compared"
	exit 0
fi
"$bin" info --json "${refdir%/}" >"$work/ref.json" 2>/dev/null
passed=0
failed=0
for t in "$@"; do
	name=$(basename "$t")
	dir=$(moddir "$t")
	if [ -z "$dir" ]; then
		echo "tree $name: not present, skipped"
		continue
	fi
	"$bin" info --json "${dir%/}" >"$work/$name.json" 2>"$work/$name.err"
	python3 "$here/objdump-sites.py" "${dir%/}" >"$work/$name.sites"
	sites=$work/$name.sites
	if [ ! -s "$sites" ]; then
		# no objdump-sites.py model for the architecture (mips64el, loongarch)
		echo "tree $name: no objdump call-site reference for this architecture"
		sites=/dev/null
	fi
	if python3 "$here/compare-arch.py" "$name" "$work/ref.json" "$work/$name.json" \
		"$sites" "$here/arch-explained.tsv"; then
		echo "  PASS"
		passed=$((passed + 1))
	else
		echo "  FAIL"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
