#!/usr/bin/env bash
# Bounded adversarial stage (issue 14): `make check-adversarial`, or
#   tests/adversarial/run-adversarial.sh SRCDIR ASAN_KOPOLICY [FUZZ_BUILDDIR] [FUZZ_SECONDS]
# 1. mutation classes over the fixture modules, `info` and `check` under ASan/UBSan;
# 2. file-system cases: FIFOs, devices and sockets for every file option and inside the
#    directory walked; modules rewritten (shrunk) while they are read;
# 3. corrupt depmod indexes (modules.dep/alias/symbols.bin) for the hook: a fail-open answer;
# 4. a short libFuzzer run per target (reader, base, text, store, symtab, kmodmemo) when
#    FUZZ_BUILDDIR is given.
# Every case runs under a hard timeout; a case fails on a timeout, a signal death, an exit
# status other than 0/1/2, or any sanitizer report. Exit 0 when every case passed.
set -uo pipefail

top=$(cd "${1:?srcdir}" && pwd)
kp=${2:?kopolicy built with --enable-sanitizers}
fuzzdir=${3:-}
fuzz_secs=${FUZZ_SECONDS:-${4:-60}}
per_case=${CASE_TIMEOUT:-20}
mutants=${MUTANTS:-6}
fx=$top/fixtures/ko/6.12
rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
kern=(-k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release "$rel")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# intercept_tls_get_addr=0: as Makefile.am's AM_TESTS_ENVIRONMENT says (GCC 12's leak check
# dies on the dynamic TLS of the libraries loaded on first use)
export ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0:abort_on_error=0:exitcode=99 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=98
cases=0
bad=0

# verdict NAME: judges the last run ($rc, $tmp/err)
verdict() {
	cases=$((cases + 1))
	if [ "$rc" -gt 2 ] || grep -qE \
		"AddressSanitizer|runtime error:|LeakSanitizer" "$tmp/err"; then
		bad=$((bad + 1))
		echo "FAIL ($rc): $1"
		head -5 "$tmp/err" | sed 's/^/    /'
	fi
}
run() { timeout -k 2 "$per_case" "$@" > /dev/null 2> "$tmp/err"; rc=$?; }

