// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A recorded simulation read back from its bytes, every count, index and string checked
 * (sim-store.h; its layout: sim-store-format.h).
 */
#include <string.h>

#include "sim-store-format.h"
#include "sim-store.h"
#include "sim-reads.h"
#include "loader.h"
#include "util/byte-reader.h"

/*
 * Reading (util/byte-reader.h: bounds-checked), with the arena the decoded arrays go to and
 * the pool the verdicts read are gathered in (@npool of the header's @cpool).
 */
struct rbuf {
	struct kp_byte_reader br;
	struct kp_arena *arena;
	uint32_t *pool;
	size_t npool, cpool;
};

/* A count of items each at least @min bytes long: no more than the bytes left allow. */
static size_t get_count(struct rbuf *r, size_t min, const char *what)
{
	uint32_t n = kp_br_get32(&r->br, what);

	if (!r->br.bad && (size_t)n > (r->br.len - r->br.off) / min) {
		r->br.bad = what;
		return 0;
	}
	return r->br.bad ? 0 : n;
}

/* The stored index @v: below @n, or SIZE_MAX for none (else @what is wrong). */
static size_t to_index(struct rbuf *r, uint32_t v, size_t n, const char *what)
{
	if (v == SS_NONE)
		return SIZE_MAX;
	if (v >= n && !r->br.bad)
		r->br.bad = what;
	return v;
}

/*
 * A string (NULL for none): the stored bytes themselves, NUL-terminated there and without a
 * NUL inside. Lent as char * for the verdict's fields; nothing writes through it.
 */
static char *get_str(struct rbuf *r, const char *what)
{
	uint32_t n = kp_br_get32(&r->br, what);
	const unsigned char *q;

	if (r->br.bad || n == SS_NONE)
		return NULL;
	q = kp_br_take(&r->br, (size_t)n + 1, what);
	if (!q)
		return NULL;
	if (q[n] || memchr(q, '\0', n)) {
		r->br.bad = what;
		return NULL;
	}
	return (char *)q;
}

/* @n items of @size bytes from the arena, each filled by the caller (no zeroing). */
static void *get_array(struct rbuf *r, size_t n, size_t size)
{
	void *a;

	if (r->br.bad || !n)
		return NULL;
	a = kp_arena_alloc(r->arena, n * size);
	if (!a)
		r->br.bad = "out of memory";
	return a;
}

static void get_finding(struct rbuf *r, struct kp_finding *f)
{
	unsigned waived;

	f->id = get_str(r, "finding id");
	f->severity = (enum kp_severity)kp_br_get8(&r->br, "finding severity");
	f->consequence = (enum kp_consequence)kp_br_get8(&r->br, "finding consequence");
	f->message = get_str(r, "finding message");
	f->symbol = get_str(r, "finding symbol");
	waived = kp_br_get8(&r->br, "finding waived");
	f->waived = waived;
	if (!r->br.bad &&
	    (!f->id || f->severity > KP_SEV_ERROR || f->consequence > KP_CONS_WARN || waived > 1))
		r->br.bad = "finding";
}

/* A stall (what an oops left of the loader): a kind, and the verdict of the load behind it. */
static void to_stall(struct rbuf *r, struct kp_stall *st, unsigned kind, uint32_t by, size_t n,
		     const char *what)
{
	st->by = to_index(r, by, n, what);
	st->kind = (enum kp_stall_kind)kind;
	if (!r->br.bad && (kind > KP_STALL_HUNG || (kind != KP_STALL_NONE && st->by == SIZE_MAX)))
		r->br.bad = what;
}

/* The body's fixed-size fields (put_fixed()) into @m, @v and @rd. */
static void get_fixed(struct rbuf *r, struct kp_sim_stored_module *m, struct kp_verdict *v,
		      struct kp_sim_reads *rd, size_t n)
{
	const unsigned char *q = kp_br_take(&r->br, FIXED_LEN, "verdict");
	unsigned flags, nb;

