#!/usr/bin/env bash
# Links a module tree's walk cannot follow, said as kmod's depmod says them: depmod
# (tools/depmod.c depmod_modules_search_dir(), kmod 30 to 34) fstatat()s every entry
# that is not a plain file or directory, following links; when that fails it prints
# "depmod: ERROR: fstatat(DFD, NAME): %m", skips the entry and exits 0. kopolicy:
#   dangling   kernel/extra/dangling -> nowhere           a warning, exit status unchanged
#   loopa/b    kernel/extra/loopa <-> loopb               a warning each
#   nested     kernel/extra/sub/nested -> gone            a warning (any depth)
#   deeper     kernel/extra/sub/deeper -> gone/x          a warning (ENOENT on the way)
# and, named as modules (entries, read errors: exit 2, as before):
#   dang.ko    kernel/extra/dang.ko -> nowhere.ko
#   l1/l2      kernel/extra/l1.ko.xz <-> l2.ko.xz
# Entries that are (or link to) a FIFO, socket or device: depmod follows links with
# fstatat() and says "ERROR: unsupported file type PATH: MODE" (kmod 30 tools/depmod.c
# l.1330), skips the entry and exits 0; kopolicy, in a second tree, never opening them:
#   fifo       kernel/fifo (a FIFO)                       a warning
#   sock       kernel/misc/sock (a socket)                a warning
#   tofifo     kernel/misc/tofifo -> ../fifo              a warning
#   null       (host walk only) kernel/dev/null -> /dev/null   a warning (character device)
#   pipe.ko    kernel/misc/pipe.ko (a FIFO)               an entry, read error: exit 2
# The names said are compared with depmod's own lines when depmod is installed.
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.12
tap_own_cache
PATH=$PATH:/sbin:/usr/sbin

root=$tmp/root
mods=$root/lib/modules/$rel
ex=$mods/kernel/extra
mkdir -p "$ex/sub" "$root/boot" "$root/usr/src/linux-headers-$rel"
gzip -dc "$fx/config.gz" >"$root/boot/config-$rel"
gzip -dc "$fx/Module.symvers.gz" >"$root/usr/src/linux-headers-$rel/Module.symvers"
cp "$fx/kp_gpl_prov.ko" "$ex/plain.ko"
ln -s nowhere "$ex/dangling"
ln -s loopb "$ex/loopa"
ln -s loopa "$ex/loopb"
ln -s gone "$ex/sub/nested"
ln -s gone/x "$ex/sub/deeper"

# the warnings' lines on stderr, PATH under the release directory
said() {
	sed -n "s|^kopolicy: $mods/\(.*\): warning: \(.*\)$|\1: \2|p" "$1"
}
want="kernel/extra/dangling: a dangling link, skipped: No such file or directory
kernel/extra/loopa: a looping link, skipped: Too many levels of symbolic links
kernel/extra/loopb: a looping link, skipped: Too many levels of symbolic links
kernel/extra/sub/deeper: a dangling link, skipped: No such file or directory
kernel/extra/sub/nested: a dangling link, skipped: No such file or directory"

"$kp" check -b "$root" --fail-on never >"$tmp/c.txt" 2>"$tmp/c.err"
is "check -b: links not named as modules are warnings, exit 0 (depmod's)" "$?" 0
is "check -b: one warning line a link, in walk order" "$(said "$tmp/c.err")" "$want"
is "check -b: nothing else on stderr" "$(wc -l <"$tmp/c.err")" 5
is "check -b: the module is still checked" "$(grep -c "^1 module: " "$tmp/c.txt")" 1

"$kp" check -b "$root" -f json --fail-on never >"$tmp/c.json" 2>/dev/null
is "json: exit 0" "$?" 0
got=$(python3 - "$tmp/c.json" "$mods" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
pre = sys.argv[2] + "/"
print("\n".join("%s: %s %s" % (e["path"].replace(pre, ""), e["error"], e.get("warning"))
                for e in d["errors"]))
print(len(d["modules"]))
PY
)
is "json: each warning in \"errors\", \"warning\": true" "$got" "$(sed 's/$/ True/' <<<"$want")
1"

