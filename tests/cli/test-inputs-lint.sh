#!/usr/bin/env bash
# Nothing escapes the result cache's manifest (lib/file/inputs.h): lib/ and src/ look at files
# only through kp_in_stat/lstat/open/fopen/opendir/readlink, except at the places listed here,
# each with why it needs no record. A new direct call fails this test until it is recorded or
# listed.
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"

# FILE COUNT: direct calls allowed in FILE (why)
allowed='
lib/cache/facts-cache.c 2
lib/cache/facts-cache-keys.c 2
lib/policy/hook-policy.c 2
lib/system/modprobe-index.c 1
lib/system/modprobe-snapshot.c 5
lib/system/modprobe-snapshot-remove.c 3
lib/system/module-trust.c 4
lib/graph/module-set.c 1
lib/graph/module-set-read.c 1
lib/util/io.c 2
lib/file/rootopen.c 3
lib/util/fs-trust.c 3
lib/dl/lazy-files.c 1
lib/system/depmod-config.c 1
lib/system/out-of-tree.c 1
lib/system/kernel-read.c 1
lib/system/stuck-reader.c 2
src/cmd-check.c 2
src/hook-deadline.c 1
src/hook-rules.c 2
src/hook-rules-file.c 4
src/kopolicy.c 1
'
# why: lib/file/inputs.c and inputs-*.c are the recorder; lib/cache/ the caches' own files (their
# directories, not inputs: cache-dir files are opened through its dirfd or by name), checked
# only where the facts cache meets the modules it reads (facts-cache.c, facts-cache-keys.c,
# facts-defer.c, facts-serial-*.c);
# hook-policy.c serves only the hook (never cached); module-trust.c too (the hook's test of the
# module files kmod opens by name after it, walked by descriptors from the pinned root); hook-rules*.c the hook's install
# rules (never cached: kopolicy's own path, read once, and its state through its trusted
# directory's dirfd, the rules file through its trusted directory's dirfd, and the rewrites' lock
# through the hook's trusted state directory's); hook-deadline.c
# the hook's own thread's /proc/thread-self/schedstat (its waits for a CPU, not an input);
# modprobe-index.c and depmod-config.c fstatat() the entries of a directory already recorded whole
# (kp_in_opendir, kp_in_note_kmod); cmd-check.c opens -o FILE for writing (kp_in_uncacheable()
# first); kopolicy.c access()es the hook's system cache; facts-cache-keys.c's
# kp_fc_still_in_state() stat()s a module the reader recorded already in that very state (before a
# deferred store's hash, and after the reader hashed it whole), and kp_fc_content_key_at() opens
# it; facts-cache.c fstatat()s and opens its own last-prune file through the cache directory's
# dirfd; module-set-read.c stat()s each module for its size, which only orders the reading, and
# module-set.c fstatat()s an entry of a directory it listed (kp_opendir_in(): the listing records
# the entries' types) whose type readdir() does not give; out-of-tree.c fstatat()s an entry of a
# directory it listed (kp_opendir_in()) right after recording that entry's kp_in_lstat(); io.c's
# kp_dir_newest() lists the caches' own directories for pruning; fs-trust.c stat()s / and /dev
# (which device is the devtmpfs) and again a path the caller recorded, after its statfs();
# rootopen.c opens a root and the files under it by descriptors (an O_PATH one opened again
# through /proc/self/fd, kp_fd_reopen()) for kp_open_regular_in() and kp_stat_in()
# (bytes-open.c), which record the path's state and the opened file's fstat() (kp_in_stat(),
# kp_in_note_fd()); kernel-read.c
# opens the running system's procfs and sysfs files (/proc/modules, sig_enforce) on the host to read
# them by a child (under a root: kp_open_readable_in()): only kp_running_open*(), which marks the
# run uncacheable (kp_in_uncacheable()) first; modprobe-snapshot.c lists a configuration directory
# through the descriptor of the caches' trust walk (cache/trusted-dir.c: whether others could
# swap the files libkmod reads, which chooses by name or a copy, never the answer; the files
# recorded by kp_in_note_kmod()) and makes, fills and removes its own private copy (read from the
# root through kp_open_regular_in() and kp_opendir_in(), which record; a run that read a copy or
# could not make one is not stored, kp_in_uncacheable()), and modprobe-snapshot-remove.c removes it
# and the copies killed runs left beside it (kopolicy's own directories, never an input; only a run
# that makes a copy, not stored); stuck-reader.c reads, writes and lists the
# hook's own marks of EFI readers left behind, through its trusted state directory's dirfd
# (only the hook's reads of EFI variables, on the running system, never cached); lazy-files.c
# reads the dynamic linker's cache for the result cache's key (the files of the libraries
# loaded on first use), part of the key, not an input.
pat='(^|[^_[:alnum:]])(open|openat|fopen|opendir|stat|lstat|fstatat|access|readlink)\('

code() { # FILE: its lines, comments left out
	sed -e 's://.*$::' -e 's:/\*.*\*/::g' "$1" | grep -v '^[[:space:]]*\*'
}
count() { # FILE: direct calls
	code "$1" | grep -v 'kp_in_' | grep -Ec "$pat"
}

bad=0
while IFS= read -r f; do
	rel=${f#"$top"/}
	case $rel in
	lib/cache/facts-cache.c | lib/cache/facts-cache-keys.c | lib/cache/facts-defer.c | \
		lib/cache/facts-serial-*.c) ;;
	lib/cache/* | lib/file/inputs.c | lib/file/inputs-*.c) continue ;;
	esac
	want=$(echo "$allowed" | awk -v f="$rel" '$1 == f { print $2 }')
	got=$(count "$f")
	# kmod_new() itself is called by system/modprobe-kmod.c's kp_kmod_new_said() only: its
	# callers (the chain, the kernel tree) note what it reads
	case $rel in
	lib/system/modprobe-kmod.c) kmod=0 ;;
	*) kmod=$(code "$f" | grep -cE '(^|[^_])kmod_new\(|kp_kmod_new_said\(') ;;
	esac
	notes=$(code "$f" | grep -c 'kp_in_note_kmod(')
	if [ "$got" -ne "${want:-0}" ]; then
		echo "# $rel: $got direct file calls, ${want:-0} allowed" >&2
		grep -nE "$pat" "$f" | grep -v 'kp_in_' >&2
		bad=1
	fi
	if [ "$kmod" -gt 0 ] && [ "$notes" -lt "$kmod" ]; then
		echo "# $rel: kmod_new() without kp_in_note_kmod() before it" >&2
		bad=1
	fi
done < <(find "$top/lib" "$top/src" -name '*.c' | sort)
ok "every file look-up of lib/ and src/ is recorded or listed" $bad

tap_done
