// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kopolicy hook's deadline (cmd-hook.c): the undecided verdict written from a signal
 * handler when --timeout passes or a fatal signal comes.
 */
#include "config.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "hook-internal.h"

/*
 * The deadline. Whatever a library does meanwhile (libkmod looping on an index it
 * trusts, a file system that stalls), the hook answers within --timeout seconds: the
 * SIGALRM handler writes the verdict prepared when the alarm was armed and exits with
 * the on-error mode's status. Process-wide by nature (a signal handler): written once
 * before the alarm is armed, only read afterwards.
 */
static struct {
	char msg[PATH_MAX + 512];
	size_t len;
	char fault[PATH_MAX + 512]; /* the same for a fatal signal (SIGBUS, SIGSEGV) */
	size_t fault_len;
	int code;
} deadline;

static void deadline_hit(int sig)
{
	ssize_t n;

	/* async-signal-safe: write() and _exit() only */
	if (sig == SIGALRM)
		n = write(STDERR_FILENO, deadline.msg, deadline.len);
	else
		n = write(STDERR_FILENO, deadline.fault, deadline.fault_len);
	(void)n;
	_exit(deadline.code);
}

/* @buf: the undecided line for @why, escaped; its length. */
static size_t prepare(const struct hook *h, char *buf, size_t size, const char *why,
		      enum kp_hook_on_error mode, const char *from)
{
	FILE *m = fmemopen(buf, size - 1, "w");
	size_t len;

	if (!m)
		return 0;
	setvbuf(m, NULL, _IONBF, 0);
	kp_escaped_fprintf(
		m, "kopolicy: %s: cannot decide: %s; %s (on-error %s, %s)\n", h->asked, why,
		mode == KP_HOOK_FAIL_CLOSED ? "blocking the load" : "letting the load go on",
		kp_hook_on_error_name(mode), from);
	len = (size_t)ftell(m);
	fclose(m);
	return len;
}

void hook_arm_deadline(struct hook *h)
{
	char from[PATH_MAX + 32], why[64];
	enum kp_hook_on_error mode = hook_on_error_mode(h, from, sizeof(from));
	struct sigaction sa = { .sa_handler = deadline_hit };

	deadline.code = mode == KP_HOOK_FAIL_CLOSED ? KP_EXIT_ERROR : KP_EXIT_OK;
	sigemptyset(&sa.sa_mask);
	/*
	 * A fatal signal (a file truncated under a mapping libkmod holds, a bug) is one more
	 * undecidable case, not a death that would block the load whatever the on-error mode.
	 */
	deadline.fault_len =
		prepare(h, deadline.fault, sizeof(deadline.fault),
			"kopolicy crashed or a file changed under it (fatal signal)", mode, from);
	if (deadline.fault_len) {
		sigaction(SIGBUS, &sa, NULL);
		sigaction(SIGSEGV, &sa, NULL);
	}
	if (!h->timeout)
		return;
	snprintf(why, sizeof(why), "no answer within %u s (timeout)", h->timeout);
	deadline.len = prepare(h, deadline.msg, sizeof(deadline.msg), why, mode, from);
	if (deadline.len && sigaction(SIGALRM, &sa, NULL) == 0)
		alarm(h->timeout);
}
