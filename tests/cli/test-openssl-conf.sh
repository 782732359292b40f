#!/usr/bin/env bash
# kopolicy judges signatures as the kernel does, not by the host's OpenSSL configuration: it
# reads no openssl.cnf and ignores $OPENSSL_CONF (src/kopolicy.c: OPENSSL_INIT_NO_LOAD_CONFIG).
# A configuration that makes OpenSSL fetch only FIPS implementations (default_properties =
# fips=yes, no FIPS provider loaded: SHA-256 cannot be had; what a crypto policy or a FIPS
# setup does to a host) and one that does not parse leave `info` and `check` byte for byte as
# they are without one, for a module signed at test time with a throwaway RSA key (SHA-256)
# and for the Debian-signed fixture modules. The configuration is checked to bite: openssl(1)
# itself cannot hash with it.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
sd=$top/tests/data/sig
. "$top/tests/lib/tap.sh"
tap_tmpdir

json() { python3 -c "import json,sys; d=json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }
fx=$top/fixtures/ko/6.12
kern=(-k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release
	"$(sed -n 's/^release=//p' "$fx/kernel.txt")")

cat > "$tmp/fips.cnf" <<'CNF'
openssl_conf = openssl_init
[openssl_init]
alg_section = algorithms
[algorithms]
default_properties = fips=yes
CNF
printf 'this is [not an openssl configuration\n= = =\n' > "$tmp/garbage.cnf"

# the configuration bites: openssl(1) cannot fetch SHA-256 under it
! OPENSSL_CONF=$tmp/fips.cnf openssl dgst -sha256 /dev/null > /dev/null 2>&1
ok "openssl dgst -sha256 fails under the fips=yes configuration" $?

openssl req -new -x509 -newkey rsa:2048 -nodes -days 36500 -sha256 \
	-subj "/CN=kopolicy openssl.cnf test key" -addext "subjectKeyIdentifier=hash" \
	-keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2> /dev/null
ok "throwaway RSA key made" $?
openssl cms -sign -binary -nocerts -noattr -outform DER -md sha256 \
	-in "$sd/6.12/kp_sig_unsigned.ko" -signer "$tmp/cert.pem" -inkey "$tmp/key.pem" \
	-out "$tmp/p7" 2> /dev/null &&
	python3 - "$sd/6.12/kp_sig_unsigned.ko" "$tmp/p7" "$tmp/signed.ko" <<'PY'
import struct, sys
body = open(sys.argv[1], 'rb').read()
sig = open(sys.argv[2], 'rb').read()
info = struct.pack('>BBBBB3xI', 0, 0, 2, 0, 0, len(sig))
open(sys.argv[3], 'wb').write(body + sig + info + b'~Module signature appended~\n')
PY
ok "module signed (SHA-256)" $?

run() { # tag, env assignment or "", command...
	local tag=$1 e=$2
	shift 2
	env -u OPENSSL_CONF ${e:+"$e"} "$@" > "$tmp/$tag.out" 2> "$tmp/$tag.err"
	echo $? > "$tmp/$tag.rc"
}
for what in info check; do
	if [ $what = info ]; then
		cmd=("$kp" info --json --trusted-cert "$tmp/cert.pem" "$tmp/signed.ko")
	else
		cmd=("$kp" check -f json --fail-on never "${kern[@]}" --trusted-cert "$tmp/cert.pem"
			"$tmp/signed.ko")
	fi
	run "$what-none" "" "${cmd[@]}"
	if [ $what = info ]; then
		json "$tmp/info-none.out" \
			"d['modules'][0]['signature']['verification']['result']=='verified'"
		ok "info: the module's signature verifies (no configuration)" $?
	else
		json "$tmp/check-none.out" \
			"[(m['loads'],m['errno'],m['taint']) for m in d['modules']]==[(True,None,'O')]"
		ok "check: loads without E (no configuration)" $?
	fi
	for conf in fips garbage; do
		run "$what-$conf" "OPENSSL_CONF=$tmp/$conf.cnf" "${cmd[@]}"
		cmp -s "$tmp/$what-none.out" "$tmp/$what-$conf.out" &&
			cmp -s "$tmp/$what-none.err" "$tmp/$what-$conf.err" &&
			cmp -s "$tmp/$what-none.rc" "$tmp/$what-$conf.rc"
		ok "$what: OPENSSL_CONF=$conf.cnf changes nothing (output, stderr, status)" $?
	done
done

# the signature fixtures (tests/data/sig: sha256, sha512, md5, corrupted, unknown key, ...)
mods=("$sd"/6.12/*.ko)
run fx-none "" "$kp" info --json --trusted-cert "$sd/test-cert.pem" "${mods[@]}"
json "$tmp/fx-none.out" \
	"[m['signature']['verification']['result'] for m in d['modules'] if m['path'].endswith('/kp_sig_sha256.ko')]==['verified']"
ok "info: kp_sig_sha256 verifies with test-cert.pem (no configuration)" $?
run fx-fips "OPENSSL_CONF=$tmp/fips.cnf" "$kp" info --json --trusted-cert "$sd/test-cert.pem" \
	"${mods[@]}"
cmp -s "$tmp/fx-none.out" "$tmp/fx-fips.out" && cmp -s "$tmp/fx-none.rc" "$tmp/fx-fips.rc"
ok "info of ${#mods[@]} signature fixtures: the same under OPENSSL_CONF=fips.cnf" $?

tap_done
