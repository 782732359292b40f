/* SPDX-License-Identifier: GPL-2.0-or-later */
/* json-c helpers shared by the JSON outputs: valid UTF-8 always, CRCs as "0x%08x". */
#ifndef KP_JSON_OUT_H
#define KP_JSON_OUT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/*
 * A JSON string of @s (null for NULL). Written as valid UTF-8 JSON; each byte of invalid
 * UTF-8 is written as the lone low surrogate "\udcHH" (surrogateescape), so that different
 * byte strings stay different (a plain U+FFFD would merge them).
 */
struct json_object *kp_json_string(const char *s);
/* An array of the words of @s (separated by single spaces); null for NULL. */
struct json_object *kp_json_words(const char *s);
/* "0x%08x", or null when @has is false. */
struct json_object *kp_json_crc(bool has, uint32_t crc);
/* Adds @val under @key; @val may be NULL (JSON null). */
void kp_json_add(struct json_object *obj, const char *key, struct json_object *val);
/* Writes @obj compactly (or pretty) and drops it; -1 when out of memory. */
int kp_json_emit(FILE *f, struct json_object *obj, bool pretty);

/*
 * Builders for kp_json_stream(): one per thread, so their objects are never shared between
 * threads. They record running out of memory instead of returning it, so that building code
 * needs no check per call: each kp_jb_*() takes NULL (from an earlier failure) in stride.
 */
struct kp_jb;

/* A builder for the calling thread (kp_json_stream() makes its own); NULL: out of memory. */
struct kp_jb *kp_jb_new(void);
/* Frees @b, not the objects built with it. */
void kp_jb_free(struct kp_jb *b);
/* Out of memory since kp_jb_new() (in kp_json_stream(): since the item began). */
bool kp_jb_failed(const struct kp_jb *b);
struct json_object *kp_jb_object(struct kp_jb *b);
struct json_object *kp_jb_array(struct kp_jb *b);
/* kp_json_string() */
struct json_object *kp_jb_string(struct kp_jb *b, const char *s);
/* A string with static storage duration (a literal): one object per thread, shared. */
struct json_object *kp_jb_static(struct kp_jb *b, const char *s);
/* true or false, shared. */
struct json_object *kp_jb_bool(struct kp_jb *b, bool v);
/* kp_json_crc() */
struct json_object *kp_jb_crc(struct kp_jb *b, bool has, uint32_t crc);
/* @o, built by plain json-c calls, with its absence (out of memory) noted as a failure. */
struct json_object *kp_jb_take(struct kp_jb *b, struct json_object *o);

/*
 * Records by the hundred thousand (graph imports) are written as text in json-c's plain
 * layout, the same bytes json-c would write for them, and handed to json-c as one value
 * that serialises to that text (json_object_userdata_to_json_string()). Only for plain
 * output: --pretty keeps the objects. Strings other than printable ASCII without '"'
 * and '\\' go through kp_json_string() and json-c's own escaping.
 */
struct kp_jtext {
	char *buf;
	size_t len, cap;
	bool failed;
};
/* @t's buffer grown to hold @len more bytes and a NUL: false (@t->failed) when it cannot. */
bool kp_jtext_grow(struct kp_jtext *t, size_t len);
/*
 * The @len bytes of @s appended (a NUL kept after them). Inline, as kp_jtext_lit(): a tree's
 * graph JSON appends ~4 million pieces of a few bytes each, most of them literals whose
 * length and copy the compiler then works out in place.
 */
static inline void kp_jtext_put(struct kp_jtext *t, const char *s, size_t len)
{
	if (t->failed || (len + 1 > t->cap - t->len && !kp_jtext_grow(t, len)))
		return;
	memcpy(t->buf + t->len, s, len);
	t->len += len;
	t->buf[t->len] = '\0';
}
static inline void kp_jtext_lit(struct kp_jtext *t, const char *s)
{
	kp_jtext_put(t, s, strlen(s));
}
/* kp_json_string(@s) as json-c writes it; null for NULL. */
void kp_jtext_str(struct kp_jtext *t, const char *s);
void kp_jtext_bool(struct kp_jtext *t, bool v);
/* kp_json_crc() as json-c writes it. */
void kp_jtext_crc(struct kp_jtext *t, bool has, uint32_t crc);
/* A value that serialises to @t's text; takes @t's buffer (@t is empty after). */
struct json_object *kp_jb_text(struct kp_jb *b, struct kp_jtext *t);
/*
 * Adds @val (NULL: JSON null) under @key, which must outlive @obj (a literal) and be new to
 * @obj: it is neither copied nor looked up.
 */
void kp_jb_add(struct kp_jb *b, struct json_object *obj, const char *key, struct json_object *val);
/* Appends @val (NULL: JSON null) to the array @arr. */
void kp_jb_push(struct kp_jb *b, struct json_object *arr, struct json_object *val);

/* Builds item @i of a streamed array, or NULL to leave it out; may run in any thread. */
typedef struct json_object *kp_json_item_fn(struct kp_jb *b, size_t i, void *data);

/*
 * Writes @fn(0) .. @fn(@n - 1) to @f, in order, each after "\n" (the first written) or ",\n".
 * @jobs threads (0: one per CPU) build and serialise windows of items side by side; @fn must
 * only read what it shares with the other threads. Returns -1 when out of memory (the output
 * then stops short), else 0.
 */
int kp_json_stream(FILE *f, size_t n, kp_json_item_fn *fn, void *data, bool pretty, unsigned jobs);

#endif
