// SPDX-License-Identifier: GPL-2.0-or-later
/* JUnit XML for CI systems: a testsuite per kernel rule set, a testcase per module. */
#include "config.h"

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

void kp_check_print_junit(const struct kp_check_out *o, const struct kp_analysis *a)
{
	size_t failures = 0;
	FILE *f = o->f;

	for (size_t k = 0; k < a->graph.n; k++) {
		const struct kp_verdict *v = &a->sim.v[k];

		for (size_t i = 0; i < v->nfindings; i++)
			if (v->findings[i].severity >= o->fail_on && !v->findings[i].waived) {
				failures++;
				break;
			}
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n", f);
	fprintf(f, "  <testsuite name=\"kopolicy rules %s",
		kp_profile_rules_name(&a->facts.profile));
	if (a->facts.release) {
		fputs(" on ", f);
		xml_escaped(f, a->facts.release);
	}
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\">\n", a->graph.n, failures);
	for (size_t k = 0; k < a->graph.n; k++) {
		const struct kp_verdict *v = &a->sim.v[a->graph.order[k]];
		const struct kp_node *nd = &a->graph.nodes[v->node];

		fputs("    <testcase classname=\"kopolicy\" name=\"", f);
		xml_escaped(f, nd->mod->name);
		fputs("\" file=\"", f);
		xml_escaped(f, nd->path);
		fputs("\">\n", f);
		for (size_t i = 0; i < v->nfindings; i++) {
			const struct kp_finding *fi = &v->findings[i];

			if (fi->severity < o->fail_on || fi->waived)
				continue;
			fprintf(f, "      <failure type=\"%s\" message=\"", fi->id);
			xml_escaped(f, fi->message);
			fputs("\"/>\n", f);
		}
		if (v->nmessages) {
			fputs("      <system-out>", f);
			for (size_t i = 0; i < v->nmessages; i++) {
				xml_escaped(f, v->messages[i]);
				fputc('\n', f);
			}
			fputs("</system-out>\n", f);
		}
		fputs("    </testcase>\n", f);
	}
	fputs("  </testsuite>\n</testsuites>\n", f);
}
