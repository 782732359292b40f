#!/bin/bash
# check-oracle.sh - run the oracle scenarios on a real kernel, ask kopolicy for its prediction of
# each scenario, and compare them (tests/oracle/compare.py).
#
# usage: tests/oracle/check-oracle.sh [--observed DIR] [--ignore-once] [-j JOBS] [-k]
#                                     [--fixtures auto|build|prebuilt]
#                                     SERIES KOPOLICY_BIN [SCENARIO...]
#
#   SERIES         5.10 | 6.1 | 6.12 | 7.2
#   KOPOLICY_BIN   the kopolicy executable to judge (exit 2 if it does not exist)
#   SCENARIO       restrict to these scenarios (default: all that apply to SERIES)
#   --observed DIR compare against existing observed JSON (e.g. tests/oracle/observed/6.12)
#                  instead of booting QEMU; the fixtures are still built (cached)
#   --ignore-once  passed to compare.py (ignore once-per-boot global-taint notices)
#   -j JOBS        parallel QEMU guests (run-oracle.sh -j)
#   -k             keep the work directory (predictions, kopolicy stderr) and print its path
#   --fixtures M   where the fixture binaries come from (run-oracle.sh --fixtures; default auto:
#                  built, or the committed fixtures/ko/<series> for 5.10/7.2 without a chroot)
#
# For each scenario it runs
#   KOPOLICY_BIN check --kernel KP_SYMVERS --kernel-config KP_CONFIG --kernel-release KP_RELEASE
#                --format json <fixture .ko files in load order>
# (plus --kernel-cmdline '<extra>' for scenarios with an extra kernel command line, when
# `KOPOLICY_BIN check --help` mentions that option; otherwise such scenarios are skipped; plus
# --kernel-image KP_VMLINUZ when a module carries a signature: the kernel's own keys; plus
# --force, --force-modversion or --force-vermagic when the scenario loaded its modules with the
# finit_module() flags 3, 1 or 2 ("finit_flags" in the observed JSON; kopolicy's option applies
# to every module, so a scenario mixing flags is skipped)) and
# prints compare.py's mismatch lines and a total `N passed, N failed, N skipped`.
# Exit status: 0 all passed, 1 any mismatch or harness failure, 2 usage / no kopolicy binary.
set -euo pipefail
# set -e ends the script at a failing command: say where, never silently
trap 'echo "check-oracle: error: line $LINENO: exit status $?" >&2' ERR

ORACLE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() { echo "check-oracle: error: $*" >&2; exit 1; }
usage() { sed -n '2,28p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

OBSERVED=
KEEP=0
CMP_OPTS=()
RUN_OPTS=()
FIX_OPTS=()
while [ $# -gt 0 ]; do
	case $1 in
	--observed) [ $# -ge 2 ] || usage; OBSERVED=$2; shift 2 ;;
	--ignore-once) CMP_OPTS+=(--ignore-once); shift ;;
	-j) [ $# -ge 2 ] || usage; RUN_OPTS+=(-j "$2"); shift 2 ;;
	-k) KEEP=1; shift ;;
	--fixtures) [ $# -ge 2 ] || usage; FIX_OPTS=(--fixtures "$2"); shift 2 ;;
	-h|--help) usage ;;
	-*) usage ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || usage
SERIES=$1
KOPOLICY_BIN=$2
shift 2

if [ ! -f "$KOPOLICY_BIN" ] || [ ! -x "$KOPOLICY_BIN" ]; then
	echo "check-oracle: kopolicy binary '$KOPOLICY_BIN' does not exist or is not executable;" \
		"build kopolicy first (nothing was compared)" >&2
	exit 2
fi
case $KOPOLICY_BIN in /*) ;; *) KOPOLICY_BIN=$PWD/$KOPOLICY_BIN ;; esac

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kp-check-oracle.XXXXXX")
if [ $KEEP = 1 ]; then
	echo "check-oracle: work directory $WORK" >&2
else
	trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK/pred"

if [ -n "$OBSERVED" ]; then
	[ -d "$OBSERVED" ] || die "--observed $OBSERVED is not a directory"
	OBSDIR=$(cd "$OBSERVED" && pwd)
	"$ORACLE_DIR/run-oracle.sh" "${FIX_OPTS[@]+"${FIX_OPTS[@]}"}" --prepare-only --env-out "$WORK/env" "$SERIES" \
		|| die "run-oracle.sh --prepare-only failed"
else
	OBSDIR=$WORK/observed
	"$ORACLE_DIR/run-oracle.sh" "${FIX_OPTS[@]+"${FIX_OPTS[@]}"}" "${RUN_OPTS[@]+"${RUN_OPTS[@]}"}" -o "$OBSDIR" --env-out "$WORK/env" "$SERIES" "$@" \
		|| die "run-oracle.sh failed (the kernel side did not complete; nothing was compared)"
fi
KP_RELEASE='' KP_CONFIG='' KP_SYMVERS='' KP_VMLINUZ='' KP_ORACLE_FIXTURES=''
# shellcheck source=/dev/null
. "$WORK/env"

HAS_CMDLINE=0
# the whole help read (grep -q would stop early: SIGPIPE for kopolicy, a failed pipeline)
if "$KOPOLICY_BIN" check --help 2>&1 | grep -- '--kernel-cmdline' >/dev/null; then
	HAS_CMDLINE=1
fi

# scenarios to judge
SCEN=()
if [ $# -gt 0 ]; then
	for s in "$@"; do
		[ -f "$OBSDIR/$s.json" ] || die "no observed result $OBSDIR/$s.json"
		SCEN+=("$s")
	done
else
	for f in "$OBSDIR"/*.json; do
		[ -f "$f" ] || continue
		s=${f##*/}
		SCEN+=("${s%.json}")
	done
