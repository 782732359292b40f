#!/bin/bash
# tests/oracle/hook/check-hook-serial.sh SERIAL RELEASE NFIXTURES
#
# The checks of run-hook-oracle.sh on a guest's serial log (carriage returns and escapes
# already stripped): TAP on stdout, exit 0 when every check passes, 1 when one fails.
# run-hook-oracle.sh calls it after each boot; make check replays the committed log
# (testdata/serial-mutex-*.serial and serial-ksymtab-*.serial, tests/cli/hook-oracle-replay.sh).
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "check-hook-serial: error: line $LINENO: exit status $?" >&2' ERR

serial=$1
REL=$2
NFIX=$3
[ -r "$serial" ] || { echo "check-hook-serial: error: cannot read $serial" >&2; exit 2; }

n=0
fail=0
ok() {
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "ok $n - $1"; else echo "not ok $n - $1"; fail=$((fail + 1)); fi
}
lines() { sed -n "s/^$1 $2 //p" "$serial"; } # KIND STEP
rc_of() { sed -n "s/^KPRC $1 //p" "$serial"; }
taint_of() { sed -n "s/^KPTAINT $1 $2 //p" "$serial"; }
has() { grep -qE -- "$2" <<<"$1"; }

ok "guest runs $REL" "$(grep -q "KPHOOK-BEGIN $REL$" "$serial"; echo $?)"
ok "--print-install-rules wrote one line per fixture" \
	"$([ "$(sed -n 's/^KPRULES //p' "$serial")" = "$NFIX" ]; echo $?)"

ok "clean: modprobe succeeds" "$([ "$(rc_of clean)" = 0 ]; echo $?)"
ok "clean: kopolicy says nothing" "$([ -z "$(lines KPERR clean)" ]; echo $?)"
ok "clean: loaded, taint OE as without the hook" "$([ "$(taint_of clean kp_gpl_prov)" = OE ]; echo $?)"

ok "inherit: modprobe succeeds" "$([ "$(rc_of inherit)" = 0 ]; echo $?)"
ok "inherit: kp_prop_prov judged on its own install line" \
	"$(has "$(lines KPERR inherit)" "^kopolicy: kp_prop_prov: warning: is proprietary"; echo $?)"
ok "inherit: kopolicy warns about the inheritance" \
	"$(has "$(lines KPERR inherit)" "^kopolicy: kp_use_prop: warning: would inherit P: imports kp_prop_plain from proprietary module kp_prop_prov"; echo $?)"
# (5.10 names no symbol: "module uses symbols from proprietary module", kernel/module.c:1443)
ok "inherit: the kernel agrees" \
	"$(has "$(lines KPDMESG inherit)" "kp_use_prop: module uses symbols (kp_prop_plain )?from proprietary module kp_prop_prov, inheriting taint\."; echo $?)"
ok "inherit: kp_use_prop loaded with P" "$(has "$(taint_of inherit kp_use_prop)" P; echo $?)"

ok "blocked: modprobe fails" "$([ "$(rc_of blocked)" = 1 ]; echo $?)"
ok "blocked: with kopolicy's message" \
	"$(has "$(lines KPERR blocked)" "^kopolicy: kp_gplonly_then_prop: load blocked: would fail to load with ENOENT: uses GPL-only symbols and imports kp_prop_plain from proprietary module kp_prop_prov"; echo $?)"
ok "blocked: modprobe names the install command" \
	"$(has "$(lines KPERR blocked)" "Error running install command .* for module kp_gplonly_then_prop: retcode 1"; echo $?)"
ok "blocked: the module is not loaded" "$([ -z "$(taint_of blocked kp_gplonly_then_prop)" ]; echo $?)"
ok "blocked: the kernel never saw it" "$([ -z "$(lines KPDMESG blocked | grep kp_gplonly_then_prop)" ]; echo $?)"

ok "bypass: without the hook the kernel refuses it" "$([ "$(rc_of bypass)" != 0 ]; echo $?)"
pred=$(sed -n 's/^KPPRED kopolicy: kp_gplonly_then_prop:   kernel: //p' "$serial")
seen=$(lines KPDMESG bypass | sed 's/^\[ *[0-9.]*\] //' | grep '^kp_gplonly_then_prop: ' || true)
ok "bypass: the kernel printed exactly the lines kopolicy predicted" "$([ -n "$pred" ] && [ "$pred" = "$seen" ]; echo $?)"
[ "$pred" = "$seen" ] || { echo "# predicted:"; sed 's/^/#   /' <<<"$pred"; echo "# kernel:"; sed 's/^/#   /' <<<"$seen"; }

