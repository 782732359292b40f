// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A module's interface digest (module-iface.h). The bytes hashed, little-endian: a string
 * is its length (32 bits, 0xffffffff for NULL) and its bytes, no NUL; name, modinfo name,
 * export count, per export its name, namespace, table (8), GPL-only and has-CRC bits (8),
 * CRC (32); import count, per import its name and weak bit (8); depends= count and names;
 * import_ns= count and names; made in a buffer (on the stack while they fit), hashed at once.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "module-iface.h"
#include "util/util.h"

#define NONE UINT32_MAX

/* The bytes hashed: on the stack while they fit (most modules), else allocated. */
struct feed {
	unsigned char *p;
	size_t len, cap;
	bool failed;
	unsigned char stack[4096];
};

static void put(struct feed *f, const void *p, size_t len)
{
	if (f->failed || !len)
		return;
	if (len > f->cap - f->len) {
		size_t cap = f->cap;
		unsigned char *q;

		while (len > cap - f->len) {
			if (cap > SIZE_MAX / 2) {
				f->failed = true;
				return;
			}
			cap *= 2;
		}
		q = f->p == f->stack ? malloc(cap) : realloc(f->p, cap);
		if (!q) {
			f->failed = true;
			return;
		}
		if (f->p == f->stack)
			memcpy(q, f->stack, f->len);
		f->p = q;
		f->cap = cap;
	}
	memcpy(f->p + f->len, p, len);
	f->len += len;
}

static void put8(struct feed *f, unsigned v)
{
	unsigned char b = (unsigned char)v;

	put(f, &b, 1);
}

static void put32(struct feed *f, uint64_t v)
{
	unsigned char b[4];

	if (v > UINT32_MAX) /* a count the layout cannot hold */
		f->failed = true;
	kp_store32(b, (uint32_t)v);
	put(f, b, 4);
}

static void put_str(struct feed *f, const char *s)
{
	size_t len;

	if (!s) {
		put32(f, NONE);
		return;
	}
	len = strlen(s);
	put32(f, len >= NONE ? UINT64_MAX : len);
	put(f, s, len);
}

int kp_module_iface_digest(const struct kp_module *m, const struct evp_md_st *md,
			   unsigned char out[KP_MODULE_IFACE_LEN])
{
	struct feed f;
	unsigned int olen = 0;

	f.p = f.stack;
	f.len = 0;
	f.cap = sizeof(f.stack);
	f.failed = false;
	put_str(&f, m->name);
	put_str(&f, m->modinfo_name);
	put32(&f, m->nexports);
	for (size_t i = 0; i < m->nexports; i++) {
		const struct kp_export *e = &m->exports[i];

		put_str(&f, e->name);
		put_str(&f, e->ns);
		put8(&f, (unsigned)e->table);
		put8(&f, (e->gpl_only ? 1u : 0u) | (e->has_crc ? 2u : 0u));
		put32(&f, e->crc);
	}
	put32(&f, m->nimports);
	for (size_t i = 0; i < m->nimports; i++) {
		put_str(&f, m->imports[i].name);
		put8(&f, m->imports[i].weak);
	}
	put32(&f, m->ndepends);
	for (size_t i = 0; i < m->ndepends; i++)
		put_str(&f, m->depends[i]);
	put32(&f, m->nimport_ns);
	for (size_t i = 0; i < m->nimport_ns; i++)
		put_str(&f, m->import_ns[i]);
	if (!f.failed && (EVP_Digest(f.p, f.len, out, &olen, md ? md : EVP_sha256(), NULL) != 1 ||
			  olen != KP_MODULE_IFACE_LEN))
		f.failed = true;
	if (f.p != f.stack)
		free(f.p);
	return f.failed ? -1 : 0;
}

int kp_module_iface(const struct kp_module *m, const struct evp_md_st *md,
		    unsigned char out[KP_MODULE_IFACE_LEN])
{
	if (m->iface_digested) {
		memcpy(out, m->iface_sha256, KP_MODULE_IFACE_LEN);
		return 0;
	}
	return kp_module_iface_digest(m, md, out);
}
