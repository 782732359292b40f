#!/bin/bash
# bench/boot/report.sh — the guest side of bench/bench-boot.sh (kpbench-report.service).
# All times are CLOCK_MONOTONIC seconds since boot: /proc/uptime, systemd's *Monotonic
# timestamps, the kernel's trace buffer (trace_clock=mono on the command line) and
# hook-timer's log share that clock. Output lines, between KPBENCH-BEGIN and KPBENCH-END:
#   settle <s>            udevadm settle returned (the coldplug queue empty)
#   unit <name> <start_us> <exit_us> <result>   systemd's timestamps of a unit
#   load <s> <module>     the kernel's module_load trace event (load_module(), before init)
#   hook ...              hook-timer's lines (kpbench.hook=1, null or rules)
#   warmed <s>            the warm-up boot's modprobe -a of the list returned
#   lsmod <n>             modules loaded when the boot finished
#   oom_kill <n>          processes the OOM killer killed
#   running <state>       systemctl is-system-running --wait
#   analyze <text>        systemd-analyze time
#   fail <text>           modules systemd-modules-load could not load
#   hookmsg <text>        what kopolicy hook printed (its "kopolicy: ..." lines, journal)
#   taint <module> <t>    /sys/module/<module>/taint of the out-of-tree modules
out=/dev/ttyS0
udevadm settle --timeout=1200
settle=$(cut -d' ' -f1 /proc/uptime)
# The warm-up boot (kpbench.warmup=1, writable disk) also loads, through the install rules,
# whatever of the list was not loaded yet (systemd-modules-load may have timed out), so that
# the hook's facts cache holds every module the measured boots load.
if grep -qw kpbench.warmup=1 /proc/cmdline; then
	cat /etc/modules-load.d/kpbench-oot.conf /etc/modules-load.d/kpbench.conf 2>/dev/null |
		grep -v '^#' | xargs modprobe -a -q 2>/dev/null
	warmed=$(cut -d' ' -f1 /proc/uptime)
fi
state=$(systemctl is-system-running --wait 2>/dev/null)
{
	echo "KPBENCH-BEGIN"
	echo "cmdline $(cat /proc/cmdline)"
	echo "settle $settle"
	[ -n "${warmed:-}" ] && echo "warmed $warmed"
	for u in systemd-udevd systemd-udev-trigger systemd-modules-load kpbench-hook kpbench-off \
		kpbench-rules; do
		echo "unit $u $(systemctl show -P ExecMainStartTimestampMonotonic $u.service)" \
			"$(systemctl show -P ExecMainExitTimestampMonotonic $u.service)" \
			"$(systemctl show -P Result $u.service)"
	done
	sed -n 's/^.* \([0-9][0-9]*\.[0-9]*\): module_load: \([^ ]*\).*$/load \1 \2/p' \
		/sys/kernel/tracing/trace
	[ -r /run/kpbench/hook.log ] && cat /run/kpbench/hook.log
	echo "lsmod $(($(wc -l </proc/modules)))"
	echo "oom_kill $(awk '$1 == "oom_kill" { print $2 }' /proc/vmstat)"
	echo "running $state"
	systemd-analyze time 2>&1 | sed 's/^/analyze /'
	journalctl -b -o cat -u systemd-modules-load.service 2>/dev/null | grep -i fail |
		sed 's/^/fail /'
	journalctl -b -o cat 2>/dev/null | grep '^kopolicy: ' | sed 's/^/hookmsg /'
	while read -r m; do
		echo "taint $m $(cat "/sys/module/$m/taint" 2>/dev/null || echo -)"
	done < <(grep -v '^#' /etc/modules-load.d/kpbench-oot.conf 2>/dev/null)
	echo "KPBENCH-END"
} >"$out" 2>&1
systemctl poweroff
