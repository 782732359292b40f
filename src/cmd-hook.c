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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctx-options.h"
#include "hook-rules.h"
#include "policy/hook-policy.h"
#include "system/kernel-tree.h"
#include "system/modprobe-chain.h"
#include "system/running.h"
#include "file/rootfs.h"

enum {
	OPT_ON_ERROR = 0x300,
	OPT_PRINT_RULES,
	OPT_UPDATE_RULES,
	OPT_READ_IN_TREE,
	OPT_TIMEOUT,
};

#define DEFAULT_TIMEOUT 10 /* seconds: the hook answers within this whatever libraries do */

/* configure's --sysconfdir (Makefile.am), as for the kernel hook's kernel-hook.conf */
#ifndef KP_SYSCONFDIR
#error "KP_SYSCONFDIR (configure's sysconfdir) is not defined"
#endif
#define DEFAULT_POLICY KP_SYSCONFDIR "/kopolicy/hook.conf"

struct hook {
	struct kp_cli *cli;
	const char *root; /* NULL: this machine */
	char *root_abs;	  /* a relative --root made absolute (owned), or NULL */
	const char *config;
	const char *asked; /* MODULE as given */
	bool verbose;
	bool quiet; /* say() prints nothing: the first pass, without symbol_get() tracing */
	const char *untraced; /* why symbol_get() call sites were not traced, for -v */
	bool on_error_given;
	enum kp_hook_on_error on_error_cli;
	unsigned timeout; /* seconds, 0: none */

	struct kp_hook_policy policy;
	bool policy_bad; /* the file was refused: only --on-error counts */
	struct kp_ctx_opts o;
	struct kp_ctx a; /* the running system, the chain, what it loads (lazy mode) */
};

static void hook_usage(FILE *f)
{
	fputs("Usage: kopolicy hook [OPTIONS] MODULE [MODULE-PARAMETERS...]\n"
	      "       kopolicy hook --print-install-rules [OPTIONS]\n"
	      "       kopolicy hook --update-install-rules [OPTIONS] [FILE]\n"
	      "Judge the load modprobe is about to do: resolve MODULE and its dependencies like\n"
	      "modprobe, predict the load against the running kernel and the modules already\n"
	      "loaded, print the verdict to stderr and exit non-zero if the policy blocks it.\n"
	      "Meant for a modprobe.d install line (see kopolicy.conf(5)); MODULE defaults to\n"
	      "$MODPROBE_MODULE:\n"
	      "  install MOD kopolicy hook $MODPROBE_MODULE $CMDLINE_OPTS && "
	      "modprobe --ignore-install $MODPROBE_MODULE $CMDLINE_OPTS\n"
	      "\n"
	      "  -c, --config FILE    policy file (default ROOT" DEFAULT_POLICY ";\n"
	      "                       none: warn about everything, block nothing)\n"
	      "      --on-error MODE  fail-open (default) or fail-closed when kopolicy cannot\n"
	      "                       decide; the policy file's on-error lines take precedence\n"
	      "      --root DIR       judge the system under DIR (modules tree, proc, sys, etc)\n"
	      "                       (--running is implied; -b does not apply; a relative DIR\n"
	      "                       is from the current directory, as modprobe -d)\n"
	      "      --timeout SECS   answer within SECS seconds whatever happens, applying\n"
	      "                       the on-error mode (default 10; 0: no deadline)\n"
	      "      --read-in-tree   also read in-tree dependencies that are not loaded yet\n"
	      "                       (default: Module.symvers describes them; slower)\n"
	      "  -v, --verbose        also show the chain, each module's outcome and the\n"
	      "                       kernel's predicted messages\n"
	      "      --print-install-rules  print modprobe.d install lines for every installed\n"
	      "                       release's out-of-tree modules (updates/, extra/, DKMS)\n"
	      "                       and the modules that depend on them (modules.dep)\n"
	      "      --update-install-rules  write those lines into FILE (default\n"
	      "                       ROOT" KP_RULES_DEFAULT_FILE ") when they changed,\n"
	      "                       atomically; only a file kopolicy wrote (or an empty one)\n"
	      "                       in a directory no other user can write; keeps the file's\n"
	      "                       --config and --on-error unless given\n"
	      "\n" KP_ANALYSIS_HELP_KERNEL KP_ANALYSIS_HELP_REST "\n"
	      "Exit status: 0 let the load go on, 1 blocked by the policy, 2 kopolicy could not\n"
	      "decide and the policy fails closed, or a usage error. --update-install-rules:\n"
	      "0 the file is current, 1 refused (not kopolicy's file, an unsafe file or\n"
	      "directory), 2 an error (a release not read fully: the rest is written).\n",
	      f);
}

