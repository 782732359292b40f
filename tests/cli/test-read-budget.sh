#!/usr/bin/env bash
# The read pool's memory budget (issue 22, item 5): the decompressed bytes the reading threads
# hold together stay within --max-size whatever --jobs says, measured on the real sizes (the
# size a zstd frame declares, and growth while decoding when it declares none). 16 small
# .ko.zst bombs (tests/cli/zstd-bomb.py: an ELF header and 40 MiB of zeros, ~1.4 KB each) at
# -j16 (and 16 .ko.xz of the same content) must peak near one of them, not near 16 of them; a module
# larger than the cap is one error line and the others are still read.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
fx=$top/fixtures/ko/6.12
. "$top/tests/lib/tap.sh"
tap_tmpdir

# peak DIR ARGS...: runs kopolicy info ARGS DIR; prints "STATUS MAXRSS_KIB", stderr in $tmp/err.
# Under ASan freed memory is kept in a quarantine (256 MiB by default) that would hide what the
# threads hold at once: none for these runs.
peak() {
	local dir=$1
	shift
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0 \
	python3 - "$tmp/err" "$kp" info --no-cache "$@" "$dir" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "w") as err:
    r = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}

mkdir -p "$tmp/declared" "$tmp/undeclared" "$tmp/xz" "$tmp/one"
for i in $(seq 1 16); do
	python3 "$top/tests/cli/zstd-bomb.py" "$fx/kp_plain.ko" "$tmp/declared/b$i.ko.zst" 40
	python3 "$top/tests/cli/zstd-bomb.py" "$fx/kp_plain.ko" \
		"$tmp/undeclared/b$i.ko.zst" 40 nosize
done
# xz (a 64 MiB dictionary, the size in the index): ~6 KB each
{ head -c 64 "$fx/kp_plain.ko"; head -c $((40 << 20)) /dev/zero; } |
	xz -T1 --check=crc32 --lzma2=dict=64MiB -c > "$tmp/xz/b1.ko.xz"
for i in $(seq 2 16); do cp "$tmp/xz/b1.ko.xz" "$tmp/xz/b$i.ko.xz"; done
for kind in declared undeclared xz; do
	mkdir "$tmp/one-$kind"
	cp "$tmp/$kind/b1.ko."* "$tmp/one-$kind/"
	read -r rc1 one < <(peak "$tmp/one-$kind" -j1 --max-size 64M)
	echo "# one bomb ($kind size): exit $rc1, peak RSS $one KiB"
	read -r rc rss < <(peak "$tmp/$kind" -j16 --max-size 64M)
	echo "# 16 bombs ($kind size) at -j16: exit $rc, peak RSS $rss KiB"
	# 16 x 40 MiB would be 640 MiB over one; the budget (64 MiB) allows one at a time. The
	# decoders' own windows and each thread's spare buffer are outside the budget and depend
	# on how the threads were scheduled: 128 MiB of slack (seen: 30-60 MiB, 2 CPUs, loaded)
	ok "$kind size: 16 bombs at -j16 peak within 128 MiB of one bomb ($rss vs $one KiB)" \
		$(( rss < one + 128 * 1024 ? 0 : 1 ))
	ok "$kind size: each bomb is one error line" \
		$(( $(grep -c "^kopolicy: $tmp/$kind/b[0-9]*\.ko\.\(zst\|xz\): " \
			"$tmp/err") == 16 ? 0 : 1 ))
	grep -q "out of memory" "$tmp/err"
	ok "$kind size: no file fails for memory" $(( $? == 0 ? 1 : 0 ))
done

# larger than the cap: one line; the other files are read
python3 "$top/tests/cli/zstd-bomb.py" "$fx/kp_plain.ko" "$tmp/one/big.ko.zst" 80
cp "$fx/kp_gpl_prov.ko.zst" "$tmp/one/"
"$kp" info --no-cache -j4 --max-size 64M --json "$tmp/one" > "$tmp/out.json" 2> "$tmp/err"
rc=$?
grep -qx "kopolicy: $tmp/one/big.ko.zst: decompressed size exceeds the limit of 64 MiB (decompression bomb? see --max-size)" "$tmp/err"
ok "a module past the cap: one error line" $?
python3 -c \
	'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if [m["name"] for m in d["modules"]] == ["kp_gpl_prov"] else 1)' "$tmp/out.json"
ok "... the good module beside it is read (exit $rc)" $?
[ "$rc" -eq 2 ]
ok "... and the exit status says a file could not be read (2)" $?

tap_done
