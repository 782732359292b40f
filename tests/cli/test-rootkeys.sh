#!/usr/bin/env bash
# The running system's key and policy files under --root ROOT (--running, --this-machine, the
# hook): proc/keys, the active IMA policy (sys/kernel/security/ima/policy), the EFI variables
# (sys/firmware/efi), DKMS's framework.conf and its key (var/lib/dkms/mok.pub) are opened
# inside ROOT by descriptors. Each is made, in turn, an absolute link (or a link to a directory
# on the way) to a host file whose content would change the answer, and then a FIFO that no
# one writes: the root's own file is read (or its absence seen), the host's never, and a FIFO
# is said, not waited on.
# Last, -b ROOT where /proc is not mounted (a tmpfs over it in a mount namespace): a file
# checked on an O_PATH descriptor cannot be opened again through /proc/self/fd, and is then
# refused with one line, not opened by name again (a device swapped in meanwhile would be).
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
sd=$top/tests/data/sig
fx=$top/fixtures/ko/6.12
. "$top/tests/lib/tap.sh"
tap_tmpdir
[ -z "${KEEP:-}" ] || trap - EXIT
export KOPOLICY_CACHE=off

# json FILE EXPR...: EXPR (its words joined by spaces) true of FILE's JSON as d
json() { python3 -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if (${*:2}) else 1)"; }
rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
r=$tmp/root
host=$tmp/host
mkdir -p "$r/proc/sys/kernel" "$r/sys/module/module/parameters" "$r/sys/kernel/security" \
	"$r/var/lib/dkms" "$r/etc/dkms" "$host"
echo "$rel" > "$r/proc/sys/kernel/osrelease"
: > "$r/proc/modules"
echo N > "$r/sys/module/module/parameters/sig_enforce"
echo "[none] integrity confidentiality" > "$r/sys/kernel/security/lockdown"
# run MODULE: --running --root ROOT, JSON in $tmp/c.json; a FIFO waited on ends in a timeout
run() {
	timeout 60 "$kp" check -f json --fail-on never -k "$fx/Module.symvers.gz" \
		--kernel-config "$fx/config.gz" --running --root "$r" "$sd/6.12/$1.ko" \
		> "$tmp/c.json" 2> "$tmp/e.txt"
}
sources() { json "$tmp/c.json" "$@"; }
# keys N: the key_sources line of ROOT/proc/keys listing N asymmetric keys, none blacklisted
keys() {
	local s=s
	[ "$1" = 1 ] && s=
	sources "'$r/proc/keys: $1 asymmetric key$s (descriptions only: key ids, no certificates)," \
		"0 blacklisted module hashes' in d['kernel']['key_sources']"
}
# swap PATH: ROOT/PATH made an absolute link to PATH's twin on the host ($host/PATH), whose
# target inside ROOT ($r$host/PATH) is absent
swap() {
	mkdir -p "$(dirname "$r/$1")"
	rm -rf "${r:?}/$1"
	ln -s "$host/$1" "$r/$1"
}
# fifo PATH: ROOT/PATH a FIFO no one writes
fifo() {
	mkdir -p "$(dirname "$r/$1")"
	rm -rf "${r:?}/$1"
	mkfifo "$r/$1"
}

# --- proc/keys
mkdir -p "$host/proc"
hdr='1 I------ 1 perm 1f0b0000 0 0'
printf '%s\n' "$hdr asymmetri Host Secret Key: 0123abcd X509.rsa 0123abcd []" \
	"$hdr blacklist bin:$(printf '%064d' 0): X" > "$host/proc/keys"
printf '1 I------ 1 perm 1f0b0000 0 0 keyring   .builtin_trusted_keys: 1\n' > "$r/proc/keys"
run kp_sig_unsigned
keys 0
ok "proc/keys, a regular file of the root: read (the control)" $?
swap proc/keys
run kp_sig_unsigned
is "... an absolute link to a host file: exits 0" $? 0
sources "not any('proc/keys' in s for s in d['kernel']['key_sources'])"
ok "... its target looked up inside the root (absent there): the host's keys never listed" $?
mkdir -p "$r$host/proc"
printf '1 I------ 1 perm 1f0b0000 0 0 asymmetri Root Key: 4567cdef X509.rsa 4567cdef []\n' \
	> "$r$host/proc/keys"
