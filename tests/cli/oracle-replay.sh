#!/usr/bin/env bash
# Replays the QEMU oracle's recorded kernel behaviour (tests/oracle/observed/<series>/*.json)
# against kopolicy's predictions for the committed fixture binaries (fixtures/ko/<series>/),
# without booting anything: one TAP test per scenario and kernel.
# The binaries are the ones the oracle loaded (reproducible builds, same kernel ABI); a
# scenario whose modules are not committed for that series yet is skipped.
# A scenario whose boot's serial console log is committed (tests/oracle/testdata/serial/
# <series>/<scenario>.serial, run-oracle.sh KP_ORACLE_KEEP=1) is judged on the log itself:
# parse-serial.py turns it into the observation, which must equal the committed JSON.
set -uo pipefail

top=${srcdir:-.}
kopolicy=${KOPOLICY:-./src/kopolicy}
. "$top/tests/lib/tap.sh"
tmpd=$(mktemp -d)
trap 'rm -rf "$tmpd"' EXIT

while IFS='|' read -r name kernels cmdline modules; do
	name=$(echo "$name" | xargs)
	[ -z "$name" ] && continue
	case $name in \#*) continue ;; esac
	kernels=$(echo "$kernels" | tr "," " " | xargs) # "all", "built" or a comma list
	cmdline=$(echo "$cmdline" | xargs)
	for series in 7.2 6.12 6.1 5.10; do
		obs=$top/tests/oracle/observed/$series/$name.json
		dir=$top/fixtures/ko/$series
		[ -f "$obs" ] || continue
		# SERIES=hang: observed once with run-oracle.sh --record-hang (the guest hangs)
		case " $kernels " in *" all "*|*" built "*|*" $series "*|*" $series=hang "*) ;;
		*) continue ;; esac
		rel=$(sed -n 's/^release=//p' "$dir/kernel.txt")
		files=()
		missing=
		force=
		for t in $modules; do
			# force:, force-modversion:, force-vermagic: loaded with modprobe --force's
			# finit_module() flags; kopolicy gets the same option (one for all modules)
			case $t in
			*:*) force=--${t%%:*} ;;
			esac
			m=${t#*:}
			# sig/: the signature scenarios' modules, derived from the kernel package's own
			# dummy.ko by tests/oracle/sig-modules.sh
			f=$dir/$m.ko
			[ -f "$f" ] || [ ! -f "$dir/sig/$m.ko" ] || f=$dir/sig/$m.ko
			# btf/: the module BTF scenarios' modules (tests/oracle/btf-modules.sh)
			[ -f "$f" ] || [ ! -f "$dir/btf/$m.ko" ] || f=$dir/btf/$m.ko
			# strtab/: the symbol-name scenarios' modules (tests/oracle/strtab-modules.py)
			[ -f "$f" ] || [ ! -f "$dir/strtab/$m.ko" ] || f=$dir/strtab/$m.ko
			files+=("$f")
			[ -f "$f" ] || missing="$missing $m.ko"
		done
		if [ -n "$missing" ]; then
			# a scenario newer than the committed binaries (fixtures/ko/update.sh adds them)
			n=$((n + 1))
			echo "ok $n - $series $name # SKIP not in fixtures/ko/$series:$missing"
			continue
		fi
		args=(check --format json -k "$dir/Module.symvers.gz" --kernel-config "$dir/config.gz"
		      --kernel-release "$rel")
		[ -n "$cmdline" ] && args+=(--kernel-cmdline "$cmdline")
		[ -n "$force" ] && args+=("$force")
		# the certificates of the oracle kernel's image (tests/oracle/kernel-certs.py)
		[ -f "$dir/sig/kernel-certs.pem" ] && args+=(--trusted-cert "$dir/sig/kernel-certs.pem")
		# the kernel's BTF (btf-modules.sh) for the module BTF scenarios (only there: its
		# decompression and parsing would slow every other replay)
		case $name in btf_*)
			[ -f "$dir/btf/vmlinux.btf.xz" ] && args+=(--vmlinux-btf "$dir/btf/vmlinux.btf.xz")
		esac
		n=$((n + 1))
		serial=$top/tests/oracle/testdata/serial/$series/$name.serial
		if [ -f "$serial" ]; then
			# the modules as run-oracle.sh names them: FILE=<.gnu.linkonce.this_module name>
			named=()
			for f in "${files[@]}"; do
				named+=("$(basename "$f")=$(python3 "$top/fixtures/edit-ko.py" "$f" --show |
					sed -n 's/^this_module	//p')")
			done
			abi=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kernel"]["abi"])' "$obs")
			parsed=$tmpd/$series-$name.json
			if ! python3 "$top/tests/oracle/parse-serial.py" --log "$serial" --scenario "$name" \
				--series "$series" --abi "$abi" --extra-cmdline "$cmdline" --out "$parsed" \
				"${named[@]}" ||
				! python3 -c 'import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:])
sys.exit(a != b)' "$parsed" "$obs"; then
				echo "not ok $n - $series $name: its serial log does not parse to $obs"
				fail=$((fail + 1))
				continue
			fi
			obs=$parsed
		fi
		pred=$("$kopolicy" "${args[@]}" "${files[@]}" 2>&1)
		rc=$?
		if [ $rc -gt 1 ]; then
			echo "not ok $n - $series $name: kopolicy exited $rc"
			echo "$pred" | sed 's/^/# /'
			fail=$((fail + 1))
			continue
		fi
		if out=$(python3 "$top/tests/oracle/compare.py" "$obs" <(echo "$pred") 2>&1); then
			echo "ok $n - $series $name"
		else
			echo "not ok $n - $series $name"
			echo "$out" | sed 's/^/# /'
			fail=$((fail + 1))
		fi
	done
done < "$top/tests/oracle/scenarios.txt"
tap_done
