#!/usr/bin/env bash
# The shell tests' own lint: no `ok "... $(CMD) ..." $?` on one line. Bash expands the words
# left to right, so the command substitution in the description runs first and `$?` is its
# status, not the checked command's: such a step passes whatever it found. The status is
# taken first (`_st=$?` on the line before) wherever a description runs a command.
set -uo pipefail

top=${srcdir:-.}
. "$top/tests/lib/tap.sh"
tap_tmpdir

# every shell test and helper of the tree, this one aside (its header quotes the pattern)
find "$top/tests" "$top/bench" -name '*.sh' ! -name test-tap-lint.sh -print0 |
	xargs -0 grep -n -E '^[[:space:]]*(ok|tap_ok) ".*\$\(.*" \$\?[[:space:]]*$' \
		>"$tmp/found"
is "no step takes \$? after a command substitution in its description" \
	"$(sed "s#^$top/##" "$tmp/found")" ""

# the pattern itself is found (the lint is not vacuous)
printf '%s\n' 'true' 'ok "x $(cat /dev/null)" $?' >"$tmp/probe.sh"
grep -c -E '^[[:space:]]*(ok|tap_ok) ".*\$\(.*" \$\?[[:space:]]*$' "$tmp/probe.sh" \
	>"$tmp/probe.n"
is "the lint finds the pattern in a probe" "$(cat "$tmp/probe.n")" 1

tap_done
