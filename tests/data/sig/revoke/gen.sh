#!/bin/bash
# Regenerates vmlinux here (committed output; run by hand): a stripped kernel-like ELF whose
# .init.rodata is what kbuild links from the kernel's own certs/system_certificates.S,
# certs/blacklist_hashes.c's __initconst pointer array and certs/revocation_certificates.S,
# in certs/Makefile's object order, assembled with CONFIG_64BIT: the system list (the test key
# as signing_key.x509, the "distro" key as x509_certificate_list), its size and
# module_cert_size, then the revocation list (the "unknown" key that signs kp_sig_unknown_key)
# and its size. Read by tests/cli/test-sig-revoke.sh.
#
# usage: gen.sh LINUX_SOURCE_DIR HEADERS_COMMON_DIR HEADERS_FLAVOUR_DIR
#   e.g. gen.sh linux-source-6.1 /usr/src/linux-headers-6.1.0-57-{common,amd64}
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "revoke/gen: error: line $LINENO: exit status $?" >&2' ERR
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$1" && pwd)
hdr=$(cd "$2" && pwd)
flv=$(cd "$3" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
mkdir certs
openssl x509 -in "$here/../test-cert.pem" -outform DER > certs/signing_key.x509
openssl x509 -in "$here/../distro-cert.pem" -outform DER > certs/x509_certificate_list
openssl x509 -in "$here/../other-cert.pem" -outform DER > certs/x509_revocation_list
for f in system_certificates revocation_certificates; do
	gcc -D__ASSEMBLY__ -I"$hdr/include" -I"$flv/include" -I"$hdr/arch/x86/include" \
		-I"$flv/arch/x86/include/generated" -include "$flv/include/generated/autoconf.h" \
		-c "$src/certs/$f.S" -o $f.o
done
cat > bl.c <<'C'
const char __attribute__((section(".init.rodata"))) *const blacklist_hashes[] = { "tbs:00", 0 };
int start(void) { return 0; }
C
gcc -O2 -c bl.c -o bl.o
cat > lds <<'L'
SECTIONS {
  . = 0xffffffff81000000;
  .text : { *(.text .text.*) }
  .rodata : { *(.rodata .rodata.*) }
  . = ALIGN(4096);
  .init.data : { *(.init.rodata .init.rodata.*) }
  /DISCARD/ : { *(.comment) *(.note.*) *(.eh_frame) }
}
L
ld -z noexecstack -T lds -e start system_certificates.o bl.o revocation_certificates.o -o vmlinux
strip -o "$here/vmlinux" vmlinux
