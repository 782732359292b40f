/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a stub file (lazy-crypto.c, ...) is made of, from one list of its library's functions,
 * KP_LAZY_FNS(F, V, Z, VZ): F(RET, NAME, (PARAMS), (ARGS)) for each function that returns a
 * value, V(NAME, (PARAMS), (ARGS)) for each that returns none, and Z(RET, NAME, (PARAMS),
 * (ARGS), VALUE) and VZ(NAME, (PARAMS), (ARGS)) for the destructors the library documents as
 * doing nothing for a NULL first argument `a` (BN_free(), elf_end(), json_object_put(), ...):
 * their stubs answer that (VALUE) without loading the library, so that a run that made no
 * object of it, freeing what it did not make, does not load it. The list gives the index
 * table (KP_LAZY_TABLE), the library (KP_LAZY_LIB) and the stubs (KP_LAZY_STUBS): a stub is
 *
 *	RET NAME(PARAMS) { return ((typeof(&NAME))address of NAME)(ARGS); }
 *
 * defined with the prototype of the library's header, which the file includes: a stub whose
 * prototype differs is a compile error, a function the program calls and the list lacks is a
 * link error. Hidden: the program exports none of them (a library loaded later would bind its
 * own calls to them).
 */
#ifndef KP_DL_LAZY_STUBS_INTERNAL_H
#define KP_DL_LAZY_STUBS_INTERNAL_H

#include "lazy-lib.h"

#define KP_LAZY_HIDDEN __attribute__((visibility("hidden")))

#define KP_LAZY_ENUM_F(ret, name, params, args) KP_LAZY_I_##name,
#define KP_LAZY_ENUM_V(name, params, args) KP_LAZY_I_##name,
#define KP_LAZY_ENUM_Z(ret, name, params, args, if_null) KP_LAZY_I_##name,
#define KP_LAZY_NAME_F(ret, name, params, args) #name,
#define KP_LAZY_NAME_V(name, params, args) #name,
#define KP_LAZY_NAME_Z(ret, name, params, args, if_null) #name,

/* The address of @name, the library loaded (kp_lazy_fn()), as a pointer of @name's own type. */
#define KP_LAZY_ADDR(name) ((__typeof__(&name))kp_lazy_fn(&kp_lazy_this, KP_LAZY_I_##name, #name))

#define KP_LAZY_STUB_F(ret, name, params, args)                                                \
	KP_LAZY_HIDDEN ret name params                                                         \
	{                                                                                      \
		return KP_LAZY_ADDR(name) args;                                                \
	}
#define KP_LAZY_STUB_V(name, params, args)                                                     \
	KP_LAZY_HIDDEN void name params                                                        \
	{                                                                                      \
		KP_LAZY_ADDR(name) args;                                                       \
	}
#define KP_LAZY_STUB_Z(ret, name, params, args, if_null)                                       \
	KP_LAZY_HIDDEN ret name params                                                         \
	{                                                                                      \
		if (!a)                                                                        \
			return if_null;                                                        \
		return KP_LAZY_ADDR(name) args;                                                \
	}
#define KP_LAZY_STUB_VZ(name, params, args)                                                    \
	KP_LAZY_HIDDEN void name params                                                        \
	{                                                                                      \
		if (a)                                                                         \
			KP_LAZY_ADDR(name) args;                                               \
	}

/* The indexes (KP_LAZY_I_NAME), the names and the table of addresses, from KP_LAZY_FNS. */
#define KP_LAZY_TABLE                                                                          \
	enum {                                                                                 \
		KP_LAZY_FNS(KP_LAZY_ENUM_F, KP_LAZY_ENUM_V, KP_LAZY_ENUM_Z, KP_LAZY_ENUM_V)     \
		KP_LAZY_N                                                                      \
	};                                                                                     \
	static const char *const kp_lazy_names[KP_LAZY_N] = { KP_LAZY_FNS(                     \
		KP_LAZY_NAME_F, KP_LAZY_NAME_V, KP_LAZY_NAME_Z, KP_LAZY_NAME_V) };             \
	static void *kp_lazy_fns[KP_LAZY_N]

/*
 * The library kp_lazy_this, its once routine, and its accessor kp_lazy_@id() (lazy-lib.h);
 * @ready: NULL, or its initialisation (struct kp_lazy_lib).
 */
#define KP_LAZY_LIB(id, label_, soname_, ready_)                                               \
	static void kp_lazy_load_this(void);                                                   \
	static struct kp_lazy_lib kp_lazy_this = {                                             \
		.label = label_,                                                               \
		.soname = soname_,                                                             \
		.names = kp_lazy_names,                                                        \
		.fns = kp_lazy_fns,                                                            \
		.n = KP_LAZY_N,                                                                \
		.ready = ready_,                                                               \
		.load_once = kp_lazy_load_this,                                                \
		.once = PTHREAD_ONCE_INIT,                                                     \
	};                                                                                     \
	static void kp_lazy_load_this(void)                                                    \
	{                                                                                      \
		kp_lazy_load(&kp_lazy_this);                                                   \
	}                                                                                      \
	struct kp_lazy_lib *kp_lazy_##id(void)                                                 \
	{                                                                                      \
		return &kp_lazy_this;                                                          \
	}

/* The stubs. */
#define KP_LAZY_STUBS KP_LAZY_FNS(KP_LAZY_STUB_F, KP_LAZY_STUB_V, KP_LAZY_STUB_Z, KP_LAZY_STUB_VZ)

#endif
