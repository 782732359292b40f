#!/usr/bin/env bash
# Proof of `kopolicy graph` on real Debian module trees: its dependency lists and
# unresolved-symbol report against depmod (kmod) run on the same tree.
#
# usage: tests/corpus/check-graph.sh KOPOLICY_BIN [TREE...]
#   TREE: see fetch-trees.sh (default: its default list), or a derived
#         BASE-zst / BASE-gz (a tree with module files depmod cannot read, such as
#         .ko.gz with Debian 12's kmod built -ZLIB, is skipped: depmod ignores them)
# Per tree (tests/corpus/compare-graph.py does the comparing):
#   deps               kopolicy graph -k Module.symvers: the transitive closure of every
#                      module's `depends` == its modules.dep line from `depmod -b` (set
#                      equality, every module; same module set; load order consistent)
#   edges-symvers      every import's provider (module / vmlinux / none) == depmod -e -E
#                      Module.symvers (modules.symbols + warnings), hence direct depends
#   edges-sysmap       the same with kopolicy -k System.map and depmod -e -F System.map
#   unresolved-sysmap  kopolicy -k System.map non-weak unresolved == the "needs unknown
#                      symbol" warnings of `depmod -e -F System.map` (zero on real trees)
#   unresolved-symvers the same with -k / -E Module.symvers
#   thinned-sysmap     negative control: every 97th export label (__ksymtab_*) dropped
#                      from System.map: both must report the same, non-empty, unknowns
#   thinned-symvers    the same with every 97th vmlinux line of Module.symvers dropped
# The System.map is the real one from linux-image-<abi>-dbg: the tree's
# usr/lib/debug/boot/System.map-<release> (fetch-trees.sh --with-dbg) or
# $KOPOLICY_CACHE/dbg/<TREE>/usr/lib/debug/boot/System.map-<release> (sid:
# usr/lib/debug/lib/modules/<release>/System.map; derived trees
# BASE-zst/BASE-gz use BASE's); without one
# the three System.map tests are skipped (listed, not counted).
# depmod runs on a private hard-link copy of lib/modules/<release> with an empty
# configuration directory (-C), so the cached tree and the host's depmod.d are untouched.
# Environment:
#   KOPOLICY_CACHE             cache directory (default ~/.cache/kopolicy)
#   KOPOLICY_CORPUS_OFFLINE=1  use the already extracted trees, no apt/network
#   KOPOLICY_GRAPH_WITH_DBG=1  let fetch-trees.sh fetch missing -dbg System.maps (~1 GB each)
#   KOPOLICY_GRAPH_KEEP=1      keep the work directory (printed) for inspection
# Prints per test PASS/FAIL with the first differences, and a closing
# "N passed, N failed" (sum over trees).
# Exit: 0 all passed, 1 any mismatch, 2 setup error.
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "check-graph: error: line $LINENO: exit status $?" >&2' ERR

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${KOPOLICY_CACHE:-$HOME/.cache/kopolicy}
THIN_EVERY=97

setup_error() {
	echo "check-graph: $*" >&2
	echo "0 passed, 1 failed"
	exit 2
}

[ $# -ge 1 ] || { echo "usage: $0 KOPOLICY_BIN [TREE...]" >&2; exit 2; }
bin=$1
shift
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
[ -x "$bin" ] || setup_error "$bin is not executable"
for tool in python3 depmod awk; do
	command -v "$tool" >/dev/null || setup_error "$tool not found"
done
depmod --version >/dev/null 2>&1 || setup_error "depmod --version failed"

fetch_opts=()
if [ "${KOPOLICY_CORPUS_OFFLINE:-0}" = 1 ]; then fetch_opts+=(--offline); fi
if [ "${KOPOLICY_GRAPH_WITH_DBG:-0}" = 1 ]; then fetch_opts+=(--with-dbg); fi
specs=$("$here/fetch-trees.sh" "${fetch_opts[@]}" "$@") || setup_error "fetching trees failed"

mkdir -p "$cache"
# same file system as the trees, so that the copy can be made of hard links
work=$(mktemp -d "$cache/check-graph.XXXXXX") || setup_error "cannot create a work directory in $cache"
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
	if [ "${KOPOLICY_GRAPH_KEEP:-0}" = 1 ]; then
		echo "check-graph: work directory kept: $work" >&2
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

field() { # line key
	printf '%s\n' "$1" | tr '\t' '\n' | sed -n "s/^$2=//p"
}

passed=0 failed=0 setup=0
skipped=()
summary=()

# record NAME STATUS: 0 pass, 1 fail, other: setup error of the comparison
record() {
	case $2 in
	0) passed=$((passed + 1)) ;;
	1) failed=$((failed + 1)) ;;
	*) failed=$((failed + 1)); setup=1 ;;
	esac
}

