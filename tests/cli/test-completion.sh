#!/usr/bin/env bash
# The bash completion (contrib/completion/kopolicy) with the real bash-completion library.
set -uo pipefail
top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
bc=/usr/share/bash-completion/bash_completion
[ -f "$bc" ] || { echo "1..0 # SKIP bash-completion is not installed"; exit 0; }
. "$top/tests/lib/tap.sh"
# complete LINE: the candidates for the last word of LINE (kopolicy = the binary under test)
complete_line() {
	bash -c '
		source "$1"; source "$2"
		kopolicy() { "$3" "$@"; }
		COMP_LINE=$4; COMP_POINT=${#COMP_LINE}
		read -ra COMP_WORDS <<< "$COMP_LINE"
		[[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_WORDS[0]=$3
		_kopolicy; printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' \
		_ "$bc" "$top/contrib/completion/kopolicy" "$kp" "$1"
}
[ "$(complete_line "kopolicy ch")" = "check " ]
ok "completes the command" $?
[ "$(complete_line "kopolicy check --fai")" = "--fail-on " ]
ok "completes an option of check from its --help" $?
[ "$(complete_line "kopolicy check --provi")" = "--provider " ]
ok "check --provider is completed (from --help)" $?
[ "$(complete_line "kopolicy check -f ")" = "json junit sarif text " ]
ok "check -f: the report formats" $?
[ "$(complete_line "kopolicy graph --format ")" = "dot json text " ]
ok "graph --format: its formats" $?
[ "$(complete_line "kopolicy hook --print-i")" = "--print-install-rules " ]
ok "completes a hook option" $?
[ "$(complete_line "kopolicy ca")" = "cache " ]
ok "completes the cache command" $?
[ "$(complete_line "kopolicy cache p")" = "prune " ]
ok "cache: its actions" $?
[ "$(complete_line "kopolicy cache --sy")" = "--system " ]
ok "cache: its options" $?
# every option offered for a command is one the command accepts. Each option is run alone, so
# actions run too (hook --update-install-rules writes /etc/modprobe.d/zz-kopolicy.conf, cache
# --clear empties a cache): a copy of the binary runs with a private HOME and cache, and as
# nobody when the tests run as root, so that nothing of the machine's can be written.
probe=$(mktemp -d)
chmod 0755 "$probe"
cp "$kp" "$probe/kopolicy"
as=()
[ "$(id -u)" != 0 ] || as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
# probe COMMAND OPTION: 0 when the command rejects the option (its output, not its status: a
# pipeline's status under pipefail would be the command's)
probe() {
	local out
	out=$(cd "$probe" && "${as[@]}" env HOME="$probe" XDG_CACHE_HOME="$probe/cache" \
		KOPOLICY_CACHE=off ./kopolicy "$1" "$2" </dev/null 2>&1)
	grep -q -e 'unrecognized option' -e '^kopolicy: [a-z]*: .* does not apply' <<<"$out"
}
probe check --no-such-option
ok "the probe runs (as nobody when root) and sees a rejected option" $?
for c in check explain graph hook info cache; do
	bad=
	for o in $(complete_line "kopolicy $c --"); do
		[ "$o" = --help ] && continue
		# getopt's verdict on the option alone (a missing argument is not a rejection)
		! probe "$c" "$o" || bad="$bad $o"
	done
	[ -z "$bad" ] || echo "# $c rejects:$bad"
	[ -z "$bad" ]
	ok "$c: every option offered is accepted" $?
done
[ "$(complete_line "kopolicy hook --basedi")" = " " ]
ok "hook: -b/--basedir is not offered" $?
tmp=$(mktemp -d)
mkdir -p "$tmp/lib/modules/6.1.0-9-amd64" "$tmp/usr/lib/modules/7.2.0-1-amd64"
[ "$(complete_line "kopolicy check -b $tmp --kernel-release ")" = "6.1.0-9-amd64 7.2.0-1-amd64 " ]
ok "--kernel-release: the releases under -b ROOT" $?
[ "$(complete_line "kopolicy check -b $tmp --kernel-release 6.1.0-9-amd64 --upgrade-to 7")" = \
	"7.2.0-1-amd64 " ]
ok "--upgrade-to: the releases under -b ROOT" $?
rm -rf "$tmp" "$probe"
tap_done
