// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libkmod loaded on first use (lazy-lib.h): the stubs of the functions the program calls,
 * with libkmod.h's prototypes. kmod_list_foreach() is kmod_list_next().
 */
#include "lazy-stubs-internal.h"

#include <libkmod.h>

#define KP_LAZY_FNS(F, V, Z, VZ) \
	F(struct kmod_config_iter *, kmod_config_get_blacklists, (const struct kmod_ctx *a), (a)) \
	F(struct kmod_config_iter *, kmod_config_get_softdeps, (const struct kmod_ctx *a), (a)) \
	V(kmod_config_iter_free_iter, (struct kmod_config_iter *a), (a)) \
	F(const char *, kmod_config_iter_get_key, (const struct kmod_config_iter *a), (a)) \
	F(const char *, kmod_config_iter_get_value, (const struct kmod_config_iter *a), (a)) \
	F(bool, kmod_config_iter_next, (struct kmod_config_iter *a), (a)) \
	F(struct kmod_list *, kmod_list_next, (const struct kmod_list *a, \
		const struct kmod_list *b), (a, b)) \
	F(struct kmod_list *, kmod_module_get_dependencies, (const struct kmod_module *a), (a)) \
	F(int, kmod_module_get_softdeps, (const struct kmod_module *a, struct kmod_list **b, \
		struct kmod_list **c), (a, b, c)) \
	F(struct kmod_module *, kmod_module_get_module, (const struct kmod_list *a), (a)) \
	F(const char *, kmod_module_get_name, (const struct kmod_module *a), (a)) \
	F(const char *, kmod_module_get_path, (const struct kmod_module *a), (a)) \
	F(int, kmod_module_new_from_lookup, (struct kmod_ctx *a, const char *b, \
		struct kmod_list **c), (a, b, c)) \
	F(int, kmod_module_new_from_name, (struct kmod_ctx *a, const char *b, \
		struct kmod_module **c), (a, b, c)) \
	Z(struct kmod_module *, kmod_module_unref, (struct kmod_module *a), (a), NULL) \
	Z(int, kmod_module_unref_list, (struct kmod_list *a), (a), 0) \
	F(struct kmod_ctx *, kmod_new, (const char *a, const char *const *b), (a, b)) \
	V(kmod_set_log_fn, (struct kmod_ctx *a, void (*b)(void *, int, const char *, int, \
		const char *, const char *, va_list), const void *c), (a, b, c)) \
	V(kmod_set_log_priority, (struct kmod_ctx *a, int b), (a, b)) \
	Z(struct kmod_ctx *, kmod_unref, (struct kmod_ctx *a), (a), NULL)

KP_LAZY_TABLE;
KP_LAZY_LIB(libkmod, "libkmod", KP_LIBKMOD_SONAME, NULL)
KP_LAZY_STUBS
