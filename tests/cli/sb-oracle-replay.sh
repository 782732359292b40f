#!/usr/bin/env bash
# Replays the Secure Boot oracle's observations (tests/oracle/secureboot/observed/SERIES/*.json,
# made by run-sb-oracle.sh booting Debian's signed 6.12 or 7.2 under OVMF + shim + grub):
# each scenario's varstore becomes an efivarfs directory (--efi-vars) and each loaded module
# is predicted with kopolicy check against fixtures/ko/SERIES and the kernel image's
# certificates; the kernel's errno, its signature lines and the module's taint must match.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
sd=$top/tests/data/sig
. "$top/tests/lib/tap.sh"
tap_tmpdir
python3 -c "import cryptography" 2> /dev/null || { echo \
	"1..0 # SKIP python3 cryptography missing"; exit 0; }

for o in "$top"/tests/oracle/secureboot/observed/*/*.json; do
	[ -f "$o" ] || continue
	series=$(basename "$(dirname "$o")")
	fx=$top/fixtures/ko/$series
	rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
	s=$series-$(basename "$o" .json)
	# the varstore as efivarfs: SecureBoot, SetupMode, db/dbx/MokListRT with the test
	# certificates the scenario enrolled; shim's vendor certificate (Debian Secure Boot CA)
	# is mirrored into MokListRT by shim but signs no module here, so it is left out
	python3 - "$o" "$tmp/$s" "$sd" "$fx/sig" <<'PY'
import hashlib, json, os, struct, sys, uuid
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
obs, out, sd, mods = sys.argv[1:5]
d = json.load(open(obs))
os.makedirs(out, exist_ok=True)
X509 = uuid.UUID('a5c059a1-94e4-4aa7-87b5-ab155c2bf072').bytes_le
SHA256 = uuid.UUID('c1c41626-504c-4092-aca9-41f936934328').bytes_le
OWNER = uuid.UUID('605dab50-e046-4300-abb6-3dd810dd8b23').bytes_le
G = {'SecureBoot': '8be4df61-93ca-11d2-aa0d-00e098032b8c',
     'SetupMode': '8be4df61-93ca-11d2-aa0d-00e098032b8c',
     'db': 'd719b2cb-3d3a-4596-a3bc-dad00e67656f', 'dbx': 'd719b2cb-3d3a-4596-a3bc-dad00e67656f',
     'MokListRT': '605dab50-e046-4300-abb6-3dd810dd8b23'}
def esl(kind, data):
    return kind + struct.pack('<III', 44 + len(data), 0, 16 + len(data)) + OWNER + data
def der(name):
    return x509.load_pem_x509_certificate(open(os.path.join(sd, name), 'rb').read()).public_bytes(Encoding.DER)
var = {'SecureBoot': bytes([1]), 'SetupMode': bytes([0])}
for e in d['varstore']:
    k, _, v = e.partition('=')
    if e == 'sb=off':
        var['SecureBoot'] = bytes([0])
    elif k == 'db':
        var['db'] = var.get('db', b'') + esl(X509, der(v))
    elif k == 'mok':
        var['MokListRT'] = var.get('MokListRT', b'') + esl(X509, der(v))
    elif k == 'dbx-cert':
        var['dbx'] = var.get('dbx', b'') + esl(X509, der(v))
    elif k == 'dbx-hash':
        h = hashlib.sha256(open(os.path.join(mods, v), 'rb').read()).digest()
        var['dbx'] = var.get('dbx', b'') + esl(SHA256, h)
# shim's MOK config table as the guest listed it: MokListTrustedRT (shim sets it by default)
if 'MokListTrustedRT' in d.get('mok_variables', []):
    var['MokListTrustedRT'] = bytes([1])
    G['MokListTrustedRT'] = '605dab50-e046-4300-abb6-3dd810dd8b23'
for k, v in var.items():
    open(os.path.join(out, '%s-%s' % (k, G[k])), 'wb').write(struct.pack('<I', 7) + v)
with open(os.path.join(out, 'steps'), 'w') as f:
    loaded = set()
    for st in d['steps']:
        m = st['module'][:-3]
        # a name already loaded by an earlier step: EEXIST after the signature check, which
        # a one-file prediction cannot see
        again = 'again' if m.startswith('sig_dummy') and 'dummy' in loaded else 'first'
        taint = st['taint'].get('dummy', '') if st['rc'] == 0 else ''
        f.write('%s %s %s %s %s\n' % (m, st['errno'], again, taint or '-', '|'.join(
            l for l in st['dmesg'] if 'rejected' in l or 'blacklisted' in l or 'Lockdown' in l) or '-'))
        if st['rc'] == 0:
            loaded.add('dummy')
PY
	extra=$(python3 -c "import json,sys; print(json.load(open('$o'))['extra_cmdline'])")
	while read -r m errno again taint lines; do
		n=$((n + 1))
		if [ "$again" = again ] && [ "$errno" = EEXIST ]; then
			echo "ok $n - $s $m # SKIP EEXIST: the same module loaded by an earlier step"
			continue
		fi
		args=(check -f json --fail-on never -k "$fx/Module.symvers.gz" \
			--kernel-config "$fx/config.gz"
			--kernel-release "$rel" --trusted-cert \
				"$fx/sig/kernel-certs.pem" --efi-vars "$tmp/$s")
		[ -n "$extra" ] && args+=(--kernel-cmdline "$extra")
		"$kp" "${args[@]}" "$fx/sig/$m.ko" > "$tmp/p.json" 2> "$tmp/e.txt"
		if python3 - "$tmp/p.json" "$errno" "$lines" "$taint" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))['modules'][0]
errno = None if sys.argv[2] == 'OK' else sys.argv[2]
want = [] if sys.argv[3] == '-' else sys.argv[3].split('|')
taint = '' if sys.argv[4] == '-' else sys.argv[4]
got = [l for l in p['messages'] if 'rejected' in l or 'blacklisted' in l or 'Lockdown' in l]
# the module's taint letters when it loaded (kopolicy's, as /sys/module/dummy/taint shows)
ok = p['errno'] == errno and got == want and (errno or p['taint'] == taint)
if not ok:
    print('# kernel: %s %s taint %r; kopolicy: %s %s taint %r' % (errno, want, taint,
          p['errno'], got, p['taint']))
sys.exit(0 if ok else 1)
PY
		then
			echo "ok $n - $s $m: $errno"
		else
			echo "not ok $n - $s $m: $errno"
			fail=$((fail + 1))
		fi
	done < "$tmp/$s/steps"
done
[ "$n" -gt 0 ] || { echo "1..0 # SKIP no observations"; exit 0; }
tap_done