ok "symget: modprobe succeeds (a lost symbol_get() only warns)" "$([ "$(rc_of symget)" = 0 ]; echo $?)"
warned=$(lines KPERR symget | sed -n 's/.*warning: symbol_get(\([a-z_]*\)) returns NULL.*/\1/p' | sort)
failed=$(lines KPDMESG symget | sed -n 's/.*failing symbol_get of non-GPLONLY symbol \([a-z_]*\)\./\1/p' | sort -u)
nulls=$(lines KPDMESG symget | sed -n 's/.*kp_symget: \([a-z_]*\)=null.*/\1/p' | sort)
ok "symget: kopolicy's warnings are exactly the kernel's failing symbol_get lines" \
	"$([ -n "$warned" ] && [ "$warned" = "$failed" ]; echo $?)"
ok "symget: ... and the lookups the module saw return NULL" "$([ "$warned" = "$nulls" ]; echo $?)"
[ "$warned" = "$failed" ] && [ "$warned" = "$nulls" ] ||
	echo "# kopolicy: $(echo $warned); kernel: $(echo $failed); module null: $(echo $nulls)"

# soft dependencies (the hook with 0-kopolicy-softdeps.conf; logs recorded from 2026-12-07):
# libkmod runs the install line of a module whose softdeps kopolicy's override lifts, and the
# line loads them once the hook let the module load (the logs of 2026-12-07 hold the line
# without KOPOLICY_CHAIN, later ones the line with it)
sd_old='^KPSDLINE install kp_gplonly_then_prop .* hook \$MODPROBE_MODULE \$CMDLINE_OPTS && { /sbin/modprobe -q kp_plain || :; /sbin/modprobe --ignore-install \$MODPROBE_MODULE \$CMDLINE_OPTS; }$'
sd_new='^KPSDLINE install kp_gplonly_then_prop .* hook \$MODPROBE_MODULE \$CMDLINE_OPTS && case " \$KOPOLICY_CHAIN " in \*" kp_gplonly_then_prop "\*) /sbin/modprobe --ignore-install \$MODPROBE_MODULE \$CMDLINE_OPTS;; \*) export KOPOLICY_CHAIN="\$KOPOLICY_CHAIN kp_gplonly_then_prop"; /sbin/modprobe -q kp_plain || :; /sbin/modprobe --ignore-install \$MODPROBE_MODULE \$CMDLINE_OPTS;; esac$'
if grep -q '^KPSTEP-BEGIN softdep' "$serial"; then
	ok "softdep: --update-install-rules wrote the override of kp_gplonly_then_prop" \
		"$(grep -qx 'KPSDFILE softdep \[k\]p_gplonly_then_prop pre:' "$serial"; echo $?)"
	ok "softdep: ... and its line loads kp_plain after the hook, before the module" \
		"$(grep -q -e "$sd_old" -e "$sd_new" "$serial"; echo $?)"
	ok "softdep: modprobe fails" "$([ "$(rc_of softdep)" = 1 ]; echo $?)"
	ok "softdep: the hook ran: kopolicy's message" \
		"$(has "$(lines KPERR softdep)" "^kopolicy: kp_gplonly_then_prop: load blocked: would fail to load with ENOENT"; echo $?)"
	ok "softdep: ... before its soft dependency: kp_plain not loaded" \
		"$(! grep -q '^KPTAINT softdep kp_plain' "$serial"; echo $?)"
	ok "softdep: the kernel never saw kp_gplonly_then_prop" \
		"$([ -z "$(lines KPDMESG softdep | grep kp_gplonly_then_prop)" ]; echo $?)"
	ok "softload: kp_symget removed, then loaded through its line: modprobe succeeds" \
		"$([ "$(sed -n 's/^KPSDRM //p' "$serial")" = 0 ] && [ "$(rc_of softload)" = 0 ]; echo $?)"
	ok "softload: the hook judged it (its symbol_get() warnings)" \
		"$(has "$(lines KPERR softload)" "warning: symbol_get\([a-z_]*\) returns NULL"; echo $?)"
	ok "softload: its soft dependency kp_plain loaded, before it (/proc/modules: newest first)" \
		"$([ "$(sed -n 's/^KPORDER //p' "$serial")" = "kp_symget kp_plain " ] &&
			grep -q '^KPTAINT softload kp_plain' "$serial"; echo $?)"
	ok "softload: no softdep line left: the overrides removed" \
		"$(grep -qx 'KPSDAFTER gone' "$serial"; echo $?)"
