#!/usr/bin/env bash
# bench/bench-tree.sh KOPOLICY_BIN TREE_ROOT [RUNS]
#
# Side-by-side with depmod on the same module tree and the same kernel exports, in the
# same run, alternating (one unmeasured warm-up round first, so every tool reads from
# the page cache):
#   depmod -n -E SYMVERS -b TREE_ROOT RELEASE   (the reference: reads every module,
#                                               resolves every import, writes all indexes)
#   kopolicy graph -k SYMVERS TREE_ROOT/lib/modules/RELEASE       (default text output)
#   kopolicy graph --format json ...            (every import's provider: 25 MB of JSON)
#   kopolicy -j 1 graph --format json ...       (one thread, like depmod)
#   kopolicy check --format json -k SYMVERS --kernel-config ... (the whole simulation)
# The rows above read every module (--no-cache). With the caches, in a scratch cache
# directory:
#   check-cold    the check with both caches empty (every module read and stored in one
#                 pack, compressed ones hashed too; the result stored, lib/cache/run-cache.c)
#   check-warm    the check with the facts cache filled, the result cache off
#                 (KOPOLICY_RUN_CACHE=off: each module file only stat()ed, all else computed)
#   graph-warm    graph --format json, the same
#   check-replay  the check again with both caches: the stored result replayed (the inputs'
#                 manifest stat()ed, the output written)
#   graph-replay  graph --format json replayed (25 MB of JSON written)
#   check-1mod    one module's change time moved (touch -d @MTIME: same bytes), then the
#                 check: on a plain tree a result-cache miss (the run that filled the caches
#                 did not hash its uncompressed modules), facts from the cache for the other
#                 modules, the new result stored; a compressed module: replayed after
#                 hashing that file again (the fill recorded its bytes)
#   check-1mod-bytes  the same module's bytes really changed: its appended signature
#                 stripped, or put back in the next round (size, bytes, facts and the answer
#                 change: signed or unsigned, the E taint), a second later the check: the
#                 module read again, the others' facts from the cache, the new result stored.
#                 The module's signed bytes and mtime are put back at the end.
#   check-1mod-again  the same module's change time moved again (same bytes): the stored
#                 result knows its bytes now (read by check-1mod-bytes): replayed after
#                 hashing that one file again (lib/file/inputs.h)
#   check-b-cold  check --format json -b TREE_ROOT (what a user runs on an installed system:
#                 the kernel's keys from boot/vmlinuz-RELEASE, every signature verified), both
#                 caches empty (signature verdicts and the image's certificates too)
#   check-b-warm  the same again with the result cache off (KOPOLICY_RUN_CACHE=off: as after a
#                 depmod, which changes the result's inputs): facts and verdicts from the cache
#   check-b-nokeys-cold, check-b-nokeys-warm  the same with --no-kernel-keys
#   check-b-after-depmod  on a scratch copy of TREE_ROOT (made in the temporary directory:
#                 depmod never writes into TREE_ROOT): the result stored, then a real
#                 depmod -b writing every index again (the same bytes, new files renamed
#                 into place; timed as depmod-write), then check --format json -b: the
#                 result replayed through the inputs' bytes (lib/file/inputs.h)
#   check-after-depmod  the same for check -k SYMVERS MODDIR (the "check" row's arguments)
# BENCH_ONLY="row ..." measures only those rows (and depmod), e.g. BENCH_ONLY="check-b-cold
# check-b-warm check-b-nokeys-cold check-b-nokeys-warm".
# Prints the median wall time, CPU time (user+sys) and peak RSS of each and the ratios
# to depmod, with the load average before and after.  See bench/README.md.
# TREE_ROOT is an extracted linux-image package (tests/corpus/fetch-trees.sh makes them).
# Exit: 0 measured, 2 setup error or a tool failed.
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "bench-tree: error: line $LINENO: exit status $?" >&2' ERR

usage="usage: bench-tree.sh KOPOLICY_BIN TREE_ROOT [RUNS]"
kp=${1:?$usage}
root=${2:?$usage}
runs=${3:-5}
die() { echo "bench: $*" >&2; exit 2; }

