#!/usr/bin/env bash
# ML-DSA module signatures (7.0+): the signer's key algorithm and digest read from hand-built
# PKCS#7 messages (tests/data/sig/mldsa-p7.py), signed attributes refused by pkcs7_verify()
# unless CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA=y, then only a sha512 digest
# (software_key_determine_akcipher()). Modelled from the 7.2.13 source, not observed.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
fx=$top/fixtures/ko/7.2
. "$top/tests/lib/tap.sh"
tap_tmpdir

json() { python3 -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }

# the module with each signature, under its own name (the fixture's)
mk() { # dir hash pkey authattrs
	mkdir -p "$tmp/$1"
	python3 "$top/tests/data/sig/mldsa-p7.py" "$fx/kp_gpl_prov.ko" "$tmp/$1/kp_gpl_prov.ko" \
		"$2" "$3" "$4"
}
mk aa512 sha512 mldsa65 yes
mk aa256 sha256 mldsa65 yes
mk noaa sha256 mldsa65 no
mk aa512_87 sha512 mldsa87 yes
# Debian's 7.2 config has neither ML-DSA (CONFIG_CRYPTO_MLDSA) nor the waiver; waive.config
# adds both, mldsa.config (below) only ML-DSA
zcat "$fx/config.gz" > "$tmp/plain.config"
{ cat "$tmp/plain.config"; echo CONFIG_CRYPTO_MLDSA=y
  echo CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA=y; } > "$tmp/waive.config"

chk() { # dir config [options...]: $tmp/c.json
	local d=$1 cfg=$2
	shift 2
	"$kp" check -f json --fail-on never -k "$fx/Module.symvers.gz" \
		--kernel-config "$tmp/$cfg.config" --kernel-release 7.2.13+deb14-amd64 "$@" \
		"$tmp/$d/kp_gpl_prov.ko" > "$tmp/c.json"
}
# the one module's outcome: loads, errno, finding ids, the kernel's PKCS7 lines
is() { json "$tmp/c.json" \
	"[(m['loads'],m['errno'],[f['id'] for f in m['findings']],[l for l in m['messages'] if l.startswith('PKCS7')]) for m in d['modules']]==[$1]"; }
has() { json "$tmp/c.json" "'$1' in d['modules'][0]['findings'][0]['message']"; }

"$kp" info --json "$tmp/aa512/kp_gpl_prov.ko" > "$tmp/i.json"
json "$tmp/i.json" \
	"(lambda s: (s['hash_algo'],s['pkey_algo'],s['signer'],s['pkcs7_error'],s['pkcs7_note']))(d['modules'][0]['signature'])==('sha512','mldsa65','kopolicy ML-DSA test','EKEYREJECTED','Invalid module sig (has authattrs)')"
ok "info: the ML-DSA signer's key algorithm from the FIPS 204 OID (kernel name mldsa65), sha512, the signed attributes" $?
"$kp" info --json "$tmp/aa512_87/kp_gpl_prov.ko" "$tmp/noaa/kp_gpl_prov.ko" > "$tmp/i.json"
json "$tmp/i.json" \
	"[(m['signature']['pkey_algo'],m['signature']['pkcs7_error']) for m in d['modules']]==[('mldsa87','EKEYREJECTED'),('mldsa65',None)]"
ok "info: mldsa87; without signed attributes no objection" $?

chk aa512 plain
is "(False,'EKEYREJECTED',['bad-signature'],['PKCS7: Invalid module sig (has authattrs)'])"
ok "7.2 without the waiver: signed attributes refused, EKEYREJECTED, the kernel's line" $?
has CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA
ok "7.2 without the waiver: the finding names the config option" $?
chk aa512 waive
is "(True,None,[],['PKCS7: Waived invalid module sig (has authattrs)'])"
ok "7.2 with the waiver: sha512 with signed attributes loads, the waiver's line" $?
chk aa256 waive
is "(False,'EKEYREJECTED',['bad-signature'],['PKCS7: Waived invalid module sig (has authattrs)'])"
ok "7.2 with the waiver: sha256 with signed attributes is refused (only sha512)" $?
has "software_key_determine_akcipher()"
ok "7.2 sha256 with signed attributes: the finding names the kernel function" $?
chk noaa plain
json "$tmp/c.json" \
	"(lambda m: (m['loads'],m['errno'],m['taint'],[f['id'] for f in m['findings']]))(d['modules'][0])==(True,None,'OE',['signature-untrusted-key'])"
ok "7.2 without CONFIG_CRYPTO_MLDSA: the ML-DSA key cannot load, ENOKEY, loads with E" $?
has "lacks CONFIG_CRYPTO_MLDSA"
ok "... and the finding says so" $?
{ cat "$tmp/plain.config"; echo CONFIG_CRYPTO_MLDSA=m; } > "$tmp/mldsa.config"
chk noaa mldsa
is "(True,None,[],[])"
ok "7.2 with CRYPTO_MLDSA=m, without signed attributes: the digest algorithm does not matter, loads" $?
chk aa512 mldsa
is "(False,'EKEYREJECTED',['bad-signature'],['PKCS7: Invalid module sig (has authattrs)'])"
ok "7.2 with CRYPTO_MLDSA=m, without the waiver: signed attributes refused" $?
chk aa512 waive --sig-enforce
is "(True,None,[],['PKCS7: Waived invalid module sig (has authattrs)'])"
ok "7.2 with the waiver, enforced: loads (the key assumed trusted)" $?
chk aa256 waive --trusted-cert "$top/tests/data/sig/test-cert.pem"
json "$tmp/c.json" \
	"(lambda m: (m['loads'],m['errno'],[f['id'] for f in m['findings']]))(d['modules'][0])==(True,None,['signature-untrusted-key'])"
ok "7.2 sha256 with signed attributes and a key source without the signer: ENOKEY first, loads with E" $?

tap_done
