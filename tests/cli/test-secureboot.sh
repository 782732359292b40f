#!/usr/bin/env bash
# Secure Boot as a machine has it (issue 24): EFI variables in efivarfs format (EFI signature
# lists built here the way efitools' cert-to-efi-sig-list and mokutil write them), the
# keyrings of Debian's 6.1/6.12 (MOK in .machine, db in .platform retried for modules), 7.2
# (MOK in .machine only with MokListTrustedRT, else .platform, still retried) and upstream
# (no .platform retry), dbx/MokListXRT revocations, the pending MokNew
# enrolment and the DKMS key named in findings; Secure Boot enforcing signatures.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
sd=$top/tests/data/sig
. "$top/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT

json() { python3 -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }
kern() { # version: the fixture kernel's options
	local fx=$top/fixtures/ko/$1
	echo "-k $fx/Module.symvers.gz --kernel-config $fx/config.gz --kernel-release" \
		"$(sed -n 's/^release=//p' "$fx/kernel.txt")"
}
# the kernel image's own key: a vmlinux-like blob holding distro-cert (not the test keys)
python3 - "$sd/distro-cert.pem" "$tmp/vmlinux" <<'PY'
import base64, sys
pem = open(sys.argv[1]).read().split('-----')[2]
open(sys.argv[2], 'wb').write(b'\x7fELF' + bytes(512) + base64.b64decode(pem) + bytes(64))
PY
# check one module: version, module, extra options...; writes $tmp/c.json
chk() {
	local v=$1 m=$2
	shift 2
	# shellcheck disable=SC2046
	"$kp" check -f json --fail-on never $(kern "$v") --kernel-image "$tmp/vmlinux" "$@" \
		"$sd/$v/$m.ko" > "$tmp/c.json"
}
is() { json "$tmp/c.json" \
	"[(m['loads'],m['errno'],m['taint'],[f['id'] for f in m['findings']]) for m in d['modules']]==[$1]"; }
msg() { json "$tmp/c.json" "any($1 in f['message'] for f in d['modules'][0]['findings'])"; }

# efivars DIR VAR=SPEC...: an efivarfs directory. SPEC: on/off (a one-byte flag), x509:CERT,
# sha256:HEX, tbs:CERT (X509_SHA256 of the certificate's tbsCertificate), trunc:CERT (a list
# cut short), several joined with '+' (one EFI_SIGNATURE_LIST each)
efivars() {
	local dir=$1
	shift
	mkdir -p "$dir"
	python3 - "$dir" "$@" <<'PY'
import hashlib, struct, sys, uuid
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
GLOBAL = '8be4df61-93ca-11d2-aa0d-00e098032b8c'
IMAGE = 'd719b2cb-3d3a-4596-a3bc-dad00e67656f'
SHIM = '605dab50-e046-4300-abb6-3dd810dd8b23'
X509 = uuid.UUID('a5c059a1-94e4-4aa7-87b5-ab155c2bf072').bytes_le
SHA256 = uuid.UUID('c1c41626-504c-4092-aca9-41f936934328').bytes_le
X509_SHA256 = uuid.UUID('3bd2a492-96c0-4079-b420-fcf98ef103ed').bytes_le
OWNER = uuid.UUID('605dab50-e046-4300-abb6-3dd810dd8b23').bytes_le
def cert(path):
    data = open(path, 'rb').read()
    c = x509.load_pem_x509_certificate(data) if b'-----BEGIN' in data else x509.load_der_x509_certificate(data)
    return c
def esl(kind, data):
    # EFI_SIGNATURE_LIST: type, list size, header size 0, signature size; owner GUID + data
    return kind + struct.pack('<III', 28 + 16 + len(data), 0, 16 + len(data)) + OWNER + data
def one(spec):
    kind, _, arg = spec.partition(':')
    if kind == 'x509':
        return esl(X509, cert(arg).public_bytes(Encoding.DER))
    if kind == 'sha256':
        return esl(SHA256, bytes.fromhex(arg))
    if kind == 'tbs':
        return esl(X509_SHA256, hashlib.sha256(cert(arg).tbs_certificate_bytes).digest() + bytes(16))
    if kind == 'trunc':
        return one('x509:' + arg)[:-10]
    raise SystemExit('bad spec ' + spec)
guids = {'SecureBoot': GLOBAL, 'SetupMode': GLOBAL, 'db': IMAGE, 'dbx': IMAGE}
for arg in sys.argv[2:]:
    name, _, spec = arg.partition('=')
    if spec in ('on', 'off'):
        data = bytes([spec == 'on'])
    else:
        data = b''.join(one(s) for s in spec.split('+'))
    # efivarfs: the attribute word (NV|BS|RT = 7), then the data
    open('%s/%s-%s' % (sys.argv[1], name, guids.get(name, SHIM)), 'wb').write(struct.pack('<I', 7) + data)
PY
}
T=$sd/test-cert.pem
O=$sd/other-cert.pem

