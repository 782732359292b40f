// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kopolicy hook: run from a modprobe.d install line, judge the load modprobe is
 * about to do against the running kernel and the modules already loaded, print
 * the verdict to stderr and, by policy (kopolicy.conf(5)), exit non-zero to
 * block it. Reads only the chain's modules and the indexes; never writes.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "policy/hook-policy.h"
#include "kernel/kernel-tree.h"
#include "kernel/modprobe-chain.h"
#include "kernel/running.h"
#include "kernel/rootfs.h"

enum {
	OPT_ON_ERROR = 0x300,
	OPT_PRINT_RULES,
	OPT_READ_IN_TREE,
	OPT_TIMEOUT,
};

#define DEFAULT_TIMEOUT 10 /* seconds: the hook answers within this whatever libraries do */

#define DEFAULT_POLICY "etc/kopolicy/hook.conf"

struct hook {
	struct kp_cli *cli;
	const char *root; /* NULL: this machine */
	const char *config;
	const char *asked; /* MODULE as given */
	bool verbose;
	bool read_in_tree; /* read in-tree dependencies too, not only Module.symvers' lines */
	bool on_error_given;
	enum kp_hook_on_error on_error_cli;
	unsigned timeout; /* seconds, 0: none */

	struct kp_hook_policy policy;
	bool policy_bad; /* the file was refused: only --on-error counts */
	struct kp_running live;
	bool have_live;
	struct kp_tree tree;
	bool have_tree;
	struct kp_chain chain;
	bool have_chain;
	struct kp_analysis a;
	struct kp_symset wanted;      /* every symbol the chain can look up */
	struct kp_module **providers; /* loaded modules read for their exports */
	size_t nproviders, providers_cap;
	const char *exports_from; /* where vmlinux's exports came from */
	bool base_has_modules;	  /* Module.symvers: in-tree modules' exports too */
	bool skip_in_tree;	  /* in-tree dependencies not loaded are not read */
	bool *in_set;		  /* per chain module: read into the set */
};

static void hook_usage(FILE *f)
{
	fputs("Usage: kopolicy hook [OPTIONS] MODULE [MODULE-PARAMETERS...]\n"
	      "       kopolicy hook --print-install-rules [OPTIONS]\n"
	      "Judge the load modprobe is about to do: resolve MODULE and its dependencies like\n"
	      "modprobe, predict the load against the running kernel and the modules already\n"
	      "loaded, print the verdict to stderr and exit non-zero if the policy blocks it.\n"
	      "Meant for a modprobe.d install line (see kopolicy.conf(5)); MODULE defaults to\n"
	      "$MODPROBE_MODULE:\n"
	      "  install MOD kopolicy hook $MODPROBE_MODULE $CMDLINE_OPTS && "
	      "modprobe --ignore-install $MODPROBE_MODULE $CMDLINE_OPTS\n"
	      "\n"
	      "  -c, --config FILE    policy file (default ROOT/etc/kopolicy/hook.conf; none:\n"
	      "                       warn about everything, block nothing)\n"
	      "      --on-error MODE  fail-open (default) or fail-closed when kopolicy cannot\n"
	      "                       decide; the policy file's on-error lines take precedence\n"
	      "      --root DIR       judge the system under DIR (modules tree, proc, sys, etc)\n"
	      "                       (--running is implied; --basedir does not apply)\n"
	      "      --timeout SECS   answer within SECS seconds whatever happens, applying\n"
	      "                       the on-error mode (default 10; 0: no deadline)\n"
	      "      --read-in-tree   also read in-tree dependencies that are not loaded yet\n"
	      "                       (default: Module.symvers describes them; slower)\n"
	      "  -v, --verbose        also show the chain, each module's outcome and the\n"
	      "                       kernel's predicted messages\n"
	      "      --print-install-rules  print modprobe.d install lines for the out-of-tree\n"
	      "                       modules of the release (updates/, extra/, DKMS)\n"
	      "\n" KP_ANALYSIS_HELP "\n"
	      "Exit status: 0 let the load go on, 1 blocked by the policy, 2 kopolicy could not\n"
	      "decide and the policy fails closed, or a usage error.\n",
	      f);
}

