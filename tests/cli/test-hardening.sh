#!/usr/bin/env bash
# Issue 14: hostile input and file system states. Every file option and every directory walked
# refuses FIFOs, devices and sockets with one line; caps; one escaping rule for every text
# output; JSON keeps bytes apart; the hook answers in bounded time on corrupt depmod indexes,
# a FIFO in modprobe.d, or anything else that stalls; compressed text inputs; --max-size;
# hook.conf ownership and dangling links; --print-install-rules paths.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
# the default policy: ROOT$KP_SYSCONFDIR/kopolicy/hook.conf (configure's sysconfdir)
: "${KP_SYSCONFDIR:?not set (the configured sysconfdir, from make check)}"
fx=$top/fixtures/ko/6.12
rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
kern=(-k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release "$rel")
. "$top/tests/lib/tap.sh"
tap_tmpdir

is() { if [ "$2" = "$3" ]; then ok "$1" 0; else ok "$1" 1; echo "#   got '$2', want '$3'"; fi; }
# run SECONDS CMD...: rc in $rc (124 on timeout), stderr in $tmp/err, stdout in $tmp/out
run() {
	local t=$1
	shift
	timeout -k 2 "$t" "$@" > "$tmp/out" 2> "$tmp/err"
	rc=$?
}
errline() { # description, exact line expected as the whole of stderr
	if [ "$(cat "$tmp/err")" = "$2" ]; then ok "$1" 0; else
		ok "$1" 1; echo "#   want: $2"; sed 's/^/#   got:  /' "$tmp/err"; fi
}

mkfifo "$tmp/fifo.ko" "$tmp/fifo"
python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.bind('$tmp/sock.ko')"

# --- item 3/4: every file option refuses FIFOs, devices and sockets at once, with one line
run 10 "$kp" info "$tmp/fifo.ko"
is "info FIFO: exit 2, no hang" "$rc" 2
errline "info FIFO: one line" "kopolicy: $tmp/fifo.ko: is a FIFO, not a regular file"
run 10 "$kp" info /dev/zero
errline "info /dev/zero: one line" "kopolicy: /dev/zero: is a character device, not a regular file"
run 10 "$kp" info "$tmp/sock.ko"
errline "info socket: one line" "kopolicy: $tmp/sock.ko: is a socket, not a regular file"
for opt in --waivers; do
	for f in "$tmp/fifo" /dev/zero; do
		run 10 "$kp" check "${kern[@]}" "$opt" "$f" "$fx/kp_plain.ko"
		is "check $opt $f: exit 2 at once" "$rc" 2
		grep -q "^kopolicy: $f: is a \(FIFO\|character device\), not a regular file$" \
			"$tmp/err"
		ok "check $opt $f: says what it is" $?
	done
done
for f in "$tmp/fifo" /dev/zero; do
	run 10 "$kp" check -k "$f" --kernel-release "$rel" "$fx/kp_plain.ko"
	is "check -k $f: exit 2 at once" "$rc" 2
	run 10 "$kp" check -k "$fx/Module.symvers.gz" --kernel-config "$f" --kernel-release "$rel" \
		"$fx/kp_plain.ko"
	is "check --kernel-config $f: exit 2 at once" "$rc" 2
	grep -q "not a regular file" "$tmp/err"
	ok "check --kernel-config $f: says so" $?
done
# a FIFO or socket named *.ko inside a directory walked: reported, not skipped
mkdir -p "$tmp/walk"
cp "$fx/kp_plain.ko" "$tmp/walk/"
mkfifo "$tmp/walk/pipe.ko"
run 10 "$kp" info "$tmp/walk"
is "directory with a FIFO *.ko: exit 2" "$rc" 2
errline "directory with a FIFO *.ko: named" \
	"kopolicy: $tmp/walk/pipe.ko: is a FIFO, not a regular file"
grep -q "name: *kp_plain" "$tmp/out"
ok "directory with a FIFO *.ko: the good module still read" $?

