#!/usr/bin/env bash
# Proof of module signature verification on real Debian trees: every in-tree module
# verifies against the certificates compiled into that tree's own kernel image, and a
# module re-signed with a throwaway key is refused enforced and loads with E otherwise.
#
# usage: tests/corpus/check-signatures.sh KOPOLICY_BIN [TREE...]
#   TREE: a tree name of the trees file (default: every tree in it)
# Trees: lines "tree=T<TAB>root=DIR<TAB>release=R..." as tests/corpus/fetch-trees.sh
#   prints them, read from $KOPOLICY_TREES (default /work/notes/trees.env if present),
#   else from `fetch-trees.sh --offline amd64-6.1 amd64-6.12`.
# Per tree:
#   image-certs   kopolicy info --kernel-image ROOT/boot/vmlinuz-R finds >= 1 certificate
#                 (exactly 0 when the config has neither CONFIG_MODULE_SIG=y nor a
#                 CONFIG_SYSTEM_TRUSTED_KEYS file: bookworm's armel marvell image has none)
#   verify-all    kopolicy info --json --kernel-image ... MODDIR: every module is signed and
#                 its verification result is "verified" (0 failures; counts printed)
#   enforced      kopolicy check -b ROOT --sig-enforce: the tree's image is the key source,
#                 nothing is assumed about signatures, no signature finding on any module
#   resigned      one in-tree module (dummy, else the first) stripped of its signature and
#                 re-signed with a throwaway key (kbuild's scripts/sign-file from a
#                 linux-kbuild-* package in the tree or on this machine, else openssl cms the
#                 way sign-file calls it): check -b ROOT
#                 refuses it enforced (EKEYREJECTED, signature-untrusted-key) and loads it
#                 with E unenforced
# A tree whose config lacks CONFIG_MODULE_SIG=y (bullseye armhf): verify-all wants every module
# unsigned, resigned and resigned-enf a load without E or signature finding.
# Exit: 0 all passed, 1 any failure, 2 setup error.
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "check-signatures: error: line $LINENO: exit status $?" >&2' ERR

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
kp=${1:?usage: check-signatures.sh KOPOLICY_BIN [TREE...]}
shift
want=("$@")
die() { printf 'check-signatures: error: %s\n' "$*" >&2; exit 2; }
command -v python3 >/dev/null || die "python3 not found"
command -v openssl >/dev/null || die "openssl not found"
[ -x "$kp" ] || die "$kp is not executable"

trees=${KOPOLICY_TREES:-/work/notes/trees.env}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -r "$trees" ]; then
	cp "$trees" "$work/trees"
else
	"$here/fetch-trees.sh" --offline amd64-6.1 amd64-6.12 > "$work/trees" ||
		die "no trees (run tests/corpus/fetch-trees.sh)"
fi

pass=0 failn=0
result() { # test tree status detail
	if [ "$3" = PASS ]; then pass=$((pass + 1)); else failn=$((failn + 1)); fi
	printf '%-4s %-12s %-14s %s\n' "$3" "$1" "$2" "$4"
}

# a throwaway key for the re-signed module (never trusted by any tree)
openssl req -new -x509 -newkey rsa:2048 -nodes -days 2 -sha256 -subj "/CN=throwaway corpus key" \
	-keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null || die "openssl req failed"

