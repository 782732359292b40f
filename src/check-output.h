/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `kopolicy check` output formats: formatting only, verdicts come from lib/loader. */
#ifndef KP_CHECK_OUTPUT_H
#define KP_CHECK_OUTPUT_H

#include <stdio.h>

#include "ctx-options.h"

#define KP_CHECK_SCHEMA_VERSION 1

struct kp_check_out {
	FILE *f;
	bool color;
	bool pretty;
	bool verbose;
	enum kp_severity fail_on;
};

void kp_check_print_text(const struct kp_check_out *o, const struct kp_ctx *a);
void kp_check_print_json(const struct kp_check_out *o, const struct kp_ctx *a);
void kp_check_print_sarif(const struct kp_check_out *o, const struct kp_ctx *a);
void kp_check_print_junit(const struct kp_check_out *o, const struct kp_ctx *a);

/* check -b ROOT --all-kernels: the out-of-tree modules of every installed kernel. */
int kp_check_all_kernels(struct kp_cli *cli, const struct kp_ctx_opts *tmpl,
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