run kp_sig_unsigned
keys 1
ok "... present inside the root: the root's file read" $?
fifo proc/keys
run kp_sig_unsigned
is "... a FIFO: not waited on, exits 0" $? 0
sources "'$r/proc/keys: cannot read (is a FIFO, not a regular file): the running kernel\\'s" \
	"keys are unknown' in d['kernel']['key_sources']"
ok "... and said" $?
rm "$r/proc/keys"

# --- the active IMA policy: the host's appraises modules (an unsigned one fails with EACCES)
mkdir -p "$host/sys/kernel/security/ima"
printf 'appraise func=MODULE_CHECK appraise_type=imasig\n' \
	> "$host/sys/kernel/security/ima/policy"
run kp_sig_unsigned
json "$tmp/c.json" "d['modules'][0]['loads'] is True"
ok "no IMA policy under the root: the unsigned module loads (the control)" $?
mkdir -p "$r/sys/kernel/security"
ln -s "$host/sys/kernel/security/ima" "$r/sys/kernel/security/ima"
run kp_sig_unsigned
json "$tmp/c.json" "d['modules'][0]['loads'] is True and" \
	"'ima' not in str(d['modules'][0]['findings']).lower()"
ok "sys/kernel/security/ima an absolute link to a host directory: the host's policy not read" $?
rm "$r/sys/kernel/security/ima"
mkdir -p "$r/sys/kernel/security/ima"
ln -s "$host/sys/kernel/security/ima/policy" "$r/sys/kernel/security/ima/policy"
run kp_sig_unsigned
json "$tmp/c.json" "d['modules'][0]['loads'] is True"
ok "... policy itself an absolute link to the host's: not read" $?
fifo sys/kernel/security/ima/policy
run kp_sig_unsigned
is "... a FIFO: not waited on, exits 0" $? 0
rm "$r/sys/kernel/security/ima/policy"
cp "$host/sys/kernel/security/ima/policy" "$r/sys/kernel/security/ima/policy"
run kp_sig_unsigned
json "$tmp/c.json" "d['modules'][0]['loads'] is False and d['modules'][0]['errno'] == 'EACCES'"
ok "... the root's own policy: read (EACCES, the control)" $?
rm -r "$r/sys/kernel/security/ima"

# --- the EFI variables: the host's say Secure Boot is on
efi=$host/sys/firmware/efi/efivars
mkdir -p "$efi"
printf '\006\000\000\000\001' > "$efi/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
printf '\006\000\000\000\000' > "$efi/SetupMode-8be4df61-93ca-11d2-aa0d-00e098032b8c"
mkdir -p "$r/sys/firmware"
ln -s "$host/sys/firmware/efi" "$r/sys/firmware/efi"
run kp_sig_unsigned
json "$tmp/c.json" "d['kernel']['secure_boot'] is False"
ok "sys/firmware/efi an absolute link to the host's: no EFI boot seen (Secure Boot off)" $?
rm "$r/sys/firmware/efi"
mkdir -p "$r/sys/firmware/efi/efivars"
for v in SecureBoot SetupMode; do
	ln -s "$efi/$v-8be4df61-93ca-11d2-aa0d-00e098032b8c" \
		"$r/sys/firmware/efi/efivars/$v-8be4df61-93ca-11d2-aa0d-00e098032b8c"
done
run kp_sig_unsigned
json "$tmp/c.json" "d['kernel']['secure_boot'] is not True"
ok "... SecureBoot and SetupMode absolute links to the host's: not read" $?
fifo sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c
run kp_sig_unsigned
is "... SecureBoot a FIFO: not waited on, exits 0" $? 0
json "$tmp/c.json" "any('SecureBoot' in a and 'is a FIFO, not a regular file' in a" \
	"for a in d['kernel']['assumptions'])"