# Secure Boot on, nothing enrolled: signatures enforced (IMA_ARCH_POLICY), before lockdown
efivars "$tmp/sb" SecureBoot=on SetupMode=off
chk 6.12 kp_sig_unsigned --efi-vars "$tmp/sb"
is "(False,'EKEYREJECTED','',['signature-required'])"
ok "6.12, Secure Boot: an unsigned module is refused with EKEYREJECTED (not lockdown's EPERM)" $?
json "$tmp/c.json" \
	"d['modules'][0]['messages']==['Loading of unsigned module is rejected'] and 'Secure Boot' in d['modules'][0]['findings'][0]['message'] and d['kernel']['sig_enforce']"
ok "... with the kernel's line, Secure Boot named as the reason" $?
chk 6.12 kp_sig_unsigned --efi-vars "$tmp/sb" --kernel-cmdline "module.sig_enforce=0"
is "(False,'EKEYREJECTED','',['signature-required'])"
ok "... module.sig_enforce=0 does not undo it" $?
chk 6.12 kp_sig_unsigned --secure-boot on
is "(False,'EKEYREJECTED','',['signature-required'])"
ok "--secure-boot on: the same without EFI variables" $?
chk 6.12 kp_sig_unsigned --efi-vars "$tmp/sb" --secure-boot off
is "(True,None,'OE',[])"
ok "--secure-boot off overrides the variables: unsigned loads with E" $?
efivars "$tmp/setup" SecureBoot=on SetupMode=on
chk 6.12 kp_sig_unsigned --efi-vars "$tmp/setup"
is "(True,None,'OE',[])"
ok "SetupMode=1: Secure Boot is not in force (efi_get_secureboot_mode())" $?
efivars "$tmp/moksb" SecureBoot=on SetupMode=off MokSBStateRT=on
chk 6.12 kp_sig_unsigned --efi-vars "$tmp/moksb"
is "(True,None,'OE',[])"
ok "MokSBStateRT=1 (mokutil --disable-validation): the kernel sees Secure Boot off" $?
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/sb"
is "(False,'EKEYREJECTED','',['signature-untrusted-key'])"
ok "Secure Boot: a module signed by a key nowhere enrolled is refused" $?
msg "'loads now: no (EKEYREJECTED)'"
ok "... 'loads now: no (EKEYREJECTED)'" $?

# MOK enrolled (MokListRT): Debian < 6.17 trusts it (.machine) without MokListTrustedRT
efivars "$tmp/mok" SecureBoot=on SetupMode=off "MokListRT=x509:$T"
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/mok"; is "(True,None,'O',[])"
ok "6.12, Secure Boot, the signer in MokListRT: loads, no E" $?
json "$tmp/c.json" \
	"any(s.startswith('$tmp/mok/MokListRT-605dab50-e046-4300-abb6-3dd810dd8b23: 1 certificate') for s in d['kernel']['key_sources'])"
