#!/usr/bin/env bash
# The result cache after a depmod (issue 28): `depmod -b ROOT REL` writes every modules.*
# index to a temporary file and renames it into place, with the same bytes when no module
# changed. The indexes (read by libkmod when the root has a modprobe configuration), the
# release directory and the other small files a run reads whole are recorded with their
# bytes (directories: their entries' names and types), so the run is still replayed, the
# entry then stored again with the new states. Whatever the path, the output must be the
# bytes of a --no-cache run: check -b, check -k MODDIR and graph; a depmod that changes an
# index (a module removed, renamed, added; a softdep), an index rewritten with other bytes
# of the same size, a changed mode or type, must miss. As root, a summed file replaced by
# another user's copy with the same bytes still holds but its state is not stored (it does
# not name the bytes: each replay compares them), and that user's change then misses; a
# module owned by nobody, one byte changed by nobody (size and mtime kept), misses.
# Also: the stats line says why the result cache is off when the executable cannot be
# stat()ed (run from a memfd).
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.1
export KOPOLICY_CACHE_DIR=$tmp/cache
unset KOPOLICY_CACHE KOPOLICY_CACHE_STATS KOPOLICY_CACHE_MAX_SIZE KOPOLICY_RUN_CACHE

command -v depmod >/dev/null || { echo "1..0 # SKIP depmod (kmod) missing"; exit 0; }

r=$tmp/root
md=$r/lib/modules/$rel
mkdir -p "$md/kernel/a" "$md/extra" "$r/etc/modprobe.d"
for m in kp_prop_prov kp_use_prop kp_use_prop_chain kp_gpl_prov; do
	cp "$fx/$m.ko" "$md/kernel/a/"
done
for m in kp_plain kp_test kp_missing_then_ns; do cp "$fx/$m.ko" "$md/extra/"; done
# a modprobe configuration: libkmod reads the release directory's indexes
echo "options kp_plain x=1" >"$r/etc/modprobe.d/local.conf"
dm() { depmod -b "$r" "$rel" 2>/dev/null; }
dm || { echo "1..0 # SKIP depmod -b cannot index the scratch tree"; exit 0; }

# the three commands (NAME ARGS...)
cmd_b=(check -f json --fail-on never -b "$r" -k "$fx/Module.symvers.gz" --kernel-config
	"$fx/config.gz")
cmd_k=(check -f json --fail-on never -k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz"
	--kernel-release "$rel" "$md")
cmd_g=(graph --format json -b "$r" -k "$fx/Module.symvers.gz")

# run, same, stats_is, expect
. "$top/tests/cli/run-cache-lib.sh"
by_bytes='hit, replayed (inputs rewritten with the same bytes; *)'
refreshed='hit, replayed (inputs rewritten with the same bytes; entry refreshed)'

# a state changed less than a second before a run is not stored: every wait below is that
sleep 1.1
for c in b k g; do
	eval "args=(\"\${cmd_$c[@]}\")"
	expect "$c: first run" "$c-0" 'miss, stored (*' "${args[@]}"
	expect "$c: second run" "$c-1" 'hit, replayed' "${args[@]}"
done
cp "$tmp/b-0.out" "$tmp/v0.json"

ino0=$(stat -c %i "$md/modules.dep")
dm
ino1=$(stat -c %i "$md/modules.dep")
[ "$ino0" != "$ino1" ]
ok "depmod wrote the indexes again (modules.dep: inode $ino0 -> $ino1)" $?
sleep 1.1
for c in b k g; do
	eval "args=(\"\${cmd_$c[@]}\")"
	expect "$c: after a depmod that wrote the same bytes" "$c-2" "$refreshed" "${args[@]}"
	expect "$c: then stat()s only again" "$c-3" 'hit, replayed' "${args[@]}"
done

# right after a depmod: replayed, the new states (too new to trust) not stored
dm
expect "b: right after a depmod" b-4 "$by_bytes" "${cmd_b[@]}"

