#!/usr/bin/env bash
# IMA appraisal from the command line over the 6.12 fixtures: the built-in policy of
# --kernel-cmdline, --ima-policy FILE (rules, comments, a bad line, an unreadable file), and
# the module's security.ima read from the file (a digest compared with the bytes, a
# signature assumed) where extended attributes can be set (root on a file system that keeps
# security.*; otherwise those cases are skipped).
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.12
export KOPOLICY_CACHE_DIR=$tmp/cache

# check OUT ARGS...: the JSON prediction for the 6.12 kernel, module kp_plain (a copy in $tmp)
check() {
	local out=$1
	shift
	"$kp" check -f json --fail-on never -k "$fx/Module.symvers.gz" \
		--kernel-config "$fx/config.gz" --kernel-release "$rel" "$@" "$tmp/m/kp_plain.ko" \
		> "$out" 2> "$out.err"
}
# verdict FILE PYTHON-EXPR over d (the document), m (kp_plain's object), ids, msgs
verdict() {
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = d["modules"][0]
ids = [f["id"] for f in m["findings"]]
msgs = [x["text"] if isinstance(x, dict) else x for x in m.get("messages") or []]
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)
PY
}

mkdir -p "$tmp/m"
cp "$fx/kp_plain.ko" "$tmp/m/"
audit="'op=appraise_data cause=IMA-signature-required' in ' '.join(msgs)"

check "$tmp/none.json"
verdict "$tmp/none.json" \
	"m['loads'] and 'ima-appraisal' not in ids and not any('IMA' in a for a in d['kernel']['assumptions'])"
ok "no ima_policy=: nothing appraised, nothing assumed about IMA" $?

check "$tmp/sb.json" --kernel-cmdline "quiet ima_policy=secure_boot"
verdict "$tmp/sb.json" \
	"not m['loads'] and m['errno'] == 'EACCES' and ids == ['ima-appraisal'] and $audit"
ok "ima_policy=secure_boot: EACCES, the audit record" $?
verdict "$tmp/sb.json" \
	"any('built-in policy is taken as the active one' in a for a in d['kernel']['assumptions'])"
ok "... the policy loaded after boot is an assumption" $?

check "$tmp/log.json" --kernel-cmdline "ima_policy=secure_boot ima_appraise=log"
verdict "$tmp/log.json" "m['loads'] and ids[0] == 'ima-appraisal' and $audit"
ok "ima_appraise=log: loads, the record printed" $?

check "$tmp/sbon.json" --kernel-cmdline "ima_policy=secure_boot ima_appraise=log" --secure-boot on
verdict "$tmp/sbon.json" "not m['loads'] and m['errno'] == 'EACCES'"
ok "Secure Boot ignores ima_appraise=log: EACCES before the signature check" $?

printf '# a policy as written to securityfs\nmeasure func=MODULE_CHECK\n\nappraise func=MODULE_CHECK appraise_type=imasig\n' \
	> "$tmp/policy"
check "$tmp/pol.json" --ima-policy "$tmp/policy"
verdict "$tmp/pol.json" \
	"not m['loads'] and m['errno'] == 'EACCES' and any('$tmp/policy' in f['message'] for f in m['findings']) and not any('IMA' in a for a in d['kernel']['assumptions'])"
ok "--ima-policy: its rule refuses, the file is named, nothing assumed" $?

printf 'appraise func=MODULE_CHECK\nappraise fsmagic=zz\n' > "$tmp/bad"
check "$tmp/bad.json" --ima-policy "$tmp/bad"
rc=$?
[ $rc -eq 2 ] && grep -q "$tmp/bad: line 2: bad fsmagic 'zz'" "$tmp/bad.json.err"
ok "--ima-policy with a bad line: exit 2, the file and the line named" $?
check "$tmp/missing.json" --ima-policy "$tmp/nonexistent"
rc=$?
[ $rc -eq 2 ] && grep -q "$tmp/nonexistent" "$tmp/missing.json.err"
ok "--ima-policy that cannot be read: exit 2, named" $?

# security.ima on the file: needs CAP_SYS_ADMIN and a file system that keeps it
sha=$(sha256sum "$tmp/m/kp_plain.ko" | cut -c1-64)
if python3 -c \
	"import os,sys; os.setxattr(sys.argv[1], 'security.ima', bytes.fromhex('0404' + sys.argv[2]))" \
	"$tmp/m/kp_plain.ko" "$sha" 2> /dev/null; then
	printf 'appraise func=MODULE_CHECK\n' > "$tmp/hash"
	check "$tmp/h.json" --ima-policy "$tmp/hash"
	verdict "$tmp/h.json" "m['loads'] and 'ima-appraisal' not in ids"
	ok "security.ima holds the file's sha256: a hash rule passes" $?
	check "$tmp/hsb.json" --kernel-cmdline "ima_policy=secure_boot"
	verdict "$tmp/hsb.json" "not m['loads'] and $audit"
	ok "... a digest where secure_boot wants a signature: IMA-signature-required" $?
	python3 -c \
		"import os,sys; os.setxattr(sys.argv[1], 'security.ima', bytes.fromhex('0404' + '00' * 32))" \
		"$tmp/m/kp_plain.ko"
	check "$tmp/hbad.json" --ima-policy "$tmp/hash"
	verdict "$tmp/hbad.json" "not m['loads'] and 'cause=invalid-hash' in ' '.join(msgs)"
	ok "... another digest: invalid-hash" $?
	python3 -c \
		"import os,sys; os.setxattr(sys.argv[1], 'security.ima', bytes.fromhex('0302040102030401000100'))" \
		"$tmp/m/kp_plain.ko"
	check "$tmp/sig.json" --kernel-cmdline "ima_policy=secure_boot"
	verdict "$tmp/sig.json" "m['loads'] and 'ima-signature-assumed' in ids"
	ok "... an IMA signature: assumed to verify against .ima" $?
else
	for t in "a hash rule passes" "IMA-signature-required" \
		"invalid-hash" "signature assumed"; do
		skip "security.ima: $t" \
			"cannot set security.ima here (not root, or no xattr support)"
	done
fi

tap_done