ok "... MokListRT named as a key source" $?
chk 6.1 kp_sig_sha256 --efi-vars "$tmp/mok"; is "(True,None,'O',[])"
ok "6.1: the same" $?
chk 6.12 kp_sig_unknown_key --efi-vars "$tmp/mok"
is "(False,'EKEYREJECTED','',['signature-untrusted-key'])"
ok "6.12: another key than the MOK one is refused" $?
chk 6.12 kp_sig_sha256 --secure-boot on --mok "$sd/test-cert.der"; is "(True,None,'O',[])"
ok "--mok FILE (DER) stands for MokListRT" $?
# Secure Boot off: MOK is not loaded (load_uefi_certs()), nothing enforced
efivars "$tmp/mokoff" SecureBoot=off "MokListRT=x509:$T"
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/mokoff"; is "(True,None,'OE',['signature-untrusted-key'])"
ok "Secure Boot off: MOK keys are not loaded, the module loads with E" $?
msg "'MOK keys are loaded only under Secure Boot'"
ok "... and the finding says why" $?

# db: the platform keyring, retried by Debian's mod_verify_sig() before 6.17
efivars "$tmp/db" SecureBoot=on SetupMode=off "db=x509:$O+x509:$T"
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/db"; is "(True,None,'O',[])"
ok "6.12: a key in UEFI db verifies modules (.platform retry)" $?
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/db" --kernel-version 7.2.13; is "(True,None,'O',[])"
ok "7.2: Debian still retries .platform (D7.2.13 signing.c): db verifies" $?
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/db" --kernel-version 7.2.13 --distro upstream
is "(False,'EKEYREJECTED','',['signature-untrusted-key'])"
ok "upstream 7.2: no platform retry, db does not verify modules" $?
msg "'a UEFI db key this kernel does not use for modules'"
ok "... said as such" $?

# MokListTrustedRT (mokutil --trust-mok): .machine; else .platform (Debian 7.2, upstream)
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/mok" --kernel-version 7.2.13; is "(True,None,'O',[])"
ok "Debian 7.2, MOK without MokListTrustedRT: in .platform, verified by the retry" $?
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/mok" --kernel-version 7.2.13 --distro upstream
is "(False,'EKEYREJECTED','',['signature-untrusted-key'])"
ok "upstream 7.2, MOK without MokListTrustedRT: not trusted for modules" $?
msg "'mokutil --trust-mok'"
ok "... the finding names mokutil --trust-mok" $?
efivars "$tmp/moktrust" SecureBoot=on SetupMode=off "MokListRT=x509:$T" MokListTrustedRT=on
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/moktrust" --kernel-version 7.2.13 --distro upstream
is "(True,None,'O',[])"
ok "upstream 7.2 with MokListTrustedRT: the MOK key is in .machine: loads" $?
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/mok" --kernel-version 7.2.13 --distro upstream \
	--trust-mok yes
is "(True,None,'O',[])"
ok "upstream 7.2: --trust-mok yes does the same" $?

# revocations: the certificate's tbs hash in dbx or MokListXRT, the module's hash in dbx
efivars "$tmp/dbxtbs" SecureBoot=on SetupMode=off "MokListRT=x509:$T" "dbx=tbs:$T"
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/dbxtbs"
is "(False,'EKEYREJECTED','',['signature-untrusted-key'])"
ok "a MOK certificate whose tbs hash is in dbx is never loaded: refused" $?
msg "'blacklisted'"
ok "... the finding says the certificate is blacklisted" $?
efivars "$tmp/mokx" SecureBoot=on SetupMode=off "MokListRT=x509:$T" "MokListXRT=tbs:$T"
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/mokx"
is "(False,'EKEYREJECTED','',['signature-untrusted-key'])"
ok "... the same from MokListXRT" $?
h=$(sha256sum "$sd/6.12/kp_sig_sha256.ko" | cut -d' ' -f1)
efivars "$tmp/dbxbin" SecureBoot=on SetupMode=off "MokListRT=x509:$T" "dbx=sha256:$h"
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/dbxbin"; is "(False,'EKEYREJECTED','',['bad-signature'])"
ok "6.12: the module's SHA-256 in dbx: Debian's hash blacklist refuses it" $?
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/dbxbin" --kernel-version 7.2.13; is "(True,None,'O',[])"
ok "7.2: no module hash blacklist any more (loads)" $?

