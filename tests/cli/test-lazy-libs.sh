#!/usr/bin/env bash
# The libraries loaded on first use (lib/dl/lazy-lib.h): the binary has no NEEDED entry for
# libcrypto, libkmod, libelf, liblzma, libzstd, libz or libjson-c (libdeflate and libc it
# keeps), exports none of the functions its stubs define (a library loaded later would bind
# its own calls to them), and a run that calls none of them maps none of them (LD_DEBUG=files:
# what the dynamic loader opened), while one that reads a module loads the ones it uses; a
# result cache replay maps none (its key takes their files from ld.so.cache, lazy-files.c).
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_fixture 6.12

lazy='libcrypto libkmod libelf liblzma libzstd libz libjson-c'
if ! command -v objdump >/dev/null || ! command -v nm >/dev/null; then
	skip "NEEDED entries and exports" "no objdump or nm (binutils)"
	tap_done
	exit
fi
objdump -p "$kp" | awk '$1 == "NEEDED" { print $2 }' >"$tmp/needed"
for l in $lazy; do
	grep -q "^$l\.so" "$tmp/needed"
	is "no NEEDED entry for $l" "$?" 1
done
for l in libdeflate libc; do
	grep -q "^$l\.so" "$tmp/needed"
	is "NEEDED keeps $l" "$?" 0
done

# the ELF note naming them for tools that copy a program with its libraries (lib/dl/dlopen-note.c:
# the UAPI group's dlopen metadata, .note.dlopen): the SONAMEs configure found, libhogweed's too,
# in a note of owner FDO and type 0x407c0c0a that strip keeps
if [ -f config.h ]; then
	sed -n -E 's/^#define KP_(LIB)?(KMOD|ELF|CRYPTO|LZMA|ZSTD|Z|JSONC|HOGWEED)_SONAME "(.*)"$/\3/p' \
		config.h | sort >"$tmp/sonames"
	is "configure found 8 SONAMEs" "$(wc -l <"$tmp/sonames")" 8
	"$top/tests/lib/dlopen-sonames.py" "$kp" | sort >"$tmp/noted"
	is "the binary's dlopen note names each of them" "$(cat "$tmp/noted")" "$(cat "$tmp/sonames")"
else
	skip "configure found 8 SONAMEs" "no config.h in the build directory"
	skip "the binary's dlopen note names each of them" "no config.h in the build directory"
fi
"$top/tests/lib/dlopen-sonames.py" --json "$kp" >"$tmp/note.json"
is "... each required but libhogweed (OpenSSL verifies without it)" \
	"$(python3 -c 'import json, sys
print(" ".join(e["feature"] + "=" + e["priority"] for e in json.load(open(sys.argv[1]))))' \
		"$tmp/note.json")" \
	"kmod=required elf=required crypto=required lzma=required zstd=required zlib=required json-c=required hogweed=recommended"
readelf -n "$kp" >"$tmp/notes" 2>/dev/null
grep -A2 'notes found in: .note.dlopen' "$tmp/notes" | grep 'FDO .*0x407c0c0a' >/dev/null
is "readelf shows it: section .note.dlopen, owner FDO, type 0x407c0c0a" "$?" 0
strip -o "$tmp/stripped" "$kp" 2>/dev/null
is "a stripped copy keeps it" "$("$top/tests/lib/dlopen-sonames.py" "$tmp/stripped" | wc -l)" 8

# every function a stub file lists (F(RET, NAME, ...), V(NAME, ...), Z(RET, NAME, ...),
# VZ(NAME, ...)), and the hand-written CRYPTO_set_mem_functions()
sed -n -E 's/^\s*(F|Z)\([^,]*, ([A-Za-z_0-9]+),.*/\2/p; s/^\s*(V|VZ)\(([A-Za-z_0-9]+),.*/\2/p' \
	"$top"/lib/dl/lazy-*.c >"$tmp/stubs"
echo CRYPTO_set_mem_functions >>"$tmp/stubs"
is "the stub files list 218 functions" "$(sort -u "$tmp/stubs" | wc -l)" 218
nm -D --defined-only "$kp" | awk '{ print $NF }' | sed 's/@.*//' | sort -u >"$tmp/exported"
is "none of them is exported" "$(sort -u "$tmp/stubs" | comm -12 - "$tmp/exported")" ""
# the stubs are there all the same, hidden (a stripped binary has no symbol table: skipped)
if nm "$kp" >"$tmp/syms" 2>/dev/null && [ -s "$tmp/syms" ]; then
	grep -qw 'EVP_sha256' "$tmp/syms"
	is "the binary defines them (EVP_sha256)" "$?" 0
else
	skip "the binary defines them (EVP_sha256)" "stripped"
fi

# which of the seven the dynamic loader opened in a run (LD_DEBUG=files, to a file per pid);
# its stderr in $tmp/stderr (with the caches' statistics)
opened() { # OUT, COMMAND...
	local out=$1
	shift
	rm -f "$tmp"/ld.*
	KOPOLICY_CACHE_STATS=1 LD_DEBUG=files LD_DEBUG_OUTPUT="$tmp/ld" "$@" >/dev/null \
		2>"$tmp/stderr"
	cat "$tmp"/ld.* 2>/dev/null |
		sed -n -E 's/.*file=([^ ;]+)( \[[0-9]+\])?; +generating link map.*/\1/p' |
		sed -E 's/\.so.*//' | sort -u >"$out"
}
tap_own_cache
opened "$tmp/version" "$kp" --version
grep -q '^libdeflate$' "$tmp/version"
_st=$?
if [ "$_st" -ne 0 ]; then
	skip "kopolicy --version maps none of them" "LD_DEBUG gives no link maps here"
else
	is "kopolicy --version maps none of them" \
		"$(for l in $lazy; do grep -x "$l" "$tmp/version"; done)" ""
	# a module read: libelf and libcrypto (ELF, signature; libelf brings its own zlib and
	# zstd), not libkmod nor json-c, which it does not call
	opened "$tmp/info" "$kp" info "$fx/kp_common.ko"
	is "kopolicy info on a module maps libelf and libcrypto" \
		"$(grep -x -e libelf -e libcrypto "$tmp/info" | tr '\n' ' ')" "libcrypto libelf "
	is "... and neither libkmod nor libjson-c" \
		"$(grep -x -e libkmod -e libjson-c "$tmp/info")" ""
	# the result cache's key takes the files of the seven as the dynamic linker's cache names
	# them (an upgraded one is another key), without loading them: a replay maps none
	unset KOPOLICY_RUN_CACHE
	opened "$tmp/stored" "$kp" info "$fx/kp_gpl_prov.ko"
	is "kopolicy info through the result cache maps libelf and libcrypto" \
		"$(grep -x -e libelf -e libcrypto "$tmp/stored" | tr '\n' ' ')" "libcrypto libelf "
	is "... and neither libkmod nor libjson-c" \
		"$(grep -x -e libkmod -e libjson-c "$tmp/stored")" ""
	opened "$tmp/replayed" "$kp" info "$fx/kp_gpl_prov.ko"
	grep -q '^kopolicy: result cache: hit' "$tmp/stderr"
	is "... the same run again: replayed" "$?" 0
	is "... mapping none of them" \
		"$(for l in $lazy; do grep -x "$l" "$tmp/replayed"; done)" ""
fi
tap_done
