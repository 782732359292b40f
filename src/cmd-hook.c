// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kopolicy hook: run from a modprobe.d install line, judge the load modprobe is
 * about to do against the running kernel and the modules already loaded, print
 * the verdict to stderr and, by policy (kopolicy.conf(5)), exit non-zero to
 * block it. Module parameters after MODULE are passed over, but one that modprobe would read
 * as an option (a word beginning with '-') stops the load, whatever the on-error mode, and
 * so does a MODULE that is not the $MODPROBE_MODULE modprobe runs the line for.
 * A chain whose files (or a directory on their way) another user can change gets the on-error
 * answer: kmod opens them by name after the hook, which cannot vouch for what it will read.
 * Reads only the chain's modules and the indexes; never writes. Here the
 * command line, the policy and the passes; the verdict is hook-verdict.c's, the deadline
 * hook-deadline.c's.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctx-options.h"
#include "hook-internal.h"
#include "hook-rules.h"
#include "policy/hook-policy.h"
#include "system/kernel-tree.h"
#include "file/rootfs.h"
#include "util/module-name.h"

enum {
	OPT_ON_ERROR = 0x300,
	OPT_PRINT_RULES,
	OPT_UPDATE_RULES,
	OPT_RETIRE_RULES,
	OPT_READ_IN_TREE,
	OPT_TIMEOUT,
	OPT_WALL_CAP,
	OPT_STATE_DIR,
};

#define DEFAULT_TIMEOUT 10 /* seconds run or blocked: the answer whatever libraries do */
/* the marks of EFI readers left behind (system/stuck-reader.h): root's, gone at reboot */
#define DEFAULT_STATE_DIR "/run/kopolicy"

/* configure's --sysconfdir (Makefile.am), as for the kernel hook's kernel-hook.conf */
#ifndef KP_SYSCONFDIR
#error "KP_SYSCONFDIR (configure's sysconfdir) is not defined"
#endif
#define DEFAULT_POLICY KP_SYSCONFDIR "/kopolicy/hook.conf"

static void hook_usage(FILE *f)
{
	fputs("Usage: kopolicy hook [OPTIONS] MODULE [MODULE-PARAMETERS...]\n"
	      "       kopolicy hook --print-install-rules [OPTIONS]\n"
	      "       kopolicy hook --update-install-rules [OPTIONS] [FILE]\n"
	      "       kopolicy hook --retire-install-rules [--root DIR] [FILE]\n"
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
	      "                       is from the current directory, as modprobe -d; its\n"
	      "                       symlinks are followed inside DIR)\n"
	      "      --timeout SECS   answer within SECS seconds of running or being blocked\n"
	      "                       (waits for a CPU not counted) whatever happens (a kernel\n"
	      "                       lock held for ever included), applying the on-error\n"
	      "                       mode (default 10; 0: no deadline); past ten\n"
	      "                       times as much wall-clock time (at least 60 s), or when\n"
	      "                       the waits cannot be measured, block the load (exit 2)\n"
	      "      --wall-cap SECS  that wall-clock cap lowered to SECS (more than --timeout)\n"
	      "      --state-dir DIR  where a reader of EFI variables left behind at the\n"
	      "                       deadline is marked, so that later hooks of the boot do\n"
	      "                       not wait for it (default " DEFAULT_STATE_DIR ", none with\n"
	      "                       --root; only a directory no other user can write), and\n"
	      "                       the lock of --update-install-rules and\n"
	      "                       --retire-install-rules (with --root too)\n"
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
	      "                       in a directory no other user can write, naming a kopolicy\n"
	      "                       no other user can replace; keeps the file's\n"
	      "                       --config and --on-error unless given; beside it,\n"
	      "                       " KP_SOFTDEPS_BASE ": an empty softdep entry\n"
	      "                       for each module with soft dependencies, so that modprobe\n"
	      "                       runs its line (which loads them)\n"
	      "      --retire-install-rules  drop the install lines of that FILE, same\n"
	      "                       conditions, keeping its header and options, and remove\n"
	      "                       " KP_SOFTDEPS_BASE " (kopolicy's packages run it\n"
	      "                       when they remove kopolicy)\n"
	      "\n" KP_ANALYSIS_HELP_KERNEL KP_ANALYSIS_HELP_REST "\n"
	      "Exit status: 0 let the load go on, 1 blocked by the policy, 2 kopolicy could not\n"
	      "decide and the policy fails closed (or it starved, see --timeout), or a usage\n"
	      "error (a MODULE-PARAMETER beginning with '-', which the install line's modprobe\n"
	      "would read as an option, or a MODULE that is not $MODPROBE_MODULE when that is\n"
	      "set, included). --update-install-rules and --retire-install-rules:\n"
	      "0 the file is current (or has no install line left), 1 refused (not kopolicy's\n"
	      "file, an unsafe file or directory), 2 an error (a release not read fully: the\n"
	      "rest is written).\n",
	      f);
}