# dbx certificates: the revocation list, only with SYSTEM_REVOCATION_LIST (Debian: off), and
# checked before the platform retry (is_key_on_revocation_list())
efivars "$tmp/dbxcert" SecureBoot=on SetupMode=off "db=x509:$T" "dbx=x509:$T"
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/dbxcert"; is "(True,None,'O',[])"
ok "Debian (no SYSTEM_REVOCATION_LIST): a db key also in dbx still verifies (as observed)" $?
zcat "$top/fixtures/ko/6.12/config.gz" |
	sed 's/^# CONFIG_SYSTEM_REVOCATION_LIST is not set$/CONFIG_SYSTEM_REVOCATION_LIST=y/' \
		> "$tmp/config-revoke"
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/dbxcert" --kernel-config "$tmp/config-revoke"
is "(False,'EKEYREJECTED','',['bad-signature'])"
ok "SYSTEM_REVOCATION_LIST=y: the db key revoked by dbx: EKEYREJECTED, fatal" $?
msg "'revocation list'"
ok "... said as the revocation list" $?

# pending enrolment: MokNew (mokutil --import), the DKMS key by name
efivars "$tmp/new" SecureBoot=on SetupMode=off "MokNew=x509:$T"
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/new" --dkms-key "$T"
is "(False,'EKEYREJECTED','',['signature-untrusted-key'])"
ok "a key pending in MokNew: refused now" $?
msg "'loads now: no (EKEYREJECTED); after reboot with the pending MOK enrolment: yes'"
ok "... 'loads now: no (EKEYREJECTED); after reboot with the pending MOK enrolment: yes'" $?
msg "'the DKMS key $T' and 'MokManager'"
ok "... the DKMS key named, with what completes the enrolment" $?
chk 6.12 kp_sig_sha256 --secure-boot on --mok-pending "$T" --kernel-version 7.2.13 \
	--distro upstream --trust-mok no
is "(False,'EKEYREJECTED','',['signature-untrusted-key'])"
ok "upstream 7.2, --mok-pending, --trust-mok no: refused now" $?
msg "'does not use MOK keys for modules'"
ok "... and after the reboot too (no MokListTrustedRT): said" $?
chk 6.12 kp_sig_sha256 --secure-boot on --mok "$T" --kernel-version 7.2.13 --distro upstream
is "(True,None,'O',[])"
ok "upstream 7.2, --mok without EFI variables: MokListTrustedRT taken as set (shim's default)" $?
json "$tmp/c.json" \
	"any('MokListTrustedRT unknown: taken as set' in a for a in d['kernel']['assumptions'])"
ok "... and said" $?
chk 6.12 kp_sig_sha256 --secure-boot on --dkms-key "$sd/test-cert.der"
is "(False,'EKEYREJECTED','',['signature-untrusted-key'])"
ok "the DKMS key nowhere enrolled: refused" $?
msg "'mokutil --import $sd/test-cert.der'"
ok "... with the mokutil --import command" $?
chk 6.12 kp_sig_sha256 --dkms-key "$T"; is "(True,None,'OE',['signature-untrusted-key'])"
ok "no Secure Boot: the DKMS key not enrolled taints (E)" $?
msg "'the DKMS key $T'"
ok "... named as the DKMS key" $?

# malformed and unreadable variables: said, the rest used
efivars "$tmp/bad" SecureBoot=on SetupMode=off "MokListRT=x509:$T+trunc:$O"
mkdir "$tmp/bad/db-d719b2cb-3d3a-4596-a3bc-dad00e67656f"
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/bad"; is "(True,None,'O',[])"
ok "a list cut short: the certificates before it are kept (as the kernel does)" $?
json "$tmp/c.json" \
	"any('MokListRT' in a and 'malformed signature list' in a and 'runs past the end' in a for a in d['kernel']['assumptions']) and any('db-d719b2cb' in a and 'cannot read' in a for a in d['kernel']['assumptions'])"