# compare LABEL ARGS...: run compare-graph.py and count its verdict
compare() {
	local label=$1 st=0
	shift
	python3 "$here/compare-graph.py" --label "$label " "$@" || st=$?
	record "$label" "$st"
	tree_fail=$((tree_fail + (st != 0)))
}

# fail_test LABEL MESSAGE: a comparison that could not run because kopolicy failed
fail_test() {
	echo "FAIL $1: $2"
	record "$1" 1
	tree_fail=$((tree_fail + 1))
}

# kp NAME KERNEL: kopolicy graph of the tree into $t/NAME.json; status 0/1 are
# normal (1: unresolved imports or cycles), anything else fails the comparisons
kp() {
	local name=$1 kernel=$2 st=0
	"$bin" graph --format json -k "$kernel" "$moddir" >"$t/$name.json" 2>"$t/kp-$name.err" || st=$?
	if [ "$st" -gt 1 ]; then
		kp_fail[$name]="kopolicy graph -k $kernel exited $st: $(head -n 3 "$t/kp-$name.err" | tr '\n' ' ')"
	else
		kp_fail[$name]=""
	fi
}

# dm NAME ARGS...: depmod -b on the private copy; stderr into $t/NAME.err (kopolicy's: kp-NAME.err)
dm() {
	local name=$1
	shift
	if ! depmod -C "$t/depmod.d" "$@" -b "$t/root" "$release" >"$t/$name.out" 2>"$t/$name.err"; then
		echo "check-graph: $tree: depmod $* failed:" >&2
		head -n 5 "$t/$name.err" >&2
		return 1
	fi
}

# run_cmp LABEL KP_NAME compare-graph-args...: skip the comparison if kopolicy failed
run_cmp() {
	local label=$1 name=$2
	shift 2
	if [ -n "${kp_fail[$name]}" ]; then fail_test "$label" "${kp_fail[$name]}"; return; fi
	compare "$label" "$@"
}

