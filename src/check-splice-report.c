// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The splice's report written again over a spliced simulation's verdicts from its store (the
 * plain JSON report of `check --format json` kept cut at its splice points,
 * check-splice-report-store.c; check-splice.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "check-splice.h"
#include "json-out.h"
#include "sim/open-record.h"

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

/* Where @t is now, from @base (a block's first byte), as a mark of @m (when kept). */
static void mark(const struct kp_jtext *t, size_t base, uint32_t *m)
{
	*m = (uint32_t)(t->len - base);
}

/*
 * Block @b of verdict @v with its splice points written: @open, the bridges from @first.
 * @nb (NULL: not kept) gets the marks of the block as written (its text set by the caller):
 * those of check-json.c's capture of a report that wrote these bytes.
 */
static void write_block(struct kp_jtext *t, const struct kp_check_block *b,
			const struct kp_verdict *v, const char *open, const struct bridges *bs,
			size_t first, struct kp_check_block *nb)
{
	struct kp_check_block dummy;
	const char *x = b->text;
	bool any = b->fsim > b->start[KP_MARK_FINDINGS] + 1;
	size_t base = t->len;

	if (!nb)
		nb = &dummy;
	kp_jtext_put(t, x, b->start[KP_MARK_ADDED]);
	mark(t, base, &nb->start[KP_MARK_ADDED]);
	kp_check_jtext_letters(t, v->global_added);
	mark(t, base, &nb->end[KP_MARK_ADDED]);
	kp_jtext_put(t, x + b->end[KP_MARK_ADDED], b->start[KP_MARK_OPEN] - b->end[KP_MARK_ADDED]);
	mark(t, base, &nb->start[KP_MARK_OPEN]);
	kp_check_jtext_open(t, open, v);
	mark(t, base, &nb->end[KP_MARK_OPEN]);
	/* the findings' "[" lies in the bytes copied next */
	nb->start[KP_MARK_FINDINGS] =
		nb->end[KP_MARK_OPEN] + b->start[KP_MARK_FINDINGS] - b->end[KP_MARK_OPEN];
	kp_jtext_put(t, x + b->end[KP_MARK_OPEN], b->fsim - b->end[KP_MARK_OPEN]);
	mark(t, base, &nb->fsim);
	for (size_t k = first; k != SIZE_MAX; k = bs->b[k].next) {
		if (any)
			kp_jtext_lit(t, ",");
		bridge_json(t, &bs->b[k]);
		any = true;
	}
	kp_jtext_lit(t, "]");
	mark(t, base, &nb->end[KP_MARK_FINDINGS]);
	kp_jtext_put(t, x + b->end[KP_MARK_FINDINGS],
		     b->start[KP_MARK_AFTER] - b->end[KP_MARK_FINDINGS]);
	mark(t, base, &nb->start[KP_MARK_AFTER]);
	kp_check_jtext_letters(t, v->global_after);
	mark(t, base, &nb->end[KP_MARK_AFTER]);
	kp_jtext_put(t, x + b->end[KP_MARK_AFTER], b->len - b->end[KP_MARK_AFTER]);
	nb->len = t->len - base;
	nb->policy_last = true; /* the bridges, the only policy findings, come last */
}

/* A copy of the @len bytes at @p into *@to: 0, or -1 (out of memory). */
static int keep(char **to, const char *p, size_t len)
{
	if (!(*to = malloc(len ? len : 1)))
		return -1;
	memcpy(*to, p, len);
	return 0;
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
			   const struct kp_check_block *fresh, struct kp_check_capture *cap,
			   int *rc, struct kp_err *err)
{
	struct bridges bs = { 0 };
	size_t *at = NULL;		      /* with @cap: each kept block's offset in @t */
	const struct kp_verdict *last = NULL; /* the latest load that printed */
	bool first = true;
	size_t base;
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
	if (cap && (!(cap->blocks = calloc(g->n ? g->n : 1, sizeof(*cap->blocks))) ||
		    !(at = calloc(g->n ? g->n : 1, sizeof(*at))) ||
		    keep(&cap->head, r->head, r->headlen) < 0 ||
		    keep(&cap->tail, r->tail, r->taillen) < 0))
		goto oom;
	if (cap) {
		cap->headlen = r->headlen;
		cap->taillen = r->taillen;
		cap->borrowed = true;
	}
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
		base = t->len;
		write_block(t, b, v, open, &bs, bs.first[i], cap ? &cap->blocks[i] : NULL);
		if (cap)
			at[i] = base;
		if (*rc != 2 && findings_rc(v, bs.first[i] != SIZE_MAX, r->fail_on))
			*rc = 1;
	}
	kp_jtext_put(t, r->tail, r->taillen);
	if (t->failed)
		goto oom;
	/* the kept blocks' texts in @t's bytes, now that they no longer move */
	for (size_t i = 0; cap && i < g->n; i++)
		if (cap->blocks[i].len) /* written: never empty */
			cap->blocks[i].text = t->buf + at[i];
out:
	free(at);
	free(bs.b);
	free(bs.first);
	free(bs.last);
	return ret;
oom:
	ret = kp_err_set(err, "out of memory writing the spliced report");
	goto out;
}