static void say(const struct hook *h, const char *fmt, ...) kp_printf_fmt(2, 3);
static void say(const struct hook *h, const char *fmt, ...)
{
	va_list ap;

	/* Every line one line: paths, names and messages escaped (kp_escape_write()). */
	kp_escaped_fprintf(stderr, "kopolicy: %s: ", h->asked ? h->asked : "hook");
	va_start(ap, fmt);
	kp_escaped_vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Where a decision came from, for the end of a verdict line. */
static void source_of(const struct hook *h, size_t line, char *buf, size_t len)
{
	if (line)
		snprintf(buf, len, "%s:%zu", h->policy.path, line);
	else
		snprintf(buf, len, "default policy");
}

/* The on-error mode of the module asked for, and where it comes from (into @from). */
static enum kp_hook_on_error on_error_mode(const struct hook *h, char *from, size_t len)
{
	enum kp_hook_on_error mode = h->on_error_given ? h->on_error_cli : KP_HOOK_FAIL_OPEN;
	size_t line = 0;

	snprintf(from, len, "default");
	if (!h->policy_bad) {
		enum kp_hook_on_error m = kp_hook_policy_on_error(&h->policy, h->asked, &line);

		if (line) {
			mode = m;
			source_of(h, line, from, len);
		}
	}
	if (!line && h->on_error_given)
		snprintf(from, len, "--on-error");
	return mode;
}

/* kopolicy cannot decide: say why and apply the on-error mode of the module asked for. */
static int undecided(struct hook *h, const char *fmt, ...) kp_printf_fmt(2, 3);
static int undecided(struct hook *h, const char *fmt, ...)
{
	char why[1024], from[PATH_MAX + 32];
	enum kp_hook_on_error mode = on_error_mode(h, from, sizeof(from));
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	say(h, "cannot decide: %s; %s (on-error %s, %s)", why,
	    mode == KP_HOOK_FAIL_CLOSED ? "blocking the load" : "letting the load go on",
	    kp_hook_on_error_name(mode), from);
	return mode == KP_HOOK_FAIL_CLOSED ? KP_EXIT_ERROR : KP_EXIT_OK;
}

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

static void arm_deadline(struct hook *h)
{
	char from[PATH_MAX + 32], why[64];
	enum kp_hook_on_error mode = on_error_mode(h, from, sizeof(from));
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

/* ------------------------------------------------------------------ reading */

static int want(struct hook *h, const char *sym)
{
	return sym ? kp_symset_add(&h->wanted, sym) : 0;
}

static int collect_wanted(struct hook *h)
{
	if (want(h, "module_layout") < 0)
		return -1;
	for (size_t i = 0; i < h->a.set.n; i++) {
		const struct kp_module *m = h->a.set.entries[i].mod;

		for (size_t j = 0; j < m->nimports; j++)
			if (want(h, m->imports[j].name) < 0)
				return -1;
		for (size_t j = 0; j < m->nexports; j++)
			if (want(h, m->exports[j].name) < 0)
				return -1;
		for (size_t j = 0; j < m->nsymget; j++)
			if (want(h, m->symget[j].symbol) < 0)
				return -1;
	}
	return 0;
}

/* The kernel's exports: explicit --kernel files, else Module.symvers, else /proc/kallsyms. */
static int load_exports(struct hook *h, char *why, size_t len)
{
	struct kp_err err = { "" };

	kp_base_free(h->a.base);
	h->a.base = NULL;
	if (kp_base_new(&h->a.base) < 0) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	if (h->a.nkernels) {
		for (size_t i = 0; i < h->a.nkernels; i++)
			if (kp_base_load(h->a.base, h->a.kernels[i], &err) < 0) {
				snprintf(why, len, "%s", err.msg);
				return -1;
			}
		struct kp_base_stats st;

		kp_base_stats(h->a.base, &st);
		h->exports_from = h->a.kernels[0];
		h->base_has_modules = st.nmodule > 0;
	} else if (h->tree.symvers_path) {
		if (kp_chain_load_exports(h->a.base, h->tree.symvers_path, false, &h->wanted,
					  &err) < 0) {
			snprintf(why, len, "%s", err.msg);
			return -1;
		}
		h->exports_from = h->tree.symvers_path;
		h->base_has_modules = true;
	} else {
		char *ks = kp_root_path(h->root, "proc/kallsyms");

		if (!ks || kp_chain_load_exports(h->a.base, ks, true, &h->wanted, &err) < 0) {
			snprintf(why, len,
				 "no kernel exports: no Module.symvers for %s (install "
				 "linux-headers-%s or give --kernel) and %s",
				 h->live.release, h->live.release, ks ? err.msg : "out of memory");
			free(ks);
			return -1;
		}
		free(ks);
		h->exports_from = "/proc/kallsyms";
	}
	if (kp_base_set_release(h->a.base, h->live.release, &err) < 0) {
		snprintf(why, len, "%s", err.msg);
		return -1;
	}
	return 0;
}

static bool is_provider(const struct hook *h, const char *name)
{
	for (size_t i = 0; i < h->nproviders; i++)
		if (!strcmp(h->providers[i]->name, name))
			return true;
	return false;
}

static int add_provider(struct hook *h, const char *name, const char *path, char *why, size_t len)
{
	struct kp_open_opts oo = { .max_size = h->cli->max_size,
				   .cache = kp_cli_facts_cache(h->cli) };
	struct kp_err err = { "" };
	size_t need = h->nproviders + 1;
	struct kp_module *m;

	if (kp_grow(&h->providers, &h->providers_cap, need, sizeof(*h->providers)) < 0) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	if (kp_module_open(path, &oo, &m, &err) < 0) {
		snprintf(why, len, "cannot read loaded module %s: %s", name, err.msg);
		return -1;
	}
	h->providers[h->nproviders++] = m;
	return 0;
}

static bool base_has(const struct kp_kernel_base *b, const char *sym, const char *modname)
{
	for (const struct kp_ksym *k = kp_base_lookup_owner(b, sym, NULL); k;
	     k = kp_base_next_same_name(b, k)) {
		char own[64];

		if (k->vmlinux)
			continue;
		kp_base_owner_modname(k->owner, own, sizeof(own));
		if (!strcmp(own, modname))
			return true;
	}
	return false;
}

static const char *export_word(const struct kp_export *e)
{
	if (e->table == KP_KSYMTAB_UNUSED_GPL)
		return "EXPORT_UNUSED_SYMBOL_GPL";
	if (e->gpl_only)
		return "EXPORT_SYMBOL_GPL";
	switch (e->table) {
	case KP_KSYMTAB_GPL_FUTURE:
		return "EXPORT_SYMBOL_GPL_FUTURE";
	case KP_KSYMTAB_UNUSED:
		return "EXPORT_UNUSED_SYMBOL";
	default:
		return "EXPORT_SYMBOL";
	}
}

/* The exports of loaded modules the base does not know, as Module.symvers lines. */
static int load_provider_exports(struct hook *h, char *why, size_t len)
{
	struct kp_err err = { "" };
	char *buf = NULL;
	size_t blen = 0, bcap = 0;
	int r = 0;

	for (size_t i = 0; i < h->nproviders && r == 0; i++) {
		const struct kp_module *m = h->providers[i];

		for (size_t j = 0; j < m->nexports && r == 0; j++) {
			const struct kp_export *e = &m->exports[j];
			size_t need = strlen(e->name) + 2 * strlen(m->name) +
				      (e->ns ? strlen(e->ns) : 0) + 64;
			int n;

			if (base_has(h->a.base, e->name, m->name))
				continue;
			if (kp_grow(&buf, &bcap, blen + need, 1) < 0) {
				r = -1;
				break;
			}
			n = snprintf(buf + blen, bcap - blen, "0x%08x\t%s\tloaded/%s\t%s\t%s\n",
				     e->has_crc ? e->crc : 0, e->name, m->name, export_word(e),
				     e->ns ? e->ns : "");
			if (n < 0 || (size_t)n >= bcap - blen)
				r = -1;
			else
				blen += (size_t)n;
		}
	}
	if (r < 0) {
		free(buf);
		snprintf(why, len, "out of memory");
		return -1;
	}
	if (blen && kp_base_load_symvers_buffer(h->a.base, "loaded modules",
						(const unsigned char *)buf, blen, &err) < 0) {
		snprintf(why, len, "%s", err.msg);
		r = -1;
	}
	free(buf);
	return r;
}

static bool set_exports(const struct hook *h, const char *sym)
{
	for (size_t i = 0; i < h->a.set.n; i++) {
		const struct kp_module *m = h->a.set.entries[i].mod;

		for (size_t j = 0; m && j < m->nexports; j++)
			if (!strcmp(m->exports[j].name, sym))
				return true;
	}
	return false;
}

/*
 * Loaded modules whose exports matter: the chain's loaded dependencies the base does
 * not describe, and the loaded owners of symbol_get() targets (modules.symbols).
 */
static int read_providers(struct hook *h, char *why, size_t len)
{
	struct kp_err err = { "" };

	for (size_t i = 0; i < h->chain.n; i++) {
		const struct kp_chain_module *cm = &h->chain.mods[i];

		if (cm->builtin || !kp_running_find(&h->live, cm->name) || is_provider(h, cm->name))
			continue;
		if (h->base_has_modules && !strncmp(cm->relpath, "kernel/", 7))
			continue;
		if (add_provider(h, cm->name, cm->path, why, len) < 0)
			return -1;
	}
	for (size_t i = 0; i < h->a.set.n; i++) {
		const struct kp_module *m = h->a.set.entries[i].mod;

		for (size_t j = 0; j < m->nsymget; j++) {
			const char *sym = m->symget[j].symbol, *owner, *path, *rel;
			int r;

			if (!sym || kp_base_lookup_owner(h->a.base, sym, NULL) ||
			    set_exports(h, sym))
				continue;
			r = kp_chain_symbol_owner(&h->chain, sym, &owner, &err);
			if (r == -ENOENT)
				continue;
			if (r < 0) {
				snprintf(why, len, "%s", err.msg);
				return -1;
			}
			if (!kp_running_find(&h->live, owner) || is_provider(h, owner))
				continue;
			r = kp_chain_module_path(&h->chain, owner, &path, &rel, &err);
			if (r == -ENOENT)
				continue;
			if (r < 0 || add_provider(h, owner, path, why, len) < 0) {
				if (r < 0)
					snprintf(why, len, "%s", err.msg);
				return -1;
			}
		}
	}
	return load_provider_exports(h, why, len);
}

/* The target kernel: the running one, with any explicit overrides given. */
static int build_facts(struct hook *h, char *why, size_t len)
{
	struct kp_kernel_facts *f = &h->a.facts;
	struct kp_facts_opts *o = &h->a.fo;
	struct kp_err err = { "" };
	const char **loaded, **prop;
	char *procfg = NULL;
	size_t np = 0;

	o->release = h->live.release;
	if (!o->config_path && h->tree.config_path) {
		o->config_path = h->tree.config_path;
	} else if (!o->config_path) {
		procfg = kp_root_path(h->root, "proc/config.gz");
		if (procfg && kp_is_file(procfg))
			o->config_path = procfg;
	}
	if (o->sig_enforce < 0 && h->live.sig_enforce >= 0)
		o->sig_enforce = h->live.sig_enforce;
	if (o->lockdown < 0 && h->live.lockdown)
		o->lockdown = strcmp(h->live.lockdown, "none") ? 1 : 0;
	if (!o->cmdline)
		o->cmdline = h->live.cmdline;
	if (kp_facts_build(f, o, h->a.base, &err) < 0) {
		if (o->config_path == procfg)
			o->config_path = NULL;
		free(procfg);
		snprintf(why, len, "%s", err.msg);
		return -1;
	}
	if (o->config_path == procfg)
		o->config_path = NULL;
	free(procfg);
	loaded = kp_arena_alloc(&f->arena, (h->live.nmodules + 1) * sizeof(*loaded));
	prop = kp_arena_alloc(&f->arena, (h->live.nmodules + 1) * sizeof(*prop));
	if (!loaded || !prop) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < h->live.nmodules; i++) {
		loaded[i] = h->live.modules[i].name;
		if (h->live.modules[i].proprietary)
			prop[np++] = h->live.modules[i].name;
	}
	f->loaded = loaded;
	f->nloaded = h->live.nmodules;
	f->loaded_proprietary = prop;
	f->nloaded_proprietary = np;
	f->initial_taint = h->live.have_tainted ? h->live.tainted : 0;
	return 0;
}

/* ------------------------------------------------------------------ verdict */

static const struct kp_finding *finding(const struct kp_verdict *v, const char *id)
{
	for (size_t i = 0; i < v->nfindings; i++)
		if (!strcmp(v->findings[i].id, id))
			return &v->findings[i];
	return NULL;
}

/* Why @v fails: its first load-failure finding, a failed dependency only last. */
static const char *failure_reason(const struct kp_verdict *v)
{
	const char *dep = NULL;

	for (size_t i = 0; i < v->nfindings; i++) {
		if (v->findings[i].consequence != KP_CONS_LOAD_FAIL)
			continue;
		if (strcmp(v->findings[i].id, "dependency-failed"))
			return v->findings[i].message;
		if (!dep)
			dep = v->findings[i].message;
	}
	return dep ? dep : "the kernel refuses it";
}

static bool is_target(const struct hook *h, const char *name)
{
	for (size_t i = 0; i < h->chain.n; i++)
		if (h->chain.mods[i].target && !strcmp(h->chain.mods[i].name, name))
			return true;
	return false;
}

/*
 * An in-tree dependency not loaded yet, left to Module.symvers: its exports and
 * their classes are there, and in-tree modules are never proprietary by license.
 */
static bool described(const struct hook *h, const struct kp_chain_module *cm)
{
	return h->skip_in_tree && !cm->target && !cm->builtin && !h->in_set[cm - h->chain.mods] &&
	       !strncmp(cm->relpath, "kernel/", 7);
}

static enum kp_hook_action consider(struct hook *h, const char *module, enum kp_hook_consequence c,
				    const char *what, const char *detail)
{
	char from[PATH_MAX + 32], subject[96] = "";
	size_t line;
	enum kp_hook_action act = kp_hook_policy_action(&h->policy, module, c, &line);

	if (act == KP_HOOK_IGNORE)
		return act;
	source_of(h, line, from, sizeof(from));
	if (!is_target(h, module) || strcmp(module, h->asked))
		snprintf(subject, sizeof(subject), "%s%s ",
			 is_target(h, module) ? "" : "dependency ", module);
	say(h, "%s: %s%s%s%s [%s, %s]", act == KP_HOOK_BLOCK ? "load blocked" : "warning", subject,
	    what ? what : "", what ? ": " : "", detail, kp_hook_consequence_name(c), from);
	return act;
}

static void print_chain(const struct hook *h)
{
	char letters[32];

	say(h, "kernel %s; exports from %s; %zu loaded modules; chain from %s:", h->live.release,
	    h->exports_from, h->live.nmodules,
	    h->chain.source == KP_CHAIN_LIBKMOD ? "libkmod (depmod indexes)"
						: "modules.dep (text)");
	for (size_t i = 0; i < h->chain.n; i++) {
		const struct kp_chain_module *cm = &h->chain.mods[i];
		const struct kp_loaded_module *lm = kp_running_find(&h->live, cm->name);

		say(h, "  %s %s%s%s%s%s%s", cm->name, cm->builtin ? "(built in)" : cm->relpath,
		    lm ? ", loaded, taint " : "", lm ? (*lm->taint ? lm->taint : "none") : "",
		    !lm && described(h, cm) ? ", not read (in-tree: Module.symvers)" : "",
		    cm->blacklisted ? ", blacklisted in modprobe.d" : "",
		    cm->target ? "" : " (dependency)");
	}
	for (size_t i = 0; i < h->a.keys.nsources; i++)
		say(h, "trusted keys: %s", h->a.keys.sources[i]);
	for (size_t i = 0; i < h->a.facts.nassumptions; i++)
		say(h, "assumed: %s", h->a.facts.assumptions[i]);
	for (size_t k = 0; k < h->a.graph.n; k++) {
		size_t i = h->a.graph.order[k];
		const struct kp_verdict *v = &h->a.sim.v[i];

		kp_taint_letters(v->taints, letters, sizeof(letters));
		if (v->loads)
			say(h, "%s: loads, module taint %s", h->a.graph.nodes[i].mod->name,
			    letters[0] ? letters : "none");
		else
			say(h, "%s: fails with %s", h->a.graph.nodes[i].mod->name,
			    kp_errno_name(v->err));
		for (size_t j = 0; j < v->nmessages; j++)
			say(h, "  kernel: %s", v->messages[j]);
		for (size_t j = 0; j < v->nsymget; j++)
			say(h, "  symbol_get(%s) = %s (%s)", v->symget[j].symbol,
			    v->symget[j].ok ? "ok" : "NULL", v->symget[j].reason);
	}
}

static int decide(struct hook *h)
{
	enum kp_hook_action worst = KP_HOOK_IGNORE;

	if (h->verbose)
		print_chain(h);
	for (size_t k = 0; k < h->a.graph.n; k++) {
		size_t i = h->a.graph.order[k];
		const struct kp_verdict *v = &h->a.sim.v[i];
		const char *name = h->a.graph.nodes[i].mod->name;
		const struct kp_finding *f;
		enum kp_hook_action act;
		char what[64];

		if (!v->loads) {
			snprintf(what, sizeof(what), "would fail to load with %s",
				 kp_errno_name(v->err));
			act = consider(h, name, KP_HOOK_LOAD_FAILURE, what, failure_reason(v));
			worst = act > worst ? act : worst;
		}
		if ((f = finding(v, "license-taint"))) {
			act = consider(h, name, KP_HOOK_PROPRIETARY, "is proprietary", f->message);
			worst = act > worst ? act : worst;
		}
		if ((f = finding(v, "inherit-taint"))) {
			act = consider(h, name, KP_HOOK_INHERIT_TAINT, "would inherit P",
				       f->message);
			worst = act > worst ? act : worst;
		}
		for (size_t j = 0; j < v->nfindings; j++) {
			if (strcmp(v->findings[j].id, "symbol-get-non-gpl"))
				continue;
			act = consider(h, name, KP_HOOK_SYMBOL_GET, NULL, v->findings[j].message);
			worst = act > worst ? act : worst;
		}
	}
	return worst == KP_HOOK_BLOCK ? KP_EXIT_FINDINGS : KP_EXIT_OK;
}

/* ------------------------------------------------------------------ the hook */

static int open_system(struct hook *h, char *why, size_t len)
{
	struct kp_err err = { "" };

	if (kp_running_open_opts(&h->live, h->root, h->a.fo.release, 0, &err) < 0) {
		snprintf(why, len, "%s", err.msg);
		return -1;
	}
	h->have_live = true;
	if (kp_tree_open(&h->tree, h->root, h->live.release, &err) < 0) {
		snprintf(why, len, "unknown kernel: %s", err.msg);
		return -1;
	}
	h->have_tree = true;
	/*
	 * The running kernel's keys as /proc/keys lists them, --kernel-image, --trusted-cert
	 * (not the installed vmlinuz: decompressing it costs seconds on every modprobe).
	 */
	if (!h->a.no_kernel_keys && kp_keyring_add_proc_keys(&h->a.keys, h->root, &err) < 0) {
		snprintf(why, len, "%s", err.msg);
		return -1;
	}
	for (size_t i = 0; i < h->a.nkernel_images; i++)
		if (kp_keyring_add_kernel_image(
			    &h->a.keys, h->a.kernel_images[i],
			    h->cli->max_size ? h->cli->max_size : KP_DEFAULT_MAX_SIZE, &err) < 0) {
			snprintf(why, len, "%s: %s", h->a.kernel_images[i], err.msg);
			return -1;
		}
	for (size_t i = 0; i < h->a.ntrusted_certs; i++)
		if (kp_keyring_add_cert_file(&h->a.keys, h->a.trusted_certs[i], &err) < 0) {
			snprintf(why, len, "%s: %s", h->a.trusted_certs[i], err.msg);
			return -1;
		}
	if (h->a.keys.nsources)
		h->a.fo.keys = &h->a.keys;
	return 0;
}

/* Reads the set's unread entries; fails on the first that cannot be read. */
static int read_set(struct hook *h, char *why, size_t len)
{
	struct kp_read_opts ro = {
		.open = { .max_size = h->cli->max_size,
			  .sig_digest = (kp_keyring_empty(&h->a.keys) ? 0 : KP_SIG_DIGEST) |
					(h->a.keys.nblacklist ? KP_SIG_FILE_SHA256 : 0),
			  .cache = kp_cli_facts_cache(h->cli) }
	};
	size_t n = 0;

	for (size_t i = 0; i < h->a.set.n; i++)
		n += !h->a.set.entries[i].mod && !h->a.set.entries[i].error;
	ro.jobs = h->cli->jobs ? h->cli->jobs : (n < 4 ? (unsigned)(n ? n : 1) : 4);
	kp_set_read(&h->a.set, &ro);
	for (size_t i = 0; i < h->a.set.n; i++)
		if (h->a.set.entries[i].error) {
			snprintf(why, len, "%s: %s", h->a.set.entries[i].path,
				 h->a.set.entries[i].error);
			return -1;
		}
	return 0;
}

static int add_to_set(struct hook *h, size_t i, char *why, size_t len)
{
	const struct kp_chain_module *cm = &h->chain.mods[i];

	if (!kp_is_file(cm->path)) {
		snprintf(why, len, "%s: no such module file", cm->path);
		return -1;
	}
	if (kp_set_add_path(&h->a.set, cm->path) < 0) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	h->in_set[i] = true;
	return 0;
}

/*
 * In-tree dependencies left to Module.symvers that a module of the set still needs (an
 * import nobody provides whose owner, per modules.symbols, is one of them: Module.symvers
 * is not that tree's): added to the set. *@added tells whether any was.
 */
static int needed_deps(struct hook *h, bool *added, char *why, size_t len)
{
	struct kp_err err = { "" };

	size_t nread = h->a.set.n; /* entries added below are read in the next round */

	*added = false;
	for (size_t s = 0; s < nread; s++) {
		const struct kp_module *m = h->a.set.entries[s].mod;

		for (size_t j = 0; m && j < m->nimports; j++) {
			const char *sym = m->imports[j].name, *owner;
			int r;

			if (m->imports[j].weak || kp_base_lookup_owner(h->a.base, sym, NULL) ||
			    set_exports(h, sym))
				continue;
			r = kp_chain_symbol_owner(&h->chain, sym, &owner, &err);
			if (r == -ENOENT)
				continue;
			if (r < 0) {
				snprintf(why, len, "%s", err.msg);
				return -1;
			}
			for (size_t i = 0; i < h->chain.n; i++)
				if (!strcmp(h->chain.mods[i].name, owner) &&
				    described(h, &h->chain.mods[i]) &&
				    !kp_running_find(&h->live, owner)) {
					if (add_to_set(h, i, why, len) < 0)
						return -1;
					*added = true;
				}
		}
	}
	return 0;
}

static int judge(struct hook *h)
{
	struct kp_err err = { "" };
	char why[1024];
	bool added = true;
	int r;

	if (open_system(h, why, sizeof(why)) < 0)
		return undecided(h, "%s", why);
	if (kp_chain_open(&h->chain, h->root, h->tree.moddir, (const char *const *)h->tree.builtin,
			  h->tree.nbuiltin, (const char *const *)h->tree.modprobe_blacklist,
			  h->tree.nmodprobe_blacklist, &err) < 0)
		return undecided(h, "%s", err.msg);
	h->have_chain = true;
	r = kp_chain_resolve(&h->chain, h->asked, &err);
	if (r < 0)
		return undecided(h, "%s", err.msg);
	h->in_set = kp_calloc(h->chain.n ? h->chain.n : 1, sizeof(*h->in_set));
	if (!h->in_set)
		return undecided(h, "out of memory");
	h->skip_in_tree = !h->read_in_tree && !h->a.nkernels && h->tree.symvers_path;
	for (size_t i = 0; i < h->chain.n; i++) {
		const struct kp_chain_module *cm = &h->chain.mods[i];

		if (cm->builtin || kp_running_find(&h->live, cm->name) || described(h, cm))
			continue;
		if (add_to_set(h, i, why, sizeof(why)) < 0)
			return undecided(h, "%s", why);
	}
	if (!h->a.set.n) {
		if (h->verbose)
			say(h, "nothing to load: %s",
			    h->chain.n ? "already loaded or built in"
				       : "every module it names is blacklisted");
		return KP_EXIT_OK;
	}
	/* Bounded: each round adds at least one module of the chain to the set. */
	for (size_t round = 0; added && round <= h->chain.n; round++) {
		if (read_set(h, why, sizeof(why)) < 0)
			return undecided(h, "%s", why);
		if (collect_wanted(h) < 0)
			return undecided(h, "out of memory");
		if (load_exports(h, why, sizeof(why)) < 0)
			return undecided(h, "%s", why);
		added = false;
		if (h->skip_in_tree && needed_deps(h, &added, why, sizeof(why)) < 0)
			return undecided(h, "%s", why);
	}
	if (read_providers(h, why, sizeof(why)) < 0 || build_facts(h, why, sizeof(why)) < 0)
		return undecided(h, "%s", why);
	if (kp_graph_build(&h->a.graph, &h->a.set, h->a.base, 1, &err) < 0 ||
	    kp_simulate(&h->a.graph, &h->a.facts, &h->a.sim, &err) < 0)
		return undecided(h, "%s", err.msg);
	h->a.have_sim = true;
	if (h->verbose && h->chain.via_alias && h->chain.nblacklisted)
		say(h, "%zu module(s) of this alias are blacklisted: modprobe skips them",
		    h->chain.nblacklisted);
	return decide(h);
}

/* ------------------------------------------------------------------ install rules */

static bool shell_safe(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("_-./+:=@%", *s)))
			return false;
	return true;
}