# --- item 4: caps
head -c $((20 << 20)) /dev/zero | tr '\0' '#' > "$tmp/huge.waivers"
run 10 "$kp" check "${kern[@]}" --waivers "$tmp/huge.waivers" "$fx/kp_plain.ko"
is "a 20 MiB waiver file: refused" "$rc" 2
grep -q "larger than the limit of 16 MiB" "$tmp/err"
ok "... naming the cap" $?

# --- item 7: one escaping rule for text; JSON keeps bytes apart
nl="$tmp/a
kopolicy: x.ko: forged.ko"
: > "$nl"
run 10 "$kp" info "$nl"
is "a newline in a path stays on one line" "$(wc -l < "$tmp/err")" 1
errline "... escaped as \\n" "kopolicy: $tmp/a\\nkopolicy: x.ko: forged.ko: empty file"
esc="$tmp/$(printf 'e\033]0;T\007\033[31m\\x\xff')"
: > "$esc"
run 10 "$kp" info "$esc"
errline "escape sequences, backslash and invalid UTF-8 escaped" \
	"kopolicy: $tmp/e\\x1b]0;T\\x07\\x1b[31m\\\\x\\xff: empty file"
cp "$fx/kp_plain.ko" "$tmp/$(printf 'm\xfe.ko')"
cp "$fx/kp_plain.ko" "$tmp/$(printf 'm\xff.ko')"
run 10 "$kp" info --json "$tmp/$(printf 'm\xfe.ko')" "$tmp/$(printf 'm\xff.ko')"
python3 - "$tmp/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
paths = [m['path'].encode('utf-8', 'surrogateescape') for m in d['modules']]
sys.exit(0 if len(set(paths)) == 2 and paths[0].endswith(b'm\xfe.ko') else 1)
PY
ok "JSON: invalid UTF-8 bytes as \\udcXX, two paths stay two" $?
cp "$fx/kp_plain.ko" "$tmp/$(printf 'n\nx.ko')"
run 10 "$kp" info "$tmp/$(printf 'n\nx.ko')"
head -1 "$tmp/out" | grep -qF "$tmp/n\\nx.ko:"
ok "info text: the path line escaped" $?

# --- item 6: compressed text inputs decoded as text
gzip -dc "$fx/Module.symvers.gz" > "$tmp/sv"
zstd -q -c < "$tmp/sv" > "$tmp/sv.zst" 2>/dev/null
if [ -s "$tmp/sv.zst" ]; then
	run 20 "$kp" check -k "$tmp/sv.zst" --kernel-config "$fx/config.gz" --kernel-release \
		"$rel" "$fx/kp_plain.ko"
	is "zstd Module.symvers without a content size" "$rc" 0
fi
head -c 20000 "$tmp/sv" | gzip > "$tmp/sv2.gz"
tail -c +20001 "$tmp/sv" | gzip >> "$tmp/sv2.gz"
run 20 "$kp" check -k "$tmp/sv2.gz" --kernel-config "$fx/config.gz" --kernel-release \
	"$rel" "$fx/kp_plain.ko"
is "two-member gzip Module.symvers" "$rc" 0
python3 -c \
	"import gzip,sys; sys.stdout.buffer.write(gzip.compress(b'CONFIG_MODULES=y\n'*(5<<20)))" \
	> "$tmp/big.config.gz"
run 20 "$kp" check -k "$fx/Module.symvers.gz" --kernel-config "$tmp/big.config.gz" \
	--kernel-release "$rel" "$fx/kp_plain.ko"
errline "over-cap config.gz: a clear error" \
	"kopolicy: $tmp/big.config.gz: decompressed size exceeds the limit of 64 MiB"

# --- item 5: duplicate keys in linear time
python3 -c "
import sys
sys.stdout.write(''.join('0x1234\tfoo\tdrivers/m%d\tEXPORT_SYMBOL\t\n' % i for i in range(80000)))" > "$tmp/dup.symvers"
python3 -c "import sys; sys.stdout.write('CONFIG_MODULES=y\n' * 320000)" > "$tmp/dup.config"
run 15 "$kp" check -k "$tmp/dup.symvers" --kernel-config "$tmp/dup.config" --kernel-release \
	"$rel" "$fx/kp_plain.ko"
