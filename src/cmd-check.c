// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kopolicy check: predict loads, taints and symbol_get() results for a module set. The
 * libraries it needs (libcrypto; json-c for JSON) are loaded before any work, or it fails.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/run-cache.h"
#include "dl/lazy-lib.h"
#include "file/inputs.h"
#include "ctx-options.h"
#include "check-splice.h"
#include "waivers.h"

static void check_usage(FILE *f)
{
	fputs("Usage: kopolicy check [OPTIONS] FILE|DIR|MODULE...\n"
	      "Predict what the module loader does with each module: loads or fails (errno and\n"
	      "the kernel's own messages), taints (P inherited under the 2020 rule), and what\n"
	      "symbol_get() returns (2023 rule) and when the call runs (at load, or when\n"
	      "called through a pointer). Modules are loaded as modprobe would: the\n"
	      "files named as `modprobe -a` in the order named, a directory's modules as a boot\n"
	      "asks for them (those no other module uses), each after its providers.\n"
	      "With a modules tree (-b ROOT, --running, or the running kernel's), a MODULE\n"
	      "that is no file is a name resolved as modprobe does ('-'/'_', aliases,\n"
	      "modprobe.d): `kopolicy check -b /mnt nvidia uas`.\n"
	      "\n"
	      "  -f, --format F     text (default), json, sarif or junit\n"
	      "  -o, --output FILE  write the report to FILE\n"
	      "      --fail-on S    exit 1 on findings of severity S or worse: error (default),\n"
	      "                     warning, note, or never\n"
	      "      --waivers FILE accepted findings (RULE [MODULE [SYMBOL]] globs per line;\n"
	      "                     unused lines are reported)\n"
	      "      --compare A,B  report what changes between rule sets A and B\n"
	      "      --all-kernels  with -b ROOT: the out-of-tree modules of every kernel\n"
	      "                     installed in ROOT (--kernel-release R: kernel R only),\n"
	      "                     each against its kernel (text, json)\n"
	      "      --upgrade-to R with -b ROOT and --kernel-release CUR: what changes for\n"
	      "                     CUR's out-of-tree modules on kernel R (text, json)\n"
	      "      --provider P   modules the FILEs may import from, resolved against but not\n"
	      "                     reported: a module, a directory of them (an older one of\n"
	      "                     the same name as a FILE is left out), or a symbol file\n"
	      "                     such as another package's Module.symvers (repeatable)\n"
	      "  -v, --verbose      every note (not one line per rule and module), and each\n"
	      "                     module's outcome and messages\n"
	      "      --pretty       indent JSON\n"
	      "      --color WHEN   auto (default: on a terminal, unless NO_COLOR is set or\n"
	      "                     TERM=dumb), always, never\n"
	      "  -j, --jobs N       read and resolve with N threads (default: one per CPU)\n"
	      "\n" KP_ANALYSIS_HELP "\n"
	      "Exit status: 0 no finding at or above --fail-on, 1 findings, 2 usage or input "
	      "errors.\n",
	      f);
}

static int parse_severity(const char *s, enum kp_severity *out)
{
	if (!strcmp(s, "error"))
		*out = KP_SEV_ERROR;
	else if (!strcmp(s, "warning"))
		*out = KP_SEV_WARNING;
	else if (!strcmp(s, "note"))
		*out = KP_SEV_NOTE;
	else if (!strcmp(s, "never"))
		*out = (enum kp_severity)(KP_SEV_ERROR + 1);
	else
		return -1;
	return 0;
}

/*
 * Runs the strictest rules too, for latent-breakage findings, when the target lacks one
 * (*@ran then true).
 */
