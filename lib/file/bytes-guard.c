// SPDX-License-Identifier: LGPL-2.1-or-later
/* The one file reader's SIGBUS guard (kp_bytes_guard(), bytes.h) for mapped modules. */
#include "bytes.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>

/*
 * SIGBUS on a mapped module (the file shrank under the mapping: a package upgrade
 * rewriting it in place) becomes an error of that file. The handler is installed once
 * per process; what it needs is the calling thread's own: the jump buffer and the mapped
 * range of the read in progress. A SIGBUS anywhere else keeps its default action.
 */
static __thread sigjmp_buf *bus_env;
static __thread const unsigned char *bus_lo, *bus_hi;
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;
static struct sigaction bus_prev; /* set once, before the handler can run */

static void bus_handler(int sig, siginfo_t *si, void *uc)
{
	const unsigned char *a = si ? si->si_addr : NULL;

	if (bus_env && a >= bus_lo && a < bus_hi)
		siglongjmp(*bus_env, 1);
	/* not a guarded read: whoever handled SIGBUS before (the hook), else the default */
	if ((bus_prev.sa_flags & SA_SIGINFO) && bus_prev.sa_sigaction) {
		bus_prev.sa_sigaction(sig, si, uc);
	} else if (bus_prev.sa_handler != SIG_DFL && bus_prev.sa_handler != SIG_IGN &&
		   bus_prev.sa_handler) {
		bus_prev.sa_handler(sig);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void bus_install(void)
{
	struct sigaction sa = { .sa_sigaction = bus_handler, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &bus_prev);
}

int kp_bytes_guard(const struct kp_bytes *b, int (*fn)(void *), void *arg, struct kp_err *err)
{
	/*
	 * A guard may run inside another of the same thread (the replay's, around the look-up
	 * of its manifest, whose threads include the caller: inputs-precheck.c): the outer
	 * one's jump buffer and range are put back when this one ends, either way.
	 */
	sigjmp_buf env, *const outer_env = bus_env;
	const unsigned char *const outer_lo = bus_lo, *const outer_hi = bus_hi;
	int r;

	if (!b->mapped)
		return fn(arg);
	pthread_once(&bus_once, bus_install);
	/*
	 * 0: the signal mask is not saved (that is a system call on every guarded read, and
	 * the facts cache guards one per module lookup); after the jump out of the handler
	 * SIGBUS is still blocked, so it is unblocked here, on the rare path.
	 */
	if (sigsetjmp(env, 0)) {
		sigset_t bus;

		bus_env = outer_env;
		bus_lo = outer_lo;
		bus_hi = outer_hi;
		sigemptyset(&bus);
		sigaddset(&bus, SIGBUS);
		pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
		return kp_err_set(err, "file shrank while being read (SIGBUS on its mapping)");
	}
	bus_lo = b->data;
	bus_hi = b->data + b->len;
	bus_env = &env;
	r = fn(arg);
	bus_env = outer_env;
	bus_lo = outer_lo;
	bus_hi = outer_hi;
	return r;
}