ok "... the malformed list and the unreadable db are said" $?
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/none" 2> "$tmp/e.txt"
ok "--efi-vars naming no directory exits 2" $(( $? == 2 ? 0 : 1 ))
grep -q "^kopolicy: $tmp/none: no such directory of EFI variables$" "$tmp/e.txt"
ok "... with one line naming it" $?
efivars "$tmp/empty"
chk 6.12 kp_sig_unsigned --efi-vars "$tmp/empty"; is "(True,None,'OE',[])"
ok "no SecureBoot variable: Secure Boot is off (efi_get_secureboot_mode()), unsigned loads" $?
# shellcheck disable=SC2046
"$kp" check $(kern 6.12) --secure-boot maybe "$sd/6.12/kp_sig_sha256.ko" > /dev/null 2> "$tmp/e.txt"
ok "--secure-boot maybe exits 2" $(( $? == 2 ? 0 : 1 ))
grep -q "^kopolicy: --secure-boot: unknown value 'maybe' (on or off)$" "$tmp/e.txt"
ok "... with one line" $?
# shellcheck disable=SC2046
"$kp" check $(kern 6.12) --lockdown=full "$sd/6.12/kp_sig_sha256.ko" > /dev/null 2> "$tmp/e.txt"
ok "--lockdown=full exits 2" $(( $? == 2 ? 0 : 1 ))
chk 6.12 kp_sig_unsigned --lockdown=confidentiality; is "(False,'EPERM','',['lockdown'])"
ok "--lockdown=confidentiality: EPERM" $?
chk 6.12 kp_sig_unsigned --efi-vars "$tmp/setup" --lockdown=none; is "(True,None,'OE',[])"
ok "--lockdown=none: loads" $?

# --running: the live system's efivarfs, MOK table and the DKMS key under the root
r=$tmp/root
mkdir -p "$r/proc/sys/kernel" "$r/sys/module/module/parameters" "$r/sys/kernel/security" \
	"$r/var/lib/dkms" "$r/sys/firmware/efi/mok-variables"
echo 6.12.118+deb12-amd64 > "$r/proc/sys/kernel/osrelease"
: > "$r/proc/modules"
echo Y > "$r/sys/module/module/parameters/sig_enforce"
echo "none [integrity] confidentiality" > "$r/sys/kernel/security/lockdown"
cp "$sd/test-cert.der" "$r/var/lib/dkms/mok.pub"
efivars "$r/sys/firmware/efi/efivars" SecureBoot=on SetupMode=off "MokNew=x509:$T"
# shellcheck disable=SC2046
run() { "$kp" check -f json --fail-on never $(kern 6.12) --kernel-image "$tmp/vmlinux" --running \
	--root "$r" "$@" > "$tmp/c.json"; }
