/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whether two readings of one module agree on its facts: the reader test and the fuzz
 * target compare a whole in-memory image with a reading thread's sparse pread() image.
 */
#ifndef KP_SAME_MODULE_H
#define KP_SAME_MODULE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "read/module.h"

static inline bool kp_same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* @hash is what lookups take for @name: kp_hash_string(@name), the same on both sides. */
static inline bool kp_same_hash(const char *name, uint32_t hash, uint32_t other)
{
	return hash == other && (!name || hash == kp_hash_string(name));
}

static inline bool kp_same_module(const struct kp_module *a, const struct kp_module *b)
{
	if (!kp_same_str(a->name, b->name) || !kp_same_str(a->license, b->license) ||
	    !kp_same_str(a->vermagic, b->vermagic) || a->nmodinfo != b->nmodinfo ||
	    a->nimports != b->nimports || a->nexports != b->nexports ||
	    a->nversions != b->nversions || a->next_versions != b->next_versions ||
	    a->nsymget != b->nsymget || a->nsymput != b->nsymput ||
	    memcmp(&a->sig, &b->sig, sizeof(a->sig)) ||
	    a->this_module_size != b->this_module_size || a->shoff != b->shoff ||
	    a->nrelocs != b->nrelocs || a->symstr_state != b->symstr_state ||
	    a->symname_past_end != b->symname_past_end ||
	    a->import_name_past_end != b->import_name_past_end ||
	    a->kept_name_past_end != b->kept_name_past_end ||
	    a->import_name_outside != b->import_name_outside ||
	    a->import_name_outside_off != b->import_name_outside_off ||
	    !kp_same_str(a->relocs_problem, b->relocs_problem) ||
	    a->wild_export.present != b->wild_export.present ||
	    a->wild_export.table != b->wild_export.table ||
	    a->wild_export.index != b->wild_export.index ||
	    a->wild_export.offset != b->wild_export.offset ||
	    !kp_same_str(a->wild_export.target, b->wild_export.target) ||
	    a->wild_export.rel_shndx != b->wild_export.rel_shndx ||
	    a->wild_export.rel_index != b->wild_export.rel_index)
		return false;
	for (size_t i = 0; i < a->nrelocs; i++)
		if (a->relocs[i].type != b->relocs[i].type ||
		    a->relocs[i].rela != b->relocs[i].rela ||
		    a->relocs[i].percpu != b->relocs[i].percpu ||
		    a->relocs[i].shndx != b->relocs[i].shndx ||
		    a->relocs[i].index != b->relocs[i].index ||
		    a->relocs[i].count != b->relocs[i].count ||
		    !kp_same_str(a->relocs[i].section, b->relocs[i].section))
			return false;
	for (size_t i = 0; i < a->nmodinfo; i++)
		if (!kp_same_str(a->modinfo[i].key, b->modinfo[i].key) ||
		    !kp_same_str(a->modinfo[i].value, b->modinfo[i].value))
			return false;
	for (size_t i = 0; i < a->nimports; i++)
		if (!kp_same_str(a->imports[i].name, b->imports[i].name) ||
		    !kp_same_hash(a->imports[i].name, a->imports[i].hash, b->imports[i].hash) ||
		    a->imports[i].weak != b->imports[i].weak)
			return false;
	for (size_t i = 0; i < a->nexports; i++)
		if (!kp_same_str(a->exports[i].name, b->exports[i].name) ||
		    !kp_same_hash(a->exports[i].name, a->exports[i].hash, b->exports[i].hash) ||
		    !kp_same_str(a->exports[i].ns, b->exports[i].ns) ||
		    a->exports[i].gpl_only != b->exports[i].gpl_only ||
		    a->exports[i].crc != b->exports[i].crc)
			return false;
	for (size_t i = 0; i < a->nversions; i++)
		if (!kp_same_str(a->versions[i].name, b->versions[i].name) ||
		    !kp_same_hash(a->versions[i].name, a->versions[i].hash, b->versions[i].hash) ||
		    a->versions[i].crc != b->versions[i].crc)
			return false;
	for (size_t i = 0; i < a->next_versions; i++)
		if (!kp_same_str(a->ext_versions[i].name, b->ext_versions[i].name) ||
		    !kp_same_hash(a->ext_versions[i].name, a->ext_versions[i].hash,
				  b->ext_versions[i].hash) ||
		    a->ext_versions[i].crc != b->ext_versions[i].crc)
			return false;
	for (size_t i = 0; i < a->nsymget; i++)
		if (!kp_same_str(a->symget[i].symbol, b->symget[i].symbol) ||
		    a->symget[i].offset != b->symget[i].offset)
			return false;
	return true;
}

#endif