ok "80k duplicate Module.symvers names, 320k duplicate .config lines: well under 15 s" \
	$(( rc == 124 ? 1 : 0 ))
# 80k /proc/modules lines of one name: its sysfs taint is read once, not 80k times
cp -r "$top/tests/unit/system/root" "$tmp/dupproc"
python3 -c \
	"import sys; sys.stdout.write('vboxdrv 634880 0 - Live 0x0000000000000000 (OE)\n' * 80000)" \
	> "$tmp/dupproc/proc/modules"
run 15 "$kp" check --format json --running --root "$tmp/dupproc" "$fx/kp_plain.ko"
ok "80k duplicate /proc/modules lines: well under 15 s" $(( rc == 124 || rc == 2 ? 1 : 0 ))

# --- item 8: libelf's error text belongs to the file
python3 - "$fx/kp_plain.ko" "$tmp/data3.ko" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read()); d[5] = 3; open(sys.argv[2], 'wb').write(d)
PY
run 10 "$kp" info "$tmp/data3.ko"
errline "EI_DATA=3 alone: its own reason" \
	"kopolicy: $tmp/data3.ko: invalid ELF header: unknown byte order 3 (EI_DATA)"

# --- item 10: xz trailing bytes, --max-size
xz -C crc32 --lzma2=dict=1MiB -c "$fx/kp_plain.ko" > "$tmp/trail.ko.xz"
printf 'trailing garbage' >> "$tmp/trail.ko.xz"
run 10 "$kp" info "$tmp/trail.ko.xz"
is "xz with trailing bytes reads like the kernel reads it" "$rc" 0
python3 - "$fx/kp_plain.ko" "$tmp/siglen.ko" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
open(sys.argv[2], 'wb').write(d + b'\0' * 8 + struct.pack('>I', len(d) - 1) + b'~Module signature appended~\n')
PY
run 10 "$kp" info "$tmp/siglen.ko"
# id_type 0: mod_check_sig() says -ENOPKG before info->len shrinks; the kernel reads the ELF
# from the file minus the marker (the oracle's sig_dummy_long_siglen shows the PKCS#7 case)
[ "$rc" = 0 ] && grep -q "^  signature:       unknown type, [0-9]* bytes$" "$tmp/out"
ok "a signature trailer that eats the ELF: read as the kernel reads it (not an input error)" $?
run 10 "$kp" info --max-size 1K "$fx/kp_plain.ko"
grep -q "limit of 1 KiB" "$tmp/err"
ok "--max-size 1K says 1 KiB" $?
run 10 "$kp" info --max-size -1 "$fx/kp_plain.ko"
is "--max-size -1 is a usage error" "$rc" 2
run 10 "$kp" info --max-size 99999999999G "$fx/kp_plain.ko"
is "--max-size overflow is a usage error" "$rc" 2

# --- the hook
if command -v depmod >/dev/null; then
	root=$tmp/root
	mkdir -p "$root/lib/modules/$rel/extra" "$root/boot"
	cp -R "$top/tests/unit/policy/root/." "$root/"
	chmod -R u+w "$root"
	cp "$fx/kp_plain.ko" "$fx/kp_gpl_prov.ko" "$root/lib/modules/$rel/extra/"
	: > "$root/lib/modules/$rel/modules.builtin"
	: > "$root/lib/modules/$rel/modules.builtin.modinfo"
	cp "$fx/Module.symvers.gz" "$root/boot/symvers-$rel.gz"
	cp "$fx/config.gz" "$root/boot/config-$rel"
	echo "$rel" > "$root/proc/sys/kernel/osrelease"
	depmod -b "$root" "$rel" 2>/dev/null
	dep=$root/lib/modules/$rel/modules.dep.bin
	cp "$dep" "$tmp/dep.good"
	run 10 "$kp" hook --root "$root" kp_plain
	is "hook: the good root decides" "$rc" 0

	# item 2: corrupt modules.dep.bin: an answer at once, the on-error policy applied
	python3 - "$dep" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read()); d[8:12] = struct.pack('>I', 0x7ffffff0)