	if (!q)
		return;
	memcpy(m->iface, q, KP_SIM_IFACE_LEN);
	q += KP_SIM_IFACE_LEN;
	flags = q[0];
	v->attempted = flags & 1;
	v->loads = flags & 2;
	v->hangs = flags & 4;
	v->holds_module_mutex = flags & 8;
	v->left_unformed = flags & 16;
	v->err = (int)kp_load32(q + 1, false);
	v->taints = (unsigned long)kp_load64(q + 5, false);
	v->p_reason = (enum kp_p_reason)q[13];
	v->p_from = to_index(r, kp_load32(q + 14, false), n, "P owner");
	v->failed_dep = to_index(r, kp_load32(q + 18, false), n, "failed dependency");
	v->stalled_by = to_index(r, kp_load32(q + 22, false), n, "stalled by");
	rd->taint_tested = (unsigned long)kp_load64(q + 26, false);
	rd->taint_set = (unsigned long)kp_load64(q + 34, false);
	rd->taint_late = (unsigned long)kp_load64(q + 42, false);
	rd->once_read = kp_load32(q + 50, false);
	rd->once_set = kp_load32(q + 54, false);
	nb = q[58];
	rd->name_read = nb & 1;
	rd->name_live = nb & 2;
	rd->name_unformed = nb & 4;
	rd->stall_asked = q[59];
	to_stall(r, &rd->stall_set, q[60], kp_load32(q + 61, false), n, "stall set");
	rd->nmessages_load = kp_load32(q + 65, false);
	rd->nfindings_load = kp_load32(q + 69, false);
	if (r->br.bad)
		return;
	if (flags & ~31u)
		r->br.bad = "verdict flags";
	else if (v->p_reason > KP_P_PRELOADED)
		r->br.bad = "P reason";
	/* the verdict of the load that stalled this one: a blocked or not-run load's only */
	else if ((v->stalled_by != SIZE_MAX) !=
		 (v->err == KP_ERR_BLOCKED || v->err == KP_ERR_NOT_RUN))
		r->br.bad = "stalled by";
	else if ((nb & ~7u) || ((rd->once_before | rd->once_read | rd->once_set) >> KP_ONCE_N) ||
		 (rd->stall_asked >> (KP_STALL_HUNG + 1)))
		r->br.bad = "read record flags";
}

/*
 * A body's variable-size verdict fields; @npolicy findings (read after the body, no more
 * than the bytes after it allow) get their room after the body's.
 */
static void get_verdict(struct rbuf *r, struct kp_verdict *v, size_t npolicy)
{
	size_t nf;

	v->p_symbol = get_str(r, "P symbol");
	v->nmessages = get_count(r, 5, "messages");
	v->messages = get_array(r, v->nmessages, sizeof(*v->messages));
	for (size_t i = 0; i < v->nmessages && !r->br.bad; i++) {
		v->messages[i] = get_str(r, "message");
		if (!v->messages[i])
			r->br.bad = r->br.bad ? r->br.bad : "message";
	}
	nf = get_count(r, 16, "findings");
	v->nfindings = nf + npolicy;
	v->findings = get_array(r, v->nfindings, sizeof(*v->findings));
	for (size_t i = 0; i < nf && !r->br.bad; i++) {
		get_finding(r, &v->findings[i]);
		/* a body is copied as kept: what a splice derives again is never in it */
		if (!r->br.bad && kp_finding_is_policy(&v->findings[i]))
			r->br.bad = "a policy finding in a body";
	}
	v->nsymget = get_count(r, 22, "symbol_get results");
	v->symget = get_array(r, v->nsymget, sizeof(*v->symget));
	for (size_t i = 0; i < v->nsymget && !r->br.bad; i++) {
		struct kp_symget_result *s = &v->symget[i];
		unsigned sf;

		s->symbol = get_str(r, "symbol_get symbol");
		sf = kp_br_get8(&r->br, "symbol_get flags");
		s->ok = sf & 1;
		s->gpl_only = sf & 2;
		s->method_heuristic = sf & 4;
		s->dynamic = sf & 8;
		s->kernel_logs = sf & 16;
		s->reason = get_str(r, "symbol_get reason");
		s->owner = get_str(r, "symbol_get owner");
		s->when = (enum kp_symget_when)kp_br_get8(&r->br, "symbol_get when");
		s->path = get_str(r, "symbol_get path");
		s->function = get_str(r, "symbol_get function");
		if (!r->br.bad && ((sf & ~31u) || s->when > KP_SYMGET_WHEN_CALLED))
			r->br.bad = "symbol_get result";
	}
}

/* @count verdicts read (each below @n) appended to the pool: their first place in *@first. */
static void get_range(struct rbuf *r, size_t n, uint32_t *first, uint32_t *count, const char *what)
{
	size_t c = get_count(r, 4, what);
	const unsigned char *q;

	*first = (uint32_t)r->npool;
	*count = (uint32_t)c;
	if (r->br.bad || !c)
		return;
	if (c > r->cpool - r->npool) {
		r->br.bad = "more verdicts read than counted";
		return;
	}
	q = kp_br_take(&r->br, c * 4, what);
	for (size_t i = 0; q && i < c; i++) {
		uint32_t v = kp_load32(q + 4 * i, false);

		if (v >= n) {
			r->br.bad = "a verdict read past the modules";
			return;
		}
		r->pool[r->npool++] = v;
	}
}

