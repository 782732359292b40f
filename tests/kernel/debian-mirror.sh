#!/bin/bash
# debian-mirror.sh [main|security]
#
# Print the Debian archive URI this machine's own apt configuration uses (never a hard-coded
# host): the first `deb` source of /etc/apt/sources.list and /etc/apt/sources.list.d/*.list
# (one-line format) or *.sources (deb822) whose URI path ends in /debian (main, the default)
# resp. /debian-security (security). Sourced, it defines debian_mirror KIND instead.
#
# Exit status: 0 and the URI on stdout; 1 with a message on stderr when the machine lists no
# such source.

debian_mirror() { # KIND (main|security) -> URI without a trailing slash
	local kind=${1:-main} want f
	case $kind in
	main) want='/debian' ;;
	security) want='/debian-security' ;;
	*)
		echo "debian-mirror: unknown kind '$kind' (main|security)" >&2
		return 1
		;;
	esac
	{
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -r "$f" ] || continue
			# deb [options] URI suite components
			sed -e 's/#.*//' "$f" | awk '$1 == "deb" {
				i = 2
				if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
				if (i <= NF) print $i
			}'
		done
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -r "$f" ] || continue
			# deb822 stanzas: only those whose Types include deb and that are not
			# disabled (comment lines are dropped, not blanked: a blank line ends a
			# stanza)
			sed -e '/^[ \t]*#/d' "$f" | awk '
				function flush() {
					if (types ~ /(^|[ \t])deb([ \t]|$)/ && enabled !~ /^[ \t]*no/)
						print uris
					types = ""; uris = ""; enabled = ""
				}
				/^[ \t]*$/ { flush(); next }
				tolower($1) == "types:" { sub(/^[^:]*:/, ""); types = $0; next }
				tolower($1) == "uris:" { sub(/^[^:]*:/, ""); uris = $0; next }
				tolower($1) == "enabled:" { sub(/^[^:]*:/, ""); enabled = tolower($0); next }
				END { flush() }' | tr ' \t' '\n\n'
		done
	} | sed -e 's|/*$||' | grep -E "^(https?|file)://.*${want}\$" | sed -n 1p |
		grep . && return 0
	echo "debian-mirror: no '$kind' Debian source (URI ending in $want) in /etc/apt/sources.list(.d)" >&2
	return 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	debian_mirror "${1:-main}"
fi
