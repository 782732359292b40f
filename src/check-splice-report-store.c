// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The splice's report store, its bytes: where a plain `check --format json` report's blocks
 * lie in the entry's output and its splice points in each, stored and read back checked
 * against that output (check-splice.h); check-splice-report.c writes the report again from
 * them.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "check-splice.h"
#include "util/byte-reader.h"

#define MAGIC "KPSPLRP2"

/* kp_json_stream(): "\n" before the first item, ",\n" before the others */
static size_t sep_len(bool first)
{
	return first ? 1 : 2;
}

int kp_splice_report_encode(struct kp_byte_writer *w, const struct kp_check_capture *cap,
			    const struct kp_graph *g, int base_rc, enum kp_severity fail_on,
			    const char **why)
{
	uint64_t *off = malloc((g->n ? g->n : 1) * sizeof(*off));
	uint64_t at = cap->headlen;
	bool first = true;

	if (!off) {
		*why = "out of memory";
		return -1;
	}
	/* where each block lies in the output: after the head, in load order */
	for (size_t k = 0; k < g->n; k++) {
		size_t i = g->order[k];

		if (!cap->blocks[i].text)
			continue;
		at += sep_len(first);
		first = false;
		off[i] = at;
		at += cap->blocks[i].len;
	}
	*why = NULL;
	if (!cap->head || !cap->tail)
		*why = "the report's head or tail was not kept";
	kp_bw_put(w, MAGIC, 8);
	kp_bw_put8(w, (unsigned)base_rc);
	kp_bw_put8(w, (unsigned)fail_on);
	kp_bw_put32(w, cap->headlen);
	kp_bw_put32(w, cap->taillen);
	kp_bw_put32(w, g->n);
	for (size_t i = 0; i < g->n && !*why; i++) {
		const struct kp_check_block *b = &cap->blocks[i];

		kp_bw_put8(w, b->text != NULL);
		if (!b->text)
			continue;
		if (!b->policy_last)
			*why = "a policy finding before one the simulation made";
		kp_bw_put64(w, off[i]);
		kp_bw_put32(w, b->len);
		for (int m = 0; m < KP_NMARKS; m++) {
			kp_bw_put32(w, b->start[m]);
			kp_bw_put32(w, b->end[m]);
		}
		kp_bw_put32(w, b->fsim);
	}
	free(off);
	if (!*why && w->failed)
		*why = "out of memory, or a block over 4 GiB";
	return *why ? -1 : 0;
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

/*
 * The blocks of @out (offsets in @out->blocks' text, set from @op) tile the output of @olen
 * bytes: the head, each reported block in load order @order after its separator, the tail.
 * NULL, or what does not hold.
 */
static const char *tiles(const struct kp_splice_report *out, const uint64_t *off,
			 const size_t *order, const unsigned char *op, size_t olen)
{
	uint64_t at = out->headlen;
	bool first = true;

	for (size_t k = 0; k < out->n; k++) {
		const struct kp_check_block *b;
		size_t i = order[k];

		if (i >= out->n)
			return "the load order";
		b = &out->blocks[i];
		if (!b->text)
			continue;
		if (off[i] != at + sep_len(first) || off[i] > olen - out->taillen ||
		    b->len > olen - out->taillen - off[i] ||
		    memcmp(op + at, &",\n"[first], sep_len(first)))
			return "a block's offset";
		at = off[i] + b->len;
		first = false;
	}
	return at == olen - out->taillen ? NULL : "the lengths do not add up to the output's";
}

int kp_splice_report_decode(const unsigned char *p, size_t len, size_t n, const size_t *order,
			    const unsigned char *op, size_t olen, struct kp_splice_report *out,
			    struct kp_err *err)
{
	struct kp_byte_reader r = { .p = p, .len = len };
	const unsigned char *magic = kp_br_take(&r, 8, "magic");
	const unsigned char *q;
	uint64_t *off = NULL;

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
	out->headlen = kp_br_get32(&r, "head");
	out->taillen = kp_br_get32(&r, "tail");
	if (!r.bad && (!op || out->headlen > olen || out->taillen > olen - out->headlen))
		r.bad = "the head and tail outside the output";
	if (!r.bad) {
		out->head = (const char *)op;
		out->tail = (const char *)op + olen - out->taillen;
	}
	if (!r.bad && kp_br_get32(&r, "count") != n)
		r.bad = "count";
	out->n = n;
	if (!r.bad && (!(out->blocks = calloc(n ? n : 1, sizeof(*out->blocks))) ||
		       !(off = calloc(n ? n : 1, sizeof(*off)))))
		r.bad = "out of memory";
	for (size_t i = 0; i < n && !r.bad; i++) {
		struct kp_check_block *b = &out->blocks[i];
		const unsigned char *has = kp_br_take(&r, 1, "block");

		if (!has || !*has)
			continue;
		off[i] = kp_br_get64(&r, "block");
		b->len = kp_br_get32(&r, "block");
		for (int m = 0; m < KP_NMARKS; m++) {
			b->start[m] = kp_br_get32(&r, "mark");
			b->end[m] = kp_br_get32(&r, "mark");
		}
		b->fsim = kp_br_get32(&r, "mark");
		b->policy_last = true;
		/* borrowed from @op, never written; checked against the output below */
		b->text = (char *)op;
		if (!r.bad && *has != 1)
			r.bad = "block";
	}
	if (!r.bad && r.off != len)
		r.bad = "bytes after the end";
	if (!r.bad)
		r.bad = tiles(out, off, order, op, olen);
	for (size_t i = 0; i < n && !r.bad; i++) {
		struct kp_check_block *b = &out->blocks[i];

		if (!b->text)
			continue;
		b->text = (char *)op + off[i];
		if (!marks_hold(b))
			r.bad = "marks";
	}
	free(off);
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
