// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The splice's report store: the plain JSON report of `check --format json` kept cut at its
 * splice points, and written again over a spliced simulation's verdicts (check-splice.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "check-splice.h"
#include "json-out.h"
#include "sim/open-record.h"
#include "util/byte-reader.h"

#define MAGIC "KPSPLRP1"

int kp_splice_report_encode(struct kp_byte_writer *w, const struct kp_check_capture *cap, size_t n,
			    int base_rc, enum kp_severity fail_on, const char **why)
{
	if (!cap->head || !cap->tail) {
		*why = "the report's head or tail was not kept";
		return -1;
	}
	kp_bw_put(w, MAGIC, 8);
	kp_bw_put8(w, (unsigned)base_rc);
	kp_bw_put8(w, (unsigned)fail_on);
	kp_bw_put32(w, cap->headlen);
	kp_bw_put(w, cap->head, cap->headlen);
	kp_bw_put32(w, cap->taillen);
	kp_bw_put(w, cap->tail, cap->taillen);
	kp_bw_put32(w, n);
	for (size_t i = 0; i < n; i++) {
		const struct kp_check_block *b = &cap->blocks[i];

		kp_bw_put8(w, b->text != NULL);
		if (!b->text)
			continue;
		if (!b->policy_last) {
			*why = "a policy finding before one the simulation made";
			return -1;
		}
		kp_bw_put32(w, b->len);
		kp_bw_put(w, b->text, b->len);
		for (int m = 0; m < KP_NMARKS; m++) {
			kp_bw_put32(w, b->start[m]);
			kp_bw_put32(w, b->end[m]);
		}
		kp_bw_put32(w, b->fsim);
	}
	if (w->failed) {
		*why = "out of memory, or a block over 4 GiB";
		return -1;
	}
	return 0;
}

/* @b's marks in order inside its text, its findings an array with @fsim inside it. */
static bool marks_hold(const struct kp_check_block *b)
{
	uint32_t at[] = { b->start[KP_MARK_ADDED],    b->end[KP_MARK_ADDED],
			  b->start[KP_MARK_OPEN],     b->end[KP_MARK_OPEN],
			  b->start[KP_MARK_FINDINGS], b->fsim,
			  b->end[KP_MARK_FINDINGS],   b->start[KP_MARK_AFTER],
			  b->end[KP_MARK_AFTER] };

	for (size_t k = 1; k < KP_ARRAY_SIZE(at); k++)
		if (at[k - 1] > at[k])
			return false;
	return at[KP_ARRAY_SIZE(at) - 1] <= b->len && b->fsim > b->start[KP_MARK_FINDINGS] &&
	       b->fsim < b->end[KP_MARK_FINDINGS] && b->text[b->start[KP_MARK_FINDINGS]] == '[' &&
	       b->text[b->end[KP_MARK_FINDINGS] - 1] == ']';
}

int kp_splice_report_decode(const unsigned char *p, size_t len, size_t n,
			    struct kp_splice_report *out, struct kp_err *err)
{
	struct kp_byte_reader r = { .p = p, .len = len };
	const unsigned char *magic = kp_br_take(&r, 8, "magic");
	const unsigned char *q;

	memset(out, 0, sizeof(*out));
	if (!magic || memcmp(magic, MAGIC, 8))
		return kp_err_set(err, "the report store: its magic");
	q = kp_br_take(&r, 2, "header");
	if (q && (q[0] > 2 || q[1] > KP_SEV_ERROR + 1))
		r.bad = "header";
	if (q) {
		out->base_rc = q[0];
		out->fail_on = (enum kp_severity)q[1];
	}
	out->head = kp_br_bytes(&r, &out->headlen, "head");
	out->tail = kp_br_bytes(&r, &out->taillen, "tail");
	if (!r.bad && kp_br_get32(&r, "count") != n)
		r.bad = "count";
	out->n = n;
	if (!r.bad && !(out->blocks = calloc(n ? n : 1, sizeof(*out->blocks))))
		r.bad = "out of memory";
	for (size_t i = 0; i < n && !r.bad; i++) {
		struct kp_check_block *b = &out->blocks[i];
		const unsigned char *has = kp_br_take(&r, 1, "block");

		if (!has || !*has)
			continue;
		/* borrowed from @p, never written */
		b->text = (char *)kp_br_bytes(&r, &b->len, "block");
		for (int m = 0; m < KP_NMARKS; m++) {
			b->start[m] = kp_br_get32(&r, "mark");
			b->end[m] = kp_br_get32(&r, "mark");
		}
		b->fsim = kp_br_get32(&r, "mark");
		b->policy_last = true;
		if (!r.bad && (*has != 1 || !b->text || !marks_hold(b)))
			r.bad = "marks";
	}
	if (!r.bad && r.off != len)
		r.bad = "bytes after the end";
	if (r.bad) {
		kp_splice_report_release(out);
		return kp_err_set(err, "the report store: %s", r.bad);
	}
	return 0;
}

void kp_splice_report_release(struct kp_splice_report *r)
{
	free(r->blocks);
	memset(r, 0, sizeof(*r));
}

/* The bridge findings over the spliced verdicts, each node's in kp_policy_bridges() order. */
struct bridge {
	const char *sym, *importer;
	size_t next; /* the node's next, or SIZE_MAX */
};

struct bridges {
	struct bridge *b;
	size_t n, cap;
	size_t *first, *last; /* per node, SIZE_MAX: none */
};