static int strict_pass(struct kp_ctx *a, bool *ran)
{
	struct kp_kernel_facts strict = a->facts;
	struct kp_simulation s;
	struct kp_err err = { 0 };
	int r;

	memset(&strict.arena, 0, sizeof(strict.arena));
	if (a->facts.profile.has[KP_F_INHERIT_TAINT] && a->facts.profile.has[KP_F_SYMBOL_GET_GPL])
		return kp_add_policy_findings(&a->sim, NULL, &err);
	*ran = true;
	kp_profile_apply_rules(&strict.profile, "2023");
	if (kp_simulate(&a->graph, &strict, &s, &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		return -1;
	}
	r = kp_add_policy_findings(&a->sim, &s, &err);
	kp_simulation_release(&s);
	return r;
}

/*
 * The exit status before the findings count: 2 for an input not read, 1 for a kernel newer
 * than any modelled one at --fail-on warning or below (unverified-kernel), else 0.
 */
static int base_status(const struct kp_ctx *a, enum kp_severity fail_on)
{
	if (a->read_failures)
		return KP_EXIT_ERROR;
	return a->facts.beyond_modelled && fail_on <= KP_SEV_WARNING ? KP_EXIT_FINDINGS
								     : KP_EXIT_OK;
}

/* The report (@cmp NULL) or the --compare differences in @format: 0, or -1 said. */
static int print(const struct kp_check_out *o, const struct kp_ctx *a, const char *format,
		 const struct kp_comparison *cmp)
{
	if (!strcmp(format, "json")) {
		if (kp_check_print_json(o, a, cmp) < 0) {
			kp_cli_error(NULL, "out of memory writing the JSON report");
			return -1;
		}
	} else if (!strcmp(format, "sarif")) {
		kp_check_print_sarif(o, a, cmp);
	} else if (!strcmp(format, "junit")) {
		kp_check_print_junit(o, a, cmp);
	} else {
		kp_check_print_text(o, a, cmp);
	}
	return 0;
}

/* --color auto: not when NO_COLOR is set and not empty (no-color.org) or TERM is dumb. */
static bool want_color(void)
{
	const char *no = getenv("NO_COLOR"), *term = getenv("TERM");

	return !(no && *no) && !(term && !strcmp(term, "dumb"));
}

int cmd_check(struct kp_cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
					      { "output", required_argument, NULL, 'o' },
					      { "fail-on", required_argument, NULL, 0x200 },
					      { "waivers", required_argument, NULL, 0x201 },
					      { "compare", required_argument, NULL, 0x202 },
					      { "pretty", no_argument, NULL, 0x203 },
					      { "color", required_argument, NULL, 0x204 },
					      { "all-kernels", no_argument, NULL, 0x205 },
					      { "upgrade-to", required_argument, NULL, 0x206 },
					      { "provider", required_argument, NULL, 0x207 },
					      { "verbose", no_argument, NULL, 'v' },
					      { "help", no_argument, NULL, 'h' },
					      KP_CLI_COMMON_LONGOPTS,
					      KP_ANALYSIS_LONGOPTS,
					      {} };
	struct kp_check_out out = { .f = stdout, .fail_on = KP_SEV_ERROR };
	const char *format = "text", *output = NULL, *waivers = NULL, *cmp = NULL;
	const char *color = "auto";
	bool all_kernels = false;
	const char *upgrade_to = NULL;
	struct kp_waivers ws = { 0 };
	struct kp_comparison comparison;
	bool have_comparison = false, strict_ran = false;
	unsigned flags = KP_CTX_SIMULATE | KP_CTX_NAMES;
	struct kp_check_capture cap = { 0 };
	struct kp_ctx_opts o;
	struct kp_ctx a;
	int c, rc;

	kp_ctx_opts_init(&o);
	while ((c = getopt_long(argc, argv, "f:o:vhj:k:b:", opts, NULL)) != -1) {
		if (kp_cli_common_option(cli, c, optarg) || kp_ctx_option(&o, c, optarg))
			continue;
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 0x200:
			if (parse_severity(optarg, &out.fail_on) < 0) {
				kp_cli_error(NULL, "--fail-on takes error, warning, note or never");
				return KP_EXIT_ERROR;
			}
			break;
		case 0x201:
			waivers = optarg;
			break;
		case 0x202:
			cmp = optarg;
			break;
		case 0x203:
			out.pretty = true;
			break;
		case 0x204:
			color = optarg;
			break;
		case 0x205:
			all_kernels = true;
			break;
		case 0x206:
			upgrade_to = optarg;
			break;
		case 0x207:
			if (o.nprovider_paths == KP_ARRAY_SIZE(o.provider_paths)) {
				kp_cli_error(NULL, "too many --provider options");
				return KP_EXIT_ERROR;
			}
			o.provider_paths[o.nprovider_paths++] = optarg;
			break;
		case 'v':
			out.verbose = true;
			break;
		case 'h':
			check_usage(stdout);
			return KP_EXIT_OK;
		default:
			return kp_cli_bad_option("check", "f:o:vhj:k:b:", argv);
		}
	}
	if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "sarif") &&
	    strcmp(format, "junit")) {
		kp_cli_error(NULL, "unknown format '%s' (text, json, sarif or junit)", format);
		return KP_EXIT_ERROR;
	}
	/*
	 * The libraries every check needs (the caches' keys and the signatures: libcrypto; the
	 * JSON report: json-c), loaded on first use (dl/lazy-lib.h): a broken install is said
	 * here, before any work, as an error.
	 */
	{
		struct kp_err err = { 0 };

		if (kp_lazy_require(kp_lazy_libcrypto(), &err) < 0 ||
		    (!strcmp(format, "json") && kp_lazy_require(kp_lazy_libjsonc(), &err) < 0)) {
			kp_cli_error(NULL, "%s", err.msg);
			return KP_EXIT_ERROR;
		}
	}
	if (o.nprovider_paths && (upgrade_to || all_kernels || optind >= argc)) {
		kp_cli_error(NULL, "--provider takes module FILEs to check (not --all-kernels, "
				   "--upgrade-to or a whole tree)");
		return KP_EXIT_ERROR;
	}
	if (upgrade_to || all_kernels) {
		/* the installed-system reports: -b ROOT's own kernels, text or JSON */
		const char *from = o.fo.release;
		bool json = !strcmp(format, "json");

		if (upgrade_to && (!o.basedir || !from || all_kernels || optind < argc ||
				   o.nkernels || (!json && strcmp(format, "text")))) {
			kp_cli_error(NULL,
				     "--upgrade-to takes -b ROOT and --kernel-release, no FILE, "
				     "no --kernel, and --format text or json");
			return KP_EXIT_ERROR;
		}
		if (all_kernels && (!o.basedir || optind < argc || o.nkernels ||
				    (!json && strcmp(format, "text")))) {
			kp_cli_error(NULL, "--all-kernels takes -b ROOT, no FILE, no --kernel, "
					   "and --format text or json");
			return KP_EXIT_ERROR;
		}
		if (output)
			kp_in_uncacheable("output to a file");
		if (output && !(out.f = fopen(output, "we"))) {
			kp_cli_error(output, "cannot write: %m");
			return KP_EXIT_ERROR;
		}
		o.fo.release = NULL;
		rc = upgrade_to ? kp_check_upgrade(cli, &o, from, upgrade_to, &out, json)
				: kp_check_all_kernels(cli, &o, from, &out, json);
		if (out.f != stdout && fclose(out.f) != 0 && rc != KP_EXIT_ERROR)
			rc = KP_EXIT_ERROR;
		return rc;
	}
	if (optind >= argc && !o.basedir && !o.running) {
		kp_cli_error(NULL, "check: no module files given");
		check_usage(stderr);
		return KP_EXIT_ERROR;
	}
	if (waivers) {
		struct kp_err err = { 0 };

		if (kp_waivers_load(&ws, waivers, &err) < 0) {
			kp_cli_error(NULL, "%s", err.msg);
			return KP_EXIT_ERROR;
		}
	}
	out.jobs = cli->jobs;
	/*
	 * a one-module change of a plain JSON report: spliced from the previous entry's store
	 * (check-splice-use.c), else recomputed as below (nothing written yet)
	 */
	if (cli->use_splice && kp_run_cache_recording(cli->runs) && !strcmp(format, "json") &&
	    !cmp && !output && !waivers && !out.pretty && !o.nprovider_paths &&
	    kp_check_splice_use(cli, &o, &rc)) {
		if (fflush(stdout) != 0) {
			kp_cli_error(NULL, "write error on standard output");
			rc = KP_EXIT_ERROR;
		}
		return rc;
	}
	kp_cli_ctx_init(&a, cli, &o);
	/* a JSON report through the result cache keeps its simulation (check-splice.c) */
	if (kp_run_cache_recording(cli->runs) && !strcmp(format, "json") && !cmp && !output)
		flags |= KP_CTX_RECORD;
	rc = kp_cli_ctx_load(&a, argv + optind, argc - optind, flags);
	if (rc)
		goto done;
	if (output) {
		kp_in_uncacheable("output to a file");
		out.f = fopen(output, "we");
		if (!out.f) {
			kp_cli_error(output, "cannot write: %m");
			rc = KP_EXIT_ERROR;
			goto done;
		}
	}
	out.color = !strcmp(color, "always") ||
		    (!strcmp(color, "auto") && !output && isatty(STDOUT_FILENO) && want_color());
	if (cmp) {
		rc = kp_compare_rules(&a, cmp, &comparison);
		if (rc)
			goto done;
		have_comparison = true;
		rc = comparison.n ? KP_EXIT_FINDINGS : KP_EXIT_OK;
		if (print(&out, &a, format, &comparison) < 0 || a.read_failures)
			rc = KP_EXIT_ERROR;
		goto done;
	}
	if (strict_pass(&a, &strict_ran) < 0) {
		rc = KP_EXIT_ERROR;
		goto done;
	}
	kp_waivers_apply(&ws, &a.sim);
	kp_waivers_report_unused(&ws, stderr);
	/* the splice's store keeps the plain report's bytes as they are written */
	if ((flags & KP_CTX_RECORD) && !out.pretty && !strict_ran && !waivers &&
	    (cap.blocks = calloc(a.graph.n ? a.graph.n : 1, sizeof(*cap.blocks))))
		out.capture = &cap;
	if (print(&out, &a, format, NULL) < 0) {
		rc = KP_EXIT_ERROR;
		goto done;
	}
	rc = base_status(&a, out.fail_on);
	for (size_t i = 0; i < a.sim.n && rc != KP_EXIT_ERROR; i++) {
		if (a.graph.nodes[a.sim.v[i].node].provider)
			continue; /* resolved against, not reported */
		for (size_t j = 0; j < a.sim.v[i].nfindings; j++)
			if (!a.sim.v[i].findings[j].waived &&
			    a.sim.v[i].findings[j].severity >= out.fail_on)
				rc = KP_EXIT_FINDINGS;
	}
	if (flags & KP_CTX_RECORD) {
		struct kp_splice_ask ask = { .out = &out,
					     .opts = &o,
					     .cap = out.capture,
					     .strict_ran = strict_ran,
					     .waivers = waivers != NULL,
					     .rc = rc,
					     .base_rc = base_status(&a, out.fail_on) };

		kp_check_splice_store(cli, &a, &ask);
	}
done:
	if (out.f && out.f != stdout && fclose(out.f) != 0 && rc != KP_EXIT_ERROR) {
		kp_cli_error(output, "write error");
		rc = KP_EXIT_ERROR;
	}
	if (out.f == stdout && fflush(stdout) != 0) {
		kp_cli_error(NULL, "write error on standard output");
		rc = KP_EXIT_ERROR;
	}
	if (have_comparison)
		kp_comparison_release(&comparison);
	kp_check_capture_release(&cap, a.graph.n);
	kp_waivers_free(&ws);
	kp_ctx_release(&a);
	return rc;
}