[[ $runs =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive number"
[ -x "$kp" ] || die "$kp is not executable"
command -v depmod >/dev/null || die "depmod (kmod) is not installed"
command -v python3 >/dev/null || die "python3 is needed (bench/run-timed.py times each run)"
here=$(cd "$(dirname "$0")" && pwd)
rels=$(find "$root/lib/modules" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null || true)
if [ -z "$rels" ] || [ "$(printf '%s\n' "$rels" | wc -l)" != 1 ]; then
	die "expected exactly one release directory in $root/lib/modules"
fi
rel=$rels
moddir=$root/lib/modules/$rel
symvers=$root/usr/src/linux-headers-$rel/Module.symvers
config=$root/boot/config-$rel
[ -f "$symvers" ] || die "no Module.symvers for $rel under $root/usr/src"
[ -f "$config" ] || die "no $config"

# depmod silently skips module files of a compression kmod was built without (Debian
# 12's kmod is -ZLIB: .ko.gz): it would be timed on an empty tree.
features=$(depmod --version | tail -n 1)
for c in xz:XZ zst:ZSTD gz:ZLIB; do
	if [[ " $features " == *" -${c#*:} "* ]] &&
	   [ -n "$(find "$moddir" -name "*.ko.${c%%:*}" -type f -print -quit)" ]; then
		die "this depmod ($features) cannot read .ko.${c%%:*}: no fair reference for $root"
	fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/depmod.d" # empty configuration: the host's depmod.d does not matter
unset KOPOLICY_CACHE
export KOPOLICY_CACHE_DIR=$tmp/cache # the warm rows' cache; the user's is left alone

declare -A wall cpu rss
# measure NAME OKSTATUS COMMAND...: one timed run; OKSTATUS: highest normal exit status
measure() {
	local name=$1 ok=$2 st=0 w u s m
	shift 2
	python3 "$here/run-timed.py" "$tmp/time" "$@" >/dev/null 2>"$tmp/stderr" || st=$?
	if [ "$st" -gt "$ok" ]; then
		echo "bench: $name exited $st:" >&2
		head -n 5 "$tmp/stderr" >&2
		exit 2
	fi
	read -r w u s m <"$tmp/time" || die "no timing for $name"
	[ -n "$name" ] || return 0 # warm-up
	wall[$name]+="$(awk -v w="$w" 'BEGIN { printf "%.4f", w }') "
	cpu[$name]+="$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.4f", u + s }') "
	rss[$name]+="$m "
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }

want() { [ -z "${BENCH_ONLY:-}" ] || [[ " $BENCH_ONLY " == *" $1 "* ]]; }
round_b() { # prefix: check -b ROOT, with the kernel's keys and without, cold then warm
	local p=$1
	if want check-b-cold || want check-b-warm; then
		rm -rf "$KOPOLICY_CACHE_DIR"
		measure "${p:+check-b-cold}" 1 "$kp" check --format json -b "$root"
		KOPOLICY_RUN_CACHE=off measure "${p:+check-b-warm}" 1 "$kp" check --format json \
			-b "$root"
	fi
	if want check-b-nokeys-cold || want check-b-nokeys-warm; then
		rm -rf "$KOPOLICY_CACHE_DIR"
		measure "${p:+check-b-nokeys-cold}" 1 "$kp" check --format json --no-kernel-keys \
			-b "$root"
		KOPOLICY_RUN_CACHE=off measure "${p:+check-b-nokeys-warm}" 1 "$kp" check \
			--format json --no-kernel-keys -b "$root"
	fi
}
# the after-depmod rows, on the scratch copy $scratch with its own cache (filled once)
round_depmod() {
	local p=$1 sv=$scratch/usr/src/linux-headers-$rel/Module.symvers
	local dw=(depmod -C "$tmp/depmod.d" -E "$sv" -b "$scratch" "$rel")
	local kc=(check --format json -k "$sv" --kernel-config "$scratch/boot/config-$rel"
		--kernel-release "$rel" "$scratch/lib/modules/$rel")
	local dwname=${p:+depmod-write} # the first depmod of the round is the row's
	want check-b-after-depmod || want check-after-depmod || want depmod-write || return 0
	# each: the result stored (or its entry's states refreshed) more than a second after
	# the last depmod, depmod again, the timed check
	if want check-b-after-depmod; then
		sleep 1.1
		KOPOLICY_CACHE_DIR=$tmp/cache-depmod measure "" 1 "$kp" check --format json \
			-b "$scratch"
		measure "$dwname" 0 "${dw[@]}"
		dwname=
		KOPOLICY_CACHE_DIR=$tmp/cache-depmod measure "${p:+check-b-after-depmod}" 1 "$kp" \
			check --format json -b "$scratch"
	fi
	if want check-after-depmod; then
		sleep 1.1
		KOPOLICY_CACHE_DIR=$tmp/cache-depmod measure "" 1 "$kp" "${kc[@]}"
		measure "$dwname" 0 "${dw[@]}"
		dwname=
		KOPOLICY_CACHE_DIR=$tmp/cache-depmod measure "${p:+check-after-depmod}" 1 "$kp" \
			"${kc[@]}"
	fi
	# depmod-write asked for alone (BENCH_ONLY)
	[ -z "$dwname" ] || measure "$dwname" 0 "${dw[@]}"
}
round() { # prefix ("" for the warm-up)
	local p=$1
	local chk=(check --format json -k "$symvers" --kernel-config "$config" --kernel-release "$rel")
	measure "${p:+depmod}" 0 depmod -n -C "$tmp/depmod.d" -E "$symvers" -b "$root" "$rel"
	round_b "$p"
	round_depmod "$p"
	# each row only when wanted (BENCH_ONLY); the cache rows need the ones before them
	want graph && measure "${p:+graph}" 1 "$kp" --no-cache graph -k "$symvers" "$moddir"
	want graph-json &&
		measure "${p:+graph-json}" 1 "$kp" --no-cache graph --format json -k "$symvers" "$moddir"
	want graph-j1 && measure "${p:+graph-j1}" 1 "$kp" --no-cache -j 1 graph --format json \
		-k "$symvers" "$moddir"
	want check && measure "${p:+check}" 1 "$kp" --no-cache "${chk[@]}" "$moddir"
	rm -rf "$KOPOLICY_CACHE_DIR"
	measure "${p:+$(want check-cold && echo check-cold)}" 1 "$kp" "${chk[@]}" "$moddir"
	want check-replay && measure "${p:+check-replay}" 1 "$kp" "${chk[@]}" "$moddir"
	want check-warm &&
		KOPOLICY_RUN_CACHE=off measure "${p:+check-warm}" 1 "$kp" "${chk[@]}" "$moddir"
	if want graph-warm || want graph-replay; then
		KOPOLICY_RUN_CACHE=off measure "${p:+graph-warm}" 1 "$kp" graph --format json \
			-k "$symvers" "$moddir"
		measure "" 1 "$kp" graph --format json -k "$symvers" "$moddir" # stores the result
		measure "${p:+graph-replay}" 1 "$kp" graph --format json -k "$symvers" "$moddir"
	fi
	want check-1mod || want check-1mod-bytes || want check-1mod-again || return 0
	# one module changed: its ctime moves (bytes and mtime kept); a second later (an input
	# changed less than a second before a run is not stored) the check
	touch -d "@$(stat -c %Y "$one")" "$one"
	sleep 1.1
	measure "${p:+check-1mod}" 1 "$kp" "${chk[@]}" "$moddir"
	# one module's bytes changed: signed <-> unsigned, every round
	if cmp -s "$one" "$tmp/one.signed"; then
		cp "$tmp/one.unsigned" "$one"
	else
		cp "$tmp/one.signed" "$one"
	fi
	sleep 1.1
	measure "${p:+check-1mod-bytes}" 1 "$kp" "${chk[@]}" "$moddir"
	want check-1mod-again || return 0
	touch -d "@$(stat -c %Y "$one")" "$one"
	sleep 1.1
	measure "${p:+check-1mod-again}" 1 "$kp" "${chk[@]}" "$moddir"
}
tools=(depmod graph graph-json graph-j1 check check-cold check-warm graph-warm check-replay
	graph-replay check-1mod check-1mod-bytes check-1mod-again)
tools+=(check-b-cold check-b-warm check-b-nokeys-cold check-b-nokeys-warm)
tools+=(depmod-write check-b-after-depmod check-after-depmod)
if [ -n "${BENCH_ONLY:-}" ]; then
	only=(depmod)
	for t in "${tools[@]}"; do [ "$t" = depmod ] || ! want "$t" || only+=("$t"); done
	if want check-b-after-depmod || want check-after-depmod; then only+=(depmod-write); fi
	tools=("${only[@]}")
fi

nmods=$(find "$moddir" -name '*.ko*' -type f | wc -l)
one=$(find "$moddir" -name '*.ko*' -type f | sort | sed -n "$((nmods / 2))p") # check-1mod's
# check-1mod-bytes: $one as shipped (signed) and without its appended signature (the
# trailer: struct module_signature, 12 bytes, sig_len big-endian in its last 4, then the
# 28-byte magic); a compressed $one is changed the same way inside its compression
unpack() { case $1 in *.xz) xz -dc "$1" ;; *.zst) zstd -qdc "$1" ;; *.gz) gzip -dc "$1" ;; *) cat "$1" ;; esac; }
pack() { case $1 in *.xz) xz -c --check=crc32 ;; *.zst) zstd -qc ;; *.gz) gzip -nc ;; *) cat ;; esac; }
cp -p "$one" "$tmp/one.signed"
unpack "$one" >"$tmp/one.raw" || die "cannot decompress $one"
rawsize=$(stat -c %s "$tmp/one.raw")
magic=$(tail -c 28 "$tmp/one.raw")
[ "$magic" = "~Module signature appended~" ] || die "$one is not signed: no byte change to make"
siglen=$(od -An -tu1 -j $((rawsize - 32)) -N 4 "$tmp/one.raw" |
	awk '{ print (($1 * 256 + $2) * 256 + $3) * 256 + $4 }')
