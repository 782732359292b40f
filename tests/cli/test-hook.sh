#!/usr/bin/env bash
# kopolicy hook against fake roots: a modules tree of fixture modules (fixtures/ko/6.12, copied
# to lib/modules/<release>/extra and indexed with `depmod -b`), the kernel's Module.symvers and
# config, and a fake proc/ and sys/ (tests/unit/policy/root) describing what is loaded. Every
# blocking and non-blocking consequence, fail-open and fail-closed, the index and export
# fallbacks, install rules, and the documented modprobe.d line run by kmod's own modprobe.
# Nothing is written outside a temporary directory.
set -uo pipefail

top=${srcdir:-.}
kp=${KOPOLICY:-./src/kopolicy}
# the default policy: ROOT$KP_SYSCONFDIR/kopolicy/hook.conf (configure's sysconfdir)
: "${KP_SYSCONFDIR:?not set (the configured sysconfdir, from make check)}"
fx=$top/fixtures/ko/6.12
skel=$top/tests/unit/policy/root
rel=$(sed -n 's/^release=//p' "$fx/kernel.txt")
. "$top/tests/lib/tap.sh"
. "$top/tests/lib/hook-root.sh"

if ! command -v depmod >/dev/null; then
	echo "1..0 # SKIP depmod (kmod) is not installed"
	exit 0
fi
tap_tmpdir

has() { # description, pattern (grep -E) that stderr of the last run must contain
	if grep -qE -- "$2" "$tmp/err"; then
		ok "$1" 0
	else
		ok "$1" 1
		sed 's/^/#   /' "$tmp/err"
	fi
}
hasnt() {
	if grep -qE -- "$2" "$tmp/err"; then
		ok "$1" 1
		sed 's/^/#   /' "$tmp/err"
	else
		ok "$1" 0
	fi
}