void hook_say(const struct hook *h, const char *fmt, ...)
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
void hook_source_of(const struct hook *h, size_t line, char *buf, size_t len)
{
	if (line)
		snprintf(buf, len, "%s:%zu", h->policy.path, line);
	else
		snprintf(buf, len, "default policy");
}

/* The on-error mode of the module asked for, and where it comes from (into @from). */
enum kp_hook_on_error hook_on_error_mode(const struct hook *h, char *from, size_t len)
{
	enum kp_hook_on_error mode = h->on_error_given ? h->on_error_cli : KP_HOOK_FAIL_OPEN;
	size_t line = 0;

	snprintf(from, len, "default");
	if (!h->policy_bad) {
		enum kp_hook_on_error m = kp_hook_policy_on_error(&h->policy, h->asked, &line);

		if (line) {
			mode = m;
			hook_source_of(h, line, from, len);
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
	enum kp_hook_on_error mode = hook_on_error_mode(h, from, sizeof(from));
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	hook_say(h, "cannot decide: %s; %s (on-error %s, %s)", why,
		 mode == KP_HOOK_FAIL_CLOSED ? "blocking the load" : "letting the load go on",
		 kp_hook_on_error_name(mode), from);
	return mode == KP_HOOK_FAIL_CLOSED ? KP_EXIT_ERROR : KP_EXIT_OK;
}

/*
 * kmod opens the chain's files by name once the hook answers: one that another user can
 * change (or a directory on its way) may be swapped after the verdict, so the verdict stands
 * only when nobody can (system/module-trust.h). -1 when it stands, else the on-error answer,
 * said. The full pass after the untraced one loads the same chain: walked once.
 */
static int untrusted_files(struct hook *h)
{
	struct kp_untrusted bad;
	struct kp_err err = { 0 };
	int r;

	if (h->files_trusted)
		return -1;
	r = kp_ctx_chain_trusted(&h->a, &bad, &err);
	h->files_trusted = r == 1;
	if (r < 0)
		return undecided(h, "%s", err.msg);
	if (r == 0 && bad.owner_trusted)
		return undecided(h, "%s can be changed by users other than uid %u (mode %04o)",
				 bad.path, bad.uid, bad.mode);
	if (r == 0)
		return undecided(h, "%s can be changed by uid %u (mode %04o)", bad.path, bad.uid,
				 bad.mode);
	return -1;
}

/* @h->a ready for a pass: every pass reads the one private copy for libkmod the hook keeps. */
static void hook_ctx_init(struct hook *h)
{
	kp_cli_ctx_init(&h->a, h->cli, &h->o);
	h->a.env.kmod_copy = &h->kmod_copy;
}

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
		hook_ctx_init(h);
		return -1; /* the full pass says why, or that there is nothing to load */
	}
	rc = untrusted_files(h);
	if (rc >= 0)
		return rc;
	for (size_t i = 0; i < h->a.set.n; i++)
		skipped = skipped ||
			  (h->a.set.entries[i].mod && h->a.set.entries[i].mod->symget_skipped);
	h->quiet = true;
	rc = hook_decide(h);
	h->quiet = false;
	if (rc == KP_EXIT_FINDINGS || !skipped) {
		h->untraced = "the load is blocked on what needs no tracing";
		return hook_decide(h);
	}
	kp_ctx_release(&h->a);
	hook_ctx_init(h);
	h->a.env.log = NULL; /* said by the first pass */
	return -1;
}

