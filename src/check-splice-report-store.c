// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The splice's report store, its bytes: a plain `check --format json` report kept cut at its
 * splice points, stored and read back checked (check-splice.h); check-splice-report.c writes
 * the report again from it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "check-splice.h"
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