while IFS= read -r line; do
	tree=$(sed -n 's/.*tree=\([^\t]*\).*/\1/p' <<<"$line")
	root=$(sed -n 's/.*root=\([^\t]*\).*/\1/p' <<<"$line")
	rel=$(sed -n 's/.*release=\([^\t]*\).*/\1/p' <<<"$line")
	[ -n "$tree" ] && [ -n "$root" ] && [ -n "$rel" ] || continue
	if [ ${#want[@]} -gt 0 ] && [[ " ${want[*]} " != *" $tree "* ]]; then
		continue
	fi
	moddir=$root/lib/modules/$rel
	# a kernel built without CONFIG_MODULE_SIG (Debian bullseye's armhf) checks no signature
	# and Debian signs none of its modules: every module unsigned, any signature ignored
	config=$(sed -n 's/.*config=\([^\t]*\).*/\1/p' <<<"$line")
	modsig=1
	if [ -n "$config" ] && ! grep -q '^CONFIG_MODULE_SIG=y' "$config"; then modsig=0; fi
	img=""
	for c in "$root/boot/vmlinuz-$rel" "$moddir/vmlinuz" "$root/boot/vmlinux-$rel"; do
		[ -e "$c" ] && { img=$c; break; }
	done
	if [ -z "$img" ]; then
		result "$tree" image-certs FAIL "no kernel image in $root/boot"
		continue
	fi
	# image-certs + verify-all
	"$kp" info -j2 --json --kernel-image "$img" "$moddir" > "$work/info.json" 2> "$work/info.err" || true
	python3 - "$work/info.json" "$tree" > "$work/sum" <<'PY'
import collections, json, sys
d = json.load(open(sys.argv[1]))
res = collections.Counter()
algs = collections.Counter()
keys = collections.Counter()
bad = []
for m in d['modules']:
    s = m['signature']
    r = s['verification']['result'] if s else 'unsigned'
    res[r] += 1
    if s:
        algs['%s/%s' % (s['hash_algo'], s['pkey_algo'])] += 1
    if r == 'verified':
        keys[s['verification']['key']] += 1
    elif len(bad) < 3:
        bad.append('%s: %s' % (m['path'], r))
n = len(d['modules'])
print('%d %d %d' % (n, res['verified'], len(d['errors'])))
print('%d modules: %s; %s; keys %s%s' % (n, dict(res), dict(algs), dict(keys),
      ('; e.g. ' + ', '.join(bad)) if bad else ''))
PY
	read -r n verified errs < "$work/sum"
	detail=$(sed -n 2p "$work/sum")
	ncert=$("$kp" check --fail-on never -b "$root" -f json "$moddir/kernel/drivers/net/dummy.ko"* \
		2>/dev/null | python3 -c "import json,sys,re; d=json.load(sys.stdin)['kernel']['key_sources']; print(sum(int(re.search(r': (\d+) certificate', s).group(1)) for s in d if s.startswith('kernel image')))" 2>/dev/null || echo 0)
	if [ $modsig = 0 ] && ! grep -q '^CONFIG_SYSTEM_TRUSTED_KEYS="[^"]' "$config"; then
		# nothing to embed: no signing key and no trusted-keys file
		[ "${ncert:-0}" -eq 0 ] &&
			result "$tree" image-certs PASS \
				"$img: 0 certificates (no CONFIG_MODULE_SIG, no CONFIG_SYSTEM_TRUSTED_KEYS)" ||
			result "$tree" image-certs FAIL "$img: ${ncert:-0} certificate(s), want 0"
	elif [ "${ncert:-0}" -ge 1 ]; then
		result "$tree" image-certs PASS "$img: $ncert certificate(s)"
	else
		result "$tree" image-certs FAIL "$img: no certificate found"
	fi
	if [ "$n" -gt 0 ] && [ "$verified" -eq "$n" ] && [ "$errs" -eq 0 ] && [ $modsig = 1 ]; then
		result "$tree" verify-all PASS "$detail"
	elif [ $modsig = 0 ] && [ "$n" -gt 0 ] && [ "$errs" -eq 0 ] &&
		[[ $detail == "$n modules: {'unsigned': $n};"* ]]; then
		result "$tree" verify-all PASS "no CONFIG_MODULE_SIG: $detail"
	else
		result "$tree" verify-all FAIL "$detail; read errors $errs"
	fi
	# enforced: the whole tree with the tree's own image as key source
	"$kp" check -j2 -b "$root" --sig-enforce --fail-on never -f json > "$work/check.json" 2>/dev/null || true
	out=$(python3 - "$work/check.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ids = ('bad-signature', 'signature-required', 'signature-untrusted-key', 'signature-assumed',
       'lockdown')
hits = [(m['name'], f['id']) for m in d['modules'] for f in m['findings'] if f['id'] in ids]
assumed = [a for a in d['kernel']['assumptions'] if 'key source' in a]
ok = not hits and not assumed and any(s.startswith('kernel image') for s in d['kernel']['key_sources'])
print('PASS' if ok else 'FAIL', '%d modules, %d signature findings %s, key sources %s%s' % (
    len(d['modules']), len(hits), hits[:3], d['kernel']['key_sources'],
    ', assumed: %s' % assumed if assumed else ''))
PY
)
	result "$tree" enforced "${out%% *}" "${out#* }"
	# resigned: one module, a throwaway key
	mod=$(find "$moddir/kernel/drivers/net" -name 'dummy.ko*' | sed -n 1p)
	[ -n "$mod" ] || mod=$(find "$moddir/kernel" -name '*.ko*' | sort | sed -n 1p)
	case $mod in
	*.xz) xz -dc "$mod" > "$work/m.ko" ;;
	*.zst) zstd -qdc "$mod" > "$work/m.ko" ;;
	*.gz) gzip -dc "$mod" > "$work/m.ko" ;;
	*) cp "$mod" "$work/m.ko" ;;
	esac
	python3 - "$work/m.ko" <<'PY'
