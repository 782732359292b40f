#!/usr/bin/env bash
# The caches' trust model (lib/cache/trusted-dir.h, kopolicy(1) CACHE TRUST): a cache directory
# another user can write is neither read nor written (one line says so), as root with a user's
# KOPOLICY_CACHE_DIR too (a user's HOME or XDG_CACHE_HOME: root's own cache instead,
# test-cache-home.sh); a forged result entry or pack is never
# believed; links planted in the cache are not followed when storing, and cache clear/prune
# remove them as links; a run that failed for an environmental reason (too many open files,
# out of memory) is not stored. The cases that need a second user (nobody) run as root only,
# else they are skipped with a TAP SKIP line.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
kp=$(cd "$(dirname "$kp")" && pwd)/$(basename "$kp")
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/hook-root.sh"
tap_tmpdir
chmod 755 "$tmp" # nobody walks down to its caches
unset KOPOLICY_CACHE KOPOLICY_CACHE_STATS KOPOLICY_CACHE_MAX_SIZE KOPOLICY_RUN_CACHE XDG_CACHE_HOME

root=false
[ "$(id -u)" -eq 0 ] && root=true
other=65534 # nobody
# a copy nobody can read whatever the checkout's parents allow (a CI clone under a 0700 dir)
mkdir -p "$tmp/fx" && cp -R "$top/fixtures/ko/6.1/." "$tmp/fx/" && chmod -R a+rX "$tmp/fx"
fx=$tmp/fx
sleep 1.1 # a file changed less than a second before a run is not stored by its state
mod=$fx/kp_gplonly_then_prop.ko # fails to load: check exits 1
C=(check -j1 -k "$fx/Module.symvers.gz" --kernel-config "$fx/config.gz" --kernel-release
	"$(sed -n 's/^release=//p' "$fx/kernel.txt")" "$mod")