static void say(const struct hook *h, const char *fmt, ...) kp_printf_fmt(2, 3);
static void say(const struct hook *h, const char *fmt, ...)
{
	va_list ap;

	if (h->quiet)
		return;
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
	for (size_t i = 0; i < h->a.hook.chain.n; i++)
		if (h->a.hook.chain.mods[i].target && !strcmp(h->a.hook.chain.mods[i].name, name))
			return true;
	return false;
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

	say(h, "kernel %s; exports from %s; %zu loaded module%s; chain from %s:", h->a.run.release,
	    h->a.hook.exports_from, h->a.run.nmodules, h->a.run.nmodules == 1 ? "" : "s",
	    h->a.hook.chain.source == KP_CHAIN_LIBKMOD ? "libkmod (depmod indexes)"
						       : "modules.dep (text)");
	for (size_t i = 0; i < h->a.hook.chain.n; i++) {
		const struct kp_chain_module *cm = &h->a.hook.chain.mods[i];
		const struct kp_loaded_module *lm = kp_running_find(&h->a.run, cm->name);

		say(h, "  %s %s%s%s%s%s%s", cm->name, cm->builtin ? "(built in)" : cm->relpath,
		    lm ? ", loaded, taint " : "", lm ? (*lm->taint ? lm->taint : "none") : "",
		    !lm && kp_ctx_chain_described(&h->a, cm)
			    ? ", not read (in-tree: Module.symvers)"
			    : "",
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
		for (size_t j = 0; j < v->nsymget; j++) {
			const struct kp_symget_result *r = &v->symget[j];
			char *when = kp_symget_when_text(r->when, r->path, r->function);

			say(h, "  symbol_get(%s) = %s (%s), runs %s", r->symbol,
			    r->ok ? "ok" : "NULL", r->reason, when ? when : "(out of memory)");
			free(when);
		}
		if (h->a.graph.nodes[i].mod->symget_skipped)
			say(h, "  symbol_get() call sites not traced: %s", h->untraced);
	}
}

/*
 * A module whose symbol_get() call sites were not all analysed (the reader's budget ran
 * out): what symbol-get asks for it cannot be decided. Ignored: nothing; warn: a warning;
 * block: undecided, the on-error mode decides (fail-closed blocks). Returns the action
 * taken; *@closed set when the on-error mode blocks.
 */
static enum kp_hook_action unanalysed(struct hook *h, const char *name, const struct kp_finding *f,
				      bool *closed)
{
	char from[PATH_MAX + 32];
	size_t line;
	enum kp_hook_action act =
		kp_hook_policy_action(&h->policy, name, KP_HOOK_SYMBOL_GET, &line);
	enum kp_hook_on_error mode;

	if (act != KP_HOOK_BLOCK)
		return act == KP_HOOK_WARN ? consider(h, name, KP_HOOK_SYMBOL_GET, NULL, f->message)
					   : act;
	mode = on_error_mode(h, from, sizeof(from));
	say(h, "cannot decide symbol-get for %s: %s; %s (on-error %s, %s)", name, f->message,
	    mode == KP_HOOK_FAIL_CLOSED ? "blocking the load" : "letting the load go on",
	    kp_hook_on_error_name(mode), from);
	*closed = *closed || mode == KP_HOOK_FAIL_CLOSED;
	return KP_HOOK_WARN;
}

static int decide(struct hook *h)
{
	enum kp_hook_action worst = KP_HOOK_IGNORE;
	bool closed = false; /* something undecided and the on-error mode blocks */

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
		if ((f = finding(v, "symbol-get-not-analysed"))) {
			act = unanalysed(h, name, f, &closed);
			worst = act > worst ? act : worst;
		}
	}
	if (worst == KP_HOOK_BLOCK)
		return KP_EXIT_FINDINGS;
	return closed ? KP_EXIT_ERROR : KP_EXIT_OK;
}

/* ------------------------------------------------------------------ the hook */

/*
 * The consequences that need no symbol_get() tracing (license, P, load failures), decided
 * first when the policy blocks one of them: a load they block is blocked without tracing any
 * call site, so no deadline during the tracing can let it through. Returns the exit status
 * when this pass is the answer (blocked; or no module of the chain imports __symbol_get, so
 * nothing was left out), its verdict printed; -1 when the full pass must follow (@h ready for
 * it, the diagnostics already said).
 */
static int untraced_pass(struct hook *h)
{
	struct kp_err err = { 0 };
	bool skipped = false;
	int rc;

	h->a.o.no_symbol_get = true;
	if (kp_ctx_load_chain(&h->a, h->asked, &err) < 0 || !h->a.set.n) {
		kp_ctx_release(&h->a);
		kp_cli_ctx_init(&h->a, h->cli, &h->o);
		return -1; /* the full pass says why, or that there is nothing to load */
	}
	for (size_t i = 0; i < h->a.set.n; i++)
		skipped = skipped ||
			  (h->a.set.entries[i].mod && h->a.set.entries[i].mod->symget_skipped);
	h->quiet = true;
	rc = decide(h);
	h->quiet = false;
	if (rc == KP_EXIT_FINDINGS || !skipped) {
		h->untraced = "the load is blocked on what needs no tracing";
		return decide(h);
	}
	kp_ctx_release(&h->a);
	kp_cli_ctx_init(&h->a, h->cli, &h->o);
	h->a.env.log = NULL; /* said by the first pass */
	return -1;
}

