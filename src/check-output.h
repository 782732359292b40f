/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `kopolicy check` output formats: formatting only, verdicts come from lib/loader. */
#ifndef KP_CHECK_OUTPUT_H
#define KP_CHECK_OUTPUT_H

#include <stdio.h>

#include "ctx-options.h"

#define KP_CHECK_SCHEMA_VERSION 1

/*
 * The parts of a module's JSON block (kp_check_block_text()) that depend on the other
 * modules' verdicts, as offsets into its text: the global taint it added and left, the open
 * record of an earlier load at the head of its "messages" (with the comma after it), and
 * its "findings" array, whose policy findings (kp_add_policy_findings(): a bridge reads the
 * verdicts of its importers) follow @fsim, the end of the last one the simulation made.
 */
enum { KP_MARK_ADDED, KP_MARK_OPEN, KP_MARK_FINDINGS, KP_MARK_AFTER, KP_NMARKS };

struct kp_check_block {
	char *text; /* malloc()ed; NULL: not reported (a provider) or not kept */
	size_t len;
	uint32_t start[KP_NMARKS], end[KP_NMARKS];
	uint32_t fsim;
	bool policy_last; /* every policy finding after every simulated one */
};

/* A JSON report's bytes kept while it is written (the splice's store, check-splice.c). */
struct kp_check_capture {
	char *head, *tail; /* up to the first module's block, after the last one */
	size_t headlen, taillen;
	struct kp_check_block *blocks; /* indexed like the nodes, zeroed by the caller */
	bool borrowed; /* the blocks' texts point into the report written (not freed) */
};

/* Frees what @cap holds (@n blocks) and leaves it zeroed. */
void kp_check_capture_release(struct kp_check_capture *cap, size_t n);

struct kp_check_out {
	FILE *f;
	bool color;
	bool pretty;
	bool verbose;
	enum kp_severity fail_on;
	unsigned jobs; /* threads building the JSON modules (kp_json_stream()); 0: one per CPU */
	struct kp_check_capture *capture; /* JSON, not --pretty: the bytes kept; or NULL */
};

/* What changes between two rule sets (check --compare): one entry per difference. */
enum kp_change_kind { KP_CHANGE_LOAD, KP_CHANGE_TAINT, KP_CHANGE_SYMBOL_GET };

struct kp_change {
	size_t node; /* graph node */
	enum kp_change_kind kind;
	const char *from, *to; /* static: "loads"/"ENOENT", "P"/"-", "ok"/"NULL" */
	char *symbol;	       /* KP_CHANGE_SYMBOL_GET: the target */
};

struct kp_comparison {
	char first[32], second[32]; /* the rule sets, as given */
	struct kp_change *changes;  /* in load order */
	size_t n;
};

/*
 * Simulates @a's graph under the rule sets of @spec ("A,B") and lists the differences.
 * 0, or KP_EXIT_ERROR after saying why (a bad @spec, out of memory).
 */
int kp_compare_rules(const struct kp_ctx *a, const char *spec, struct kp_comparison *cmp);
void kp_comparison_release(struct kp_comparison *cmp);
/* "NAME: loads -> ENOENT", "NAME: becomes P", "NAME: symbol_get(S) ok -> NULL"; malloc'd. */
char *kp_change_text(const struct kp_ctx *a, const struct kp_change *ch);

/* Who provides the import @e: a module's name, "vmlinux", or NULL when nothing does. */
const char *kp_edge_provider_name(const struct kp_ctx *a, const struct kp_edge *e);
/* A load an earlier oops left blocked or never run: that load's module name; else NULL. */
const char *kp_check_stalled_by(const struct kp_ctx *a, const struct kp_verdict *v);
/* What to do about @f of @v, with its facts filled in (malloc'd), or NULL (none known). */
char *kp_finding_fix(const struct kp_ctx *a, const struct kp_verdict *v,
		     const struct kp_finding *f);

/*
 * The kernel lines of @v's symbol_get() calls that run later, not at load, under a
 * "when called" heading, indented by @ind: nothing when there are none.
 */
void kp_print_symget_later(FILE *f, int ind, const struct kp_verdict *v);

struct json_object;
/* @v's symbol_get() results and findings (with fixes) as JSON: for check and explain. */
struct json_object *kp_check_symget_json(const struct kp_verdict *v);
struct json_object *kp_check_findings_json(const struct kp_ctx *a, const struct kp_verdict *v);
/* One finding as a "findings" item, @fix its fix text (kp_finding_fix(); NULL: none). */
struct json_object *kp_check_finding_json(const struct kp_finding *f, const char *fix);

struct kp_jtext;
/*
 * @v's "modules" item of the plain JSON report as text into @t, @open the open record of an
 * earlier load its messages start with (kp_open_record_before()), its marks into @m (NULL:
 * not wanted). The parts at the marks written alone: the mask's letters, the open record.
 */
void kp_check_block_text(struct kp_jtext *t, const struct kp_ctx *a, const struct kp_verdict *v,
			 const char *open, struct kp_check_block *m);
void kp_check_jtext_letters(struct kp_jtext *t, unsigned long mask);
void kp_check_jtext_open(struct kp_jtext *t, const char *open, const struct kp_verdict *v);

/*
 * An input that could not be read: a module file, or a directory operand holding none; or
 * (@warning) a walk's warning, a link depmod skips (graph/module-set.h), which fails nothing.
 */
struct kp_input_error {
	const char *path, *error;
	bool warning;
};
/*
 * The input errors of @a in order, its walk's warnings last (malloc'd array, *@out NULL when
 * none): their count.
 */
size_t kp_check_input_errors(const struct kp_ctx *a, struct kp_input_error **out);

/*
 * The report in each format: @cmp NULL for the verdicts, else the differences of
 * check --compare. Every format also carries the inputs that could not be read.
 */
void kp_check_print_text(const struct kp_check_out *o, const struct kp_ctx *a,
			 const struct kp_comparison *cmp);
/* The JSON report: 0, or -1 out of memory (the output then stops short). */
int kp_check_print_json(const struct kp_check_out *o, const struct kp_ctx *a,
			const struct kp_comparison *cmp);
void kp_check_print_sarif(const struct kp_check_out *o, const struct kp_ctx *a,
			  const struct kp_comparison *cmp);
void kp_check_print_junit(const struct kp_check_out *o, const struct kp_ctx *a,
			  const struct kp_comparison *cmp);

/*
 * check -b ROOT --all-kernels: the out-of-tree modules of every installed kernel, or of the
 * installed kernel ONLY when not NULL (--kernel-release; exit 2 when it is not installed).
 */
int kp_check_all_kernels(struct kp_cli *cli, const struct kp_ctx_opts *tmpl, const char *only,
			 const struct kp_check_out *o, bool json);
/* check -b ROOT --kernel-release FROM --upgrade-to TO: what breaks for the out-of-tree modules. */
int kp_check_upgrade(struct kp_cli *cli, const struct kp_ctx_opts *tmpl, const char *from,
		     const char *to, const struct kp_check_out *o, bool json);

/* The rule ids kopolicy can report, with a one-line description (SARIF rules[], --list-rules). */
struct kp_rule_doc {
	const char *id;
	enum kp_severity severity;
	const char *summary;
};
extern const struct kp_rule_doc kp_rule_docs[];
extern const size_t kp_nrule_docs;

#endif