import struct, sys
p = sys.argv[1]
d = open(p, 'rb').read()
m = b'~Module signature appended~\n'
if d.endswith(m):
    n = struct.unpack('>I', d[-len(m) - 4:-len(m)])[0]
    d = d[:-len(m) - 12 - n]
open(p, 'wb').write(d)
PY
	signfile=$(find "$root/usr/lib" /usr/lib -maxdepth 3 -path '*linux-kbuild-*/scripts/sign-file' \
		-type f 2>/dev/null | sed -n 1p || true)
	how=openssl-cms
	if [ -n "$signfile" ] && "$signfile" sha256 "$work/key.pem" "$work/cert.pem" "$work/m.ko" 2>/dev/null; then
		how=sign-file
	else
		openssl cms -sign -binary -noattr -nocerts -outform DER -md sha256 -in "$work/m.ko" \
			-signer "$work/cert.pem" -inkey "$work/key.pem" -out "$work/p7"
		python3 - "$work/m.ko" "$work/p7" <<'PY'
import struct, sys
body = open(sys.argv[1], 'rb').read()
sig = open(sys.argv[2], 'rb').read()
open(sys.argv[1], 'wb').write(body + sig + struct.pack('>BBBBB3xI', 0, 0, 2, 0, 0, len(sig)) +
                              b'~Module signature appended~\n')
PY
	fi
	for enf in 1 0; do
		opt=(); [ $enf = 1 ] && opt=(--sig-enforce)
		"$kp" check -b "$root" "${opt[@]}" --fail-on never -f json "$work/m.ko" > "$work/r.json" 2>/dev/null || true
		got=$(python3 -c "
import json,sys
m=json.load(open('$work/r.json'))['modules'][0]
print(m['loads'], m['errno'], m['taint'], ','.join(f['id'] for f in m['findings']))")
		if [ $modsig = 0 ]; then
			# no module_sig_check(): loads, no E, no signature finding, enforced or not
			[[ $got == "True None "* && $got != *E*\ * && $got != *signature* ]] &&
				st=PASS || st=FAIL
			result "$tree" resigned$([ $enf = 1 ] && echo -enf) $st \
				"$(basename "$mod") re-signed ($how), no CONFIG_MODULE_SIG: $got"
		elif [ $enf = 1 ]; then
			[[ $got == "False EKEYREJECTED  signature-untrusted-key"* ]] && st=PASS || st=FAIL
			result "$tree" resigned-enf $st "$(basename "$mod") re-signed ($how), enforced: $got"
		else
			[[ $got == True\ None\ *E*\ signature-untrusted-key* ]] && st=PASS || st=FAIL
			result "$tree" resigned $st "$(basename "$mod") re-signed ($how), not enforced: $got"
		fi
	done
done < "$work/trees"

echo "$pass passed, $failn failed"
[ "$failn" -eq 0 ] || exit 1 # a failed count, not an error: no ERR trap line