# a directory whose state changed but whose names did not (a file made and removed): the
# listing holds (a module renamed away and back would not: its own change time moves)
st0=$(stat -c %Y.%Z "$md/extra")
touch "$md/extra/.tmp" && rm "$md/extra/.tmp"
[ "$st0" != "$(stat -c %Y.%Z "$md/extra")" ]
ok "extra/: a new state, the same names" $?
sleep 1.1
expect "b: the modules' directory rewritten with the same names" b-5 "$refreshed" "${cmd_b[@]}"

# an index rewritten with other bytes of the same size (modules.dep: a letter of its first
# module's path changed) misses, its mtime put back does not matter
cp -p "$md/modules.dep" "$tmp/dep"
sed -i '1s/\.ko:/.kx:/' "$md/modules.dep"
touch -r "$tmp/dep" "$md/modules.dep"
! cmp -s "$tmp/dep" "$md/modules.dep" &&
	[ "$(stat -c %s "$tmp/dep")" = "$(stat -c %s "$md/modules.dep")" ] &&
	[ "$(stat -c %Y "$tmp/dep")" = "$(stat -c %Y "$md/modules.dep")" ]
ok "modules.dep: other bytes, same size and mtime" $?
sleep 1.1
expect "b: an index with other bytes of the same size" b-6 'miss, stored (*' "${cmd_b[@]}"
# check -k MODDIR does not read the indexes: the directory's listing holds
expect "k: (not an input of check -k)" k-6 "$by_bytes" "${cmd_k[@]}"
dm
sleep 1.1
expect "b: depmod put it back" b-7 'miss, stored (*' "${cmd_b[@]}"

# a mode changed, the bytes not: a miss
chmod 600 "$md/modules.softdep"
sleep 1.1
expect "b: an index's mode changed" b-8 'miss, stored (*' "${cmd_b[@]}"
chmod 644 "$md/modules.softdep"

# a changed softdep (what depmod writes for a module that gained one)
echo "softdep kp_plain pre: kp_test" >>"$md/modules.softdep"
sleep 1.1
expect "b: a softdep added to modules.softdep" b-9 'miss, stored (*' "${cmd_b[@]}"
expect "g: the same" g-9 'miss, stored (*' "${cmd_g[@]}"
dm
sleep 1.1
expect "b: depmod wrote modules.softdep back" b-10 'miss, stored (*' "${cmd_b[@]}"
cmp -s "$tmp/b-10.out" "$tmp/v0.json"
ok "b: the first answer again" $?

# a module removed, then depmod: the listing and the indexes changed
mv "$md/extra/kp_test.ko" "$tmp/"
dm
sleep 1.1
expect "b: a module removed, depmod" b-11 'miss, stored (*' "${cmd_b[@]}"
expect "k: the same" k-11 'miss, stored (*' "${cmd_k[@]}"
expect "g: the same" g-11 'miss, stored (*' "${cmd_g[@]}"
! cmp -s "$tmp/b-11.out" "$tmp/v0.json"
ok "b: a module removed: the answer changed" $?
# renamed (same bytes): the listing changed
mv "$md/extra/kp_plain.ko" "$md/extra/kp_plain2.ko"
dm
sleep 1.1
expect "b: a module renamed, depmod" b-12 'miss, stored (*' "${cmd_b[@]}"
mv "$md/extra/kp_plain2.ko" "$md/extra/kp_plain.ko"
mv "$tmp/kp_test.ko" "$md/extra/"
dm
sleep 1.1
expect "b: both back, depmod" b-13 'miss, stored (*' "${cmd_b[@]}"
cmp -s "$tmp/b-13.out" "$tmp/v0.json"
ok "b: the first answer again" $?

# a name of the same listing, another type: a file replaced by a directory
rm "$md/modules.devname"
mkdir "$md/modules.devname"
sleep 1.1
expect "b: an index replaced by a directory" b-14 'miss, stored (*' "${cmd_b[@]}"
rmdir "$md/modules.devname"
dm
sleep 1.1
run b-15 "${cmd_b[@]}"

