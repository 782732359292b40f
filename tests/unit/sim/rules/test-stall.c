// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * stall.c and what an oops leaves for the loads after it (the oracle's strtab_guard_then,
 * strtab_page_then_same, strtab_defpage_then_same and 5.10's strtab_page_then):
 *  - an import name starting in the guard page (resolve.c): find_symbol() faults holding
 *    module_mutex before v6.13; every later load blocks in mutex_lock() (add_unformed_module()
 *    before v6.4, early_mod_check() from v6.4), unless it fails before that point;
 *  - an oops after add_unformed_module() leaves the module UNFORMED: a later load of the same
 *    name waits for it for ever (duplicate.c), another name loads;
 *  - layout_symtab()'s oops comes before add_unformed_module(): the same name loads again;
 *  - after a hang (5.10's kernel-hang) no later load runs.
 */
#include <errno.h>
#include <string.h>

#include "builder.h"

/* "m" of a 5128-byte file (the 6.1 kp_strtab_guard's size) importing msleep, named at @off */
static struct kp_module *guard_module(struct tb_world *w, const char *release, uint64_t off,
				      bool weak)
{
	struct kp_module *m;

	tb_init(w, release);
	tb_std_kernel(w);
	m = tb_module(w, "m");
	tb_import_name_outside(m, 5128, off, weak);
	return m;
}

static void guard_then(struct tap *t, const char *release, const char *where)
{
	struct tb_world w;
	const struct kp_finding *f;

	guard_module(&w, release, 8192 + 16, false);
	tb_module(&w, "b");
	tb_run(&w);
	tap_ok(t, tb_v(&w, "m")->err == KP_ERR_OOPS && tb_v(&w, "m")->holds_module_mutex,
	       "%s: the name starts in the guard page: an oops holding module_mutex", release);
	tb_is_text(t, tb_dmesg(&w, "m"),
		   "BUG: unable to handle page fault for address: (past the module image)",
		   "the fault line, no Unknown symbol line");
	tap_is_str(t, tb_findings(&w, "m"), "bad-symbol-strtab,kernel-oops",
		   "kernel-oops and the malformed-table warning");
	f = tb_finding(&w, "m", "bad-symbol-strtab");
	tap_ok(t, f && strstr(f->message, "malformed") && !strstr(f->message, "init_on_alloc"),
	       "the warning names the malformation only");
	f = tb_finding(&w, "m", "kernel-oops");
	tap_ok(t,
	       f && f->severity == KP_SEV_ERROR && f->consequence == KP_CONS_LOAD_FAIL &&
		       strstr(f->message, "symbol 1 starts at byte 8208 of a 5128-byte file") &&
		       strstr(f->message, "module_mutex"),
	       "%s: kernel-oops names the offset and module_mutex", release);
	tap_ok(t, tb_v(&w, "b")->err == KP_ERR_BLOCKED, "%s: b blocks", release);
	tap_ok(t, !tb_v(&w, "b")->loads && tb_v(&w, "b")->stalled_by == tb_node(&w, "m"),
	       "%s: b does not load, stalled by m", release);
	tap_is_str(t, tb_findings(&w, "b"), "loader-blocked", "loader-blocked");
	f = tb_finding(&w, "b", "loader-blocked");
	tap_ok(t, f && strstr(f->message, where) && strstr(f->message, "state D"),
	       "%s: b sleeps in mutex_lock() in %s", release, where);
	tb_is_text(t, tb_dmesg(&w, "b"), "", "b: the kernel says nothing");
	tap_is_str(t, kp_errno_name(KP_ERR_BLOCKED), "BLOCKED", "errno name BLOCKED");
	tb_free(&w);

	/* a weak import is looked up the same way */
	guard_module(&w, release, 8192 + 16, true);
	tb_run(&w);
	tap_ok(t, tb_v(&w, "m")->err == KP_ERR_OOPS && tb_v(&w, "m")->holds_module_mutex,
	       "%s: a weak import's name in the guard page oopses too", release);
	tb_free(&w);
}

static void guard_other(struct tap *t)
{
	struct tb_world w;
	const struct kp_finding *f;

	/* v6.13+ refuses the module first (elf_validity_cache_strtab()); b loads */
	guard_module(&w, "7.2.13", 8192 + 16, false);
	tb_module(&w, "b");
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, -ENOEXEC, "7.2: symbol name out of bounds: ENOEXEC");
	tap_ok(t, tb_v(&w, "b")->loads, "7.2: b loads");
	tb_free(&w);

	/* the rest of the last page (zeroed): the empty name, not found; b loads */
	guard_module(&w, "6.1.129", 5128 + 16, false);
	tb_module(&w, "b");
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "m")->err, -ENOENT, "6.1: rest of the page: ENOENT");
	tap_ok(t, !tb_finding(&w, "m", "kernel-oops") && tb_v(&w, "b")->loads, "no oops, b loads");
	tb_free(&w);

	/* past the guard page: a warning, the load judged on */
	guard_module(&w, "6.1.129", 3 * 4096, false);
	tb_run(&w);
	f = tb_finding(&w, "m", "kernel-oops");
	tap_ok(t,
	       tb_v(&w, "m")->err == -ENOENT && f && f->severity == KP_SEV_WARNING &&
		       !tb_v(&w, "m")->holds_module_mutex,
	       "6.1: beyond the guard page: a kernel-oops warning, ENOENT");
	tb_free(&w);

	/* a load that fails before the lock is taken still fails as it would */
	guard_module(&w, "6.12.37", 8192 + 16, false);
	w.facts.vermagic = "6.12.0 SMP mod_unload "; /* m's, the builder's default */
	tb_module(&w, "b")->vermagic = "6.12.0 SMP preempt mod_unload ";
	tb_run(&w);
	tap_is_int(t, tb_v(&w, "b")->err, -ENOEXEC, "6.12: b's vermagic is refused first");
	tap_ok(t, !tb_finding(&w, "b", "loader-blocked"), "not blocked");
	tb_free(&w);
}

