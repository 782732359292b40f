// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A recorded simulation as bytes (sim-store.h; its layout: sim-store-format.h); read back
 * checked: sim-store-read.c.
 */
#include <string.h>

#include <openssl/evp.h>

#include "sim-store.h"
#include "sim-reads.h"
#include "loader.h"
#include "read/module-iface.h"
#include "util/byte-reader.h"

#include "sim-store-format.h"

/*
 * An index or SIZE_MAX (none), as 32 bits: every index is a node's, below a count the
 * header holds in 32 bits (kp_sim_store_begin() fails the store otherwise).
 */
static uint32_t index32(size_t v)
{
	return v == SIZE_MAX || v >= SS_NONE ? SS_NONE : (uint32_t)v;
}

int kp_sim_iface_digest(const struct kp_module *m, unsigned char out[KP_SIM_IFACE_LEN])
{
	return kp_module_iface_digest(m, NULL, out);
}

static void put_finding(struct kp_byte_writer *w, const struct kp_finding *f)
{
	kp_bw_str(w, f->id);
	kp_bw_put8(w, (unsigned)f->severity);
	kp_bw_put8(w, (unsigned)f->consequence);
	kp_bw_str(w, f->message);
	kp_bw_str(w, f->symbol);
	kp_bw_put8(w, f->waived);
}

/* The variable-size part of a verdict's body: all of it but the policy findings. */
static void put_verdict(struct kp_byte_writer *w, const struct kp_verdict *v)
{
	size_t nf = 0;

	kp_bw_str(w, v->p_symbol);
	kp_bw_put32(w, v->nmessages);
	for (size_t i = 0; i < v->nmessages; i++)
		kp_bw_str(w, v->messages[i]);
	for (size_t i = 0; i < v->nfindings; i++)
		nf += !kp_finding_is_policy(&v->findings[i]);
	kp_bw_put32(w, nf);
	for (size_t i = 0; i < v->nfindings && nf; i++)
		if (!kp_finding_is_policy(&v->findings[i]))
			put_finding(w, &v->findings[i]);
	kp_bw_put32(w, v->nsymget);
	for (size_t i = 0; i < v->nsymget; i++) {
		const struct kp_symget_result *r = &v->symget[i];

		kp_bw_str(w, r->symbol);
		kp_bw_put8(w, (r->ok ? 1u : 0u) | (r->gpl_only ? 2u : 0u) |
				      (r->method_heuristic ? 4u : 0u) | (r->dynamic ? 8u : 0u) |
				      (r->kernel_logs ? 16u : 0u));
		kp_bw_str(w, r->reason);
		kp_bw_str(w, r->owner);
		kp_bw_put8(w, (unsigned)r->when);
		kp_bw_str(w, r->path);
		kp_bw_str(w, r->function);
	}
}

/* The body's fixed-size fields of verdict @v and record @r into @q (FIXED_LEN bytes). */
static void put_fixed(unsigned char *q, const unsigned char *digest, const struct kp_verdict *v,
		      const struct kp_sim_reads *r)
{
	memcpy(q, digest, KP_SIM_IFACE_LEN);
	q += KP_SIM_IFACE_LEN;
	q[0] = (unsigned char)((v->attempted ? 1u : 0u) | (v->loads ? 2u : 0u) |
			       (v->hangs ? 4u : 0u) | (v->holds_module_mutex ? 8u : 0u) |
			       (v->left_unformed ? 16u : 0u));
	kp_store32(q + 1, (uint32_t)v->err);
	kp_store64(q + 5, v->taints);
	q[13] = (unsigned char)v->p_reason;
	kp_store32(q + 14, index32(v->p_from));
	kp_store32(q + 18, index32(v->failed_dep));
	kp_store32(q + 22, index32(v->stalled_by));
	kp_store64(q + 26, r->taint_tested);
	kp_store64(q + 34, r->taint_set);
	kp_store64(q + 42, r->taint_late);
	kp_store32(q + 50, r->once_read);
	kp_store32(q + 54, r->once_set);
	q[58] = (unsigned char)((r->name_read ? 1u : 0u) | (r->name_live ? 2u : 0u) |
				(r->name_unformed ? 4u : 0u));
	q[59] = (unsigned char)r->stall_asked;
	q[60] = (unsigned char)r->stall_set.kind;
	kp_store32(q + 61, index32(r->stall_set.by));
	kp_store32(q + 65, r->nmessages_load);
	kp_store32(q + 69, r->nfindings_load);
	_Static_assert(KP_SIM_IFACE_LEN + 73 == FIXED_LEN, "the fixed fields' length");
}

/* The verdicts record @r read, from @pool: each range's count and nodes. */
static void put_ranges(struct kp_byte_writer *w, const struct kp_sim_reads *r, const uint32_t *pool)
{
	kp_bw_put32(w, r->nverdicts);
	for (uint32_t i = 0; i < r->nverdicts; i++)
		kp_bw_put32(w, pool[r->verdicts + i]);
	kp_bw_put32(w, r->nlate);
	for (uint32_t i = 0; i < r->nlate; i++)
		kp_bw_put32(w, pool[r->late + i]);
}

void kp_sim_store_begin(struct kp_sim_store_writer *sw, size_t n, unsigned long global_taint,
			size_t hint)
{
	memset(sw, 0, sizeof(*sw));
	/* a store about @hint bytes long grows in one allocation, not some twenty copies */
	if (hint && (sw->w.p = malloc(hint)))
		sw->w.cap = hint;
	kp_bw_put(&sw->w, SS_MAGIC, 8);
	/* fails the writer past 32 bits; SS_NONE itself would read as no node */
	kp_bw_put32(&sw->w, n == SS_NONE ? (uint64_t)SS_NONE + 1 : n);
	kp_bw_put64(&sw->w, global_taint);
	kp_bw_put32(&sw->w, 0); /* the verdicts read, once counted (kp_sim_store_finish()) */
}

