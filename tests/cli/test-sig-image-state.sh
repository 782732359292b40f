#!/usr/bin/env bash
# The kernel image's certificates kept in the signature memo (man CACHE, sig-memo.h): keyed by
# the image file's state when that names its bytes, so a warm `check -b` does not read the
# image; a changed or replaced image is still read again: new bytes of the same size and mtime
# under an untrusted owner (or mode), new bytes with another mtime under root, new bytes of the
# same size and mtime under root. Each answer is byte for byte the uncached run's.
# An image changed between the opens that hash and read it is stored under neither key, nor is
# one whose directory was swapped for another one's and back meanwhile (the file as it was).
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
sd=$top/tests/data/sig
fx=$top/fixtures/ko/6.12
rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
. "$top/tests/lib/tap.sh"
tap_tmpdir

# a root: signed modules, Module.symvers and config, and a raw "vmlinux" holding a certificate
r=$tmp/root
m=$r/lib/modules/$rel
img=$r/boot/vmlinux-$rel
mkdir -p "$m/kernel/sig" "$m/build" "$r/boot"
for f in kp_sig_sha256 kp_sig_unknown_key; do
	cp "$sd/6.12/$f.ko" "$m/kernel/sig/"
done
zcat "$fx/Module.symvers.gz" > "$m/build/Module.symvers"
zcat "$fx/config.gz" > "$r/boot/config-$rel"
openssl x509 -in "$sd/other-cert.pem" -outform DER -out "$tmp/other.der" 2> /dev/null
image() { # certificate (DER), zeros before it: written in place, always 16 KiB
	{ head -c "$2" /dev/zero; cat "$1"; } > "$img"
	truncate -s 16384 "$img"
}

export KOPOLICY_CACHE_DIR=$tmp/cache KOPOLICY_RUN_CACHE=off
run() { # name: check -b with the caches, and without (the answer it must give)
	KOPOLICY_CACHE_STATS=1 "$kp" check -b "$r" > "$tmp/$1.out" 2> "$tmp/$1.err"
	echo $? > "$tmp/$1.rc"
	KOPOLICY_CACHE=off "$kp" check -b "$r" > "$tmp/$1.ref" 2> /dev/null
	echo $? > "$tmp/$1.refrc"
}
from_cache() { # name: the kernel images whose certificates came from the memo
	sed -n 's/^kopolicy: signatures: .*; \([0-9]*\) kernel image(s) from the cache$/\1/p' \
		"$tmp/$1.err"
}
same() { # name: byte-identical to the uncached run, same exit status
	cmp -s "$tmp/$1.out" "$tmp/$1.ref" && [ "$(cat "$tmp/$1.rc")" = "$(cat "$tmp/$1.refrc")" ]
}
trusted() { grep -q "kp_sig_sha256.ko): .*signature" "$tmp/$1.out" && return 1 || return 0; }
untrusted() { grep -q "kp_sig_sha256.ko): W: signature-untrusted-key" "$tmp/$1.out"; }

image "$sd/test-cert.der" 4096
sleep 1.1 # a state changed within the last second names no bytes (racy): not keyed by it
run cold
run warm
is "warm: the image's certificates from the memo" "$(from_cache warm)" 1
same warm && trusted warm
ok "... the module signed by the image's key trusted, as uncached" $?
ls "$tmp/cache"/facts-v*/sigs/istate-*.certs > /dev/null 2>&1
ok "... kept under the image's trusted state (sigs/istate-*.certs)" $?

# new bytes, the same size and mtime, under an owner (or mode) whose state names no bytes
stamp=$(stat -c %y "$img")
image "$tmp/other.der" 4096
touch -d "$stamp" "$img"
if [ "$(id -u)" = 0 ]; then chown 65534 "$img"; else chmod g+w "$img"; fi
sleep 1.1
run untrusted
is "untrusted, same size and mtime, new bytes: read again" "$(from_cache untrusted)" 0
same untrusted && untrusted untrusted
ok "... its new key decides, as uncached" $?
image "$sd/test-cert.der" 5000
touch -d "$stamp" "$img"
sleep 1.1
run untrusted2
is "untrusted, new bytes again (same size and mtime): read again" "$(from_cache untrusted2)" 0
same untrusted2 && trusted untrusted2
ok "... its key decides, as uncached" $?

# back to root (or the user) and a mode that names the bytes: new bytes, another mtime
if [ "$(id -u)" = 0 ]; then chown 0 "$img"; else chmod g-w "$img"; fi
image "$tmp/other.der" 6000
touch -d "2020-01-02 03:04:05" "$img"
sleep 1.1
run rootnew
is "trusted owner, new bytes and mtime: read again" "$(from_cache rootnew)" 0
same rootnew && untrusted rootnew
ok "... its new key decides, as uncached" $?
run rootwarm
is "... then taken from the memo" "$(from_cache rootwarm)" 1
same rootwarm && untrusted rootwarm
ok "... with the same answer" $?