static int add_bridge(void *data, size_t node, const char *sym, const char *importer)
{
	struct bridges *bs = data;

	if (kp_grow(&bs->b, &bs->cap, bs->n + 1, sizeof(*bs->b)) < 0)
		return -1;
	bs->b[bs->n] = (struct bridge){ .sym = sym, .importer = importer, .next = SIZE_MAX };
	if (bs->first[node] == SIZE_MAX)
		bs->first[node] = bs->n;
	else
		bs->b[bs->last[node]].next = bs->n;
	bs->last[node] = bs->n++;
	return 0;
}

/* The bridge finding @br as a "findings" item (what kp_add_policy_findings() would add). */
static void bridge_json(struct kp_jtext *t, const struct bridge *br)
{
	struct kp_finding f = { .id = "bridge",
				.severity = KP_SEV_NOTE,
				.consequence = KP_CONS_WARN,
				.symbol = br->sym };
	struct json_object *o = NULL;
	const char *js = NULL;

	if (asprintf(&f.message, KP_BRIDGE_FMT, br->sym, br->importer) >= 0) {
		/* kp_finding_fix() has none for a bridge */
		o = kp_check_finding_json(&f, NULL);
		js = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								   JSON_C_TO_STRING_NOSLASHESCAPE)
		       : NULL;
	}
	if (js)
		kp_jtext_lit(t, js);
	else
		t->failed = true;
	json_object_put(o);
	free(f.message);
}

/* Block @b of verdict @v with its splice points written: @open, the bridges from @first. */
static void write_block(struct kp_jtext *t, const struct kp_check_block *b,
			const struct kp_verdict *v, const char *open, const struct bridges *bs,
			size_t first)
{
	const char *x = b->text;
	bool any = b->fsim > b->start[KP_MARK_FINDINGS] + 1;

	kp_jtext_put(t, x, b->start[KP_MARK_ADDED]);
	kp_check_jtext_letters(t, v->global_added);
	kp_jtext_put(t, x + b->end[KP_MARK_ADDED], b->start[KP_MARK_OPEN] - b->end[KP_MARK_ADDED]);
	kp_check_jtext_open(t, open, v);
	kp_jtext_put(t, x + b->end[KP_MARK_OPEN], b->fsim - b->end[KP_MARK_OPEN]);
	for (size_t k = first; k != SIZE_MAX; k = bs->b[k].next) {
		if (any)
			kp_jtext_lit(t, ",");
		bridge_json(t, &bs->b[k]);
		any = true;
	}
	kp_jtext_lit(t, "]");
	kp_jtext_put(t, x + b->end[KP_MARK_FINDINGS],
		     b->start[KP_MARK_AFTER] - b->end[KP_MARK_FINDINGS]);
	kp_check_jtext_letters(t, v->global_after);
	kp_jtext_put(t, x + b->end[KP_MARK_AFTER], b->len - b->end[KP_MARK_AFTER]);
}

/* The exit status @v's findings ask for (cmd-check.c): 1 for one at or over @fail_on. */
static int findings_rc(const struct kp_verdict *v, bool bridged, enum kp_severity fail_on)
{
	if (bridged && KP_SEV_NOTE >= fail_on)
		return 1;
	for (size_t j = 0; j < v->nfindings; j++)
		if (!kp_finding_is_policy(&v->findings[j]) && !v->findings[j].waived &&
		    v->findings[j].severity >= fail_on)
			return 1;
	return 0;
}

int kp_splice_report_write(struct kp_jtext *t, const struct kp_splice_report *r,
			   const struct kp_graph *g, const struct kp_verdict *sv,
			   const struct kp_check_block *fresh, int *rc, struct kp_err *err)
{
	struct bridges bs = { 0 };
	const struct kp_verdict *last = NULL; /* the latest load that printed */
	bool first = true;
	int ret = 0;

	*rc = r->base_rc;
	bs.first = malloc((g->n ? g->n : 1) * sizeof(*bs.first));
	bs.last = malloc((g->n ? g->n : 1) * sizeof(*bs.last));
	if (!bs.first || !bs.last)
		goto oom;
	for (size_t i = 0; i < g->n; i++)
		bs.first[i] = SIZE_MAX;
	if (kp_policy_bridges(g, sv, add_bridge, &bs) < 0)
		goto oom;
	kp_jtext_put(t, r->head, r->headlen);
	for (size_t k = 0; k < g->n; k++) {
		size_t i = g->order[k];
		const struct kp_verdict *v = &sv[i];
		const struct kp_check_block *b = fresh[i].text ? &fresh[i] : &r->blocks[i];
		const char *open = NULL;

		/* kp_open_record_before() over the spliced verdicts */
		if (v->nmessages && last &&
		    kp_msg_unterminated(last->messages[last->nmessages - 1]))
			open = last->messages[last->nmessages - 1];
		if (v->nmessages)
			last = v;
		if (!b->text)
			continue; /* a provider: resolved against, not reported */
		/* kp_json_stream(): "\n" before the first item, ",\n" before the others */
		kp_jtext_lit(t, first ? "\n" : ",\n");
		first = false;
		write_block(t, b, v, open, &bs, bs.first[i]);
		if (*rc != 2 && findings_rc(v, bs.first[i] != SIZE_MAX, r->fail_on))
			*rc = 1;
	}
	kp_jtext_put(t, r->tail, r->taillen);
	if (t->failed)
		goto oom;
out:
	free(bs.b);
	free(bs.first);
	free(bs.last);
	return ret;
oom:
	ret = kp_err_set(err, "out of memory writing the spliced report");
	goto out;
}