fi
[ ${#SCEN[@]} -gt 0 ] || die "no observed results in $OBSDIR"

PAIRS=()
SKIPPED=0
for s in "${SCEN[@]}"; do
	obs=$OBSDIR/$s.json
	# line 1: extra cmdline, line 2: kernel release seen by the guest, line 3: the distinct
	# finit_module() flags of the loads, then one file per line
	mapfile -t info < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d.get("extra_cmdline") or "")
print(d["kernel"].get("release") or "")
print(" ".join(sorted({str(l.get("finit_flags", 0)) for l in d["loads"]})))
for l in d["loads"]:
    print(l["file"])
' "$obs")
	extra=${info[0]}
	if [ "${info[1]}" != "$KP_RELEASE" ]; then
		echo "check-oracle: warning: $s was observed on ${info[1]}, kopolicy is told $KP_RELEASE" >&2
	fi
	args=(check --kernel "$KP_SYMVERS" --kernel-config "$KP_CONFIG" --kernel-release "$KP_RELEASE"
		--format json)
	if [ -n "$extra" ]; then
		if [ $HAS_CMDLINE = 0 ]; then
			echo "check-oracle: skip $s: needs kernel cmdline '$extra'; kopolicy check has no --kernel-cmdline" >&2
			SKIPPED=$((SKIPPED + 1))
			continue
		fi
		args+=(--kernel-cmdline "$extra")
	fi
	case ${info[2]} in
	0) ;;
	3) args+=(--force) ;;
	1) args+=(--force-modversion) ;;
	2) args+=(--force-vermagic) ;;
	*)
		echo "check-oracle: skip $s: its loads mix finit_module() flags (${info[2]}); kopolicy's --force options apply to every module" >&2
		SKIPPED=$((SKIPPED + 1))
		continue ;;
	esac
	# a signed module is judged against the certificates in the oracle kernel's own image
	for f in "${info[@]:3}"; do
		if tail -c 28 "$KP_ORACLE_FIXTURES/$f" 2>/dev/null |
			cmp -s - <(printf '~Module signature appended~\n'); then
			args+=(--kernel-image "$KP_VMLINUZ")
			break
		fi
	done
	# the module BTF scenarios: the kernel's BTF as btf-modules.sh left it beside the modules
	case $s in btf_*)
		[ -f "$KP_ORACLE_FIXTURES/vmlinux.btf.xz" ] &&
			args+=(--vmlinux-btf "$KP_ORACLE_FIXTURES/vmlinux.btf.xz")
	esac
	for f in "${info[@]:3}"; do
		args+=("$KP_ORACLE_FIXTURES/$f")
	done
	pred=$WORK/pred/$s.json
	krc=0
	"$KOPOLICY_BIN" "${args[@]}" >"$pred" 2>"$WORK/pred/$s.stderr" || krc=$?
	if ! python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$pred" 2>/dev/null; then
		echo "check-oracle: $s: kopolicy exited $krc without valid JSON; its stderr:" >&2
		sed 's/^/    /' "$WORK/pred/$s.stderr" | tail -n 20 >&2
	fi
	PAIRS+=("$obs" "$pred")
done

if [ ${#PAIRS[@]} -eq 0 ]; then
	echo "0 passed, 0 failed, $SKIPPED skipped"
	exit 0
fi
crc=0
out=$(python3 "$ORACLE_DIR/compare.py" "${CMP_OPTS[@]}" "${PAIRS[@]}") || crc=$?
[ $crc -le 1 ] || die "compare.py failed (exit $crc)"
total=$(printf '%s\n' "$out" | tail -n 1)
printf '%s\n' "$out" | sed '$d'
[[ $total =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]] || die "unexpected compare.py summary: $total"
echo "${BASH_REMATCH[1]} passed, ${BASH_REMATCH[2]} failed, $SKIPPED skipped"
[ "${BASH_REMATCH[2]}" = 0 ] || exit 1