/*
 * @s as one word of the /bin/sh command modprobe runs for an install line: as it is when
 * plain, else single-quoted. NULL for what no modprobe.d line can hold (control bytes, a
 * newline would end the line) or when out of memory.
 */
static char *shell_word(const char *s)
{
	size_t n = 2;
	char *out, *q;

	if (shell_safe(s))
		return strdup(s);
	for (const char *p = s; *p; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return NULL;
		n += *p == '\'' ? 4 : 1;
	}
	out = malloc(n + 1);
	if (!out)
		return NULL;
	q = out;
	*q++ = '\'';
	for (const char *p = s; *p; p++) {
		if (*p == '\'') {
			memcpy(q, "'\\''", 4);
			q += 4;
		} else {
			*q++ = *p;
		}
	}
	*q++ = '\'';
	*q = '\0';
	return out;
}

/* @path made absolute against the current directory (the hook runs from /). */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX], *out;

	if (path[0] == '/')
		return strdup(path);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (asprintf(&out, "%s/%s", strcmp(cwd, "/") ? cwd : "", path) < 0)
		return NULL;
	return out;
}

static int print_rules(struct hook *h)
{
	struct kp_arena arena = { 0 };
	const char **names, **rels;
	char why[1024], self[PATH_MAX], opts[4 * PATH_MAX + 64] = "";
	struct kp_err err = { "" };
	char *self_word;
	size_t n;
	ssize_t sl;

	if (open_system(h, why, sizeof(why)) < 0) {
		kp_cli_error(NULL, "%s", why);
		return KP_EXIT_ERROR;
	}
	if (kp_chain_out_of_tree(h->tree.moddir, &arena, &names, &rels, &n, &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		kp_arena_release(&arena);
		return KP_EXIT_ERROR;
	}
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0) {
		kp_cli_error(NULL, "cannot find kopolicy's own path (/proc/self/exe): %s",
			     sl < 0 ? strerror(errno) : "empty");
		kp_arena_release(&arena);
		return KP_EXIT_ERROR;
	}
	self[sl] = '\0';
	self_word = shell_word(self);
	if (!self_word) {
		kp_cli_error(self, "control characters in kopolicy's own path: no install line "
				   "can name it");
		kp_arena_release(&arena);
		return KP_EXIT_ERROR;
	}
	if (h->config) {
		/* absolute: modprobe runs the line from / */
		char *abs = absolute(h->config);
		char *word = abs ? shell_word(abs) : NULL;

		free(abs);
		if (!word) {
			kp_cli_error(h->config, "the policy path cannot be written in an install "
						"line (control characters)");
			free(self_word);
			kp_arena_release(&arena);
			return KP_EXIT_ERROR;
		}
		snprintf(opts, sizeof(opts), " --config %s", word);
		free(word);
	}
	if (h->on_error_given)
		snprintf(opts + strlen(opts), sizeof(opts) - strlen(opts), " --on-error %s",
			 kp_hook_on_error_name(h->on_error_cli));
	kp_escaped_fprintf(
		stdout,
		"# modprobe.d install rules for the out-of-tree modules of %s,\n"
		"# written by `kopolicy hook --print-install-rules` (%zu module%s).\n"
		"# Install as /etc/modprobe.d/zz-kopolicy.conf (it must sort after the\n"
		"# distribution's files so their install/blacklist lines win) and rerun\n"
		"# after installing or removing out-of-tree modules. See kopolicy.conf(5).\n",
		h->live.release, n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		if (!shell_safe(names[i])) {
			kp_escaped_fprintf(stdout, "# skipped %s: unusual characters in its name\n",
					   rels[i]);
			continue;
		}
		kp_escaped_fprintf(stdout, "# %s\n", rels[i]); /* a comment stays one line */
		printf("install %s %s hook%s $MODPROBE_MODULE $CMDLINE_OPTS && "
		       "/sbin/modprobe --ignore-install $MODPROBE_MODULE $CMDLINE_OPTS\n",
		       names[i], self_word, opts);
	}
	free(self_word);
	kp_arena_release(&arena);
	if (fflush(stdout) != 0) {
		kp_cli_error(NULL, "write error on standard output");
		return KP_EXIT_ERROR;
	}
	return KP_EXIT_OK;
}