head -c $((rawsize - 40 - siglen)) "$tmp/one.raw" | pack "$one" >"$tmp/one.unsigned"
# from here on the tree's module is put back however the script ends
trap 'cp -p "$tmp/one.signed" "$one"; rm -rf "$tmp"' EXIT
scratch=$tmp/scratch # the after-depmod rows' copy of the tree
if want check-b-after-depmod || want check-after-depmod || want depmod-write; then
	cp -a "$root/." "$scratch/" || die "cannot copy $root to $scratch"
fi
echo "tree: $root ($rel, $nmods modules), $runs runs each, alternating after a warm-up round"
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | sed -n 1p)"
echo "depmod: $(depmod --version | tr '\n' ' ')"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load before: $(cut -d ' ' -f 1-3 /proc/loadavg)"
round ""
for ((i = 0; i < runs; i++)); do round x; done
echo "load after: $(cut -d ' ' -f 1-3 /proc/loadavg)"
d=$(echo "${wall[depmod]}" | median)
dr=$(echo "${rss[depmod]}" | median)
printf '%-16s %8s %8s %10s %9s %8s\n' tool wall_s cpu_s peak_kib wall/dep rss/dep
for t in "${tools[@]}"; do
	w=$(echo "${wall[$t]}" | median)
	c=$(echo "${cpu[$t]}" | median)
	r=$(echo "${rss[$t]}" | median)
	printf '%-16s %8s %8s %10s %9s %8s\n' "$t" "$w" "$c" "$r" "$(ratio "$w" "$d")" "$(ratio "$r" "$dr")"
done
echo "all wall times:"
for t in "${tools[@]}"; do echo "  $t: ${wall[$t]}"; done