run "$sd/6.12/kp_sig_sha256.ko"; is "(False,'EKEYREJECTED','',['signature-untrusted-key'])"
ok "--running: the pending MokNew read from efivarfs: refused now" $?
msg "'after reboot with the pending MOK enrolment: yes'"
ok "... yes after the reboot" $?
msg "'the DKMS key $r/var/lib/dkms/mok.pub'"
ok "... the DKMS key (/var/lib/dkms/mok.pub) recognised by name" $?
# the MOK config table (raw data, no attribute word) is read first, as the kernel does
python3 - "$sd/test-cert.der" "$r/sys/firmware/efi/mok-variables/MokListRT" <<'PY'
import struct, sys, uuid
der = open(sys.argv[1], 'rb').read()
x509 = uuid.UUID('a5c059a1-94e4-4aa7-87b5-ab155c2bf072').bytes_le
open(sys.argv[2], 'wb').write(x509 + struct.pack('<III', 28 + 16 + len(der), 0, 16 + len(der)) + bytes(16) + der)
PY
run "$sd/6.12/kp_sig_sha256.ko"; is "(True,None,'O',[])"
ok "--running: MokListRT from the MOK config table: enrolled, loads" $?
run --efi-vars none "$sd/6.12/kp_sig_sha256.ko"
is "(False,'EKEYREJECTED','',['signature-untrusted-key'])"
ok "--efi-vars none: the variables are not read (the live sig_enforce refuses it)" $?
mkdir -p "$tmp/root2/proc/sys/kernel"
echo 6.12.118+deb12-amd64 > "$tmp/root2/proc/sys/kernel/osrelease"
: > "$tmp/root2/proc/modules"
# shellcheck disable=SC2046
"$kp" check -f json --fail-on never $(kern 6.12) --kernel-image "$tmp/vmlinux" --running \
	--root "$tmp/root2" "$sd/6.12/kp_sig_unsigned.ko" > "$tmp/c.json"
is "(True,None,'OE',[])"
ok "--running without /sys/firmware/efi: no Secure Boot, unsigned loads with E" $?

json "$tmp/c.json" \
	"d['kernel']['secure_boot'] is False and d['kernel']['module_keyrings']==['.builtin_trusted_keys','.secondary_trusted_keys','.platform']"
ok "JSON: secure_boot false, the keyrings modules are checked against (6.12: platform retry)" $?
chk 6.12 kp_sig_sha256 --efi-vars "$tmp/moktrust" --kernel-version 7.2.13 --distro upstream
json "$tmp/c.json" \
	"d['kernel']['secure_boot'] is True and d['kernel']['lockdown'] and d['kernel']['module_keyrings']==['.builtin_trusted_keys','.secondary_trusted_keys','.machine']"
ok "JSON: upstream 7.2 with MokListTrustedRT under Secure Boot: .machine, no .platform" $?
# --this-machine (the DKMS hook): file mode reading the machine's variables and DKMS key
# shellcheck disable=SC2046
"$kp" check -f json --fail-on never $(kern 6.12) --kernel-image "$tmp/vmlinux" --this-machine \
	--root "$r" "$sd/6.12/kp_sig_sha256.ko" > "$tmp/c.json"
is "(True,None,'O',[])"
ok "--this-machine --root: the enrolled MOK (config table) verifies the DKMS-signed module" $?
rm "$r/sys/firmware/efi/mok-variables/MokListRT"
# shellcheck disable=SC2046
"$kp" check -f json --fail-on never $(kern 6.12) --kernel-image "$tmp/vmlinux" --this-machine \
	--root "$r" "$sd/6.12/kp_sig_sha256.ko" > "$tmp/c.json"
is "(False,'EKEYREJECTED','',['signature-untrusted-key'])"
msg "'after reboot with the pending MOK enrolment: yes'" &&
	msg "'the DKMS key $r/var/lib/dkms/mok.pub'"
ok "--this-machine: pending in MokNew, the DKMS key named: the same facts as --running" $?

# what --running cannot read is said: /proc/keys of mode 0 (root reads it anyway)
printf '1 I------ 1 perm 1f0b0000 0 0 keyring   .builtin_trusted_keys: 1\n' > "$r/proc/keys"
chmod 000 "$r/proc/keys"
run "$sd/6.12/kp_sig_sha256.ko"
n=$((n + 1))
if [ "$(id -u)" = 0 ]; then
	echo "ok $n - an unreadable /proc/keys is said # SKIP root reads it"
elif json "$tmp/c.json" \
	"any(s=='$r/proc/keys: cannot read (Permission denied): the running kernel\\'s keys are unknown' for s in d['kernel']['key_sources'])"; then
	echo "ok $n - an unreadable /proc/keys is said"
else
	echo "not ok $n - an unreadable /proc/keys is said"
	fail=$((fail + 1))
fi
chmod 644 "$r/proc/keys"

