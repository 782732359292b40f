#!/usr/bin/env bash
# The hook's policy (hook.conf, --config) is believed only where no other user can swap it:
# its directory and every one above it owned by root or the user running and not writable by
# group or others (a sticky one only above it), a symbolic link only when it is theirs too
# (its target walked the same way), the file opened without following a link and checked on
# what was opened. Before, only the file was checked, by stat() and then opened again by name:
# a user owning the policy's directory could swap in any root-owned file (an empty one blocks
# nothing) or race the check. A file group-writable by root's group is believed only without an
# access ACL, whose mask its group bits then are. Run as root (then also as nobody) and as a user.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
fx=$top/fixtures/ko/6.12
rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/hook-root.sh"

if ! command -v depmod > /dev/null; then
	echo "1..0 # SKIP depmod (kmod) is not installed"
	exit 0
fi
tap_tmpdir
chmod 0755 "$tmp"

has() { # description, fixed string stderr of the last run must contain
	if grep -qF -- "$2" "$tmp/err"; then ok "$1" 0; else
		ok "$1" 1; echo "#   want: $2"; sed 's/^/#   got:  /' "$tmp/err"; fi
}

# a fake root with a proprietary module: "block proprietary" blocks it (1), no policy warns (0)
root=$tmp/root
hook_root "$root" kp_prop_prov
: > "$root/proc/modules"
chmod -R go-w "$root"
cp "$kp" "$tmp/kopolicy"
chmod 0755 "$tmp/kopolicy"

# hook CONFIG [AS...]: the hook's status in $rc, stderr in $tmp/err (AS: a command prefix)
hook() {
	local c=$1
	shift
	timeout -k 2 20 "$@" "$tmp/kopolicy" --no-cache hook --root "$root" --config "$c" \
		--on-error fail-closed kp_prop_prov > /dev/null 2> "$tmp/err"
	rc=$?
}
block() { printf 'block proprietary\n' > "$1" && chmod 0644 "$1"; }

# a trusted directory: the policy applies, through a link of the directory too
mkdir -m 0755 "$tmp/good"
block "$tmp/good/hook.conf"
hook "$tmp/good/hook.conf"
is "a policy in a trusted directory applies (blocked)" "$rc" 1
ln -s hook.conf "$tmp/good/rel.conf"
hook "$tmp/good/rel.conf"
is "... through a relative link beside it" "$rc" 1
mkdir -m 0755 "$tmp/links"
ln -s "$tmp/good/hook.conf" "$tmp/links/abs.conf"
ln -s ../good "$tmp/links/dir"
hook "$tmp/links/abs.conf"
is "... through an absolute link in another trusted directory" "$rc" 1
hook "$tmp/links/dir/hook.conf"
is "... through a linked directory" "$rc" 1

# a directory writable by others or the group: refused, whoever runs it
mkdir -m 0755 "$tmp/gw" "$tmp/ow"
block "$tmp/gw/hook.conf"
block "$tmp/ow/hook.conf"
chmod 0775 "$tmp/gw"
chmod 0777 "$tmp/ow"
hook "$tmp/gw/hook.conf"
is "a group-writable directory: refused, fail-closed blocks (2)" "$rc" 2
has "... naming the directory" "$tmp/gw/hook.conf: refused: $tmp/gw is writable by its group"
hook "$tmp/ow/hook.conf"
is "a directory writable by others: refused (2)" "$rc" 2
has "... naming the directory" "$tmp/ow is writable by others"
chmod 1777 "$tmp/ow"
hook "$tmp/ow/hook.conf"
is "a sticky directory writable by others (as /tmp) holding the policy: refused (2)" "$rc" 2
ln -s "$tmp/gw/hook.conf" "$tmp/links/to-gw.conf"
hook "$tmp/links/to-gw.conf"
is "a trusted link to a policy in an unsafe directory: refused (2)" "$rc" 2
has "... naming the target's directory" "refused: $tmp/gw is writable by its group"
ln -s "$tmp/gw" "$tmp/links/gwdir"
hook "$tmp/links/gwdir/hook.conf"
is "a trusted link to an unsafe directory: refused (2)" "$rc" 2

# not a regular file: refused at once, no hang
mkfifo "$tmp/good/fifo.conf"
hook "$tmp/good/fifo.conf"
is "a FIFO policy: refused at once (2)" "$rc" 2
has "... said" "$tmp/good/fifo.conf: is a FIFO, not a regular file"
ln -s fifo.conf "$tmp/good/to-fifo.conf"
hook "$tmp/good/to-fifo.conf"
is "a link to a FIFO: refused at once (2)" "$rc" 2
ln -s /dev/null "$tmp/good/null.conf"
hook "$tmp/good/null.conf"
is "a link to /dev/null (an empty policy blocking nothing): refused (2)" "$rc" 2
has "... said" "is a character device, not a regular file"
ln -s loop2.conf "$tmp/good/loop1.conf"
ln -s loop1.conf "$tmp/good/loop2.conf"
hook "$tmp/good/loop1.conf"
is "a link loop: refused (2)" "$rc" 2
has "... said" "too many levels of symbolic links"

