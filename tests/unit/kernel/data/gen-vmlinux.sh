#!/bin/sh
# Rebuilds the fake vmlinux fixtures from fake-vmlinux.S (needs x86_64 gcc/ld).
set -e
cd "$(dirname "$0")"
for v in prel32:"" abs:-DABS; do
	name=${v%%:*} def=${v#*:}
	gcc -c ${def:+"$def"} -o "/tmp/fake-vmlinux-$name.o" fake-vmlinux.S
	ld -static -nostdlib -e _start -Ttext=0xffffffff81000000 -z noexecstack \
		-o "fake-vmlinux-$name" "/tmp/fake-vmlinux-$name.o"
	strip --strip-debug "fake-vmlinux-$name"
	rm -f "/tmp/fake-vmlinux-$name.o"
done