static int judge(struct hook *h)
{
	struct kp_err err = { 0 };

	if (!h->a.o.no_symbol_get &&
	    kp_hook_policy_blocks(&h->policy, ~(1U << KP_HOOK_SYMBOL_GET))) {
		int rc = untraced_pass(h);

		if (rc >= 0)
			return rc;
	}

	if (kp_ctx_load_chain(&h->a, h->asked, &err) < 0)
		return undecided(h, "%s", err.msg);
	if (!h->a.set.n) {
		if (h->verbose)
			say(h, "nothing to load: %s",
			    h->a.hook.chain.n ? "already loaded or built in"
					      : "every module it names is blacklisted");
		return KP_EXIT_OK;
	}
	if (h->verbose && h->a.hook.chain.via_alias && h->a.hook.chain.nblacklisted)
		say(h, "%zu module(s) of this alias are blacklisted: modprobe skips them",
		    h->a.hook.chain.nblacklisted);
	return decide(h);
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
	kp_ctx_release(&h->a);
	kp_hook_policy_release(&h->policy);
	free(h->root_abs);
}

/*
 * A relative --root DIR is taken from the current directory once, at the start, as
 * `modprobe -d DIR` does (libkmod's kmod_new() makes its directory absolute with
 * path_make_absolute_cwd(): the paths it hands back are absolute, and a relative root
 * would be prefixed to them a second time). Symbolic links are not resolved, as there.
 * 0, or -1 (the current directory cannot be named, or out of memory).
 */
static int absolute_root(struct hook *h)
{
	char *cwd;

	if (!h->o.root || h->o.root[0] == '/')
		return 0;
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return -1;
	if (asprintf(&h->root_abs, "%s/%s", cwd, h->o.root) < 0)
		h->root_abs = NULL;
	free(cwd);
	if (!h->root_abs)
		return -1;
	h->o.root = h->root_abs;
	return 0;
}

int cmd_hook(struct kp_cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "on-error", required_argument, NULL, OPT_ON_ERROR },
		{ "print-install-rules", no_argument, NULL, OPT_PRINT_RULES },
		{ "update-install-rules", no_argument, NULL, OPT_UPDATE_RULES },
		{ "read-in-tree", no_argument, NULL, OPT_READ_IN_TREE },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		KP_CLI_COMMON_LONGOPTS,
		KP_ANALYSIS_LONGOPTS,
		{}
	};
	struct hook h = { .cli = cli, .timeout = DEFAULT_TIMEOUT };
	bool rules = false, update = false;
	struct kp_err err = { 0 };
	char *policy_path = NULL;
	int c, rc;

	kp_ctx_opts_init(&h.o);
	kp_hook_policy_init(&h.policy);
	/* '+': stop at MODULE; what follows are module parameters from $CMDLINE_OPTS. */
	while ((c = getopt_long(argc, argv, "+c:vhj:k:", opts, NULL)) != -1) {
		if (kp_cli_common_option(cli, c, optarg) || kp_ctx_option(&h.o, c, optarg))
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
		case OPT_UPDATE_RULES:
			update = true;
			break;
		case OPT_READ_IN_TREE:
			h.o.read_in_tree = true;
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
			return kp_cli_bad_option("hook", "+c:vhj:k:", argv);
		}
	}
	/* --root and the overrides are the target options; the system is always the running one.
	 */
	if (absolute_root(&h) < 0) {
		kp_cli_error(NULL, "hook: --root %s: cannot make it absolute: %s", h.o.root,
			     strerror(errno));
		return KP_EXIT_ERROR;
	}
	h.root = h.o.root;
	if (h.o.basedir) {
		kp_cli_error(NULL, "hook: --basedir does not apply: the hook judges the running "
				   "system (--root DIR for another root)");
		free(h.root_abs);
		return KP_EXIT_ERROR;
	}
	if (rules || update) {
		struct kp_rules_opts ro = { .root = h.root,
					    .config = h.config,
					    .on_error_given = h.on_error_given,
					    .on_error = h.on_error_cli,
					    .verbose = h.verbose };

		if ((rules && update) || argc - optind > (update ? 1 : 0)) {
			kp_cli_error(NULL, "hook: --print-install-rules takes no operand, "
					   "--update-install-rules one FILE, not both");
			free(h.root_abs);
			return KP_EXIT_ERROR;
		}
		rc = rules ? kp_hook_print_rules(&ro)
			   : kp_hook_update_rules(&ro, optind < argc ? argv[optind] : NULL);
		free(h.root_abs);
		return rc;
	}
	kp_cli_ctx_init(&h.a, cli, &h.o);
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
	if (rc < 0 && (err.errnum != ENOENT || h.config)) {
		h.policy_bad = true;
		rc = undecided(&h, "policy refused: %s", err.msg);
	} else {
		/* what the policy ignores everywhere is not computed (symbol_get() tracing) */
		h.o.no_symbol_get =
			!h.policy_bad && kp_hook_policy_ignores(&h.policy, KP_HOOK_SYMBOL_GET);
		h.a.o.no_symbol_get = h.o.no_symbol_get;
		h.untraced = "the policy ignores symbol-get";
		arm_deadline(&h);
		rc = judge(&h);
		alarm(0);
	}
	free(policy_path);
	hook_free(&h);
	return rc;
}