declare -A kp_fail
features=$(depmod --version | tail -n 1)
echo "depmod: $(depmod --version | tr '\n' ' ')"
while IFS= read -r line; do
	[ -n "$line" ] || continue
	tree=$(field "$line" tree)
	release=$(field "$line" release)
	symvers=$(field "$line" symvers)
	moddir=$(field "$line" modules)
	sysmap=$(field "$line" system_map)
	# derived trees (BASE-zst, BASE-gz) share BASE's kernel
	for d in "$cache/dbg/$tree" "$cache/trees/${tree%-*}" "$cache/dbg/${tree%-*}"; do
		[ -z "$sysmap" ] || break
		for m in "$d/usr/lib/debug/boot/System.map-$release" \
			"$d/usr/lib/debug/lib/modules/$release/System.map"; do
			if [ -z "$sysmap" ] && [ -f "$m" ]; then sysmap=$m; fi
		done
	done
	# v7.1+ (__kflagstab): a System.map cannot tell GPL-only exports and kopolicy
	# refuses it (check-base.sh checks that), so there is no System.map test
	if [ -n "$sysmap" ] && grep -q ' __start___kflagstab$' "$sysmap"; then
		echo "   note: $sysmap is a __kflagstab map (v7.1+), not usable: System.map tests skipped"
		skipped+=("$tree: System.map tests (v7.1+ map has no GPL class)")
		sysmap=""
	fi
	nmods=$(find "$moddir" -name '*.ko*' -type f | wc -l)
	echo "== $tree: $moddir ($nmods module files)"
	echo "   Module.symvers: $symvers"
	echo "   System.map:     ${sysmap:-none (run fetch-trees.sh --with-dbg $tree)}"
	# depmod silently skips module files of a compression kmod was built without
	# (Debian 12: -ZLIB, so .ko.gz): there is no reference for such a tree
	unreadable=""
	for c in xz:XZ zst:ZSTD gz:ZLIB; do
		if [[ " $features " == *" -${c#*:} "* ]] &&
		   [ -n "$(find "$moddir" -name "*.ko.${c%%:*}" -type f -print -quit)" ]; then
			unreadable+=" .ko.${c%%:*}"
		fi
	done
	if [ -n "$unreadable" ]; then
		echo "SKIP $tree: depmod cannot read$unreadable (kmod built without it)"
		skipped+=("$tree: all tests (depmod cannot read$unreadable)")
		summary+=("$tree: skipped")
		continue
	fi
	t=$work/$tree
	mkdir -p "$t/root/lib/modules" "$t/depmod.d"
	if ! cp -al "$moddir" "$t/root/lib/modules/" 2>/dev/null; then
		rm -rf "${t:?}/root/lib/modules/$release"
		cp -as "$moddir" "$t/root/lib/modules/" || setup_error "$tree: cannot copy $moddir"
	fi
	dmdir=$t/root/lib/modules/$release
	tree_fail=0

	# thinned kernel symbol lists for the negative controls
	awk -v n="$THIN_EVERY" -F '\t' '$3 == "vmlinux" && ++k % n == 0 { next } { print }' \
		"$symvers" >"$t/thin.symvers"
	if [ -n "$sysmap" ]; then
		awk -v n="$THIN_EVERY" '$3 ~ /^__ksymtab_/ && $3 != "__ksymtab_strings" && ++k % n == 0 { next }
			{ print }' "$sysmap" >"$t/thin.map"
	fi

	# the references
	dm plain || setup_error "$tree: depmod failed"
	cp "$dmdir/modules.dep" "$t/plain.dep"
	dm symvers -e -E "$symvers" || setup_error "$tree: depmod -E failed"
	if ! cmp -s "$dmdir/modules.dep" "$t/plain.dep"; then
		echo "   note: depmod -E Module.symvers writes a different modules.dep than plain depmod:"
		diff "$t/plain.dep" "$dmdir/modules.dep" | sed -n '1,10s/^/     /p'
	fi
	cp "$dmdir/modules.symbols" "$t/modules.symbols"
	dm thin-symvers -n -e -E "$t/thin.symvers" || setup_error "$tree: depmod -E (thinned) failed"
	if [ -n "$sysmap" ]; then
		dm sysmap -n -e -F "$sysmap" || setup_error "$tree: depmod -F failed"
		dm thin-sysmap -n -e -F "$t/thin.map" || setup_error "$tree: depmod -F (thinned) failed"
	fi

	# kopolicy
	kp symvers "$symvers"
	kp thin-symvers "$t/thin.symvers"
	if [ -n "$sysmap" ]; then
		kp sysmap "$sysmap"
		kp thin-sysmap "$t/thin.map"
	fi

	run_cmp "$tree deps" symvers deps "$t/symvers.json" "$moddir" "$t/plain.dep"
	run_cmp "$tree edges-symvers" symvers --release "$release" edges "$t/symvers.json" "$moddir" \
		"$t/modules.symbols" "$t/symvers.err"
	run_cmp "$tree unresolved-symvers" symvers --release "$release" unresolved \
		"$t/symvers.json" "$moddir" "$t/symvers.err"
	run_cmp "$tree thinned-symvers" thin-symvers --release "$release" --expect-nonempty \
		unresolved "$t/thin-symvers.json" "$moddir" "$t/thin-symvers.err"
	if [ -n "$sysmap" ]; then
		run_cmp "$tree edges-sysmap" sysmap --release "$release" edges "$t/sysmap.json" "$moddir" \
			"$t/modules.symbols" "$t/sysmap.err"
		run_cmp "$tree unresolved-sysmap" sysmap --release "$release" unresolved \
			"$t/sysmap.json" "$moddir" "$t/sysmap.err"
		run_cmp "$tree thinned-sysmap" thin-sysmap --release "$release" --expect-nonempty \
			unresolved "$t/thin-sysmap.json" "$moddir" "$t/thin-sysmap.err"
	else
		skipped+=("$tree: edges-sysmap unresolved-sysmap thinned-sysmap (no real System.map)")
	fi
	summary+=("$tree: $tree_fail failed")
	[ "${KOPOLICY_GRAPH_KEEP:-0}" = 1 ] || rm -rf "$t"
done <<<"$specs"

echo "== summary"
printf '  %s\n' "${summary[@]}"
if [ ${#skipped[@]} -gt 0 ]; then
	echo "skipped:"
	printf '  %s\n' "${skipped[@]}"
fi
echo "$passed passed, $failed failed"
if [ "$setup" = 1 ]; then exit 2; fi
if [ "$failed" -gt 0 ]; then exit 1; fi
exit 0