static bool valid_module_arg(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 4095 || s[0] == '-')
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f || *s == '/')
			return false;
	return true;
}

static void hook_free(struct hook *h)
{
	for (size_t i = 0; i < h->nproviders; i++)
		kp_module_free(h->providers[i]);
	free(h->providers);
	kp_symset_free(&h->wanted);
	free(h->in_set);
	kp_analysis_free(&h->a);
	if (h->have_chain)
		kp_chain_close(&h->chain);
	if (h->have_tree)
		kp_tree_release(&h->tree);
	if (h->have_live)
		kp_running_release(&h->live);
	kp_hook_policy_release(&h->policy);
}

int cmd_hook(struct kp_cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "on-error", required_argument, NULL, OPT_ON_ERROR },
		{ "print-install-rules", no_argument, NULL, OPT_PRINT_RULES },
		{ "read-in-tree", no_argument, NULL, OPT_READ_IN_TREE },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		KP_CLI_COMMON_LONGOPTS,
		KP_ANALYSIS_LONGOPTS,
		{}
	};
	struct hook h = { .cli = cli, .timeout = DEFAULT_TIMEOUT };
	bool rules = false;
	struct kp_err err = { "" };
	char *policy_path = NULL;
	int c, rc;

	kp_analysis_init(&h.a);
	kp_hook_policy_init(&h.policy);
	/* '+': stop at MODULE; what follows are module parameters from $CMDLINE_OPTS. */
	while ((c = getopt_long(argc, argv, "+c:vhj:k:", opts, NULL)) != -1) {
		if (kp_cli_common_option(cli, c, optarg) || kp_analysis_option(&h.a, c, optarg))
			continue;
		switch (c) {
		case 'c':
			h.config = optarg;
			break;
		case OPT_ON_ERROR:
			if (kp_hook_parse_on_error(optarg, &h.on_error_cli) < 0) {
				kp_cli_error(NULL, "--on-error takes fail-open or fail-closed");
				return KP_EXIT_ERROR;
			}
			h.on_error_given = true;
			break;
		case OPT_PRINT_RULES:
			rules = true;
			break;
		case OPT_READ_IN_TREE:
			h.read_in_tree = true;
			break;
		case OPT_TIMEOUT: {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || v > 3600) {
				kp_cli_error(NULL, "--timeout takes seconds from 0 to 3600");
				return KP_EXIT_ERROR;
			}
			h.timeout = (unsigned)v;
			break;
		}
		case 'v':
			h.verbose = true;
			break;
		case 'h':
			hook_usage(stdout);
			return KP_EXIT_OK;
		default:
			hook_usage(stderr);
			return KP_EXIT_ERROR;
		}
	}
	/* --root and the overrides are the analysis options; the system is always the running one.
	 */
	h.root = h.a.root;
	if (h.a.basedir) {
		kp_cli_error(NULL, "hook: --basedir does not apply: the hook judges the running "
				   "system (--root DIR for another root)");
		return KP_EXIT_ERROR;
	}
	if (rules) {
		rc = print_rules(&h);
		hook_free(&h);
		return rc;
	}
	/* No operand: the module modprobe is running the install line for. */
	h.asked = optind < argc ? argv[optind] : getenv("MODPROBE_MODULE");
	if (!h.asked || !valid_module_arg(h.asked)) {
		kp_cli_error(NULL, h.asked ? "hook: invalid module name"
					   : "hook: no module given (and no $MODPROBE_MODULE)");
		hook_usage(stderr);
		return KP_EXIT_ERROR;
	}
	policy_path = h.config ? strdup(h.config) : kp_root_path(h.root, DEFAULT_POLICY);
	if (!policy_path) {
		rc = undecided(&h, "out of memory");
		hook_free(&h);
		return rc;
	}
	rc = kp_hook_policy_load(&h.policy, policy_path, &err);
	if (rc < 0 && (rc != -ENOENT || h.config)) {
		h.policy_bad = true;
		rc = undecided(&h, "policy refused: %s", err.msg);
	} else {
		arm_deadline(&h);
		rc = judge(&h);
		alarm(0);
	}
	free(policy_path);
	hook_free(&h);
	return rc;
}