# new bytes of the same size and mtime under root: only the change time tells
stamp=$(stat -c %y "$img")
image "$sd/test-cert.der" 7000
touch -d "$stamp" "$img"
sleep 1.1
run rootsame
is "trusted owner, same size and mtime, new bytes: read again" "$(from_cache rootsame)" 0
same rootsame && trusted rootsame
ok "... its key decides, as uncached" $?

# a new file renamed over it, with bytes the memo holds: found by its bytes, same answer
cp -p "$img" "$tmp/copy"
mv "$tmp/copy" "$img"
sleep 1.1
run renamed
is "the same bytes in a new file: from the memo by its bytes" "$(from_cache renamed)" 1
same renamed && trusted renamed
ok "... with the same answer" $?

# the image changed between the open that hashes it and the one that reads its certificates:
# nothing stored under the hashed bytes (the next run with those bytes would take the other
# image's keys). strace holds the open after the K-th one of the image (the order of the opens
# is the code's, so every K up to 5) while the test writes other bytes in place.
if command -v strace > /dev/null && strace -qq -o /dev/null true 2> /dev/null; then
	held=0
	for k in 1 2 3 4 5; do
		rm -rf "$tmp/cache"
		image "$sd/test-cert.der" 4096
		sleep 1.1
		: > "$tmp/opens"
		strace -f -qq -P "/boot/vmlinux-$rel" -e trace=openat2,openat \
			-e inject=openat2:delay_enter=1500000:when=$((k + 1)) -o "$tmp/opens" \
			"$kp" check -b "$r" > /dev/null 2>&1 &
		pid=$!
		for _ in $(seq 200); do
			[ "$(grep -c 'open' "$tmp/opens")" -ge "$k" ] && break
			sleep 0.05
		done
		sleep 0.5
		image "$tmp/other.der" 4096
		wait "$pid"
		grep -q DELAYED "$tmp/opens" && held=$((held + 1))
		sleep 1.1
		image "$sd/test-cert.der" 4096
		sleep 1.1
		run "race$k"
		same "race$k" && trusted "race$k"
		ok "image changed after its open $k: the next run answers as uncached" $?
	done
	ok "... the opens were held (strace's inject)" $([ "$held" -ge 3 ]; echo $?)
else
	for k in 1 2 3 4 5 6; do
		skip "the image changed between its opens ($k)" "no strace (or no ptrace)"
	done
fi

# the image left as it is, its directory swapped for one with another image (other.der) while
# the K-th open of the path is held and swapped back while the next one is: the file hashed and
# the file in the end are the same, in the same state, but the certificates were read from the
# other one. Nothing stored (a run with the image's bytes would take the other image's keys:
# kp_sig_unknown_key.ko trusted, kp_sig_sha256.ko not).
if command -v strace > /dev/null && strace -qq -o /dev/null true 2> /dev/null; then
	held=0
	mkdir -p "$r/boot-other"
	cp "$r/boot/config-$rel" "$r/boot-other/"
	{ head -c 4096 /dev/zero; cat "$tmp/other.der"; } > "$r/boot-other/vmlinux-$rel"
	truncate -s 16384 "$r/boot-other/vmlinux-$rel"
	opens() { # N: wait until the N-th open of the image's path has begun
		for _ in $(seq 200); do
			[ "$(grep -c 'open' "$tmp/opens")" -ge "$1" ] && return
			sleep 0.05
		done
	}
	swap() { # the two directories exchanged (two renames: never both missing for long)
		mv "$r/boot" "$r/boot-swap" && mv "$r/boot-other" "$r/boot" &&
			mv "$r/boot-swap" "$r/boot-other"
	}
	for k in 1 2 3 4; do
		rm -rf "$tmp/cache"
		image "$sd/test-cert.der" 4096
		sleep 1.1
		: > "$tmp/opens"
		strace -f -qq -P "/boot/vmlinux-$rel" -e trace=openat2,openat \
			-e inject=openat2:delay_enter=1500000:when=$((k + 1))..$((k + 2)) \
			-o "$tmp/opens" "$kp" check -b "$r" > /dev/null 2>&1 &
		pid=$!
		opens $((k + 1))
		sleep 0.3
		swap
		opens $((k + 2))
		sleep 0.3
		swap
		wait "$pid"
		[ "$(grep -c DELAYED "$tmp/opens")" -ge 1 ] && held=$((held + 1))
		run "swap$k"
		same "swap$k" && trusted "swap$k"
		ok "image's directory swapped at its open $k and back at the next: the next run answers as uncached" $?
	done
	ok "... the opens were held (strace's inject)" $([ "$held" -ge 3 ]; echo $?)
else
	for k in 1 2 3 4 5; do
		skip "the image's directory swapped at its opens ($k)" "no strace (or no ptrace)"
	done
fi

tap_done