fi
# soft dependencies leading back through an in-tree module (logs recorded from 2026-12-08):
# kp_symget's line, run again from kp_plain's probe list, loads kp_symget alone
# (KOPOLICY_CHAIN) where it would run kp_plain's modprobe again, without end
if grep -q '^KPSTEP-BEGIN softcycle' "$serial"; then
	ok "softcycle: both removed, then modprobe kp_symget (pre kp_plain, kp_plain pre kp_symget) ends: exit 0 within 60 s" \
		"$([ "$(sed -n 's/^KPCYRM //p' "$serial")" = 0 ] && [ "$(rc_of softcycle)" = 0 ]; echo $?)"
	ok "softcycle: the hook judged kp_symget (its symbol_get() warnings)" \
		"$(has "$(lines KPERR softcycle)" "warning: symbol_get\([a-z_]*\) returns NULL"; echo $?)"
	ok "softcycle: both loaded, kp_symget first (/proc/modules: newest first; kmod alone: kp_plain first)" \
		"$([ "$(sed -n 's/^KPCYORDER //p' "$serial")" = "kp_plain kp_symget " ] &&
			grep -q '^KPTAINT softcycle kp_plain' "$serial" &&
			grep -q '^KPTAINT softcycle kp_symget' "$serial"; echo $?)"
fi

# the hook with module_mutex held (6.12.118, 2026-12-06): /proc/modules' m_start() takes
# module_mutex, where a task sleeps in D and no signal reaches it; the hook reads the file
# through a child (lib/system/kernel-read.c) and waits on a pipe, where its --timeout fires:
# it answers with its on-error mode (fail-closed here) and leaves the child in D behind it
if grep -q '^KPSTEP-BEGIN mutex' "$serial"; then
	# kp_strtab_guard.ko (5.10 to 6.12) or the ksymtab-wild kp_absent_prov.ko (7.2)
	ko=$(sed -n 's/^KPMUTEXKO //p' "$serial")
	ok "mutex: ${ko:-kp_strtab_guard.ko}'s oops in find_symbol() kills insmod (SIGKILL: 137)" \
		"$([ "$(sed -n 's/^KPINSMOD //p' "$serial")" = 137 ] &&
			has "$(lines KPDMESG mutex)" ' find_symbol\+'; echo $?)"
	mrc=$(rc_of mutex)
	ok "mutex: the hook answers: modprobe exits 1 (on-error fail-closed) within 40 s" \
		"$([ "${mrc%% *}" = 1 ]; echo $?)"
	secs=$(sed -n 's/^1 after \([0-9]*\) s$/\1/p' <<<"$mrc")
	ok "mutex: ... after --timeout (10 s), not much later (${secs:-?} s)" \
		"$([ -n "$secs" ] && [ "$secs" -ge 9 ] && [ "$secs" -le 20 ]; echo $?)"
	ok "mutex: ... saying it could not decide in time, the load blocked" \
		"$(has "$(lines KPERR mutex)" "^kopolicy: kp_gplonly_then_prop: cannot decide: no answer within 10 s \(timeout\); blocking the load \(on-error fail-closed, [^)]*hook\.conf:2\)$"; echo $?)"
	ok "mutex: ... and modprobe names the install command" \
		"$(has "$(lines KPERR mutex)" "Error running install command .* for module kp_gplonly_then_prop: retcode 2"; echo $?)"
	# its wchan, or the top of its kernel stack where wchan says 0 (5.10.262: get_wchan()
	# gives 0 for a task that is not running under the ORC unwinder)
	reader=$(sed -n 's/^KPPROC mutex \([0-9]*\) kopolicy D \(m_start\|0\)$/\1 \2/p' "$serial" | sed -n 1p)
	top=$(sed -n "s/^KPSTACK mutex ${reader%% *} //p" "$serial" | sed -n 1p)
	ok "mutex: the hook's reader, left behind, sleeps in state D in /proc/modules' m_start()" \
		"$([ -n "$reader" ] && { [ "${reader#* }" = m_start ] || [ "${top%%+*}" = m_start ]; }; echo $?)"
	ok "mutex: ... the one kopolicy process left; no modprobe left" \
		"$([ "$(grep -c '^KPPROC mutex [0-9]* kopolicy ' "$serial")" = 1 ] &&
			! grep -q '^KPPROC mutex [0-9]* modprobe ' "$serial"; echo $?)"
fi

echo "1..$n"
[ $fail = 0 ] || exit 1 # a failed count, not an error: no ERR trap line