void kp_sim_store_put_state(struct kp_sim_store_writer *sw, size_t node, const struct kp_verdict *v,
			    const struct kp_sim_reads *r)
{
	unsigned char *q = kp_bw_room(&sw->w, STATE_LEN);

	if (!q)
		return;
	if (node >= SS_NONE || v->load_seq > UINT32_MAX)
		sw->w.failed = true;
	kp_store32(q, (uint32_t)node);
	kp_store64(q + 4, v->global_added);
	kp_store64(q + 12, v->global_after);
	kp_store32(q + 20, (uint32_t)v->load_seq);
	kp_store64(q + 24, r->taint_before);
	kp_store32(q + 32, r->once_before);
	q[36] = (unsigned char)r->stall_before.kind;
	kp_store32(q + 37, index32(r->stall_before.by));
	_Static_assert(41 == STATE_LEN, "the state's length");
}

void kp_sim_store_put_body(struct kp_sim_store_writer *sw, const struct kp_node *nd,
			   const struct kp_verdict *v, const struct kp_sim_reads *r,
			   const uint32_t *pool, unsigned char digest[KP_SIM_IFACE_LEN])
{
	struct kp_byte_writer *w = &sw->w;
	size_t at = w->len;
	unsigned char *q;

	if (sw->bad)
		return;
	/*
	 * A module read (or its facts decoded) carries its digest; one built otherwise is
	 * hashed here, with SHA-256 fetched once (EVP_sha256() is looked up on every use).
	 */
	if (!nd->mod->iface_digested && !sw->md)
		sw->md = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (kp_module_iface(nd->mod, sw->md, digest) < 0) {
		sw->bad = "cannot hash a module's interface";
		return;
	}
	kp_bw_put32(w, 0); /* the body's length, once written */
	kp_bw_str(w, nd->path);
	kp_bw_str(w, nd->mod->name);
	q = kp_bw_room(w, FIXED_LEN);
	if (q)
		put_fixed(q, digest, v, r);
	put_verdict(w, v);
	put_ranges(w, r, pool);
	sw->nreads += (uint64_t)r->nverdicts + r->nlate;
	if (!w->failed) {
		if (w->len - at - 4 > UINT32_MAX)
			w->failed = true;
		else
			kp_store32(w->p + at, (uint32_t)(w->len - at - 4));
	}
}

void kp_sim_store_copy_body(struct kp_sim_store_writer *sw, const struct kp_sim_stored_module *m)
{
	kp_bw_put32(&sw->w, m->bodylen);
	kp_bw_put(&sw->w, m->body, m->bodylen);
	sw->nreads += m->nreads;
}

void kp_sim_store_put_policy(struct kp_sim_store_writer *sw, const struct kp_verdict *v)
{
	size_t np = 0;

	for (size_t i = 0; i < v->nfindings; i++)
		np += kp_finding_is_policy(&v->findings[i]);
	kp_bw_put32(&sw->w, np);
	for (size_t i = 0; i < v->nfindings && np; i++)
		if (kp_finding_is_policy(&v->findings[i]))
			put_finding(&sw->w, &v->findings[i]);
}

int kp_sim_store_finish(struct kp_sim_store_writer *sw, unsigned char **out, size_t *len,
			struct kp_err *err)
{
	const char *bad = sw->bad;

	EVP_MD_free(sw->md);
	sw->md = NULL;
	*out = NULL;
	*len = 0;
	if (!bad && !sw->w.failed && sw->nreads > UINT32_MAX)
		sw->w.failed = true;
	if (!bad && sw->w.failed)
		bad = "out of memory, or a count over 32 bits";
	else if (!bad)
		kp_store32(sw->w.p + NREADS_AT, (uint32_t)sw->nreads);
	if (bad) {
		free(sw->w.p);
		memset(sw, 0, sizeof(*sw));
		return kp_err_set(err, "storing the simulation: %s", bad);
	}
	*out = sw->w.p;
	*len = sw->w.len;
	memset(sw, 0, sizeof(*sw));
	return 0;
}

int kp_sim_store_encode(const struct kp_graph *g, const struct kp_simulation *sim,
			unsigned char **out, size_t *len,
			unsigned char (*digests)[KP_SIM_IFACE_LEN], struct kp_err *err)
{
	struct kp_sim_store_writer sw;
	unsigned char digest[KP_SIM_IFACE_LEN];

	kp_sim_store_begin(&sw, g->n, sim->global_taint, 0);
	if (!sim->rec || sim->reads_incomplete || sim->n != g->n)
		sw.bad = "the simulation's reads were not recorded";
	for (size_t k = 0; k < g->n && !sw.w.failed && !sw.bad; k++) {
		size_t node = g->order[k];

		kp_sim_store_put_state(&sw, node, &sim->v[node], &sim->rec[node]);
		kp_sim_store_put_body(&sw, &g->nodes[node], &sim->v[node], &sim->rec[node],
				      sim->reads, digest);
		if (digests && !sw.bad)
			memcpy(digests[node], digest, sizeof(digest));
		kp_sim_store_put_policy(&sw, &sim->v[node]);
	}
	return kp_sim_store_finish(&sw, out, len, err);
}