/* Module @node's state (after its node: @q), body and policy findings, at the reader's place. */
static void get_module(struct rbuf *r, struct kp_sim_stored *out, size_t node,
		       const unsigned char *q)
{
	struct kp_verdict *v = &out->sim.v[node];
	struct kp_sim_reads *rd = &out->sim.rec[node];
	struct kp_sim_stored_module *m = &out->mods[node];
	size_t n = out->n, body, npolicy, first = r->npool;

	memset(v, 0, sizeof(*v));
	memset(rd, 0, sizeof(*rd));
	v->node = node;
	v->global_added = (unsigned long)kp_load64(q + 4, false);
	v->global_after = (unsigned long)kp_load64(q + 12, false);
	v->load_seq = kp_load32(q + 20, false);
	rd->taint_before = (unsigned long)kp_load64(q + 24, false);
	rd->once_before = kp_load32(q + 32, false);
	to_stall(r, &rd->stall_before, q[36], kp_load32(q + 37, false), n, "stall before");
	m->bodylen = get_count(r, 1, "body length");
	body = r->br.off;
	m->body = r->br.p + body;
	/* the policy findings' count, after the body: their room is made with the others' */
	npolicy = 0;
	if (!r->br.bad && r->br.len - body - m->bodylen >= 4)
		npolicy = kp_load32(m->body + m->bodylen, false);
	if (npolicy > (r->br.len - body - m->bodylen) / 16)
		npolicy = 0; /* refused below, when read */
	m->path = get_str(r, "path");
	m->name = get_str(r, "name");
	if (!r->br.bad && (!m->path || !m->name))
		r->br.bad = "path or name";
	get_fixed(r, m, v, rd, n);
	get_verdict(r, v, npolicy);
	if (!r->br.bad &&
	    (rd->nmessages_load > v->nmessages || rd->nfindings_load > v->nfindings - npolicy))
		r->br.bad = "load messages or findings past the verdict's";
	get_range(r, n, &rd->verdicts, &rd->nverdicts, "verdicts read");
	get_range(r, n, &rd->late, &rd->nlate, "verdicts read late");
	m->nreads = r->npool - first;
	if (!r->br.bad && r->br.off - body != m->bodylen)
		r->br.bad = "body length";
	if (get_count(r, 16, "policy findings") != npolicy && !r->br.bad)
		r->br.bad = "policy findings";
	for (size_t i = v->nfindings - npolicy; i < v->nfindings && !r->br.bad; i++) {
		get_finding(r, &v->findings[i]);
		if (!r->br.bad && !kp_finding_is_policy(&v->findings[i]))
			r->br.bad = "policy findings";
	}
}

int kp_sim_store_decode(const unsigned char *p, size_t len, struct kp_sim_stored *out,
			struct kp_err *err)
{
	struct rbuf r = { .br = { .p = p, .len = len }, .arena = &out->arena };
	struct kp_simulation *sim = &out->sim;
	const unsigned char *magic;
	bool *seen = NULL;
	size_t n;

	memset(out, 0, sizeof(*out));
	magic = kp_br_take(&r.br, 8, "header");
	if (magic && memcmp(magic, SS_MAGIC, 8))
		r.br.bad = "magic";
	/* a module takes at least 188 bytes, a verdict read 4 */
	n = get_count(&r, 188, "module count");
	sim->global_taint = (unsigned long)kp_br_get64(&r.br, "global taint");
	r.cpool = get_count(&r, 4, "verdicts read");
	if (!r.br.bad && n) {
		/* every entry is written whole by get_module() */
		out->order = malloc(n * sizeof(*out->order));
		out->mods = malloc(n * sizeof(*out->mods));
		sim->v = malloc(n * sizeof(*sim->v));
		sim->rec = malloc(n * sizeof(*sim->rec));
		seen = calloc(n, sizeof(*seen));
		if (!out->order || !out->mods || !sim->v || !sim->rec || !seen)
			r.br.bad = "out of memory";
	}
	if (!r.br.bad && r.cpool && !(r.pool = malloc(r.cpool * sizeof(*r.pool))))
		r.br.bad = "out of memory";
	out->n = sim->n = n;
	for (size_t i = 0; i < n && !r.br.bad; i++) {
		const unsigned char *q = kp_br_take(&r.br, STATE_LEN, "module");
		size_t node = q ? to_index(&r, kp_load32(q, false), n, "node") : SIZE_MAX;

		if (r.br.bad || node == SIZE_MAX || seen[node]) {
			r.br.bad = r.br.bad ? r.br.bad : "node twice or none";
			break;
		}
		seen[node] = true;
		out->order[i] = node;
		get_module(&r, out, node, q);
	}
	sim->reads = r.pool;
	sim->nreads = r.npool;
	sim->creads = r.cpool;
	if (!r.br.bad && r.npool != r.cpool)
		r.br.bad = "fewer verdicts read than counted";
	if (!r.br.bad && r.br.off != len)
		r.br.bad = "bytes after the end";
	free(seen);
	if (r.br.bad) {
		kp_sim_stored_release(out);
		return kp_err_set(err, "stored simulation: %s", r.br.bad);
	}
	out->len = len;
	return 0;
}

void kp_sim_stored_release(struct kp_sim_stored *s)
{
	free(s->order);
	free(s->mods);
	free(s->sim.v);
	free(s->sim.rec);
	free(s->sim.reads);
	kp_arena_release(&s->arena);
	memset(s, 0, sizeof(*s));
}