ok "... and said" $?
rm -r "$r/sys/firmware/efi"
cp -r "$host/sys/firmware/efi" "$r/sys/firmware/efi"
run kp_sig_unsigned
json "$tmp/c.json" "d['kernel']['secure_boot'] is True"
ok "... the root's own variables: read, Secure Boot on (the control)" $?
rm -r "$r/sys/firmware/efi"

# --- the DKMS key, named by framework.conf or at its default place
cp "$sd/test-cert.der" "$host/mok.pub"
has_dkms() { sources "any('the DKMS key' in s for s in d['kernel']['key_sources'])"; }
run kp_sig_unsigned
has_dkms
ok "no DKMS key under the root: none named (the control)" $(($? == 1 ? 0 : 1))
ln -s "$host/mok.pub" "$r/var/lib/dkms/mok.pub"
run kp_sig_unsigned
has_dkms
ok "var/lib/dkms/mok.pub an absolute link to a host certificate: not read" $(($? == 1 ? 0 : 1))
rm "$r/var/lib/dkms/mok.pub"
cp "$sd/test-cert.der" "$r/var/lib/dkms/mok.pub"
run kp_sig_unsigned
has_dkms
ok "... the root's own: named" $?
rm "$r/var/lib/dkms/mok.pub"
mkdir -p "$host/etc/dkms"
echo "mok_certificate=/elsewhere/mok.pub" > "$host/etc/dkms/framework.conf"
mkdir -p "$r/elsewhere"
cp "$sd/test-cert.der" "$r/elsewhere/mok.pub"
ln -s "$host/etc/dkms/framework.conf" "$r/etc/dkms/framework.conf"
run kp_sig_unsigned
has_dkms
ok "etc/dkms/framework.conf an absolute link to a host file: its mok_certificate= not taken" \
	$(($? == 1 ? 0 : 1))
fifo etc/dkms/framework.conf
run kp_sig_unsigned
is "... a FIFO: not waited on, exits 0" $? 0
rm "$r/etc/dkms/framework.conf"
cp "$host/etc/dkms/framework.conf" "$r/etc/dkms/framework.conf"
run kp_sig_unsigned
has_dkms
ok "... the root's own: its mok_certificate= taken (the control)" $?

# --- no /proc: refused, not opened by name
np=$tmp/np
mkdir -p "$np/lib/modules/$rel/kernel/extra" "$np/boot" "$np/usr/src/linux-headers-$rel"
gzip -dc "$fx/config.gz" > "$np/boot/config-$rel"
gzip -dc "$fx/Module.symvers.gz" > "$np/usr/src/linux-headers-$rel/Module.symvers"
cp "$fx/kp_gpl_prov.ko" "$np/lib/modules/$rel/kernel/extra/"
if unshare -m --propagation private sh -c 'mount -t tmpfs none /proc' 2> /dev/null; then
	unshare -m --propagation private sh -c 'mount -t tmpfs none /proc && exec "$@"' sh \
		"$kp" --no-cache check -b "$np" > /dev/null 2> "$tmp/e.txt"
	rc=$?
	# the sanitizer build: LeakSanitizer needs /proc at exit (its options too, read from
	# /proc/self/environ) and exits 1 itself, after kopolicy's line
	if grep -q "LeakSanitizer has encountered a fatal error" "$tmp/e.txt"; then
		skip "-b ROOT without /proc: exits 2" "LeakSanitizer cannot run without /proc"
	else
		is "-b ROOT without /proc: exits 2" "$rc" 2
	fi
	why="cannot reopen the file checked (No such file or directory): refused, not opened by name"
	sv=$np/usr/src/linux-headers-$rel/Module.symvers
	grep -qx "kopolicy: $sv: cannot open: /proc/self/fd $why (mount /proc)" "$tmp/e.txt"
	ok "... the file checked refused with one line, not opened by name" $?
else
	skip "-b ROOT without /proc: exits 2" "no mount namespace (unshare -m) here"
	skip "... the file checked refused with one line, not opened by name" "no unshare -m"
fi

tap_done
