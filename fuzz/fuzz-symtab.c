// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for the base cache's table of kernel exports (lib/cache/base-symtab.c,
 * KPSYMTB3) as a whole load takes it where it lies (kernel-base-cached.c add_whole()): the
 * input is a table. Its two CRCs (the slots', the records' and strings') are made to match
 * first: the cache directory is trusted, so what matters is a table whose CRCs hold and whose
 * structure does not (a writer's bug, a forgery by its owner), and a mutation the CRCs
 * refuse reaches nothing behind them. Then the index is checked, the table adopted into an
 * empty kernel base, every entry made and looked up by its name and owner, and every name
 * found again the hook's way (kp_bsymtab_find(), each record's own CRC). Seeds: tables
 * written by the base cache (fuzz/corpus/symtab).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/base-symtab.h"
#include "kernel/kernel-base.h"
#include "kernel/kernel-base-internal.h"
#include "read/module.h"
#include "util/crc32.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define HEAD_LEN 28 /* base-symtab.c's header: magic, 3 counts, 2 CRCs */

/* The CRCs of the table @p (@len bytes) made to match its counts' layout, when it has one. */
static void make_crcs_hold(unsigned char *p, size_t len)
{
	uint64_t nrec, nslots, nstr, need;
	const unsigned char *recs, *slots, *str;

	if (len < HEAD_LEN)
		return;
	nrec = kp_load32(p + 8, false);
	nslots = kp_load32(p + 12, false);
	nstr = kp_load32(p + 16, false);
	need = HEAD_LEN + nrec * KP_BSYMTAB_REC_LEN + nslots * 4 + nstr;
	if (need != len)
		return;
	recs = p + HEAD_LEN;
	slots = recs + nrec * KP_BSYMTAB_REC_LEN;
	str = slots + nslots * 4;
	kp_store32(p + 20, kp_crc32(0, slots, (size_t)nslots * 4));
	kp_store32(p + 24, kp_crc32(kp_crc32(0, recs, (size_t)nrec * KP_BSYMTAB_REC_LEN), str,
				    (size_t)nstr));
}

/* Every record's name found the hook's way (each record checked by its own CRC). */
static void find_each(const struct kp_bsymtab *t)
{
	for (uint32_t i = 0; i < t->nrec; i++) {
		struct kp_bsym r;

		if (kp_bsymtab_get(t, i, true, &r) == 0 && r.name)
			for (int64_t j = kp_bsymtab_find(t, r.name, strlen(r.name)); j > 0;
			     j = kp_bsymtab_next(t, (uint32_t)j - 1))
				;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kp_kernel_base *b;
	struct kp_bsymtab t;
	uint64_t repeats;
	unsigned char *p;

	/* a real table of 27,000 exports is 1.7 MB */
	if (size < HEAD_LEN || size > ((size_t)8 << 20))
		return 0;
	p = malloc(size);
	if (!p)
		return 0;
	memcpy(p, data, size);
	make_crcs_hold(p, size);
	if (kp_bsymtab_open(&t, p, size) < 0) {
		free(p);
		return 0;
	}
	find_each(&t);
	if (kp_bsymtab_check_all(&t) < 0 ||
	    kp_bsymtab_check_index(&t, KP_KSYMTAB_UNUSED_GPL, &repeats) < 0 ||
	    kp_base_new(&b) < 0) {
		free(p);
		return 0;
	}
	/* the base takes @p (kp_base_free() frees it) */
	if (kp_base_adopt_table(b, &t, repeats, NULL, p) != 0) {
		free(p);
		kp_base_free(b);
		return 0;
	}
	for (size_t i = 0; i < kp_base_count(b); i++) {
		const struct kp_ksym *k = kp_base_at(b, i);

		if (k && k->name) {
			kp_base_lookup(b, k->name);
			kp_base_lookup_owner(b, k->name, k->owner);
			for (const struct kp_ksym *n = k; n; n = kp_base_next_same_name(b, n))
				;
		}
	}
	kp_base_free(b);
	return 0;
}