open(sys.argv[1], 'wb').write(d)
PY
	run 10 "$kp" hook --root "$root" --on-error fail-closed kp_plain
	is "hook: root offset 0x7ffffff0: fail-closed blocks (exit 2), no hang" "$rc" 2
	grep -q "modules.dep.bin: corrupt depmod index: node offset 0x7ffffff0 out of the file; blocking the load" "$tmp/err"
	ok "hook: ... says why" $?
	for seed in 1 2 3 4 5 6 7 8 9 10 11 12; do
		cp "$tmp/dep.good" "$dep"
		python3 - "$dep" "$seed" <<'PY'
import random, sys
random.seed(int(sys.argv[2]))
d = bytearray(open(sys.argv[1], 'rb').read()); o = random.randrange(12, len(d) - 16)
for k in range(16): d[o + k] ^= random.randrange(1, 256)
open(sys.argv[1], 'wb').write(d)
PY
		run 10 "$kp" hook --root "$root" kp_plain
		ok "hook: 16-byte flip (seed $seed): fail-open answer, exit $rc" \
			$(( rc == 0 ? 0 : 1 ))
	done
	cp "$tmp/dep.good" "$dep"
	# modules.alias.bin is checked when a lookup can reach it (a name not in modules.dep.bin)
	alias=$root/lib/modules/$rel/modules.alias.bin
	cp "$alias" "$tmp/alias.good"
	python3 - "$alias" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read()); d[8:12] = struct.pack('>I', 0x7ffffff0)
open(sys.argv[1], 'wb').write(d)
PY
	run 10 "$kp" hook --root "$root" kp_plain
	is "hook: corrupt modules.alias.bin, a module name: decided (libkmod stops at modules.dep.bin)" "$rc" 0
	run 10 "$kp" hook --root "$root" --on-error fail-closed some-alias
	is "hook: corrupt modules.alias.bin, an alias: fail-closed blocks, no hang" "$rc" 2
	grep -q "modules.alias.bin: corrupt depmod index" "$tmp/err"
	ok "hook: ... says why" $?
	cp "$tmp/alias.good" "$alias"

	# item 3: a FIFO in modprobe.d, for hook, check -b and graph -b
	mkfifo "$root/etc/modprobe.d/evil.conf"
	run 10 "$kp" hook --root "$root" kp_plain
	is "hook: FIFO in modprobe.d: fail-open answer, no hang" "$rc" 0
	grep -q "etc/modprobe.d/evil.conf: not a regular file: refused as modprobe configuration" \
		"$tmp/err"
	ok "hook: ... names it" $?
	run 10 "$kp" check -b "$root" --kernel-release "$rel" "$root/lib/modules/$rel/extra"
	is "check -b: FIFO in modprobe.d: exit 2, no hang" "$rc" 2
	run 10 "$kp" graph -b "$root" --kernel-release "$rel" "$root/lib/modules/$rel/extra"
	is "graph -b: FIFO in modprobe.d: exit 2, no hang" "$rc" 2
	rm -f "$root/etc/modprobe.d/evil.conf"

	# the deadline: a lookup that stalls (a preloaded libkmod wrapper opening a FIFO no one
	# writes: a blocking call that SA_RESTART restarts after each re-armed SIGALRM, where a
	# sleep() would end early) ends in --timeout
	cc=${CC:-cc}
	cat > "$tmp/stall.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