echo "== 1. mutated modules (info, check) under ASan/UBSan"
mkdir -p "$tmp/mut"
python3 - "$tmp/mut" "$mutants" "$top"/fixtures/ko/*/*.ko <<'PY'
import os, random, struct, sys
out, per = sys.argv[1], int(sys.argv[2])
rnd = random.Random(14)
def classes(d):
    n = len(d)
    def flip(d):           # 16 random bytes changed
        o = rnd.randrange(0, max(1, n - 16))
        for k in range(16): d[o + k] ^= rnd.randrange(1, 256)
    def trunc(d):          # cut anywhere
        del d[rnd.randrange(1, n):]
    def ehdr(d):           # an ELF header field set to an extreme
        o = rnd.choice([4, 5, 6, 0x10, 0x12, 0x28, 0x30, 0x34, 0x3a, 0x3c, 0x3e])
        d[o:o + 2] = rnd.choice([b'\xff\xff', b'\x00\x00', b'\x03\x00', b'\xff\x7f'])
    def shdr(d):           # a section header's offset/size made huge
        shoff = struct.unpack_from('<Q', d, 0x28)[0]
        shnum = struct.unpack_from('<H', d, 0x3c)[0]
        if shoff + 64 * shnum <= n and shnum:
            s = shoff + 64 * rnd.randrange(shnum)
            struct.pack_into('<Q', d, s + rnd.choice([0x18, 0x20, 0x28]), rnd.choice([2**63, 2**32 - 1, n, n + 1]))
    def sig(d):            # a signature trailer with a lying sig_len
        d += b'\x00' * 8 + struct.pack('>I', rnd.choice([0, n, 2**32 - 1])) + b'~Module signature appended~\n'
    return [flip, trunc, ehdr, shdr, sig]
for p in sys.argv[3:]:
    src = open(p, 'rb').read()
    for i in range(per):
        d = bytearray(src)
        rnd.choice(classes(d))(d)
        open(os.path.join(out, '%s.%d.ko' % (os.path.basename(p)[:-3], i)), 'wb').write(d)
PY
for f in "$tmp"/mut/*.ko; do
	run "$kp" info "$f"; verdict "info $f"
	run "$kp" check "${kern[@]}" "$f"; verdict "check $f"
done
# a compressed, mutated module and a mixed directory
for f in $(ls "$tmp"/mut/*.ko | sed -n 1,20p); do
	xz -C crc32 -c "$f" > "$f.xz"; run "$kp" info "$f.xz"; verdict "info $f.xz"
done
run "$kp" check "${kern[@]}" "$tmp/mut" "$fx"; verdict "check on a mixed directory"
echo "   $cases cases so far, $bad failed (${SECONDS}s)"

echo "== 2. file-system cases"
mkfifo "$tmp/fifo" "$tmp/fifo.ko"
python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.bind('$tmp/sock.ko')"
for f in "$tmp/fifo" "$tmp/fifo.ko" "$tmp/sock.ko" /dev/zero /dev/null "$tmp"; do
	run "$kp" info "$f"; verdict "info $f"; [ $rc = 124 ] && echo "FAIL: info $f hangs"
	run "$kp" check "${kern[@]}" --waivers "$f" "$fx/kp_plain.ko"; verdict "--waivers $f"
	[ $rc = 2 ] || { bad=$((bad + 1)); echo "FAIL: --waivers $f: exit $rc"; }
	run "$kp" check -k "$f" --kernel-release "$rel" "$fx/kp_plain.ko"; verdict "-k $f"
	[ $rc = 2 ] || { bad=$((bad + 1)); echo "FAIL: -k $f: exit $rc"; }
	run "$kp" check -k "$fx/Module.symvers.gz" --kernel-config "$f" --kernel-release \
		"$rel" "$fx/kp_plain.ko"
	verdict "--kernel-config $f"; [ $rc = 2 ] ||
		{ bad=$((bad + 1)); echo "FAIL: --kernel-config $f: exit $rc"; }
done
mkdir -p "$tmp/walk"; cp "$fx/kp_plain.ko" "$tmp/walk/"; mkfifo "$tmp/walk/p.ko"
run "$kp" info "$tmp/walk"; verdict "FIFO in a directory walked"
grep -q "p.ko: is a FIFO" "$tmp/err" || { bad=$((bad + 1)); echo "FAIL: FIFO *.ko not reported"; }
# a module over 1 MiB rewritten in place (shrinking) while it is read: never a signal death
python3 - "$fx/kp_plain.ko" "$tmp/big.ko" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read(); open(sys.argv[2], 'wb').write(d + b'\0' * (2400 << 10))
PY
cp "$tmp/big.ko" "$tmp/big.orig"
( for i in $(seq 300); do head -c 1000 "$tmp/big.orig" > "$tmp/big.ko"; cp \
	"$tmp/big.orig" "$tmp/big.ko"; done ) &
writer=$!
deaths=0
# detect_leaks=0 here: recovering from SIGBUS leaves libelf's handle of that file (a few KiB,
# documented in lib/read/elf-file.h), which LeakSanitizer would count as a failure
for i in $(seq 150); do
	ASAN_OPTIONS=${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0} run "$kp" info "$tmp/big.ko"
	[ "$rc" -gt 2 ] && deaths=$((deaths + 1))
	cases=$((cases + 1))
done
kill "$writer" 2>/dev/null; wait "$writer" 2>/dev/null
[ $deaths = 0 ] || { bad=$((bad + 1)); echo \
	"FAIL: $deaths of 150 reads of a shrinking module died"; }
echo "   $cases cases so far, $bad failed (${SECONDS}s)"

echo "== 3. corrupt depmod indexes for the hook"
if command -v depmod >/dev/null; then
	root=$tmp/root
	mkdir -p "$root/lib/modules/$rel/extra" "$root/boot"
	cp -R "$top/tests/unit/policy/root/." "$root/"
	chmod -R u+w "$root"
	cp "$fx/kp_plain.ko" "$fx/kp_gpl_prov.ko" "$fx/kp_symget.ko" "$root/lib/modules/$rel/extra/"
	: > "$root/lib/modules/$rel/modules.builtin"
	cp "$fx/Module.symvers.gz" "$root/boot/symvers-$rel.gz"
	cp "$fx/config.gz" "$root/boot/config-$rel"
	echo "$rel" > "$root/proc/sys/kernel/osrelease"
	depmod -b "$root" "$rel" 2>/dev/null
	for idx in modules.dep.bin modules.alias.bin modules.symbols.bin; do
		p=$root/lib/modules/$rel/$idx
		cp "$p" "$tmp/good"
		for seed in $(seq 40); do
			python3 - "$p" "$seed" <<'PY'
import random, struct, sys
r = random.Random(int(sys.argv[2])); d = bytearray(open(sys.argv[1], 'rb').read())
if r.random() < 0.2: d[8:12] = struct.pack('>I', r.choice([0x7ffffff0, 0xffffffff, 12, len(d)]))
else:
    o = r.randrange(12, max(13, len(d) - 16))
    for k in range(min(16, len(d) - o)): d[o + k] ^= r.randrange(1, 256)
open(sys.argv[1], 'wb').write(d)
PY
			run "$kp" hook --root "$root" --timeout 10 \
				kp_plain; verdict "hook $idx seed $seed"
			[ $rc = 0 ] || { bad=$((bad + 1)); echo \
				"FAIL: hook $idx seed $seed: exit $rc"; }
			cp "$tmp/good" "$p"
		done
	done
	mkfifo "$root/etc/modprobe.d/x.conf" "$root/lib/modules/$rel/modules.builtin.bin.tmp"
	run "$kp" hook --root "$root" kp_plain; verdict "hook with a FIFO in modprobe.d"
	[ $rc = 0 ] || { bad=$((bad + 1)); echo "FAIL: hook with a FIFO in modprobe.d: exit $rc"; }
else
	echo "   (skipped: no depmod)"
fi
echo "   $cases cases so far, $bad failed (${SECONDS}s)"

if [ -n "$fuzzdir" ]; then
	echo "== 4. libFuzzer, $fuzz_secs s per target"
	for t in reader base text store symtab kmodmemo; do
		mkdir -p "$tmp/corpus-$t"
		# TMPDIR: what a target makes there (fuzz-kmodmemo's facts directory) goes with
		# $tmp even when the target dies
		TMPDIR=$tmp timeout -k 5 $((fuzz_secs + 60)) "$fuzzdir/fuzz/fuzz-$t" \
			-max_total_time="$fuzz_secs" \
			-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$tmp/corpus-$t" \
			"$top/fuzz/corpus/$t" > "$tmp/fuzz-$t.log" 2>&1
		rc=$?
		cases=$((cases + 1))
		if [ $rc != 0 ]; then
			bad=$((bad + 1)); echo \
				"FAIL: fuzz-$t (exit $rc)"; tail -30 "$tmp/fuzz-$t.log"
		else
			grep -E "stat::number_of_executed_units" "$tmp/fuzz-$t.log" |
				sed "s/^/   fuzz-$t: /"
		fi
	done
fi

echo "== $cases cases, $bad failed, ${SECONDS}s"
[ $bad = 0 ]
