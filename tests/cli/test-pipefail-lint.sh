#!/usr/bin/env bash
# The shell scripts' pipefail lint (tests/lib/pipefail-lint.py): under pipefail no reader that
# leaves early (head, grep -q, sed ...q, awk ...exit) behind a writer that may still have more
# than a pipe's buffer to write. The writer then dies of SIGPIPE, the pipeline says 141, and
# set -e ends the script without a word, or an if/&&/|| takes the wrong branch: the fresh CI
# machine's silent hook oracle (3c9a2ae, 'ldconfig -p | awk ... exit'). Every script of the
# tree CI and users run is read: tests, bench, fixtures, contrib, .ci/run.
# shellcheck disable=SC2016 # the probes are shell text, written as it is
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_tmpdir
lint=$top/tests/lib/pipefail-lint.py

# the class itself, on this machine: an early reader behind 1 MiB is a 141; a reader to the
# end is not
seq 200000 | head -n 1 >/dev/null
is "an early reader behind 1.2 MB: the pipeline says SIGPIPE" $? 141
seq 200000 | sed -n 1p >/dev/null
is "sed -n 1p reads to the end: status 0" $? 0

# the scripts: shell by name or by their first line, this one aside (its first steps are the
# class on purpose)
: >"$tmp/scripts"
for d in tests bench fixtures contrib .ci; do
	[ -d "$top/$d" ] || continue
	find "$top/$d" -type f ! -name '*.ko' ! -name '*.gz' ! -name test-pipefail-lint.sh -print0 |
		while IFS= read -r -d '' f; do
			case $f in
			*.sh | */.ci/run) echo "$f" ;;
			*) IFS= read -r first <"$f" 2>/dev/null && [[ $first == '#!'*sh* ]] && echo "$f" ;;
			esac
		done >>"$tmp/scripts"
done
nscripts=$(wc -l <"$tmp/scripts")
[ "$nscripts" -gt 50 ]
ok "the scripts found ($nscripts)" $?

mapfile -t scripts <"$tmp/scripts"
python3 "$lint" --allow "$top/tests/lib/pipefail-allow.tsv" "${scripts[@]}" >"$tmp/found" 2>&1
_st=$?
is "no early reader behind an unbounded writer under pipefail" "$(sed "s#^$top/##" "$tmp/found")" ""
is "... and the lint's status says so" $_st 0

# the lint is not vacuous: 3c9a2ae^'s line of run-hook-oracle.sh, and the other readers
cat >"$tmp/probe.sh" <<'PROBE'
#!/usr/bin/env bash
set -euo pipefail
for so in libelf.so.1; do
	p=$("$LDCONFIG" -p | awk -v so="$so" '$1 == so && /x86-64/ { print $NF; exit }')
done
rel=$(ls "$tree/lib/modules" | head -1)
if "$kp" info "$ko" | grep -qx "  exports (1):"; then :; fi
v=$(find "$md" -name '*.ko' | sort |
	sed -n '/kp_/{p;q}')
echo "x=$(modinfo_vals "$ko" vermagic | head -n1)"
PROBE
python3 "$lint" "$tmp/probe.sh" >"$tmp/probe.out"
_st=$?
is "the lint finds the five in a probe" "$(sed 's/  \[.*//; s#^.*/probe.sh:##' "$tmp/probe.out")" \
	"4: \"\$LDCONFIG\" -p | awk -v so=\"\$so\" '\$1 == so && /x86-64/ { print \$NF; exit }'
6: ls \"\$tree/lib/modules\" | head -1
7: \"\$kp\" info \"\$ko\" | grep -qx \"  exports (1):\"
9: find \"\$md\" -name '*.ko' | sort | sed -n '/kp_/{p;q}'
10: modinfo_vals \"\$ko\" vermagic | head -n1"
is "... and fails" $_st 1

# ... and not the fixed forms, the bounded writers, the readers to the end, nor a script
# without pipefail
cat >"$tmp/fixed.sh" <<'PROBE'
#!/usr/bin/env bash
set -euo pipefail
ldcache=$("$LDCONFIG" -p) || exit 2
p=$(awk -v so="$so" '$1 == so && /x86-64/ && !p { p = $NF } END { print p }' <<<"$ldcache")
rel=$(ls "$tree/lib/modules" | sed -n 1p)
"$READELF" -sW "$ko" | awk '$8 == "x" { f = 1 } END { exit !f }'
tail -c 28 "$ko" | grep -q '^~Module signature appended~$'
echo "$(qemu-system-x86_64 --version | head -1)"
grep -qxF "$e" <<<"$used"
cat <<'EOF2'
ls | head -1
EOF2
# ls | head -1
PROBE
printf '%s\n' '#!/bin/sh' 'ls | head -1' >"$tmp/plain.sh"
python3 "$lint" "$tmp/fixed.sh" "$tmp/plain.sh" >"$tmp/fixed.out"
_st=$?
is "the fixed forms pass" "$(cat "$tmp/fixed.out")" ""
is "... with status 0" $_st 0

# a file sourced by a script with pipefail runs under it: judged with that script, not alone
printf '%s\n' 'first() { ls "$1" | head -n 1; }' >"$tmp/lib.sh"
printf '%s\n' '#!/bin/bash' 'set -eo pipefail' '. "$(dirname "$0")/lib.sh"' >"$tmp/main.sh"
python3 "$lint" "$tmp/lib.sh" >"$tmp/lib.out"
is "a library alone is not judged" "$(cat "$tmp/lib.out")" ""
python3 "$lint" "$tmp/main.sh" "$tmp/lib.sh" >"$tmp/lib.out"
is "... sourced by a pipefail script, it is" "$(sed 's/  \[.*//; s#^.*/lib.sh:##' "$tmp/lib.out")" \
	'1: ls "$1" | head -n 1'

tap_done