/* "m" of an 8192-byte file whose import's name runs to its end (the strtab_page shape) */
static void page_module(struct tb_world *w, const char *release)
{
	tb_init(w, release);
	tb_std_kernel(w);
	tb_import_name_past_end(tb_module(w, "m"), 8192, "kp_name_page");
}

static void unformed(struct tap *t, const char *release, const char *where)
{
	struct tb_world w;
	const struct kp_finding *f;

	page_module(&w, release);
	tb_module(&w, "m");
	tb_module(&w, "b");
	tb_run(&w);
	tap_ok(t,
	       w.sim.v[0].err == KP_ERR_OOPS && w.sim.v[0].left_unformed &&
		       !w.sim.v[0].holds_module_mutex,
	       "%s: the printk oops leaves m UNFORMED, module_mutex free", release);
	tap_ok(t, w.sim.v[1].err == KP_ERR_BLOCKED, "%s: the second m waits for it", release);
	f = tb_finding(&w, "b", "loader-blocked");
	tap_ok(t, !f && tb_v(&w, "b")->loads, "%s: another name loads", release);
	f = NULL;
	for (size_t i = 0; i < w.sim.v[1].nfindings; i++)
		if (!strcmp(w.sim.v[1].findings[i].id, "loader-blocked"))
			f = &w.sim.v[1].findings[i];
	tap_ok(t,
	       f && strstr(f->message, "MODULE_STATE_UNFORMED") && strstr(f->message, where) &&
		       w.sim.v[1].stalled_by == 0,
	       "%s: loader-blocked names the UNFORMED module and %s", release, where);
	tb_free(&w);

	/* layout_symtab()'s oops comes before add_unformed_module(): nothing is left */
	tb_init(&w, release);
	tb_std_kernel(&w);
	{
		struct kp_module *m = tb_module(&w, "m");

		m->image_size = 8192;
		m->symname_past_end = 1;
		m->kept_name_past_end = 10;
	}
	tb_module(&w, "m");
	tb_run(&w);
	tap_ok(t, w.sim.v[0].err == KP_ERR_OOPS && !w.sim.v[0].left_unformed && w.sim.v[1].loads,
	       "%s: after layout_symtab()'s oops the same name loads", release);
	tb_free(&w);
}

static void hung(struct tap *t)
{
	struct tb_world w;
	const struct kp_finding *f;

	page_module(&w, "5.10.223");
	tb_module(&w, "b");
	tb_run(&w);
	tap_ok(t, tb_v(&w, "m")->hangs, "5.10: m hangs the machine");
	tap_is_int(t, tb_v(&w, "b")->err, KP_ERR_NOT_RUN, "5.10: b never runs");
	tap_is_str(t, tb_findings(&w, "b"), "machine-hung", "machine-hung only");
	f = tb_finding(&w, "b", "machine-hung");
	tap_ok(t, f && f->severity == KP_SEV_ERROR && strstr(f->message, "while loading m"),
	       "machine-hung names m");
	tap_ok(t,
	       !tb_v(&w, "b")->loads && tb_v(&w, "b")->taints == 0 &&
		       tb_v(&w, "b")->global_added == 0 && tb_v(&w, "b")->nmessages == 0,
	       "b: no taint, no line");
	tap_is_str(t, kp_errno_name(KP_ERR_NOT_RUN), "NOT-RUN", "errno name NOT-RUN");
	tb_free(&w);
}

int main(void)
{
	struct tap t = { 0 };

	guard_then(&t, "5.10.223", "add_unformed_module()");
	guard_then(&t, "6.1.129", "add_unformed_module()");
	guard_then(&t, "6.12.37", "early_mod_check()");
	guard_other(&t);
	unformed(&t, "6.1.129", "add_unformed_module()");
	unformed(&t, "6.12.37", "module_patient_check_exists()");
	hung(&t);
	return tap_done(&t);
}