# the modprobe hook: the same facts (live efivarfs, MokNew, the DKMS key) on the chain
rel=6.12.118+deb12-amd64
h=$tmp/hookroot
mkdir -p "$h/lib/modules/$rel/extra" "$h/boot" "$h/var/lib/dkms"
cp -R "$top/tests/unit/policy/root/." "$h/"
chmod -R u+w "$h"
cp "$sd/6.12/kp_sig_sha256.ko" "$h/lib/modules/$rel/extra/kp_plain.ko"
: > "$h/lib/modules/$rel/modules.builtin"
: > "$h/lib/modules/$rel/modules.builtin.modinfo"
cp "$top/fixtures/ko/6.12/Module.symvers.gz" "$h/boot/symvers-$rel.gz"
cp "$top/fixtures/ko/6.12/config.gz" "$h/boot/config-$rel"
echo "$rel" > "$h/proc/sys/kernel/osrelease"
: > "$h/proc/modules"
mkdir -p "$h/sys/module/module/parameters"
echo Y > "$h/sys/module/module/parameters/sig_enforce"
cp "$sd/test-cert.der" "$h/var/lib/dkms/mok.pub"
depmod -b "$h" "$rel" 2> /dev/null
efivars "$h/sys/firmware/efi/efivars" SecureBoot=on SetupMode=off "MokNew=x509:$T"
printf 'block load-failure\n' > "$tmp/policy.conf"
"$kp" hook --root "$h" --config "$tmp/policy.conf" --kernel-image "$tmp/vmlinux" kp_plain \
	> "$tmp/out" 2> "$tmp/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "after reboot with the pending MOK enrolment: yes" "$tmp/err" &&
	grep -q "the DKMS key $h/var/lib/dkms/mok.pub" "$tmp/err"
ok "hook: a DKMS module whose key is pending in MokNew is blocked, with the reboot's answer" $?
efivars "$h/sys/firmware/efi/efivars" "MokListRT=x509:$T"
rm "$h/sys/firmware/efi/efivars/MokNew-605dab50-e046-4300-abb6-3dd810dd8b23"
"$kp" hook --root "$h" --config "$tmp/policy.conf" --kernel-image "$tmp/vmlinux" kp_plain \
	> "$tmp/out" 2> "$tmp/err"
ok "hook: enrolled in MokListRT (not untrusted any more), the same module goes on" $?

# -b ROOT (the kernel postinst hook): the root's sys/firmware/efi and DKMS key, the same facts
"$kp" check -f json --fail-on never -b "$h" --kernel-image "$tmp/vmlinux" > "$tmp/c.json"
json "$tmp/c.json" \
	"[(m['name'],m['loads'],m['taint']) for m in d['modules']]==[('kp_plain',True,'O')] and d['kernel']['secure_boot'] is True"
ok "-b ROOT: the MOK enrolled in ROOT's efivarfs verifies the DKMS module (kernel hook = hook)" $?
mv "$h/sys/firmware/efi/efivars/MokListRT-605dab50-e046-4300-abb6-3dd810dd8b23" \
	"$h/sys/firmware/efi/efivars/MokNew-605dab50-e046-4300-abb6-3dd810dd8b23"
"$kp" check -f json --fail-on never -b "$h" --kernel-image "$tmp/vmlinux" > "$tmp/c.json"
is "(False,'EKEYREJECTED','',['signature-untrusted-key'])" &&
	msg "'after reboot with the pending MOK enrolment: yes'" &&
	msg "'the DKMS key $h/var/lib/dkms/mok.pub'"
ok "-b ROOT: pending in MokNew: refused now, yes after the reboot, the DKMS key named" $?
rm -rf "$h/sys/firmware"
"$kp" check -f json --fail-on never -b "$h" --kernel-image "$tmp/vmlinux" > "$tmp/c.json"
json "$tmp/c.json" "d['kernel']['secure_boot'] is None"
ok "-b ROOT without sys/firmware/efi: Secure Boot unknown (an image, not the running system)" $?

tap_done
