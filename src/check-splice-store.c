// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The splice's store in the result cache's entry: its parts put together as the pieces the
 * entry is written from (nothing copied into one buffer) and taken apart.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "check-splice-store.h"
#include "util/byte-writer.h"

#define MAGIC "KPSPLIC3"

_Static_assert(KP_SPLICE_STORE_PIECES <= KP_RC_PIECES, "a store's pieces are kept whole");

int kp_splice_store_pieces(const struct kp_graph *g, unsigned char *sim, size_t simlen,
			   const unsigned char *gp, size_t glen, const struct kp_check_capture *cap,
			   int base_rc, enum kp_severity fail_on,
			   struct kp_splice_store_pieces *out, const char **why)
{
	struct kp_graph_store_parts parts = { 0 };
	struct kp_byte_writer rw = { 0 };
	/* the head (16 bytes), the graph part's length (8), the graph part's head and mid (16) */
	unsigned char *head = malloc(40);
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	out->own[out->nown++] = sim;
	*why = "out of memory";
	if (!head)
		goto fail;
	out->own[out->nown++] = head;
	if (!gp) {
		if (kp_graph_store_encode_parts(g, &parts) < 0) {
			*why = "the graph: out of memory, or a count over 32 bits";
			goto fail;
		}
		out->own[out->nown++] = parts.table;
		out->own[out->nown++] = parts.body;
		glen = parts.len;
	}
	if (kp_splice_report_encode(&rw, cap, g, base_rc, fail_on, why) < 0) {
		free(rw.p);
		goto fail;
	}
	out->own[out->nown++] = rw.p;
	if (rw.failed) {
		*why = "the report: out of memory";
		goto fail;
	}
	memcpy(head, MAGIC, 8);
	kp_store64(head + 8, simlen);
	kp_store64(head + 16, glen);
	out->v[n++] = (struct kp_rc_piece){ head, 16 };
	out->v[n++] = (struct kp_rc_piece){ sim, simlen };
	out->v[n++] = (struct kp_rc_piece){ head + 16, 8 };
	if (gp) {
		out->v[n++] = (struct kp_rc_piece){ gp, glen };
	} else {
		memcpy(head + 24, parts.head, sizeof(parts.head));
		memcpy(head + 36, parts.mid, sizeof(parts.mid));
		out->v[n++] = (struct kp_rc_piece){ head + 24, sizeof(parts.head) };
		out->v[n++] = (struct kp_rc_piece){ parts.table, parts.tlen };
		out->v[n++] = (struct kp_rc_piece){ head + 36, sizeof(parts.mid) };
		out->v[n++] = (struct kp_rc_piece){ parts.body, parts.blen };
	}
	out->v[n++] = (struct kp_rc_piece){ rw.p, rw.len };
	out->n = n;
	out->len = 24 + simlen + glen + rw.len;
	return 0;
fail:
	kp_splice_store_pieces_release(out);
	return -1;
}

void kp_splice_store_pieces_release(struct kp_splice_store_pieces *s)
{
	for (size_t i = 0; i < s->nown; i++)
		free(s->own[i]);
	memset(s, 0, sizeof(*s));
}

/* A length (64) at @off in @p of @len bytes, and that many bytes after it: 0, or -1. */
static int take_part(const unsigned char *p, size_t len, size_t *off, size_t *plen)
{
	uint64_t n;

	if (len - *off < 8)
		return -1;
	n = kp_load64(p + *off, false);
	*off += 8;
	if (n > len - *off)
		return -1;
	*plen = (size_t)n;
	return 0;
}

int kp_splice_store_decode(const unsigned char *p, size_t len, const unsigned char *op, size_t olen,
			   struct kp_splice_stored *out, struct kp_err *err)
{
	size_t off = 8, simlen, glen;

	memset(out, 0, sizeof(*out));
	if (len < 8 || memcmp(p, MAGIC, 8))
		return kp_err_set(err, "the store: its magic");
	if (take_part(p, len, &off, &simlen) < 0)
		return kp_err_set(err, "the store: the simulation's length");
	if (kp_sim_store_decode(p + off, simlen, &out->was, err) < 0)
		return -1;
	off += simlen;
	if (take_part(p, len, &off, &glen) < 0)
		return kp_err_set(err, "the store: the graph's length");
	if (kp_graph_store_open(p + off, glen, &out->gs, err) < 0)
		return -1;
	/* every reader sizes its per-module arrays by one count and indexes them by the other */
	if (out->gs.n != out->was.n)
		return kp_err_set(err, "the store: %zu graph nodes for %zu simulated modules",
				  out->gs.n, out->was.n);
	out->gp = p + off;
	out->glen = glen;
	off += glen;
	return kp_splice_report_decode(p + off, len - off, out->was.n, out->was.order, op, olen,
				       &out->rep, err);
}

void kp_splice_stored_release(struct kp_splice_stored *s)
{
	kp_splice_report_release(&s->rep);
	kp_graph_stored_release(&s->gs);
	kp_sim_stored_release(&s->was);
	s->gp = NULL;
	s->glen = 0;
}