if [ "$(id -u)" = 0 ]; then
	# the attack: nobody owns the directory of a root-owned policy and swaps the policy for
	# an empty root-owned file (here /dev/null's sibling: an empty file root made)
	mkdir -m 0755 "$tmp/nb"
	block "$tmp/nb/hook.conf"
	: > "$tmp/empty"
	chmod 0644 "$tmp/empty"
	chown 65534 "$tmp/nb"
	# shellcheck disable=SC2016 # expanded by the inner sh
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		sh -c 'rm -f "$1/hook.conf" && ln -s "$2" "$1/hook.conf"' sh "$tmp/nb" "$tmp/empty"
	is "as root: nobody swapped the policy in its directory for an empty root-owned file" \
		"$(readlink "$tmp/nb/hook.conf")" "$tmp/empty"
	hook "$tmp/nb/hook.conf"
	is "as root: a policy in a directory another user owns: refused (2), not an empty policy" \
		"$rc" 2
	has "... naming the directory and its owner" \
		"$tmp/nb/hook.conf: refused: $tmp/nb is owned by uid 65534, not by root"
	rm -f "$tmp/nb/hook.conf"
	block "$tmp/nb/hook.conf"
	hook "$tmp/nb/hook.conf"
	is "as root: ... even before the swap (2)" "$rc" 2
	# a link another user owns, in a trusted directory
	ln -s hook.conf "$tmp/good/other.conf"
	chown -h 65534 "$tmp/good/other.conf"
	hook "$tmp/good/other.conf"
	is "as root: a link owned by another user: refused (2)" "$rc" 2
	has "... said" "refused: $tmp/good/other.conf is a link owned by uid 65534"
	# a file another user owns in a trusted directory (as before)
	block "$tmp/good/nobody.conf"
	chown 65534 "$tmp/good/nobody.conf"
	hook "$tmp/good/nobody.conf"
	is "as root: a policy file owned by another user: refused (2)" "$rc" 2

	# group-writable by root's group: believed, but not when the group bits are an ACL's mask
	block "$tmp/good/gw.conf"
	chmod 0664 "$tmp/good/gw.conf"
	hook "$tmp/good/gw.conf"
	is "as root: a policy group-writable by root's group (no ACL) applies (1)" "$rc" 1
	block "$tmp/good/acl.conf"
	# an access ACL giving nobody read-write (acl(5)'s xattr: the mode's group bits become
	# the mask, rw); python, as setfacl may not be installed
	if python3 - "$tmp/good/acl.conf" 65534 <<-'PY' 2> /dev/null; then
		import os, struct, sys
		path, uid, none = sys.argv[1], int(sys.argv[2]), 0xffffffff
		ents = [(0x01, 6, none), (0x02, 6, uid), (0x04, 4, none), (0x10, 6, none),
		        (0x20, 4, none)]
		os.setxattr(path, "system.posix_acl_access", struct.pack("<I", 2) +
		            b"".join(struct.pack("<HHI", *e) for e in ents))
	PY
		is "as root: the ACL shows as group-writable by root's group" \
			"$(stat -c '%a %g' "$tmp/good/acl.conf")" "664 0"
		# shellcheck disable=SC2016 # expanded by the inner sh
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			sh -c 'printf "ignore all\n" > "$1"' sh "$tmp/good/acl.conf"
		is "as root: nobody rewrote the policy through the ACL" \
			"$(cat "$tmp/good/acl.conf")" "ignore all"
		hook "$tmp/good/acl.conf"
		is "as root: a policy a named user can write through its ACL: refused (2)" "$rc" 2
		has "... said" "$tmp/good/acl.conf: group-writable with an access ACL"
		chmod 0644 "$tmp/good/acl.conf"
		printf 'block proprietary\n' > "$tmp/good/acl.conf"
		hook "$tmp/good/acl.conf"
		is "as root: the same ACL without write (mask r): applies (1)" "$rc" 1
	else
		skip "as root: a policy writable through an ACL" "no POSIX ACLs on $tmp"
	fi

	# as nobody: its own directory is trusted, another user's is not
	if setpriv --reuid=65534 --regid=65534 --clear-groups true 2> /dev/null; then
		as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
		mkdir -m 0755 "$tmp/mine" "$tmp/theirs"
		block "$tmp/mine/hook.conf"
		block "$tmp/theirs/hook.conf"
		chown -R 65534:65534 "$tmp/mine"
		chown -R 65533 "$tmp/theirs"
		hook "$tmp/mine/hook.conf" "${as[@]}"
		is "as nobody: its own policy in its own directory applies (1)" "$rc" 1
		hook "$tmp/good/hook.conf" "${as[@]}"
		is "as nobody: root's policy in root's directory applies (1)" "$rc" 1
		hook "$tmp/theirs/hook.conf" "${as[@]}"
		is "as nobody: a policy in another user's directory: refused (2)" "$rc" 2
		has "... said" "$tmp/theirs is owned by uid 65533, not by uid 65534 or root"
		hook "$tmp/gw/hook.conf" "${as[@]}"
		is "as nobody: a group-writable directory: refused (2)" "$rc" 2
	fi
fi

tap_done