# run NAME ARGS...: stdout, stderr, status in $tmp/NAME.{out,err,rc}, run in $tmp
run() {
	local name=$1
	shift
	(cd "$tmp" && "$kp" "$@") >"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
}
# the reference: no cache at all
run ref --no-cache "${C[@]}"
[ "$(cat "$tmp/ref.rc")" = 1 ]
ok "the reference run fails the module (exit 1)" $?
# like NAME [EXTRA-STDERR-LINE]: the run gave the reference's output and status, its stderr
# the reference's after EXTRA-STDERR-LINE (when given)
like() {
	local want=$tmp/ref.err
	if [ $# -gt 1 ]; then
		{ printf '%s\n' "$2"; cat "$tmp/ref.err"; } >"$tmp/want.err"
		want=$tmp/want.err
	fi
	cmp -s "$tmp/$1.out" "$tmp/ref.out" && cmp -s "$tmp/$1.err" "$want" &&
		cmp -s "$tmp/$1.rc" "$tmp/ref.rc"
}
# forge DIR: every result entry of DIR says exit 0 and "all good" (its CRC-32 made anew)
forge() {
	python3 - "$1"/runs-v1/*.run <<'EOF'
import struct, sys, zlib
for path in sys.argv[1:]:
    b = bytearray(open(path, 'rb').read())
    olen, klen, mlen = struct.unpack_from('<QQQ', b, 16)
    rest = b[64 + olen:]
    out = b'all good\n'
    chunk = bytes([1]) + struct.pack('<I', len(out)) + out
    h = bytearray(b[:64])
    struct.pack_into('<I', h, 12, 0)
    struct.pack_into('<Q', h, 16, len(chunk))
    struct.pack_into('<I', h, 48, 0)
    crc = zlib.crc32(bytes(h) + chunk + bytes(rest)) & 0xffffffff
    struct.pack_into('<I', h, 48, crc)
    open(path, 'wb').write(bytes(h) + chunk + bytes(rest))
EOF
}
# fill DIR: one stored run (result and facts) in the cache DIR, as the current user
fill() {
	KOPOLICY_CACHE_DIR=$1 run fill "${C[@]}"
	ls "$1"/runs-v1/*.run >/dev/null 2>&1
}
files() { find "$1" -mindepth 1 | LC_ALL=C sort; }

# 1. a forged entry in a directory the user owns: root ignores the directory, says so once
if $root; then
	c=$tmp/user-cache
	fill "$c" && forge "$c"
	ok "a result entry was stored and forged" $?
	KOPOLICY_CACHE_DIR=$c run forged-own "${C[@]}"
	[ "$(cat "$tmp/forged-own.out")" = "all good" ]
	ok "the forged entry is what replays from a directory root owns (the forge works)" $?
	chown -R "$other" "$c"
	files "$c" >"$tmp/before.list"
	KOPOLICY_CACHE_DIR=$c run forged "${C[@]}"
	like forged \
		"kopolicy: cache directory $c not used: $c is owned by uid $other, not by root; running without the cache"
	ok "root: KOPOLICY_CACHE_DIR owned by another user: ignored with one line, the real answer" $?
	files "$c" | cmp -s - "$tmp/before.list"
	ok "root: nothing written into the other user's cache directory" $?
	# through HOME and XDG_CACHE_HOME (sudo -E): root's own cache instead, test-cache-home.sh
	# owned by root all the way, but the entry itself the user's
	c2=$tmp/root-cache
	fill "$c2" && forge "$c2" && chown "$other" "$c2"/runs-v1/*.run
	KOPOLICY_CACHE_DIR=$c2 run entry-owned "${C[@]}"
	like entry-owned
	ok "root: a forged entry owned by another user in root's directory: not replayed" $?
	# a pack of facts owned by another user: not used (counted as a miss, not a hit)
	rm -rf "$c2" && fill "$c2" && chown "$other" "$c2"/facts-v7/packs/*.pack
	s=$(KOPOLICY_CACHE_DIR=$c2 KOPOLICY_RUN_CACHE=off KOPOLICY_CACHE_STATS=1 "$kp" "${C[@]}" \
		2>&1 >/dev/null | sed -n 's/^kopolicy: cache: //p')
	case $s in "0 hits"*) true ;; *) false ;; esac
	ok "root: a pack owned by another user is not used ($s)" $?
	# cache show/clear as root on the user's directory: refused, nothing removed
	KOPOLICY_CACHE_DIR=$c run show cache show
	[ "$(cat "$tmp/show.rc")" = 2 ] && grep -q \
		"not used: $c is owned by uid $other" "$tmp/show.err"
	ok "root: cache show refuses another user's directory (exit 2)" $?
	KOPOLICY_CACHE_DIR=$c run clear cache clear
	[ "$(cat "$tmp/clear.rc")" = 2 ] && files "$c" | cmp -s - "$tmp/before.list"
	ok "root: cache clear refuses another user's directory, removes nothing" $?
	# the second user in a directory a third one owns
	c3=$tmp/third && mkdir -p "$c3" && chown 12345 "$c3"
	KOPOLICY_CACHE_DIR=$c3/cache setpriv --reuid="$other" --regid="$other" --clear-groups \
		"$kp" "${C[@]}" >"$tmp/nobody.out" 2>"$tmp/nobody.err"
	grep -qx "kopolicy: cache directory $c3/cache not used: $c3 is owned by uid 12345, not by uid $other or root; running without the cache" "$tmp/nobody.err" &&
		[ ! -e "$c3/cache" ]
	ok "a user: a directory another user owns is not used either" $?
	# the user's own cache, in root's /tmp-like sticky directory: used
	st=$tmp/sticky && mkdir -m 1777 "$st" && chmod 1777 "$st"
	# a copy of the binary, run from $tmp: nobody may not reach the build directory (a CI
	# clone under a 0700 dir), and the result cache keys on the executable it can stat
	cp "$kp" "$tmp/kopolicy-copy" && chmod 755 "$tmp/kopolicy-copy"
	(cd "$tmp" && KOPOLICY_CACHE_DIR=$st/nobody setpriv --reuid="$other" --regid="$other" \
		--clear-groups env KOPOLICY_CACHE_STATS=1 "$tmp/kopolicy-copy" "${C[@]}" \
		>/dev/null 2>"$tmp/sticky.err")
	grep -q "result cache: miss, stored" "$tmp/sticky.err" &&
		[ "$(stat -c %u "$st/nobody/runs-v1")" = "$other" ]
	ok "a user's own cache under a sticky world-writable directory is used" $?
	# the hook (modprobe as root, sudo -E): the user's directory ignored with one line, the
	# answer the one without any cache gives
	if command -v depmod >/dev/null; then
		r=$tmp/hookroot
		(fx=$(cd "$top/fixtures/ko/6.12" && pwd) &&
			rel=$(sed -n 's/^release=//p' "$fx/kernel.txt") &&
			hook_root "$r" kp_gpl_prov kp_prop_prov kp_use_prop 2>/dev/null)
		KOPOLICY_CACHE=off run hook-ref hook --root "$r" kp_use_prop
		KOPOLICY_CACHE_DIR=$c run hook hook --root "$r" kp_use_prop
		{ echo "kopolicy: cache directory $c not used: $c is owned by uid $other, not by root; running without the cache"; cat "$tmp/hook-ref.err"; } >"$tmp/hook-want.err"
		cmp -s "$tmp/hook.err" "$tmp/hook-want.err" &&
			cmp -s "$tmp/hook.rc" "$tmp/hook-ref.rc" &&
			grep -q "kp_use_prop" "$tmp/hook.err" && files "$c" |
				cmp -s - "$tmp/before.list"
		ok "root: the hook ignores a user's KOPOLICY_CACHE_DIR with one line, same verdict" $?
	else
		skip "root: the hook ignores a user's KOPOLICY_CACHE_DIR with one line, same verdict" \
			"depmod (kmod) is not installed"
	fi
else
	for t in "a result entry was stored and forged" \
		"the forged entry is what replays from a directory root owns (the forge works)" \
		"root: KOPOLICY_CACHE_DIR owned by another user: ignored with one line, the real answer" \
		"root: nothing written into the other user's cache directory" \
		"root: a forged entry owned by another user in root's directory: not replayed" \
		"root: a pack owned by another user is not used" \
		"root: cache show refuses another user's directory (exit 2)" \
		"root: cache clear refuses another user's directory, removes nothing" \
		"a user: a directory another user owns is not used either" \
		"a user's own cache under a sticky world-writable directory is used" \
		"root: the hook ignores a user's KOPOLICY_CACHE_DIR with one line, same verdict"; do
		skip "$t" "needs root to set up a second user's files"
	done
fi

# 2. any user: directories others can write, and group-writable or foreign-looking entries
c=$tmp/open && mkdir -p "$c" && chmod 777 "$c"
KOPOLICY_CACHE_DIR=$c run open "${C[@]}"
like open \
	"kopolicy: cache directory $c not used: $c is writable by others; running without the cache" &&
	[ -z "$(ls -A "$c")" ]
ok "a cache directory writable by others: not used, nothing written" $?
c=$tmp/grp && mkdir -p "$c/cache" && chmod 775 "$c"
KOPOLICY_CACHE_DIR=$c/cache run grp "${C[@]}"
like grp "kopolicy: cache directory $c/cache not used: $c is writable by its group; running without the cache"
ok "a group-writable directory above the cache: not used" $?
c=$tmp/sticky-self && mkdir -p "$c" && chmod 1777 "$c"
KOPOLICY_CACHE_DIR=$c run sticky-self "${C[@]}"
like sticky-self \
	"kopolicy: cache directory $c not used: $c is writable by others; running without the cache"
ok "a sticky world-writable directory as the cache directory itself: not used" $?
c=$tmp/gw && fill "$c" && forge "$c" && chmod g+w "$c"/runs-v1/*.run
KOPOLICY_CACHE_DIR=$c run gw "${C[@]}"
like gw
ok "a forged group-writable entry: not replayed" $?
# a link to the cache directory, owned by the user, from a trusted directory: followed
c=$tmp/real && fill "$c" && ln -s real "$tmp/link"
KOPOLICY_CACHE_DIR=$tmp/link KOPOLICY_CACHE_STATS=1 run link "${C[@]}"
grep -q "result cache: hit, replayed" "$tmp/link.err"
ok "a link to the cache directory, the user's own: followed (a hit)" $?

# 3. links planted inside the cache: nothing is created through them
c=$tmp/planted && mkdir -p "$c" "$tmp/victim" "$tmp/victim2"
ln -s "$tmp/victim" "$c/runs-v1"
ln -s "$tmp/victim2" "$c/facts-v7"
KOPOLICY_CACHE_DIR=$c run planted "${C[@]}"
like planted && [ -z "$(ls -A "$tmp/victim")" ] && [ -z "$(ls -A "$tmp/victim2")" ]
ok "runs-v1 and facts-v7 planted as links: the real answer, nothing created where they point" $?
# cache clear: links removed as links, never followed
echo keep >"$tmp/victim/0123456789abcdef.run"
mkdir -p "$tmp/victim2/packs" && echo keep >"$tmp/victim2/packs/1-2-0.pack"
KOPOLICY_CACHE_DIR=$c run clear1 cache clear
[ "$(cat "$tmp/clear1.rc")" = 0 ] && [ -f "$tmp/victim/0123456789abcdef.run" ] &&
	[ -f "$tmp/victim2/packs/1-2-0.pack" ] && [ ! -L "$c/runs-v1" ] && [ ! -L "$c/facts-v7" ]
ok "cache clear: runs-v1 and facts-v7 links removed as links, what they point to kept" $?
c=$tmp/planted2 && fill "$c"
ln -s "$tmp/victim2/packs" "$c/facts-v7/packs.old" # not a name the cache uses: left alone
rm -rf "$c/facts-v7/packs" && ln -s "$tmp/victim2/packs" "$c/facts-v7/packs"
ln -s "$tmp/victim/0123456789abcdef.run" "$c/runs-v1/fedcba9876543210.run"
KOPOLICY_CACHE_DIR=$c run prune1 cache prune --max-size 1K
[ "$(cat "$tmp/prune1.rc")" = 0 ] && [ -f "$tmp/victim/0123456789abcdef.run" ] &&
	[ -f "$tmp/victim2/packs/1-2-0.pack" ] && [ ! -e "$c/facts-v7/packs" ] &&
	[ ! -L "$c/runs-v1/fedcba9876543210.run" ]
ok "cache prune: a packs link and an entry link removed as links, their targets kept" $?
mkdir -p "$c/facts-v7/packs" && ln -s "$tmp/victim2/packs/1-2-0.pack" "$c/facts-v7/packs/9-9-0.pack"
ln -s "$tmp/victim/0123456789abcdef.run" "$c/runs-v1/fedcba9876543210.run"
KOPOLICY_CACHE_DIR=$c run clear2 cache clear
[ "$(cat "$tmp/clear2.rc")" = 0 ] && [ -f "$tmp/victim/0123456789abcdef.run" ] &&
	[ -f "$tmp/victim2/packs/1-2-0.pack" ] && [ ! -e "$c/runs-v1" ] &&
		[ ! -e "$c/facts-v7/packs" ]
ok "cache clear: pack and entry links removed as links, their targets kept" $?

# 4. a run that failed for lack of file descriptors is not stored (nor replayed later)
c=$tmp/emfile
found=
for lim in $(seq 4 40); do
	rm -rf "$c"
	(cd "$tmp" && ulimit -n "$lim" && KOPOLICY_CACHE_DIR=$c \
		KOPOLICY_CACHE_STATS=1 "$kp" "${C[@]}") \
		>"$tmp/emfile.out" 2>"$tmp/emfile.err"
	if grep -q "Too many open files" "$tmp/emfile.err" &&
		grep -q "result cache: miss" "$tmp/emfile.err"; then
		found=$lim
		break
	fi
done
[ -n "$found" ] && grep -q \
	"result cache: miss, not stored: an environmental failure" "$tmp/emfile.err"
ok "a run short of file descriptors (ulimit -n ${found:-?}) is not stored" $?
KOPOLICY_CACHE_DIR=$c KOPOLICY_CACHE_STATS=1 run after "${C[@]}"
grep -q "result cache: miss, stored" "$tmp/after.err" && cmp -s "$tmp/after.out" "$tmp/ref.out" &&
	cmp -s "$tmp/after.rc" "$tmp/ref.rc"
ok "the next run with enough descriptors answers anew (not the failure)" $?

# 5. nor one that ran out of memory (ulimit -v): the largest limit the run fails "out of memory"
# under, from above (one where its own recorder still had the memory to store it; none under a
# sanitizer: its shadow memory needs more than any)
c=$tmp/oom
found=
for lim in $(seq 40000 -500 6000); do
	rm -rf "$c"
	(cd "$tmp" && ulimit -v "$lim" && KOPOLICY_CACHE_DIR=$c \
		KOPOLICY_CACHE_STATS=1 "$kp" "${C[@]}") \
		>"$tmp/oom.out" 2>"$tmp/oom.err"
	if grep -q "out of memory" "$tmp/oom.err" &&
		grep -q "result cache: miss" "$tmp/oom.err"; then
		found=$lim
		break
	fi
done
if [ -n "$found" ]; then
	grep -q "result cache: miss, not stored: an environmental failure" "$tmp/oom.err"
	ok "a run out of memory (ulimit -v $found) is not stored" $?
	KOPOLICY_CACHE_DIR=$c KOPOLICY_CACHE_STATS=1 run after-oom "${C[@]}"
	grep -q "result cache: miss, stored" "$tmp/after-oom.err" &&
		cmp -s "$tmp/after-oom.out" "$tmp/ref.out" &&
			cmp -s "$tmp/after-oom.rc" "$tmp/ref.rc"
	ok "the next run with the memory answers anew (not the failure)" $?
else
	skip "a run out of memory (ulimit -v) is not stored" \
		"no limit starts the binary and then fails it"
	skip "the next run with the memory answers anew (not the failure)" "as above"
fi

tap_done
