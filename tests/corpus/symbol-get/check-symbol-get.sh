#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-symbol-get.sh KOPOLICY_BIN [TREE...]
#
# Compares the symbol_get() targets kopolicy finds in real Debian module trees
# with the call sites of the matching kernel source (source-truth.py): per tree,
# the (module, target) pairs in the source, found exact, found heuristic,
# dynamic sites, recall, precision, and every miss / false positive with its
# explanation (explained.tsv). One test per tree: recall and precision >= 99%
# and nothing unexplained. Ends with "N passed, N failed".
#
# TREE is a name under ${KOPOLICY_CACHE:-$HOME/.cache/kopolicy}/trees/ or a
# directory holding lib/modules/<release>/ and its config (boot/config-<release>,
# or sid's lib/modules/<release>/config) (default: all of amd64-6.12 amd64-6.1
# arm64 i386 s390x). The kernel source is the Debian linux-source package of the
# version in the tree's .kopolicy-stamp (its "image" line, or sid's "modules"
# line), extracted (C, headers, Makefiles only) into $CACHE/src/linux-<version>/
# and fetched with apt-get download when missing: from the tree's own private apt
# state (fetch-trees.sh's apt= for a tree it knows by name; trixie's and sid's
# linux-source are not in this machine's bookworm sources), else the machine's.
# Kernel source is never part of the repository.
# A tree that is not present is skipped (not counted).
set -u

here=$(cd "$(dirname "$0")" && pwd)
bin=${1:?usage: check-symbol-get.sh KOPOLICY_BIN [TREE...]}
shift
cache=${KOPOLICY_CACHE:-$HOME/.cache/kopolicy}
[ $# -gt 0 ] || set -- amd64-6.12 amd64-6.1 arm64 i386 s390x
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# apt_opts TREENAME: the -o options of the tree's private apt state (fetch-trees.sh's
# apt= and arch=), one per line; nothing for a tree fetch-trees.sh does not know
apt_opts() {
	local line a arch
	line=$("$here/../fetch-trees.sh" --offline "$1" 2>/dev/null) || return 0
	a=$(printf '%s\n' "$line" | tr '\t' '\n' | sed -n 's/^apt=//p')
	arch=$(printf '%s\n' "$line" | tr '\t' '\n' | sed -n 's/^arch=//p')
	[ -n "$a" ] && [ -n "$arch" ] && [ -d "$a/lists" ] || return 0
	printf '%s\n' -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$a/sources" \
		-o "Dir::State=$a/state" -o "Dir::State::Lists=$a/lists" \
		-o "Dir::State::status=$a/state/status" -o "Dir::Cache=$a/cache" \
		-o "APT::Architecture=$arch" -o "APT::Architectures::=$arch" \
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root
}

# source_dir TREEDIR TREENAME: prints the extracted source directory, fetching it if needed
source_dir() {
	local tree=$1 debver up series dir deb
	local -a opts=()
	debver=$(awk '$1 == "image" || $1 == "modules" { print $3; exit }' \
		"$tree/.kopolicy-stamp" 2>/dev/null)
	if [ -z "$debver" ]; then
		echo "no .kopolicy-stamp with the image version in $tree" >&2
		return 1
	fi
	up=${debver%%-*}
	series=$(echo "$up" | cut -d. -f1,2)
	dir=$cache/src/linux-$up
	if [ -f "$dir/Makefile" ]; then
		echo "$dir"
		return 0
	fi
	mkdir -p "$cache/src" || return 1
	deb=$(ls "$cache/src/linux-source-${series}_${debver}_all.deb" 2>/dev/null)
	if [ -z "$deb" ]; then
		mapfile -t opts < <(apt_opts "$2")
		(cd "$cache/src" && apt-get "${opts[@]}" download "linux-source-$series=$debver" >&2) ||
			return 1
		deb=$(ls "$cache/src/linux-source-${series}_${debver}_all.deb" 2>/dev/null) || return 1
	fi
	echo "extracting $deb into $dir" >&2
	rm -rf "$dir.tmp"
	mkdir -p "$dir.tmp" || return 1
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/linux-source-$series.tar.xz" |
		xz -dc | tar -x -C "$dir.tmp" --strip-components=1 --wildcards \
			'*.c' '*.h' '*Makefile*' '*Kbuild*' '*Kconfig*' || return 1
	mv "$dir.tmp" "$dir" || return 1
	echo "$dir"
}

passed=0
failed=0
for t in "$@"; do
	if [ -d "$t" ]; then tree=$t; else tree=$cache/trees/$t; fi
	name=$(basename "$tree")
	moddir=$(ls -d "$tree"/lib/modules/*/ 2>/dev/null | head -n 1)
	config=$(ls "$tree"/boot/config-* 2>/dev/null | head -n 1)
	if [ -z "$config" ] && [ -n "$moddir" ] && [ -f "${moddir%/}/config" ]; then
		config=${moddir%/}/config	# sid: linux-base-<abi>'s usr/lib/modules/<r>/config
	fi
	if [ -z "$moddir" ] || [ -z "$config" ]; then
		echo "tree $name: not present, skipped"
		continue
	fi
	if ! src=$(source_dir "$tree" "$name"); then
		echo "tree $name: kernel source unavailable"
		echo "  FAIL"
		failed=$((failed + 1))
		continue
	fi
	python3 "$here/source-truth.py" "$src" "$config" "${moddir%/}" \
		>"$work/$name.truth" 2>"$work/$name.dead"
	"$bin" info --json "${moddir%/}" >"$work/$name.json" 2>"$work/$name.err"
	if [ ! -s "$work/$name.json" ]; then
		echo "tree $name: kopolicy info failed"
		cat "$work/$name.err"
		echo "  FAIL"
		failed=$((failed + 1))
		continue
	fi
	if python3 "$here/compare.py" "$name" "$work/$name.truth" "$work/$name.json" \
		"$here/explained.tsv"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
	if [ -s "$work/$name.dead" ]; then
		echo "  compiled-out source sites (not in the truth):"
		sed 's/^/    /' "$work/$name.dead"
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