# another user's copy with the same bytes (root only: chown)
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	cp -p "$md/modules.symbols" "$tmp/symbols"
	cp "$tmp/symbols" "$md/modules.symbols.new"
	chown nobody "$md/modules.symbols.new"
	mv "$md/modules.symbols.new" "$md/modules.symbols"
	sleep 1.1
	expect "root: an index replaced by nobody's copy with the same bytes" b-16 \
		'hit, replayed (inputs rewritten with the same bytes; entry not refreshed: *)' \
		"${cmd_b[@]}"
	expect "root: ... its state is never stored: the bytes compared again" b-17 \
		'hit, replayed (inputs rewritten with the same bytes; entry not refreshed: *)' \
		"${cmd_b[@]}"
	# nobody changes it (same size): a miss
	sed -i 's/^alias symbol:\(.\)/alias symbol:X/' "$md/modules.symbols"
	chown nobody "$md/modules.symbols"
	! cmp -s "$tmp/symbols" "$md/modules.symbols"
	ok "root: nobody's copy changed" $?
	sleep 1.1
	expect "root: ... then changed by its owner" b-18 'miss, stored (*' "${cmd_b[@]}"
	cp "$tmp/symbols" "$md/modules.symbols"
	chown root "$md/modules.symbols"
	# a module owned by nobody (its state not trusted: its bytes hashed on every replay)
	mo=$md/extra/kp_plain.ko
	chown nobody "$mo"
	chmod 644 "$mo" # copied from a read-only source tree (make distcheck): writable by its owner
	sleep 1.1
	expect "root: a module owned by nobody" b-19 'miss, stored (*' "${cmd_b[@]}"
	expect "root: ... again: replayed" b-20 'hit, replayed' "${cmd_b[@]}"
	# nobody rewrites one byte in place (same size), puts the mtime back
	cp -p "$mo" "$tmp/mo.orig"
	chmod 755 "$tmp" # mktemp -d's 0700: nobody reaches the tree
	printf '\001' | setpriv --reuid=nobody --regid=nogroup --clear-groups \
		dd of="$mo" bs=1 seek=$(($(stat -c %s "$mo") - 100)) count=1 conv=notrunc 2>/dev/null
	touch -r "$tmp/mo.orig" "$mo"
	! cmp -s "$mo" "$tmp/mo.orig"
	ok "root: nobody changed one byte of the module" $?
	sleep 1.1
	expect "root: ... then a miss" b-21 'miss, stored (*' "${cmd_b[@]}"
	cp "$tmp/mo.orig" "$mo"
	chown root "$mo"
	chmod 700 "$tmp"
else
	for i in 1 2 3 4 5 6 7 8; do
		n=$((n + 1))
		echo "ok $n # SKIP not root: no other user's file"
	done
fi

# the executable cannot be stat()ed (deleted, here run from a memfd): the stats line says so
if command -v python3 >/dev/null; then
	python3 - "$kp" "$tmp/memfd.err" "${cmd_b[@]}" <<'EOF'
import os, sys
exe, err, args = sys.argv[1], sys.argv[2], sys.argv[3:]
fd = os.memfd_create("kopolicy", 0)
with open(exe, "rb") as f:
    os.write(fd, f.read())
pid = os.fork()
if pid == 0:
    e = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(e, 2)
    n = os.open(os.devnull, os.O_WRONLY)
    os.dup2(n, 1)
    env = dict(os.environ, KOPOLICY_CACHE_STATS="1")
    os.execve(fd, ["kopolicy"] + args, env)
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
EOF
	st=$?
	want='^kopolicy: result cache: off: the executable /memfd:kopolicy (deleted) cannot'
	want+=' be stat()ed (No such file or directory)'
	[ $st -le 1 ] && grep -q "$want" "$tmp/memfd.err"
	_st=$?
	ok "executable not stat()able: $(grep 'result cache' "$tmp/memfd.err")" $_st
else
	n=$((n + 1))
	echo "ok $n # SKIP python3 missing"
fi

tap_done
