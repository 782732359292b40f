# shellcheck shell=bash
# Helpers of the splice tests (sourced by test-incremental*.sh): runs kept in $tmp, compared,
# and the splice line expected. Needs $kp and $tmp.

# splice_tree_61: the 6.1 fixture tree of test-incremental.sh and test-incremental-use.sh in
# $t/extra (a pristine copy in $tmp/orig), $rel and the kernel's arguments in kargs. Needs $fx.
splice_tree_61() {
	t=$tmp/tree
	mkdir -p "$t/extra" "$tmp/orig"
	for m in kp_prop_prov kp_use_prop kp_use_prop_chain kp_gpl_prov kp_missing_then_ns \
		kp_prop_uses_gpl kp_plain kp_use_prop_gplonly; do
		cp "$fx/$m.ko" "$t/extra/"
	done
	cp "$fx/sig/sig_dummy_unsigned.ko" "$t/extra/dummy.ko"
	cp "$t"/extra/*.ko "$tmp/orig/"
	rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
	kargs=(-k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release "$rel"
		--trusted-cert "$fx/sig/kernel-certs.pem")
}

# run NAME ARGS...: stdout, stderr and status of one run in $tmp/NAME.{out,err,rc}
run() {
	local name=$1
	shift
	"$kp" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
}
same() { # a b: identical runs
	cmp -s "$tmp/$1.out" "$tmp/$2.out" && cmp -s "$tmp/$1.err" "$tmp/$2.err" &&
		cmp -s "$tmp/$1.rc" "$tmp/$2.rc"
}
# cached NAME ARGS...: a run through both caches; $tmp/NAME.stats gets its cache lines
cached() {
	local name=$1
	shift
	KOPOLICY_CACHE_STATS=1 "$kp" "$@" >"$tmp/$name.out" 2>"$tmp/$name.all"
	echo $? >"$tmp/$name.rc"
	grep -v '^kopolicy: \(\(result \|base \)\?cache\|signatures\): ' "$tmp/$name.all" >"$tmp/$name.err"
	grep '^kopolicy: \(\(result \|base \)\?cache\|signatures\): ' "$tmp/$name.all" >"$tmp/$name.stats"
}

# entries_same A B: two result-cache entries (lib/cache/run-cache-internal.h's layout) hold
# the same output (stdout's and stderr's bytes in their order), key and store bytes and the
# same manifest records in any order (a run records them in its threads' order: inputs.h);
# says what differs on stderr otherwise
entries_same() {
	python3 - "$1" "$2" <<'PY'
import struct, sys

def parts(path):
    b = open(path, 'rb').read()
    olen, klen, mlen, slen = struct.unpack_from('<4Q', b, 16)
    at = 64
    # the output as each stream's bytes in order (its chunks cut where the buffer was flushed)
    out, o = [], at
    while o < at + olen:
        stream, n = b[o], struct.unpack_from('<I', b, o + 1)[0]
        if out and out[-1][0] == stream:
            out[-1][1] += b[o + 5:o + 5 + n]
        else:
            out.append([stream, bytearray(b[o + 5:o + 5 + n])])
        o += 5 + n
    at += olen
    key = b[at:at + klen]; at += klen
    man = b[at:at + mlen]; at += mlen
    store = b[at:at + slen]
    recs, off = [], 16  # magic, count
    while off < len(man):
        pl, = struct.unpack_from('<Q', man, off + 2)
        cl, = struct.unpack_from('<Q', man, off + 82)
        recs.append(man[off:off + 90 + pl + cl]); off += 90 + pl + cl
    return {'output': out, 'key': key, 'manifest head': man[:16],
            'manifest records': sorted(recs), 'store': store}

a, b = parts(sys.argv[1]), parts(sys.argv[2])
bad = [k for k in a if a[k] != b[k]]
for k in bad:
    print('# entries differ: %s' % k, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}
