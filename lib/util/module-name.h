/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Module names as the kernel spells them (KBUILD_MODNAME, scripts/Makefile.lib): a '-' of a
 * file name or of a name a user gives becomes '_'. The one home of that rule, of where the
 * name in a path's basename ends, and of comparing names with '-' and '_' alike.
 */
#ifndef KP_MODULE_NAME_H
#define KP_MODULE_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h> /* SIZE_MAX */

/* Where the module name in a path's basename ends. */
enum kp_modname_end {
	KP_MODNAME_WHOLE, /* the whole basename (a Module.symvers owner: no suffix, ',' as '_') */
	KP_MODNAME_KO,	  /* before the first ".ko" (foo.ko, foo.ko.xz), else the whole basename */
	KP_MODNAME_DOT,	  /* before the first '.' (depmod's rule for files of a modules tree) */
};

/*
 * The first @len bytes of @name (fewer at its NUL; SIZE_MAX: all of it) with '-' as '_',
 * into @buf of @size bytes, NUL-terminated when @size > 0 and cut at @size - 1 bytes.
 * Returns how many bytes of @name were copied: @name did not fit if @name[ret] is not where
 * it was meant to end.
 */
size_t kp_modname_copy(char *buf, size_t size, const char *name, size_t len);

/*
 * The module name of @path: its basename up to @end, '-' as '_' (and ',' as '_' for
 * KP_MODNAME_WHOLE, kbuild's name-fix), into @buf (cut as above).
 */
void kp_modname_from_path(char *buf, size_t size, const char *path, enum kp_modname_end end);

/* True if @a and @b name the same module: equal with '-' and '_' alike. */
bool kp_modname_eq(const char *a, const char *b);

#endif
