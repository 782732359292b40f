#!/usr/bin/env bash
# check --format json writes each module as text, the bytes json-c writes for the same
# object in its plain layout (src/check-json.c, verdict_text()), built by -j threads in
# windows of 16 modules and written in load order (kp_json_stream()); --pretty keeps the
# json-c objects. Checked on every 6.1 fixture (findings, symbol_get() results, messages,
# errnos) copied under file names that need escaping (quote, backslash, newline, tab,
# control bytes, DEL, invalid and valid UTF-8):
#   - the plain output is the pretty output's document written back in json-c's plain
#     layout (same keys, order, escapes, numbers), byte for byte;
#   - -j 1, -j 2 and -j 7 print the same bytes, exit status and stderr;
#   - concrete values of known modules.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
. "$top/tests/lib/tap.sh"
tap_tmpdir
unset KOPOLICY_CACHE KOPOLICY_CACHE_STATS KOPOLICY_RUN_CACHE
export KOPOLICY_CACHE_DIR=$tmp/cache
fx=$top/fixtures/ko/6.1

command -v python3 >/dev/null || { echo "1..0 # SKIP python3 missing"; exit 0; }

rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
kargs=(-k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release "$rel")
d=$tmp/tree
mkdir -p "$d"
i=0
for f in "$fx"/*.ko "$fx"/*.ko.xz; do
	case $((i % 6)) in
	0) name="q\"uote$i.ko" ;;
	1) name="back\\slash$i.ko" ;;
	2) name="$(printf 'nl\nand\ttab\001\177-%d.ko' "$i")" ;;
	3) name="$(printf 'bad\xff\xfeutf8-%d.ko' "$i")" ;;
	4) name="$(printf 'caf\xc3\xa9-%d.ko' "$i")" ;;
	*) name="plain$i.ko" ;;
	esac
	[ "${f%.xz}" = "$f" ] || name="$name.xz"
	cp "$f" "$d/$name"
	i=$((i + 1))
done

# run NAME ARGS...: stdout, stderr and status in $tmp/NAME.{out,err,rc}
run() {
	local name=$1
	shift
	"$kp" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
}
same() { # a b: the same bytes, stderr and status
	cmp -s "$tmp/$1.out" "$tmp/$2.out" && cmp -s "$tmp/$1.err" "$tmp/$2.err" &&
		cmp -s "$tmp/$1.rc" "$tmp/$2.rc"
}

run plain --no-cache -j 2 check --format json "${kargs[@]}" "$d"/*
run pretty --no-cache -j 2 check --format json --pretty "${kargs[@]}" "$d"/*
run j1 --no-cache -j 1 check --format json "${kargs[@]}" "$d"/*
run j7 --no-cache -j 7 check --format json "${kargs[@]}" "$d"/*
run j1p --no-cache -j 1 check --format json --pretty "${kargs[@]}" "$d"/*
run cached -j 7 check --format json "${kargs[@]}" "$d"/*

test "$(cat "$tmp/plain.rc")" = 1
ok "check --format json on the fixtures: findings, exit status 1" $?
same plain j1 && same plain j7 && same plain cached
ok "-j 1, -j 2, -j 7 and a cached run: the same bytes, stderr and status" $?
same pretty j1p
ok "--pretty: -j 1 and -j 2 the same bytes" $?

# json-c's plain layout of a parsed document: "," and ":" without spaces, '/' as is (the
# output's JSON_C_TO_STRING_NOSLASHESCAPE), the control bytes json-c escapes, other text
# as UTF-8, and an invalid byte's lone surrogate as "\udcHH" (json-string.c)
python3 - "$tmp/plain.out" "$tmp/pretty.out" <<'PY'
import json, re, sys

plain = open(sys.argv[1], 'rb').read()
pretty = json.loads(open(sys.argv[2], 'rb').read().decode('utf-8'))

def esc(s):
    out = []
    for c in s:
        o = ord(c)
        if c == '"':
            out.append('\\"')
        elif c == '\\':
            out.append('\\\\')
        elif c in '\b\f\n\r\t':
            out.append({'\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t'}[c])
        elif o < 0x20 or 0xd800 <= o <= 0xdfff:
            out.append('\\u%04x' % o)
        else:
            out.append(c)
    return '"' + ''.join(out) + '"'

def plainjson(v):
    if v is None:
        return 'null'
    if v is True:
        return 'true'
    if v is False:
        return 'false'
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return esc(v)
    if isinstance(v, list):
        return '[' + ','.join(plainjson(x) for x in v) + ']'
    return '{' + ','.join(esc(k) + ':' + plainjson(x) for k, x in v.items()) + '}'

mods = pretty['modules']
want = '{"schema_version":%d,"kernel":%s,"modules":[' % (pretty['schema_version'],
                                                       plainjson(pretty['kernel']))
want += ','.join('\n' + plainjson(m) for m in mods)
want += '],"errors":%s,"shadowed":%s}\n' % (plainjson(pretty['errors']),
                                             plainjson(pretty['shadowed']))
got = plain.decode('utf-8')
if got != want:
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            print('# first difference at %d: %r / %r' % (i, got[i - 40:i + 40], want[i - 40:i + 40]))
            break
    sys.exit(1)
# the cases that must have been written
text = plain.decode('utf-8')
kinds = [any(m['findings'] for m in mods), any(m['symbol_get'] for m in mods),
         any(m['messages'] for m in mods),
         any(m['errno'] for m in mods), '\\udcff' in text, '\\"' in text, '\\\\' in text,
         '\\n' in text, '\\t' in text, '\\u0001' in text, '\x7f' in text, 'caf\u00e9' in text,
         len(mods) > 2 * 16]
sys.exit(0 if all(kinds) else 2)
PY
ok "the plain output is the pretty document in json-c's plain layout, byte for byte" $?

python3 - "$tmp/plain.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1], 'rb'))
m = {x['name']: x for x in d['modules']}
p = m['kp_prop_prov']
ok = (p['license'] == 'Proprietary' and p['loads'] is True and p['errno'] is None and
      p['errno_value'] == 0 and 'P' in p['taint'] and 'O' in p['taint'])
u = m['kp_use_prop']
ok = ok and u['findings'] and all(f['fix'] for f in u['findings'])
s = m['kp_symget']
ok = ok and s['symbol_get'] and s['symbol_get'][0]['result'] in ('ok', 'null')
ns = m['kp_ns_missing']
ok = ok and ns['loads'] is False and ns['errno'] == 'EINVAL' and ns['errno_value'] == -22
ok = ok and d['modules'][-1]['global_taint'] != '' and d['modules'][0]['global_taint_added'] != ''
sys.exit(0 if ok else 1)
PY
ok "concrete values: licence, taint, errno, findings with fixes, symbol_get, global taint" $?

tap_done
