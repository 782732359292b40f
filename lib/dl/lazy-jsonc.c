// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * json-c loaded on first use (lazy-lib.h): the stubs of the functions the program calls, with
 * json-c's prototypes. json_object_userdata_to_json_string and json_object_free_userdata are
 * handed to json-c as callbacks: json-c calls the stubs, which call its own.
 */
#include "lazy-stubs-internal.h"

#include <json-c/json.h>

#define KP_LAZY_FNS(F, V, Z, VZ) \
	F(int, json_object_array_add, (struct json_object *a, struct json_object *b), (a, b)) \
	V(json_object_free_userdata, (struct json_object *a, void *b), (a, b)) \
	F(struct json_object *, json_object_get, (struct json_object *a), (a)) \
	F(struct json_object *, json_object_new_array, (void), ()) \
	F(struct json_object *, json_object_new_boolean, (json_bool a), (a)) \
	F(struct json_object *, json_object_new_int, (int32_t a), (a)) \
	F(struct json_object *, json_object_new_int64, (int64_t a), (a)) \
	F(struct json_object *, json_object_new_object, (void), ()) \
	F(struct json_object *, json_object_new_string, (const char *a), (a)) \
	F(struct json_object *, json_object_new_string_len, (const char *a, const int b), (a, b)) \
	F(int, json_object_object_add, (struct json_object *a, const char *b, \
		struct json_object *c), (a, b, c)) \
	F(int, json_object_object_add_ex, (struct json_object *a, const char *const b, \
		struct json_object *const c, const unsigned int d), (a, b, c, d)) \
	F(json_bool, json_object_object_get_ex, (const struct json_object *a, const char *b, \
		struct json_object **c), (a, b, c)) \
	Z(int, json_object_put, (struct json_object *a), (a), 0) \
	V(json_object_set_serializer, (json_object *a, json_object_to_json_string_fn *b, \
		void *c, json_object_delete_fn *d), (a, b, c, d)) \
	F(const char *, json_object_to_json_string_ext, (struct json_object *a, int b), (a, b)) \
	F(const char *, json_object_to_json_string_length, (struct json_object *a, int b, \
		size_t *c), (a, b, c)) \
	F(int, json_object_userdata_to_json_string, (struct json_object *a, struct printbuf *b, \
		int c, int d), (a, b, c, d))

KP_LAZY_TABLE;
KP_LAZY_LIB(libjsonc, "libjson-c", KP_LIBJSONC_SONAME, NULL)
KP_LAZY_STUBS