# mkroot DIR [MODULE...]: a fake root with the fixtures in extra/ (default: the usual set).
mkroot() {
	local r=$1 m mods
	shift
	mods=("$@")
	[ ${#mods[@]} -gt 0 ] || mods=(kp_gpl_prov kp_prop_prov kp_use_prop kp_use_prop_chain
		kp_gplonly_then_prop kp_symget kp_plain kp_nolicense kp_ns_ok)
	hook_root "$r" "${mods[@]}"
}
# loaded DIR NAME:TAINT...: proc/modules and sys/module/NAME/taint; TAINT '-' = no sysfs file,
# NAME:SYSFS/PROC gives different letters to each.
loaded() {
	local r=$1 spec name t sys procl
	shift
	: > "$r/proc/modules"
	for spec in "$@"; do
		name=${spec%%:*}
		t=${spec#*:}
		sys=${t%%/*}
		procl=${t#*/}
		echo "$name 16384 0 - Live 0xffffffffc0a00000${procl:+ ($procl)}" |
			sed 's/ (-)$//' \
			>> "$r/proc/modules"
		mkdir -p "$r/sys/module/$name"
		rm -f "$r/sys/module/$name/taint"
		[ "$sys" != - ] && echo "$sys" > "$r/sys/module/$name/taint"
	done
}
# Every run is made twice, without the base cache (KOPOLICY_BASE_CACHE=off: Module.symvers and
# the config parsed) and with it: status, stdout and stderr must be byte-identical.
nbase=0
basediff=0
hook() { # ROOT ARGS... -> $rc, stderr in $tmp/err, stdout in $tmp/out
	local r=$1 rc0
	shift
	KOPOLICY_BASE_CACHE=off "$kp" hook --root "$r" "$@" > "$tmp/out0" 2> "$tmp/err0"
	rc0=$?
	"$kp" hook --root "$r" "$@" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	nbase=$((nbase + 1))
	if [ "$rc" != "$rc0" ] || ! cmp -s "$tmp/out" "$tmp/out0" ||
		! cmp -s "$tmp/err" "$tmp/err0"; then
		basediff=$((basediff + 1))
		echo "# base cache changes hook $*: status $rc0 -> $rc"
		diff "$tmp/err0" "$tmp/err" | sed 's/^/#   /'
	fi
}
policy() { printf '%b' "$1" > "$tmp/policy.conf"; }

root=$tmp/root
mkroot "$root"

# --- clean loads: silent, exit 0
hook "$root" kp_gpl_prov
is "a clean module passes" "$rc" 0
is "a clean module prints nothing" "$(wc -c < "$tmp/err")" 0
hook "$root" kp_plain foo=1 bar
is "module parameters after MODULE are passed over" "$rc" 0
# ... but the install line hands them to `modprobe --ignore-install`, which reads a word
# beginning with '-' as its own option ("-a NAME" loads NAME too, unjudged): a usage error,
# whatever the on-error mode; kmod quotes a value holding a blank, "opt=\"a -b\""
hook "$root" --on-error fail-open kp_plain foo=1 -a kp_prop_prov
is "a parameter beginning with '-' stops the load, even failing open" "$rc" 2
has "... and says why" \
	"^kopolicy: hook: kp_plain: module parameter '-a' begins with '-': the modprobe of the install line would read it as its own option"
hook "$root" kp_plain 'opt=a -b' x=-1
is "a '-' inside a parameter is a parameter" "$rc" 0
# run by modprobe, MODULE is $MODPROBE_MODULE: "hook $CMDLINE_OPTS" took "x=1" for it (not
# found, fail open) while modprobe went on to load kp_prop_prov
policy 'block proprietary\n'
MODPROBE_MODULE=kp_prop_prov hook "$root" --config "$tmp/policy.conf" x=1
is "a MODULE that is not \$MODPROBE_MODULE stops the load" "$rc" 2
has "... and says why" "^kopolicy: hook: MODULE 'x=1' is not \\\$MODPROBE_MODULE 'kp_prop_prov'"
MODPROBE_MODULE=kp_prop_prov hook "$root" --config "$tmp/policy.conf" kp-prop-prov
is "... the same module spelt with '-' is judged" "$rc" 1
MODPROBE_MODULE=kp_prop_prov hook "$root" --config "$tmp/policy.conf"
is "... as it is without MODULE" "$rc" 1

# --- P: own license, inheritance from the chain, from a loaded module
hook "$root" kp_use_prop
is "P inheritance warns under the default policy" "$rc" 0
has "the chain's proprietary dependency is named" \
	"^kopolicy: kp_use_prop: warning: dependency kp_prop_prov is proprietary: .*\[proprietary, default policy\]$"
has "inheritance is explained" \
	"^kopolicy: kp_use_prop: warning: would inherit P: imports kp_prop_plain from proprietary module kp_prop_prov .*\[inherit-taint, default policy\]$"
loaded "$root" kp_prop_prov:POE/POE
hook "$root" kp_use_prop
has "P inherited from a loaded module (sysfs taint POE)" \
	"would inherit P: imports kp_prop_plain from proprietary module kp_prop_prov"
hasnt "a loaded dependency is not judged again" "is proprietary"
# 7.1+: sys/module/NAME/import_ns says what the live module imports; the file read for its
# exports importing something else is another build
echo USB_STORAGE > "$root/sys/module/kp_prop_prov/import_ns"
hook "$root" kp_use_prop
has "a loaded module whose file imports other namespaces is named" \
	"warning: the loaded kp_prop_prov imports namespaces \{USB_STORAGE\} \(sys/module/kp_prop_prov/import_ns\), this file \{\}: it is not the build that is loaded"
rm "$root/sys/module/kp_prop_prov/import_ns"
hook "$root" kp_use_prop
hasnt "... not when the live module imports what the file does" "imports namespaces"
loaded "$root" kp_prop_prov:OE/POE
hook "$root" kp_use_prop
is "sysfs taint without P wins over /proc/modules: nothing to say" "$(wc -c < "$tmp/err")" 0
loaded "$root" kp_prop_prov:-/POE
hook "$root" kp_use_prop
has "no sysfs taint file: /proc/modules' letters are used" "would inherit P"
loaded "$root" kp_prop_prov:POE/POE
policy 'block inherit-taint\n'
hook "$root" --config "$tmp/policy.conf" kp_use_prop
is "block inherit-taint exits 1" "$rc" 1
has "blocked line names the policy line" \
	"^kopolicy: kp_use_prop: load blocked: would inherit P: .*\[inherit-taint, $tmp/policy.conf:1\]$"
hook "$root" kp_use_prop_chain
has "transitive inheritance through a chain module" \
	"warning: dependency kp_use_prop would inherit P"
has "... and the target inherits from it" \
	"kp_use_prop_chain: warning: would inherit P: imports kp_use_prop_fn from proprietary module kp_use_prop"

# --- load failure: the 2020 rule (GPL-only user imports from a P module)
hook "$root" kp_gplonly_then_prop
is "a load failure warns by default" "$rc" 0
has "the failure, errno and rule" \
	"warning: would fail to load with ENOENT: uses GPL-only symbols and imports kp_prop_plain from proprietary module kp_prop_prov: the import is refused \(2020 rule\) \[load-failure, default policy\]"
policy '# strict\nblock load-failure\n'
hook "$root" --config "$tmp/policy.conf" kp_gplonly_then_prop
is "block load-failure exits 1" "$rc" 1
has "blocked" "load blocked: would fail to load with ENOENT"
# depmod leaves modules.builtin{,.alias}.bin empty when the tree has no modules.builtin{,.modinfo}
# (a guest, a minimal image): no index, as for libkmod, never "cannot decide"
mv "$root/lib/modules/$rel/modules.builtin.alias.bin" "$tmp/alias.keep"
mv "$root/lib/modules/$rel/modules.builtin.bin" "$tmp/builtin.keep"
: > "$root/lib/modules/$rel/modules.builtin.alias.bin"
: > "$root/lib/modules/$rel/modules.builtin.bin"
hook "$root" --config "$tmp/policy.conf" kp_gplonly_then_prop
is "empty builtin indexes: still blocked" "$rc" 1
has "... with the prediction" "load blocked: would fail to load with ENOENT"
hasnt "... and no indecision" "cannot decide"
mv "$tmp/alias.keep" "$root/lib/modules/$rel/modules.builtin.alias.bin"
mv "$tmp/builtin.keep" "$root/lib/modules/$rel/modules.builtin.bin"
hook "$root" --config "$tmp/policy.conf" -v kp_gplonly_then_prop
has "-v shows the kernel's predicted lines" \
	"kernel: kp_gplonly_then_prop: module using GPL-only symbols uses symbols kp_prop_plain from proprietary module kp_prop_prov\.$"
has "-v shows the chain" "kp_prop_prov extra/kp_prop_prov.ko, loaded, taint POE \(dependency\)"
loaded "$root"
hook "$root" --config "$tmp/policy.conf" kp_gplonly_then_prop
is "the same failure when the provider is on the chain, not loaded" "$rc" 1

# --- per-module exceptions, ignore, last line wins
policy 'block all\nmodule kp_use_prop warn inherit-taint\nmodule kp-prop-prov ignore proprietary\n'
hook "$root" --config "$tmp/policy.conf" kp_use_prop
is "a module exception turns a block into a warning" "$rc" 0
has "... and says which line" "warning: would inherit P: .*\[inherit-taint, $tmp/policy.conf:2\]"
hasnt "an ignored consequence prints nothing ('-' matches '_')" "is proprietary"
hook "$root" --config "$tmp/policy.conf" kp_gplonly_then_prop
is "the exception is only for its module" "$rc" 1
# a file whose struct module names another module (evil.ko built as kp_prop_prov) is judged
# under its file's name, the one the install line and modprobe use, and under that one too:
# the stricter action; never the other module's exception alone
spoof=$tmp/spoof
mkroot "$spoof" kp_gpl_prov
cp "$fx/kp_prop_prov.ko" "$spoof/lib/modules/$rel/extra/evil.ko"
depmod -b "$spoof" "$rel" 2> /dev/null
policy 'block proprietary\nmodule kp_prop_prov warn proprietary\n'
hook "$spoof" --config "$tmp/policy.conf" evil
is "a file naming itself after an excepted module does not get the exception" "$rc" 1
has "... judged under its own name, saying the other" \
	"^kopolicy: evil: load blocked: evil \(struct module names it kp_prop_prov\) is proprietary: .*\[proprietary, $tmp/policy.conf:1\]$"
policy 'block proprietary\nmodule evil warn proprietary\n'
hook "$spoof" --config "$tmp/policy.conf" evil
is "... nor one for its file's name alone" "$rc" 1
policy 'block proprietary\nmodule evil warn proprietary\nmodule kp_prop_prov warn proprietary\n'
hook "$spoof" --config "$tmp/policy.conf" evil
is "... an exception for both names applies" "$rc" 0
# kbuild's own name for a file with ',' (thead,th1520-aon.ko: thead_th1520_aon) is no other
# module's: judged under the file's name alone, as before
cp "$fx/kp_prop_prov.ko" "$spoof/lib/modules/$rel/extra/kp,prop,prov.ko"
depmod -b "$spoof" "$rel" 2> /dev/null
policy 'block proprietary\nmodule kp,prop,prov warn proprietary\n'
hook "$spoof" --config "$tmp/policy.conf" kp,prop,prov
is "a file whose ',' kbuild made '_' keeps its exception" "$rc" 0
hasnt "... and struct module's name is not said" "struct module names it"
rm -rf "$spoof"
policy 'ignore all\n'
hook "$root" --config "$tmp/policy.conf" kp_gplonly_then_prop
is "ignore all: exit 0" "$rc" 0
is "ignore all: silent" "$(wc -c < "$tmp/err")" 0

# --- symbol_get() under the 2023 rule: providers loaded but not on the chain
loaded "$root" kp_gpl_prov:OE/OE kp_prop_prov:POE/POE
hook "$root" kp_symget
has "symbol_get of a loaded module's EXPORT_SYMBOL" \
	"warning: symbol_get\(kp_gpl_prov_plain\) returns NULL: kp_gpl_prov exports it with EXPORT_SYMBOL"
has "symbol_get of a P module's EXPORT_SYMBOL" "symbol_get\(kp_prop_plain\) returns NULL"
has "symbol_get of vmlinux's EXPORT_SYMBOL" "symbol_get\(msleep\) returns NULL: vmlinux"
hasnt "a GPL-only target is fine" "symbol_get\(kp_gpl_prov_gplonly\)"
policy 'block symbol-get\n'
hook "$root" --config "$tmp/policy.conf" kp_symget
is "block symbol-get exits 1" "$rc" 1
loaded "$root"
hook "$root" kp_symget
hasnt "a target whose provider is not loaded is not a 2023 failure" "kp_gpl_prov_plain"

# --- a module past the symbol_get() analysis budget (fixtures/bad/symget-bomb.ko.xz: 4096 call
# sites, proprietary; built for Debian's 6.1.0-57-amd64, so a root of that kernel from
# fixtures/ko/6.1): the policy's answer, never a fail-open on the deadline
bomb=$tmp/bomb
rel61=$(sed -n 's/^release=//p' "$top/fixtures/ko/6.1/kernel.txt")
fx612=$fx rel612=$rel
fx=$top/fixtures/ko/6.1 rel=$rel61
mkroot "$bomb" kp_plain
fx=$fx612 rel=$rel612
bx=$bomb/lib/modules/$rel61/extra
cp "$top/fixtures/bad/symget-bomb.ko.xz" "$bx/kp_symget_bomb.ko.xz"
depmod -b "$bomb" "$rel61" 2> "$tmp/depmod.err" || cat "$tmp/depmod.err" >&2
policy 'block proprietary\n'
hook "$bomb" --config "$tmp/policy.conf" --timeout 10 kp_symget_bomb
is "block proprietary blocks the budget-exhausting module" "$rc" 1
has "... as proprietary" "^kopolicy: kp_symget_bomb: load blocked: is proprietary"
hasnt "... not by a deadline" "cannot decide|timeout"
hook "$bomb" --config "$tmp/policy.conf" -v kp_symget_bomb
has "... decided before any call site is traced (no deadline can intervene)" \
	"^kopolicy: kp_symget_bomb:   symbol_get\(\) call sites not traced: the load is blocked on what needs no tracing$"
# the same module GPL-licensed (the proprietary one fails to load: __symbol_get is GPL-only,
# and a module that does not load calls nothing), so that its symbol_get() calls would run
xz -dc "$top/fixtures/bad/symget-bomb.ko.xz" > "$bx/kp_symget_bomb.ko"
rm "$bx/kp_symget_bomb.ko.xz"
python3 "$top/tests/cli/elf-poke.py" "$bx/kp_symget_bomb.ko" replace "license=Proprietary" \
	"license=GPL"
depmod -b "$bomb" "$rel61" 2> "$tmp/depmod.err" || cat "$tmp/depmod.err" >&2
hook "$bomb" --timeout 10 kp_symget_bomb
is "default policy: the GPL copy loads" "$rc" 0
has "... with a warning counting the call sites not analysed" \
	"^kopolicy: kp_symget_bomb: warning: [0-9]+ symbol_get\(\) call site\(s\) not analysed: the module's analysis budget ran out.*\[symbol-get, default policy\]$"
hasnt "... not by a deadline" "cannot decide|timeout"
policy 'block symbol-get\non-error fail-closed\n'
hook "$bomb" --config "$tmp/policy.conf" kp_symget_bomb
is "block symbol-get, fail-closed: not analysed is undecided, blocked (2)" "$rc" 2
has "... saying so" \
	"^kopolicy: kp_symget_bomb: cannot decide symbol-get for kp_symget_bomb: [0-9]+ symbol_get\(\) call site\(s\) not analysed.*blocking the load \(on-error fail-closed, $tmp/policy.conf:2\)$"
policy 'block symbol-get\n'
hook "$bomb" --config "$tmp/policy.conf" kp_symget_bomb
is "block symbol-get, fail-open: the load goes on" "$rc" 0
has "... saying so" \
	"cannot decide symbol-get for kp_symget_bomb: .*letting the load go on \(on-error fail-open, default\)$"
policy 'ignore symbol-get\n'
hook "$bomb" --config "$tmp/policy.conf" -v kp_symget_bomb
is "ignore symbol-get: the load goes on" "$rc" 0
has "... its call sites not traced at all" \
	"^kopolicy: kp_symget_bomb:   symbol_get\(\) call sites not traced: the policy ignores symbol-get$"
hasnt "... nothing said of them" "not analysed"
policy 'ignore symbol-get\nmodule kp_symget warn symbol-get\n'
hook "$root" --config "$tmp/policy.conf" -v kp_symget
hasnt "a module-specific symbol-get line keeps the tracing" "not traced"
has "... and its findings" "symbol_get\(msleep\)"

# --- the running kernel's security state
loaded "$root"
echo Y > "$root/sys/module/module/parameters/sig_enforce"
policy 'block load-failure\n'
hook "$root" --config "$tmp/policy.conf" kp_plain
is "sig_enforce=Y: an unsigned module is blocked" "$rc" 1
has "... with EKEYREJECTED" "would fail to load with EKEYREJECTED"
echo N > "$root/sys/module/module/parameters/sig_enforce"
echo 'none [integrity] confidentiality' > "$root/sys/kernel/security/lockdown"
hook "$root" --config "$tmp/policy.conf" kp_plain
has "lockdown=integrity: EPERM" "would fail to load with EPERM"
cp "$skel/sys/kernel/security/lockdown" "$root/sys/kernel/security/lockdown"
echo "root=/dev/vda1 module_blacklist=kp_plain,other" > "$root/proc/cmdline"
hook "$root" --config "$tmp/policy.conf" kp_plain
has "module_blacklist= on the command line" "would fail to load with EPERM"
echo "root=/dev/vda1 ima_policy=secure_boot" > "$root/proc/cmdline"
hook "$root" --config "$tmp/policy.conf" kp_plain
has "ima_policy=secure_boot on the command line: IMA refuses (no security.ima)" \
	"would fail to load with EACCES"
cp "$skel/proc/cmdline" "$root/proc/cmdline"
mkdir -p "$root/sys/kernel/security/ima"
printf 'measure func=MODULE_CHECK\nappraise func=MODULE_CHECK appraise_type=imasig\n' \
	> "$root/sys/kernel/security/ima/policy"
hook "$root" --config "$tmp/policy.conf" kp_plain
has "the active IMA policy read from sys/kernel/security/ima/policy" \
	"would fail to load with EACCES: .*sys/kernel/security/ima/policy"
rm -r "$root/sys/kernel/security/ima"

# --- what modprobe would do with names
hook "$root" -v kp-test-alias
is "a modprobe.d alias resolves" "$rc" 0
has "... to its module" "kp_plain extra/kp_plain.ko$"
hook "$root" -v kp-bl-alias
has "a blacklisted module behind an alias is skipped like modprobe does" "nothing to load"
hook "$root" kp_nolicense
has "a blacklisted module named directly is judged (modprobe loads it)" \
	"warning: is proprietary: license 'unspecified'"
loaded "$root" kp_plain:OE/OE
hook "$root" -v kp_plain
is "an already loaded module: exit 0" "$rc" 0
has "... nothing to load" "nothing to load: already loaded"
loaded "$root"

# --- fail-open and fail-closed
hook "$root" kp_missing
is "an unknown module: fail open by default" "$rc" 0
has "... saying why" \
	"kp_missing: cannot decide: module kp_missing not found in .*; letting the load go on \(on-error fail-open, default\)"
policy 'on-error fail-closed\n'
hook "$root" --config "$tmp/policy.conf" kp_missing
is "on-error fail-closed exits 2" "$rc" 2
has "... naming the line" "blocking the load \(on-error fail-closed, $tmp/policy.conf:1\)"
policy 'on-error fail-closed\nmodule kp_missing on-error fail-open\n'
hook "$root" --config "$tmp/policy.conf" kp_missing
is "a per-module on-error line wins" "$rc" 0
hook "$root" --on-error fail-closed kp_missing
is "--on-error fail-closed without a policy file" "$rc" 2
has "... is named as the source" "\(on-error fail-closed, --on-error\)"
policy 'on-error fail-open\n'
hook "$root" --on-error fail-closed --config "$tmp/policy.conf" kp_missing
is "the policy file's on-error wins over --on-error" "$rc" 0
policy 'block load-failure\nallow everything\n'
hook "$root" --config "$tmp/policy.conf" kp_gplonly_then_prop
is "a malformed policy is refused: fail open" "$rc" 0
has "... naming file and line" \
	"cannot decide: policy refused: $tmp/policy.conf:2: unknown directive 'allow'"
hook "$root" --on-error fail-closed --config "$tmp/policy.conf" kp_plain
is "... or closed with --on-error" "$rc" 2
policy 'block load-failure\n'
chmod o+w "$tmp/policy.conf"
hook "$root" --config "$tmp/policy.conf" kp_plain
has "a world-writable policy is refused" "writable by every user: refused"
chmod o-w "$tmp/policy.conf"
hook "$root" --config "$tmp/nonexistent.conf" kp_plain
has "an explicit --config that does not exist is an error" \
	"cannot decide: policy refused: .*nonexistent.conf: cannot open"
mkdir -p "$root$KP_SYSCONFDIR/kopolicy"
printf 'block load-failure\n' > "$root$KP_SYSCONFDIR/kopolicy/hook.conf"
hook "$root" kp_gplonly_then_prop
is "ROOT/SYSCONFDIR/kopolicy/hook.conf is the default policy" "$rc" 1
has "... and is named" "\[load-failure, $root$KP_SYSCONFDIR/kopolicy/hook.conf:1\]"
rm -r "$root$KP_SYSCONFDIR/kopolicy"

echo 9.9.9-other > "$root/proc/sys/kernel/osrelease"
hook "$root" kp_plain
has "an unknown kernel (no tree for the release) cannot be decided" \
	"cannot decide: unknown kernel: .*9.9.9-other: no such directory"
echo "$rel" > "$root/proc/sys/kernel/osrelease"
cp "$root/proc/modules" "$tmp/modules.saved"
echo "kp_plain 16384 0 - Live" > "$root/proc/modules"
hook "$root" kp_use_prop
has "a malformed /proc/modules cannot be decided" "cannot decide: .*proc/modules:1: 5 fields"
cp "$tmp/modules.saved" "$root/proc/modules"

# --- index fallbacks: text modules.dep, none at all
text=$tmp/text
mkroot "$text"
rm "$text/lib/modules/$rel"/*.bin
loaded "$text" kp_prop_prov:POE/POE
hook "$text" -v --config "$tmp/policy.conf" kp_gplonly_then_prop
is "text modules.dep: same verdict" "$rc" 1
has "... read from the text index" "chain from modules.dep \(text\)"
hook "$text" kp_symget
has "text modules.symbols finds symbol_get providers" \
	"symbol_get\(kp_prop_plain\) returns NULL: kp_prop_prov exports it"
hook "$text" kp-test-alias
is "no alias from modprobe.d without libkmod: not found, fail open" "$rc" 0
# 6.18+: modules.builtin.modinfo carries the device-table aliases of built-in drivers
echo "kernel/drivers/kp/kp_builtin_drv.ko" > "$text/lib/modules/$rel/modules.builtin"
printf 'kp_builtin_drv.license=GPL\0kp_builtin_drv.alias=pci:v00001234d*\0' \
	> "$text/lib/modules/$rel/modules.builtin.modinfo"
hook "$text" -v pci:v00001234d00005678sv00000000
is "text index: a built-in driver's alias (modules.builtin.modinfo) exits 0" "$rc" 0
has "... nothing to load: the built-in driver" "nothing to load: already loaded or built in"
hook "$text" -v pci:v00004321d00005678sv00000000
hasnt "... an alias no built-in matches is not taken for one" "built in"
depmod -b "$text" "$rel" 2> "$tmp/depmod.err" || cat "$tmp/depmod.err" >&2
hook "$text" -v pci:v00001234d00005678sv00000000
has "libkmod: the same alias through modules.builtin.alias.bin" \
	"nothing to load: already loaded or built in"
rm -f "$text/lib/modules/$rel"/*.bin
: > "$text/lib/modules/$rel/modules.builtin"
: > "$text/lib/modules/$rel/modules.builtin.modinfo"
sed -i "s@^extra/kp_gplonly_then_prop.ko:@/lib/modules/$rel/extra/kp_gplonly_then_prop.ko:@" \
	"$text/lib/modules/$rel/modules.dep"
hook "$text" --config "$tmp/policy.conf" kp_gplonly_then_prop
is "an absolute modules.dep path is taken inside the root" "$rc" 1
rm "$text/lib/modules/$rel"/modules.dep
hook "$text" kp_plain
has "no depmod index at all: said so" \
	"cannot decide: .*: no depmod indexes \(neither modules.dep.bin nor modules.dep\): run depmod"

# --- kernel exports: /proc/kallsyms when there is no Module.symvers
ks=$tmp/ks
mkroot "$ks"
rm "$ks/boot/symvers-$rel.gz"
python3 "$top/tests/unit/policy/gen-kallsyms.py" "$fx/Module.symvers.gz" > "$ks/proc/kallsyms"
loaded "$ks" kp_prop_prov:POE/POE
hook "$ks" -v --config "$tmp/policy.conf" kp_gplonly_then_prop
is "kallsyms: the 2020 rule still predicted (GPL-only from the table bounds)" "$rc" 1
has "... from /proc/kallsyms" "exports from /proc/kallsyms"
hook "$ks" kp_use_prop
has "kallsyms: a loaded provider's exports come from its .ko" \
	"would inherit P: imports kp_prop_plain"
python3 "$top/tests/unit/policy/gen-kallsyms.py" "$fx/Module.symvers.gz" zero > "$ks/proc/kallsyms"
hook "$ks" kp_plain
has "kallsyms without addresses (kptr_restrict) cannot be decided" \
	"cannot decide: no kernel exports: no Module.symvers"
rm "$ks/proc/kallsyms"
hook "$ks" --on-error fail-closed kp_plain
is "no exports at all: fail closed when asked" "$rc" 2

# --- an in-tree dependency missing from Module.symvers is read after all
it=$tmp/intree
mkroot "$it" kp_ns_ok kp_plain
mkdir -p "$it/lib/modules/$rel/kernel/drivers/misc"
cp "$fx/kp_gpl_prov.ko" "$it/lib/modules/$rel/kernel/drivers/misc/"
depmod -b "$it" "$rel" 2> /dev/null
hook "$it" -v kp_ns_ok
is "kernel/ dependency not in Module.symvers: loads" "$rc" 0
has "... because it was read" "kp_gpl_prov: loads"

# --- install rules
hook "$root" --print-install-rules
is "--print-install-rules exits 0" "$rc" 0
is "one install line per out-of-tree module" "$(grep -c '^install ' "$tmp/out")" 9
grep -q "^install kp_use_prop [^ ]*kopolicy hook \$MODPROBE_MODULE \$CMDLINE_OPTS && /sbin/modprobe --ignore-install \$MODPROBE_MODULE \$CMDLINE_OPTS$" "$tmp/out"
ok "the documented line shape" $?
hook "$it" --print-install-rules --on-error fail-closed --config /etc/kopolicy/strict.conf
is "kernel/ modules get no rule" "$(grep -c '^install ' "$tmp/out")" 2
grep -q " hook --config /etc/kopolicy/strict.conf --on-error fail-closed \$MODPROBE_MODULE" \
	"$tmp/out"
ok "options are carried into the lines" $?
rm "$it/lib/modules/$rel/modules.dep"
hook "$it" --print-install-rules
is "without modules.dep the directory is walked" "$(grep -c '^install ' "$tmp/out")" 2

# --- usage
hook "$root"
is "no module: exit 2" "$rc" 2
hook "$root" ../../etc/passwd
is "a path is not a module name: exit 2" "$rc" 2
hook "$root" --on-error sometimes kp_plain
is "bad --on-error: exit 2" "$rc" 2

# --- nothing under the root is written
( cd "$root" && find . -printf '%p %s %T@\n' | sort ) > "$tmp/before"
hook "$root" --config "$tmp/policy.conf" kp_gplonly_then_prop
hook "$root" kp_symget
( cd "$root" && find . -printf '%p %s %T@\n' | sort ) > "$tmp/after"
cmp -s "$tmp/before" "$tmp/after"
ok "the root is left untouched" $?

# --- the documented modprobe.d line, run by kmod's modprobe (-d: the fake root, -C: only this
# file). `install *` makes every module of every probe list go through the command, so
# nothing is ever inserted into the running kernel; "&& echo" stands for the real modprobe -i.
if command -v modprobe >/dev/null; then
	loaded "$root" kp_prop_prov:POE/POE
	policy 'block load-failure\n'
	printf 'install * %s hook --root %s --config %s $MODPROBE_MODULE $CMDLINE_OPTS && echo "LOAD $MODPROBE_MODULE [$CMDLINE_OPTS]"\n' \
		"$kp" "$root" "$tmp/policy.conf" > "$tmp/modprobe.conf"
	modprobe -d "$root" -S "$rel" -C "$tmp/modprobe.conf" kp_gplonly_then_prop \
		> "$tmp/out" 2> "$tmp/err"
	is "modprobe: a blocked hook fails the load" "$?" 1
	has "modprobe: kopolicy's message comes through" \
		"^kopolicy: kp_gplonly_then_prop: load blocked: would fail to load with ENOENT"
	grep -q "LOAD kp_gplonly_then_prop" "$tmp/out"
	ok "modprobe: the blocked module is not loaded" $(( $? == 0 ? 1 : 0 ))
	modprobe -d "$root" -S "$rel" -C "$tmp/modprobe.conf" kp_use_prop opt=1 \
		> "$tmp/out" 2> "$tmp/err"
	is "modprobe: an inheriting module goes on" "$?" 0
	has "modprobe: with the warning" "kp_use_prop: warning: would inherit P"
	grep -q "^LOAD kp_use_prop \[opt=1\]$" "$tmp/out"
	ok "modprobe: \$MODPROBE_MODULE and \$CMDLINE_OPTS reach the command" $?
	modprobe -d "$root" -S "$rel" -C "$tmp/modprobe.conf" kp_gpl_prov > "$tmp/out" 2> "$tmp/err"
	is "modprobe: a clean module goes on" "$?" 0
	is "modprobe: silently" "$(wc -c < "$tmp/err")" 0
	# "modprobe CLEAN -- -a BLOCKED": the second modprobe would load BLOCKED too
	modprobe -d "$root" -S "$rel" -C "$tmp/modprobe.conf" kp_gpl_prov -- -a \
		kp_gplonly_then_prop > "$tmp/out" 2> "$tmp/err"
	is "modprobe: a parameter that is an option of modprobe fails the load" "$?" 1
	grep -q "LOAD" "$tmp/out"
	ok "modprobe: ... and nothing is loaded" $(( $? == 0 ? 1 : 0 ))
	loaded "$root"
fi

# --- an import name running into the guard page (fixtures/ko/6.12/strtab, pre-6.13 kernel):
# find_symbol() compares it with every export it searches, so the hook's exports are not
# filtered to the chain's exact names; with them, vmlinux's msleep, which "msle" begins, was not
# seen: the weak name was predicted to load quietly (ENOENT of a later import), the strong one
# to oops in printk, where 6.12.118 oopses in find_symbol() holding module_mutex
pfx=$tmp/pfx
mkroot "$pfx" kp_prop_prov
cp "$fx/strtab/kp_strtab_weakprefix.ko" "$fx/strtab/kp_strtab_prefix.ko" \
	"$pfx/lib/modules/$rel/extra/"
depmod -b "$pfx" "$rel" 2> /dev/null
policy 'block load-failure\n'
hook "$pfx" --config "$tmp/policy.conf" kp_strtab_weakprefix
is "weak import name into the guard page: blocked" "$rc" 1
has "... as the find_symbol() oops on vmlinux's msleep" \
	"would fail to load with OOPS: the name of weak undefined symbol 22 \(msle\.\.\.\) .* and begins vmlinux's export msleep"
hook "$pfx" --config "$tmp/policy.conf" kp_strtab_prefix
is "strong import name into the guard page: blocked" "$rc" 1
has "... as the find_symbol() oops on vmlinux's msleep, not printk's" \
	"would fail to load with OOPS: the name of undefined symbol 28 \(msle\.\.\.\) .* and begins vmlinux's export msleep"
hook "$pfx" --config "$tmp/policy.conf" kp_prop_prov
is "a chain without such a name keeps the filtered exports (unchanged answer)" "$rc" 0
# find_symbol() searches the live modules too: a loaded out-of-tree module the chain does not
# read (kp_gpl_prov, no dependency of it) exports kp_gpl_prov_plain, which "kp_gpl_prov_pl"
# begins; before, only the chain's loaded dependencies were read and the oops was put in printk
mkroot "$pfx" kp_gpl_prov
cp "$fx/strtab/kp_strtab_modprefix.ko" "$pfx/lib/modules/$rel/extra/"
depmod -b "$pfx" "$rel" 2> /dev/null
loaded "$pfx" kp_gpl_prov:OE
hook "$pfx" --config "$tmp/policy.conf" kp_strtab_modprefix
is "import name into the guard page, a loaded module not in the chain: blocked" "$rc" 1
has "... as the find_symbol() oops on the loaded kp_gpl_prov's export" \
	"would fail to load with OOPS: the name of undefined symbol 28 \(kp_gpl_prov_pl\.\.\.\) .* and begins kp_gpl_prov's export kp_gpl_prov_plain: "
hasnt "... no line about a loaded module without a file" "no file in modules.dep"
loaded "$pfx" kp_gpl_prov:OE kp_ghost:OE
hook "$pfx" --config "$tmp/policy.conf" kp_strtab_modprefix
has "a loaded module modules.dep does not list: said, its exports unknown" \
	"^kopolicy: $pfx/proc/modules: loaded module kp_ghost: no file in modules.dep, its exports unknown: an import name of the chain that runs into the guard page may begin one$"
hook "$pfx" --config "$tmp/policy.conf" kp_gpl_prov
hasnt "... not read for a chain without such a name" "kp_ghost"
# ... and the modules Module.symvers lists only while they are live: an in-tree module (a line
# added for kp_fake) exporting kp_gpl_prov_plain, not loaded and no dependency of the chain, is
# not searched (the strong name is then printed: the oops in printk); loaded, it is. (The
# module in kp_strtab_modprefix.ko is named kp_plain.) Before, the first was put in find_symbol()
mkroot "$pfx" kp_prop_prov
cp "$fx/strtab/kp_strtab_modprefix.ko" "$pfx/lib/modules/$rel/extra/"
{ gzip -dc "$fx/Module.symvers.gz"
  printf '0x12345678\tkp_gpl_prov_plain\tdrivers/misc/kp_fake\tEXPORT_SYMBOL\t\n'; } |
	gzip > "$pfx/boot/symvers-$rel.gz"
depmod -b "$pfx" "$rel" 2> /dev/null
loaded "$pfx"
hook "$pfx" --config "$tmp/policy.conf" kp_strtab_modprefix
is "an in-tree module neither loaded nor a dependency: blocked" "$rc" 1
hasnt "... not by its export" "begins kp_fake's export"
has "... by the printk of the unknown name" "would fail to load with OOPS: .*kp_gpl_prov_pl\.\.\."
loaded "$pfx" kp_fake:-
hook "$pfx" --config "$tmp/policy.conf" kp_strtab_modprefix
is "the same module loaded: blocked" "$rc" 1
has "... by the find_symbol() oops on its export" \
	"would fail to load with OOPS: the name of undefined symbol 28 \(kp_gpl_prov_pl\.\.\.\) .* and begins kp_fake's export kp_gpl_prov_plain: "
# a loaded in-tree module without a file (removed or renamed after its load): Module.symvers
# lists its exports (the line's module path ends in its name), the source said; before, "its
# exports unknown". One whose name only begins an owner's (kp_fak), or none lists, is unknown.
has "a loaded module without a file that Module.symvers lists: its exports from there, said" \
	"^kopolicy: $pfx/proc/modules: loaded module kp_fake: no file in modules.dep, its exports from $pfx/boot/symvers-[^ ]*\.gz \(lines of drivers/misc/kp_fake\)$"
hasnt "... not said unknown" "kp_fake: no file in modules.dep, its exports unknown"
loaded "$pfx" kp_fak:- kp_ghost:OE
hook "$pfx" --config "$tmp/policy.conf" kp_strtab_modprefix
has "a loaded name that only begins a Module.symvers module's: its exports unknown" \
	"^kopolicy: $pfx/proc/modules: loaded module kp_fak: no file in modules.dep, its exports unknown: "
has "... as one Module.symvers does not list" \
	"^kopolicy: $pfx/proc/modules: loaded module kp_ghost: no file in modules.dep, its exports unknown: "
hasnt "... and kp_fake's export is not searched" "begins kp_fake's export"

is "every hook run ($nbase) answers the same without the base cache (status, stdout, stderr)" \
	"$basediff" 0
KOPOLICY_CACHE_STATS=1 "$kp" hook --root "$root" kp_gpl_prov > /dev/null 2> "$tmp/err"
has "... and the runs with it used it (Module.symvers and config from entries)" \
	"^kopolicy: base cache: 2 hits, 0 misses"

tap_done
