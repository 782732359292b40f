#!/usr/bin/env bash
# tests/corpus/check-cache.sh KOPOLICY [TREE_ROOT...]
#
# The caches are invisible in results on whole Debian trees: for each extracted tree
# (tests/corpus/fetch-trees.sh; default: every tree under ~/.cache/kopolicy/trees), `check
# --format json`, `graph --format json` and `info --json` print the same bytes and exit
# status without the caches (--no-cache), with empty ones (cold: every module read and
# stored, the result stored), replayed from the result cache (warm: must be a hit), from the
# filled facts cache alone (KOPOLICY_RUN_CACHE=off), with every facts entry damaged (one
# byte flipped), and after one module's change time moved (same bytes, size and mtime): a
# compressed module's SHA-256 is known to the facts cache, so the result cache hashes it again
# and replays, refreshing its entry (9aabdef); an uncompressed one's is not after a cold fill,
# so that run is a miss and is stored; either way the next run replays. In a scratch cache
# directory.
# Exit 0 when all agree, 1 on a difference, 2 on a setup error.
set -uo pipefail

kp=${1:?usage: check-cache.sh KOPOLICY [TREE_ROOT...]}
shift
[ -x "$kp" ] || { echo "check-cache: $kp is not executable" >&2; exit 2; }
trees=("$@")
if [ ${#trees[@]} -eq 0 ]; then
	for t in "${XDG_CACHE_HOME:-$HOME/.cache}"/kopolicy/trees/*/; do
		[ -d "$t/lib/modules" ] && trees+=("${t%/}")
	done
fi
[ ${#trees[@]} -gt 0 ] || { echo "check-cache: no trees (tests/corpus/fetch-trees.sh)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset KOPOLICY_CACHE KOPOLICY_CACHE_STATS
export KOPOLICY_CACHE_DIR=$tmp/cache
fail=0 n=0

# run NAME ARGS...: stdout and status in $tmp/NAME.{out,rc} (stderr too: errors are output)
run() {
	local name=$1
	shift
	"$kp" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
}
same() { cmp -s "$tmp/$1.out" "$tmp/$2.out" && cmp -s "$tmp/$1.err" "$tmp/$2.err" &&
	cmp -s "$tmp/$1.rc" "$tmp/$2.rc"; }
# hit ARGS...: the result cache's line for a run of ARGS (its output discarded)
hit() { KOPOLICY_CACHE_STATS=1 "$kp" "$@" 2>&1 >/dev/null | sed -n 's/^kopolicy: result cache: //p'; }
flip_all() { # one bit of every entry's payload, in every pack
	python3 "$(dirname "$0")/../cli/damage-pack.py" flip_payload \
		"$KOPOLICY_CACHE_DIR"/facts-v*/packs/*.pack
}

# touched_ok LINE MODULE: the result cache's line for the run after MODULE's ctime moved
touched_ok() {
	case $2 in
	*.ko) [ "${1%% (*}" = "miss, stored" ] ;;
	*) [[ $1 = "hit, replayed (inputs rewritten with the same bytes; "* ]] &&
		[[ $1 = *"; 1 module hashed again, "* ]] ;;
	esac
}

for root in "${trees[@]}"; do
	rel=$(find "$root/lib/modules" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sed -n 1p)
	md=$root/lib/modules/$rel
	symvers=$root/usr/src/linux-headers-$rel/Module.symvers
	config=$(ls "$root/boot/config-$rel" "$md/config" 2>/dev/null | sed -n 1p)
	[ -f "$symvers" ] || { echo "check-cache: $root: no Module.symvers, skipped" >&2; continue; }
	nko=$(find "$md" -name '*.ko*' -type f | wc -l)
	one=$(find "$md" -name '*.ko*' -type f | sort | sed -n 1p)
	for cmd in check graph info; do
		case $cmd in
		check) args=(check --format json --fail-on never -k "$symvers" --kernel-release "$rel"
			${config:+--kernel-config "$config"} "$md") ;;
		graph) args=(graph --format json -k "$symvers" "$md") ;;
		info) args=(info --json "$md") ;;
		esac
		rm -rf "$KOPOLICY_CACHE_DIR"
		run ref --no-cache "${args[@]}"
		run cold "${args[@]}"
		run warm "${args[@]}"
		h1=$(hit "${args[@]}")
		KOPOLICY_RUN_CACHE=off run facts "${args[@]}"
		flip_all
		KOPOLICY_RUN_CACHE=off run damaged "${args[@]}"
		# one module's ctime moves (its bytes, size and mtime stay): hashed again and
		# replayed when compressed, else a miss (README: result cache)
		touch -d "@$(stat -c %Y "$one")" "$one"
		sleep 1.1
		h2=$(hit "${args[@]}")
		run touched "${args[@]}"
		h3=$(hit "${args[@]}")
		n=$((n + 1))
		if same ref cold && same ref warm && same ref facts && same ref damaged &&
			same ref touched && [ "$h1" = "hit, replayed" ] && touched_ok "$h2" "$one" &&
			[ "$h3" = "hit, replayed" ]; then
			echo "ok $n - ${root##*/} ($nko modules): $cmd identical without the caches, cold, replayed, facts only, damaged, one module touched ($(wc -c <"$tmp/ref.out") bytes; $h2)"
		else
			echo "not ok $n - ${root##*/}: $cmd differs with the cache (replay: '$h1'; touched: '$h2', then '$h3')"
			for r in cold warm facts damaged touched; do
				same ref $r || echo "#   $r differs: $(cmp "$tmp/ref.out" "$tmp/$r.out" 2>&1 | sed -n 1p)"
			done
			fail=$((fail + 1))
		fi
	done
done
echo "1..$n"
[ "$fail" -eq 0 ]