"$kp" check -b "$root" -f sarif --fail-on never >"$tmp/c.sarif" 2>/dev/null
got=$(python3 -c '
import json, sys
inv = json.load(open(sys.argv[1]))["runs"][0]["invocations"][0]
print(inv["executionSuccessful"], sorted({n["level"] for n in inv["toolExecutionNotifications"]}),
      len(inv["toolExecutionNotifications"]))' "$tmp/c.sarif")
is "sarif: five warning notifications, the run successful" "$got" "True ['warning'] 5"
"$kp" check -b "$root" -f junit --fail-on never >"$tmp/c.xml" 2>/dev/null
is "junit: no error for a warning" "$(grep -c 'errors="0"' "$tmp/c.xml")" 1

# without a root, the directory walked on the host: the same lines
"$kp" check --kernel-release "$rel" -b "$root" --fail-on never "$mods/kernel" \
	>/dev/null 2>"$tmp/d.err"
is "check DIR: exit 0" "$?" 0
is "check DIR: the same warnings" "$(said "$tmp/d.err")" "$want"
"$kp" graph -b "$root" >/dev/null 2>"$tmp/g.err"
is "graph -b: exit 0, the same warnings" "$? $(said "$tmp/g.err" | wc -l)" "0 5"

"$kp" info "$mods/kernel" >/dev/null 2>"$tmp/i.err"
is "info DIR: exit 0, the same warnings" "$? $(said "$tmp/i.err")" "0 $want"

# links named as modules: entries whose reading fails, exit 2 (unchanged)
ln -s nowhere.ko "$ex/dang.ko"
ln -s l2.ko.xz "$ex/l1.ko.xz"
ln -s l1.ko.xz "$ex/l2.ko.xz"
"$kp" check -b "$root" --fail-on never >/dev/null 2>"$tmp/e.err"
is "module-named links: exit 2" "$?" 2
is "module-named links: an error line each, the warnings too" \
	"$(grep -c ': warning: ' "$tmp/e.err") $(grep -vc ': warning: ' "$tmp/e.err")" "5 3"

# depmod says an ERROR line for exactly the entries kopolicy says
if command -v depmod >/dev/null; then
	depmod -n -b "$root" "$rel" >/dev/null 2>"$tmp/dm.err"
	is "depmod: exit 0" "$?" 0
	dm=$(sed -n 's/^depmod: ERROR: fstatat([0-9]*, \(.*\)): .*$/\1/p' "$tmp/dm.err" | sort)
	kpn=$(sed -n "s|^kopolicy: $mods/.*/\([^/:]*\): .*$|\1|p" "$tmp/e.err" | sort)
	is "the links depmod says are the ones kopolicy says" "$kpn" "$dm"
	is "eight of them" "$(wc -l <<<"$dm")" 8
else
	skip "depmod's lines" "no depmod"
fi

# FIFOs, sockets and devices: warnings, never opened (a reader of a FIFO without a writer
# would block: timeout)
root2=$tmp/root2
mods2=$root2/lib/modules/$rel
mkdir -p "$mods2/kernel/misc" "$root2/boot" "$root2/usr/src"
cp "$root/boot/config-$rel" "$root2/boot/"
cp -r "$root/usr/src/linux-headers-$rel" "$root2/usr/src/"
cp "$fx/kp_gpl_prov.ko" "$mods2/kernel/misc/plain.ko"
mkfifo "$mods2/kernel/fifo"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
	"$mods2/kernel/misc/sock"
ln -s ../fifo "$mods2/kernel/misc/tofifo"
said2() {
	sed -n "s|^kopolicy: $mods2/\(.*\): warning: \(.*\)$|\1: \2|p" "$1"
}
want2="kernel/fifo: unsupported file type (a FIFO), skipped
kernel/misc/sock: unsupported file type (a socket), skipped
kernel/misc/tofifo: unsupported file type (a FIFO), skipped"
timeout 60 "$kp" check -b "$root2" --fail-on never >"$tmp/s.txt" 2>"$tmp/s.err"
is "special files: exit 0 (depmod's)" "$?" 0
is "special files: one warning line each, in walk order" "$(said2 "$tmp/s.err")" "$want2"
is "special files: nothing else on stderr" "$(wc -l <"$tmp/s.err")" 3
is "special files: the module is still checked" "$(grep -c "^1 module: " "$tmp/s.txt")" 1
timeout 60 "$kp" check -b "$root2" -f json --fail-on never >"$tmp/s.json" 2>/dev/null
got=$(python3 - "$tmp/s.json" "$mods2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
pre = sys.argv[2] + "/"
print("\n".join("%s: %s %s" % (e["path"].replace(pre, ""), e["error"], e.get("warning"))
                for e in d["errors"]))
PY
)
is "special files, json: each in \"errors\", \"warning\": true" "$got" \
	"$(sed 's/$/ True/' <<<"$want2")"
timeout 60 "$kp" check -b "$root2" -f sarif --fail-on never >"$tmp/s.sarif" 2>/dev/null
got=$(python3 -c '
import json, sys
inv = json.load(open(sys.argv[1]))["runs"][0]["invocations"][0]
print(inv["executionSuccessful"], sorted({n["level"] for n in inv["toolExecutionNotifications"]}),
      len(inv["toolExecutionNotifications"]))' "$tmp/s.sarif")
is "special files, sarif: three warning notifications, the run successful" "$got" \
	"True ['warning'] 3"

# a link to a device, walked on the host (under -b, /dev/null is not inside the root)
mkdir -p "$tmp/host/kernel/dev"
cp "$fx/kp_gpl_prov.ko" "$tmp/host/kernel/plain.ko"
ln -s /dev/null "$tmp/host/kernel/dev/null"
timeout 60 "$kp" info "$tmp/host/kernel" >/dev/null 2>"$tmp/h.err"
is "a link to a device: exit 0, a warning" "$? $(sed "s|^kopolicy: $tmp/host/||" "$tmp/h.err")" \
	"0 kernel/dev/null: warning: unsupported file type (a character device), skipped"

# named as a module: an entry whose reading says what it is (exit 2), never blocking
mkfifo "$mods2/kernel/misc/pipe.ko"
timeout 60 "$kp" check -b "$root2" --fail-on never >/dev/null 2>"$tmp/p.err"
is "a FIFO named as a module: exit 2, not blocked" "$?" 2
is "a FIFO named as a module: its error line, the three warnings" \
	"$(grep -c ': warning: ' "$tmp/p.err") $(grep -c 'pipe.ko: .*is a FIFO' "$tmp/p.err")" "3 1"

if command -v depmod >/dev/null; then
	timeout 60 depmod -n -b "$root2" "$rel" >/dev/null 2>"$tmp/dm2.err"
	is "depmod, special files: exit 0" "$?" 0
	dm=$(sed -n "s|^depmod: ERROR: unsupported file type $mods2/\(.*\): [0-7]*$|\1|p" \
		"$tmp/dm2.err" | sort)
	kpn=$(sed -n "s|^kopolicy: $mods2/\([^:]*\): .*$|\1|p" "$tmp/p.err" | sort)
	is "depmod's unsupported file types are the entries kopolicy says" "$kpn" "$dm"
	is "four of them" "$(wc -l <<<"$dm")" 4
else
	skip "depmod's special files" "no depmod"
fi

tap_done