int kmod_module_new_from_lookup(void *ctx, const char *given, void **list)
{
	int (*real)(void *, const char *, void **) = dlsym(RTLD_NEXT, "kmod_module_new_from_lookup");
	open(FIFO, O_RDONLY);
	return real(ctx, given, list);
}
C
	if "$cc" -shared -fPIC -DFIFO="\"$tmp/fifo\"" -o "$tmp/stall.so" "$tmp/stall.c" -ldl \
		2>/dev/null; then
		start=$(date +%s)
		LD_PRELOAD=$tmp/stall.so ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 \
			run 20 "$kp" hook --root "$root" --timeout 1 --on-error fail-closed kp_plain
		end=$(date +%s)
		is "hook: stalled lookup, --timeout 1, fail-closed: exit 2" "$rc" 2
		ok "hook: ... within 3 s" $(( end - start <= 3 ? 0 : 1 ))
		errline "hook: ... one line" \
			"kopolicy: kp_plain: cannot decide: no answer within 1 s (timeout); blocking the load (on-error fail-closed, --on-error)"
		LD_PRELOAD=$tmp/stall.so ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 \
			run 20 "$kp" hook --root "$root" --timeout 1 kp_plain
		is "hook: stalled lookup, fail-open: exit 0" "$rc" 0
	fi
	# a fatal signal inside a library (a file truncated under libkmod's mapping): on-error
	cat > "$tmp/bus.c" <<'C'
#include <signal.h>
int kmod_module_new_from_lookup(void *ctx, const char *given, void **list)
{
	(void)ctx; (void)given; (void)list;
	raise(SIGBUS);
	return -1;
}
C
	if "$cc" -shared -fPIC -o "$tmp/bus.so" "$tmp/bus.c" 2>/dev/null; then
		LD_PRELOAD=$tmp/bus.so ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 \
			run 20 "$kp" hook --root "$root" kp_plain
		is "hook: SIGBUS in libkmod, fail-open: exit 0, not a signal death" "$rc" 0
		errline "hook: ... one line" \
			"kopolicy: kp_plain: cannot decide: kopolicy crashed or a file changed under it (fatal signal); letting the load go on (on-error fail-open, default)"
	fi
	run 5 "$kp" hook --root "$root" --timeout -1 kp_plain
	is "hook: --timeout -1 is a usage error" "$rc" 2

	# item 10: hook.conf: dangling link, owner
	mkdir -p "$root$KP_SYSCONFDIR/kopolicy"
	ln -s /nonexistent "$root$KP_SYSCONFDIR/kopolicy/hook.conf"
	run 10 "$kp" hook --root "$root" --on-error fail-closed kp_plain
	is "hook: dangling hook.conf: refused, fail-closed blocks" "$rc" 2
	grep -q "hook.conf: dangling symbolic link" "$tmp/err"
	ok "hook: ... says so" $?
	rm -f "$root$KP_SYSCONFDIR/kopolicy/hook.conf"
	if [ "$(id -u)" = 0 ]; then
		echo "on-error fail-open" > "$root$KP_SYSCONFDIR/kopolicy/hook.conf"
		chown 65534 "$root$KP_SYSCONFDIR/kopolicy/hook.conf"
		run 10 "$kp" hook --root "$root" --on-error fail-closed kp_plain
		is "hook: hook.conf owned by another user: refused" "$rc" 2
		grep -q "owned by uid 65534, neither root nor the user running: refused" "$tmp/err"
		ok "hook: ... says so" $?
		rm -f "$root$KP_SYSCONFDIR/kopolicy/hook.conf"
	fi

	# item 9: --print-install-rules: absolute --config, a binary path with a space quoted
	mkdir -p "$root/lib/modules/$rel/updates"
	cp "$fx/kp_plain.ko" "$root/lib/modules/$rel/updates/kp_upd.ko"
	depmod -b "$root" "$rel" 2>/dev/null
	(cd "$tmp" && "$kp" hook --root "$root" --print-install-rules --config rel/policy.conf) \
		> "$tmp/rules" 2> "$tmp/err"
	grep -q -- "--config $tmp/rel/policy.conf " "$tmp/rules"
	ok "print-install-rules: a relative --config made absolute" $?
	mkdir -p "$tmp/with space"
	cp "$kp" "$tmp/with space/kopolicy"
	"$tmp/with space/kopolicy" hook --root "$root" --print-install-rules \
		> "$tmp/rules" 2> "$tmp/err"
	grep -q "^install kp_plain '$tmp/with space/kopolicy' hook " "$tmp/rules"
	ok "print-install-rules: a binary path with a space is quoted, not replaced" $?
fi

tap_done