static int judge(struct hook *h)
{
	struct kp_err err = { 0 };
	int rc;

	if (!h->a.o.no_symbol_get &&
	    kp_hook_policy_blocks(&h->policy, ~(1U << KP_HOOK_SYMBOL_GET))) {
		rc = untraced_pass(h);
		if (rc >= 0)
			return rc;
	}

	if (kp_ctx_load_chain(&h->a, h->asked, &err) < 0)
		return undecided(h, "%s", err.msg);
	if (!h->a.set.n) {
		if (h->verbose)
			hook_say(h, "nothing to load: %s",
				 h->a.hook.chain.n ? "already loaded or built in"
						   : "every module it names is blacklisted");
		return KP_EXIT_OK;
	}
	if (h->verbose && h->a.hook.chain.via_alias && h->a.hook.chain.nblacklisted)
		hook_say(h, "%zu module(s) of this alias are blacklisted: modprobe skips them",
			 h->a.hook.chain.nblacklisted);
	rc = untrusted_files(h);
	if (rc >= 0)
		return rc;
	return hook_decide(h);
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

/*
 * The module parameters, $CMDLINE_OPTS of the install line, are passed over, but the line
 * hands the same words to `modprobe --ignore-install $MODPROBE_MODULE $CMDLINE_OPTS` after
 * the hook lets the load go on, and that modprobe (getopt_long(), which permutes) reads a
 * word beginning with '-' as its own option wherever it stands: "-a evil" loads evil too,
 * "-d DIR" or "-C FILE" another tree or configuration, none of it judged. kmod quotes a
 * parameter holding a blank ("opt=\"a -b\""), and a kernel parameter name never begins
 * with '-', so such a word is never a parameter: the load that would follow is not the one
 * judged. The first such word, or NULL.
 */
static const char *option_in_parameters(int argc, char **argv, int first)
{
	for (int i = first; i < argc; i++)
		if (argv[i][0] == '-')
			return argv[i];
	return NULL;
}

static void hook_free(struct hook *h)
{
	kp_ctx_release(&h->a);
	kp_kmod_copy_remove(&h->kmod_copy); /* after the last pass that read it */
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
		{ "retire-install-rules", no_argument, NULL, OPT_RETIRE_RULES },
		{ "read-in-tree", no_argument, NULL, OPT_READ_IN_TREE },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "wall-cap", required_argument, NULL, OPT_WALL_CAP },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		KP_CLI_COMMON_LONGOPTS,
		KP_ANALYSIS_LONGOPTS,
		{}
	};
	struct hook h = { .cli = cli, .timeout = DEFAULT_TIMEOUT };
	bool rules = false, update = false, retire = false;
	const char *state_dir = NULL;
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
		case OPT_RETIRE_RULES:
			retire = true;
			break;
		case OPT_READ_IN_TREE:
			h.o.read_in_tree = true;
			break;
		case OPT_TIMEOUT:
		case OPT_WALL_CAP: {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' ||
			    v > (c == OPT_TIMEOUT ? 3600 : 36000)) {
				kp_cli_error(NULL,
					     c == OPT_TIMEOUT
						     ? "--timeout takes seconds from 0 to 3600"
						     : "--wall-cap takes seconds");
				return KP_EXIT_ERROR;
			}
			if (c == OPT_TIMEOUT)
				h.timeout = (unsigned)v;
			else
				h.wall_cap = (unsigned)v;
			break;
		}
		case OPT_STATE_DIR:
			state_dir = optarg;
			break;
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
	/* the wall-clock cap only lowered, and above --timeout (else no on-error answer is left) */
	if (h.wall_cap &&
	    (!h.timeout || h.wall_cap <= h.timeout || h.wall_cap > hook_wall_cap_max(h.timeout))) {
		if (!h.timeout)
			kp_cli_error(NULL, "--wall-cap needs a deadline (--timeout 0: none)");
		else
			kp_cli_error(NULL,
				     "--wall-cap takes seconds above --timeout (%u), at most %u "
				     "(ten times --timeout, at least 60)",
				     h.timeout, hook_wall_cap_max(h.timeout));
		return KP_EXIT_ERROR;
	}
	/* --root and the overrides are the target options; the system is always the running one.
	 */
	if (absolute_root(&h) < 0) {
		kp_cli_error(NULL, "hook: --root %s: cannot make it absolute: %s", h.o.root,
			     strerror(errno));
		return KP_EXIT_ERROR;
	}
	h.root = h.o.root;
	/* under --root, a mark on the host would stand for another system's variables */
	h.o.reader_marks_dir = state_dir ? state_dir : h.root ? NULL : DEFAULT_STATE_DIR;
	if (h.o.basedir) {
		kp_cli_error(NULL, "hook: --basedir does not apply: the hook judges the running "
				   "system (--root DIR for another root)");
		free(h.root_abs);
		return KP_EXIT_ERROR;
	}
	if (rules || update || retire) {
		struct kp_rules_opts ro = { .root = h.root,
					    .config = h.config,
					    .on_error_given = h.on_error_given,
					    .on_error = h.on_error_cli,
					    .verbose = h.verbose,
					    .lock_dir = state_dir ? state_dir : DEFAULT_STATE_DIR };
		const char *file = optind < argc ? argv[optind] : NULL;

		if (rules + update + retire > 1 || argc - optind > (rules ? 0 : 1)) {
			kp_cli_error(NULL, "hook: --print-install-rules takes no operand, "
					   "--update-install-rules and --retire-install-rules one "
					   "FILE; one of them");
			free(h.root_abs);
			return KP_EXIT_ERROR;
		}
		if (retire && (h.config || h.on_error_given)) {
			kp_cli_error(NULL, "hook: --retire-install-rules keeps the file's options: "
					   "--config and --on-error do not apply");
			free(h.root_abs);
			return KP_EXIT_ERROR;
		}
		rc = rules    ? kp_hook_print_rules(&ro)
		     : update ? kp_hook_update_rules(&ro, file)
			      : kp_hook_retire_rules(&ro, file);
		free(h.root_abs);
		return rc;
	}
	hook_ctx_init(&h);
	/* No operand: the module modprobe is running the install line for. */
	h.asked = optind < argc ? argv[optind] : getenv("MODPROBE_MODULE");
	if (!h.asked || !valid_module_arg(h.asked)) {
		kp_cli_error(NULL, h.asked ? "hook: invalid module name"
					   : "hook: no module given (and no $MODPROBE_MODULE)");
		hook_usage(stderr);
		return KP_EXIT_ERROR;
	}
	/* usage errors whatever the on-error mode: a fail-open answer would be a pass for them */
	if (optind < argc) {
		const char *opt = option_in_parameters(argc, argv, optind + 1);
		const char *env = getenv("MODPROBE_MODULE");

		/*
		 * Run by modprobe (libkmod's command_do() sets $MODPROBE_MODULE for the install
		 * command): MODULE is that module. Another name is a line that hands the hook
		 * something else, such as "hook $CMDLINE_OPTS" taking a parameter "x=1" for
		 * MODULE: a module not found, failing open, while modprobe loads its module.
		 */
		if (env && *env && !kp_modname_eq(env, h.asked)) {
			kp_cli_error(NULL,
				     "hook: MODULE '%s' is not $MODPROBE_MODULE '%s', the module "
				     "modprobe runs the install line for; blocked",
				     h.asked, env);
			return KP_EXIT_ERROR;
		}

		if (opt) {
			kp_cli_error(
				NULL,
				"hook: %s: module parameter '%s' begins with '-': the modprobe "
				"of the install line would read it as its own option (another "
				"module, tree or configuration than the one judged); blocked",
				h.asked, opt);
			return KP_EXIT_ERROR;
		}
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
		hook_arm_deadline(&h);
		rc = judge(&h);
		hook_disarm_deadline(&h);
	}
	free(policy_path);
	hook_free(&h);
	return rc;
}
