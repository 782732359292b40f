// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * JUnit XML for CI systems (GitLab, Jenkins): one testsuite for the kernel, one testcase per
 * module file: classname its directory, name its file name, so that same-named modules stay
 * distinct; a <failure> when a finding at or above --fail-on is not waived (all of them in its
 * text), <skipped> when every such finding is waived. kopolicy does not time modules: time 0.
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "check-output.h"

/*
 * Text escaped by the rule of every text output (kp_escape_write(): no control byte, no
 * invalid UTF-8 left, distinct strings stay distinct), then XML-escaped: valid XML 1.0.
 */
static void xml_escaped(FILE *f, const char *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return;
	kp_escape_write(m, s ? s : "", s ? strlen(s) : 0);
	if (fclose(m) != 0 || !text) {
		free(text);
		return;
	}
	for (const char *p = text; *p; p++) {
		switch (*p) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			fputc(*p, f);
		}
	}
	free(text);
}

/* Does @v have a finding at or above @fail_on, waived (@waived) or not? */
static bool has_failing(const struct kp_verdict *v, enum kp_severity fail_on, bool waived)
{
	for (size_t i = 0; i < v->nfindings; i++)
		if (v->findings[i].severity >= fail_on && v->findings[i].waived == waived)
			return true;
	return false;
}

static const char *sev_letter(enum kp_severity s)
{
	return s == KP_SEV_ERROR ? "E" : s == KP_SEV_WARNING ? "W" : "N";
}

/* The directory part of @path ("." when none), escaped. */
static void xml_dirname(FILE *f, const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;

	if (!slash) {
		fputc('.', f);
		return;
	}
	dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
	xml_escaped(f, dir ? dir : path);
	free(dir);
}

/* <testcase classname="DIR" name="FILE" file="PATH" time="0"> */
static void testcase_open(FILE *f, const char *path)
{
	const char *base = strrchr(path, '/');

	fputs("    <testcase classname=\"", f);
	xml_dirname(f, path);
	fputs("\" name=\"", f);
	xml_escaped(f, base ? base + 1 : path);
	fputs("\" file=\"", f);
	xml_escaped(f, path);
	fputs("\" time=\"0\">\n", f);
}

/* A module's findings: a <failure> (or <skipped> when all are waived) and its messages. */
static void module_findings(const struct kp_check_out *o, const struct kp_verdict *v,
			    const struct kp_node *nd)
{
	bool failing = has_failing(v, o->fail_on, false);
	FILE *f = o->f;

	if (failing || has_failing(v, o->fail_on, true)) {
		const struct kp_finding *first = NULL;

		for (size_t i = 0; i < v->nfindings && !first; i++)
			if (v->findings[i].severity >= o->fail_on &&
			    v->findings[i].waived == !failing)
				first = &v->findings[i];
		fprintf(f, "      <%s type=\"%s\" message=\"", failing ? "failure" : "skipped",
			first->id);
		xml_escaped(f, nd->mod->name);
		fputs(": ", f);
		xml_escaped(f, first->message);
		fputs(failing ? "\">" : " [waived]\">", f);
		for (size_t i = 0; i < v->nfindings; i++) {
			const struct kp_finding *fi = &v->findings[i];

			if (fi->severity < o->fail_on)
				continue;
			fprintf(f, "%s: %s: ", sev_letter(fi->severity), fi->id);
			xml_escaped(f, fi->message);
			fputs(fi->waived ? " [waived]\n" : "\n", f);
		}
		fprintf(f, "</%s>\n", failing ? "failure" : "skipped");
	}
	if (v->nmessages) {
		fputs("      <system-out>", f);
		for (size_t i = 0; i < v->nmessages; i++) {
			xml_escaped(f, v->messages[i]);
			fputc('\n', f);
		}
		fputs("</system-out>\n", f);
	}
}

/* check --compare: a <failure type="rule-set-change"> listing the module's differences. */
static void module_changes(FILE *f, const struct kp_ctx *a, const struct kp_comparison *cmp,
			   size_t node)
{
	bool open = false;

	for (size_t i = 0; i < cmp->n; i++) {
		char *text;

		if (cmp->changes[i].node != node)
			continue;
		text = kp_change_text(a, &cmp->changes[i]);
		if (!open) {
			fputs("      <failure type=\"rule-set-change\" message=\"", f);
			xml_escaped(f, text ? text : "changed");
			fputs("\">", f);
			open = true;
		}
		xml_escaped(f, text ? text : "changed");
		fputc('\n', f);
		free(text);
	}
	if (open)
		fputs("</failure>\n", f);
}

static bool changed(const struct kp_comparison *cmp, size_t node)
{
	for (size_t i = 0; i < cmp->n; i++)
		if (cmp->changes[i].node == node)
			return true;
	return false;
}

void kp_check_print_junit(const struct kp_check_out *o, const struct kp_ctx *a,
			  const struct kp_comparison *cmp)
{
	size_t failures = 0, skipped = 0, tests = 0;
	struct kp_input_error *errs;
	size_t nerrs = kp_check_input_errors(a, &errs);
	FILE *f = o->f;

	/* the walk's warnings, last: JUnit has no warning (said on stderr, they fail nothing) */
	while (nerrs && errs[nerrs - 1].warning)
		nerrs--;

	for (size_t k = 0; k < a->graph.n; k++) {
		const struct kp_verdict *v = &a->sim.v[k];

		if (a->graph.nodes[v->node].provider)
			continue; /* resolved against, not reported */
		tests++;
		if (cmp)
			failures += changed(cmp, v->node);
		else if (has_failing(v, o->fail_on, false))
			failures++;
		else if (has_failing(v, o->fail_on, true))
			skipped++;
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n", f);
	if (cmp) {
		fputs("  <testsuite name=\"kopolicy rules ", f);
		xml_escaped(f, cmp->first);
		fputs(" to ", f);
		xml_escaped(f, cmp->second);
	} else {
		fprintf(f, "  <testsuite name=\"kopolicy rules %s",
			kp_profile_rules_name(&a->facts.profile));
	}
	if (a->facts.release) {
		fputs(" on ", f);
		xml_escaped(f, a->facts.release);
	}
	fprintf(f,
		"\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" "
		"time=\"0\">\n",
		tests + nerrs, failures, nerrs, skipped);
	for (size_t k = 0; k < a->graph.n; k++) {
		const struct kp_verdict *v = &a->sim.v[a->graph.order[k]];
		const struct kp_node *nd = &a->graph.nodes[v->node];

		if (nd->provider)
			continue;
		testcase_open(f, nd->path);
		if (cmp)
			module_changes(f, a, cmp, v->node);
		else
			module_findings(o, v, nd);
		fputs("    </testcase>\n", f);
	}
	/* an input that could not be read is an <error>: kopolicy exits 2 for it */
	for (size_t i = 0; i < nerrs; i++) {
		testcase_open(f, errs[i].path);
		fputs("      <error type=\"unreadable-input\" message=\"", f);
		xml_escaped(f, errs[i].error);
		fputs("\"/>\n    </testcase>\n", f);
	}
	free(errs);
	fputs("  </testsuite>\n</testsuites>\n", f);
}
