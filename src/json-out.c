// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * json-out.c: JSON written out (json-out.h): the per-thread builders with their shared
 * objects, text spliced in as already-serialised JSON, and the streaming of many items on
 * several threads in order. Strings as JSON (invalid UTF-8 escaped): json-string.c.
 */
#include "json-out.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* json-c 0.13 and 0.14 only know the older name. */
#ifndef JSON_C_OBJECT_ADD_CONSTANT_KEY
#define JSON_C_OBJECT_ADD_CONSTANT_KEY JSON_C_OBJECT_KEY_IS_CONSTANT
#endif

void kp_json_add(struct json_object *obj, const char *key, struct json_object *val)
{
	json_object_object_add(obj, key, val);
}

static int emit_flags(bool pretty)
{
	return JSON_C_TO_STRING_NOSLASHESCAPE |
	       (pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
		       : JSON_C_TO_STRING_PLAIN);
}

int kp_json_emit(FILE *f, struct json_object *obj, bool pretty)
{
	const char *s = obj ? json_object_to_json_string_ext(obj, emit_flags(pretty)) : NULL;

	if (s)
		fputs(s, f);
	json_object_put(obj);
	return s ? 0 : -1;
}

/* One thread's builder: its shared objects and whether an allocation failed. */
struct kp_jb {
	struct json_object *bools[2];
	struct {
		const char *s;
		struct json_object *o;
	} statics[16];
	size_t nstatics;
	bool failed;
};

static void jb_release(struct kp_jb *b)
{
	json_object_put(b->bools[0]);
	json_object_put(b->bools[1]);
	for (size_t i = 0; i < b->nstatics; i++)
		json_object_put(b->statics[i].o);
}

/* @o, or a note that building it failed. */
static struct json_object *jb_check(struct kp_jb *b, struct json_object *o)
{
	if (!o)
		b->failed = true;
	return o;
}

struct kp_jb *kp_jb_new(void)
{
	return calloc(1, sizeof(struct kp_jb));
}

void kp_jb_free(struct kp_jb *b)
{
	if (!b)
		return;
	jb_release(b);
	free(b);
}

bool kp_jb_failed(const struct kp_jb *b)
{
	return b->failed;
}

struct json_object *kp_jb_object(struct kp_jb *b)
{
	return jb_check(b, json_object_new_object());
}

struct json_object *kp_jb_array(struct kp_jb *b)
{
	return jb_check(b, json_object_new_array());
}

struct json_object *kp_jb_string(struct kp_jb *b, const char *s)
{
	return s ? jb_check(b, kp_json_string(s)) : NULL;
}

struct json_object *kp_jb_static(struct kp_jb *b, const char *s)
{
	struct json_object *o;
	size_t i;

	for (i = 0; i < b->nstatics; i++)
		if (b->statics[i].s == s)
			return json_object_get(b->statics[i].o);
	o = jb_check(b, json_object_new_string(s));
	if (!o || i == sizeof(b->statics) / sizeof(b->statics[0]))
		return o;
	b->statics[i].s = s;
	b->statics[i].o = o;
	b->nstatics++;
	return json_object_get(o);
}

struct json_object *kp_jb_bool(struct kp_jb *b, bool v)
{
	if (!b->bools[v])
		b->bools[v] = json_object_new_boolean(v);
	return json_object_get(jb_check(b, b->bools[v]));
}

struct json_object *kp_jb_crc(struct kp_jb *b, bool has, uint32_t crc)
{
	return has ? jb_check(b, kp_json_crc(true, crc)) : NULL;
}

struct json_object *kp_jb_take(struct kp_jb *b, struct json_object *o)
{
	return jb_check(b, o);
}

bool kp_jtext_grow(struct kp_jtext *t, size_t len)
{
	size_t cap = t->cap ? t->cap : 1024;
	char *p;

	while (len + 1 > cap - t->len) {
		if (cap > SIZE_MAX / 2) {
			t->failed = true;
			return false;
		}
		cap *= 2;
	}
	p = realloc(t->buf, cap);
	if (!p) {
		t->failed = true;
		return false;
	}
	t->buf = p;
	t->cap = cap;
	return true;
}

/*
 * The bytes kp_jtext_str() copies as they are ('1'): printable ASCII but '"' and '\\'; 32 bytes
 * a row. NUL is not one: the scan stops there.
 */
static const char plain_bytes[257] = "00000000000000000000000000000000" /* 0x00 */
				     "11011111111111111111111111111111" /* 0x20: '"' */
				     "11111111111111111111111111110111" /* 0x40: '\\' */
				     "11111111111111111111111111111110" /* 0x60: DEL */
				     "00000000000000000000000000000000" /* 0x80 */
				     "00000000000000000000000000000000"
				     "00000000000000000000000000000000"
				     "00000000000000000000000000000000";

void kp_jtext_str(struct kp_jtext *t, const char *s)
{
	struct json_object *o;
	const char *js;
	size_t n;

	if (!s) {
		kp_jtext_put(t, "null", 4);
		return;
	}
	for (n = 0; plain_bytes[(unsigned char)s[n]] == '1'; n++)
		;
	if (!s[n]) { /* nothing to escape or repair: the usual symbol or module name */
		char *p;

		if (t->failed || (n + 3 > t->cap - t->len && !kp_jtext_grow(t, n + 2)))
			return;
		p = t->buf + t->len;
		p[0] = '"';
		memcpy(p + 1, s, n);
		p[n + 1] = '"';
		p[n + 2] = '\0';
		t->len += n + 2;
		return;
	}
	o = kp_json_string(s);
	js = o ? json_object_to_json_string_ext(o, emit_flags(false)) : NULL;
	if (js)
		kp_jtext_put(t, js, strlen(js));
	else
		t->failed = true;
	json_object_put(o);
}

void kp_jtext_bool(struct kp_jtext *t, bool v)
{
	if (v)
		kp_jtext_put(t, "true", 4);
	else
		kp_jtext_put(t, "false", 5);
}

void kp_jtext_crc(struct kp_jtext *t, bool has, uint32_t crc)
{
	static const char hex[] = "0123456789abcdef";
	char buf[12] = { '"', '0', 'x' };

	if (!has) {
		kp_jtext_put(t, "null", 4);
		return;
	}
	for (int i = 0; i < 8; i++)
		buf[3 + i] = hex[(crc >> (28 - 4 * i)) & 0xf];
	buf[11] = '"';
	kp_jtext_put(t, buf, sizeof(buf));
}

struct json_object *kp_jb_text(struct kp_jb *b, struct kp_jtext *t)
{
	struct json_object *o = NULL;

	if (!t->failed && !t->buf)
		kp_jtext_put(t, "", 0);
	if (!t->failed)
		o = jb_check(b, json_object_new_array());
	if (o)
		json_object_set_serializer(o, json_object_userdata_to_json_string, t->buf,
					   json_object_free_userdata);
	else
		free(t->buf);
	if (t->failed)
		b->failed = true;
	memset(t, 0, sizeof(*t));
	return o;
}

void kp_jb_add(struct kp_jb *b, struct json_object *obj, const char *key, struct json_object *val)
{
	const unsigned opts = JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_ADD_CONSTANT_KEY;

	if (obj && json_object_object_add_ex(obj, key, val, opts) == 0)
		return;
	b->failed = true;
	json_object_put(val);
}

void kp_jb_push(struct kp_jb *b, struct json_object *arr, struct json_object *val)
{
	if (arr && json_object_array_add(arr, val) == 0)
		return;
	b->failed = true;
	json_object_put(val);
}

/*
 * kp_json_stream(): items go in windows of KP_JSON_WINDOW; a thread claims the next window,
 * builds and serialises its items into the window's buffer, and the calling thread writes the
 * windows out in order. At most nslots windows are claimed ahead of the last one written, which
 * bounds the memory whatever the number of items.
 */
/* items: ~100 KB of a whole tree's graph JSON; 64 held 6 MB in 4 slots */
#define KP_JSON_WINDOW 16

struct json_window {
	char *buf; /* ",\n" before every item */
	size_t len, cap;
	bool done;
	bool failed;
};

struct json_stream {
	kp_json_item_fn *fn;
	void *data;
	size_t n, nwin;
	int flags;
	pthread_mutex_t lock;
	pthread_cond_t filled;	   /* a window was built (the calling thread waits) */
	pthread_cond_t freed;	   /* a window was written out (the helpers wait) */
	size_t next;		   /* the next window to build */
	size_t written;		   /* windows written out */
	struct json_window *slots; /* window w in slots[w % nslots] */
	size_t nslots;
	bool stop;
};

static int window_append(struct json_window *win, const char *s, size_t len)
{
	if (len > win->cap - win->len) {
		size_t cap = win->cap ? win->cap : 4096;
		char *p;

		while (len > cap - win->len) {
			if (cap > SIZE_MAX / 2)
				return -1;
			cap *= 2;
		}
		p = realloc(win->buf, cap);
		if (!p)
			return -1;
		win->buf = p;
		win->cap = cap;
	}
	memcpy(win->buf + win->len, s, len);
	win->len += len;
	return 0;
}

static void build_window(const struct json_stream *s, struct kp_jb *b, size_t w)
{
	struct json_window *win = &s->slots[w % s->nslots];
	size_t end = s->n - w * KP_JSON_WINDOW < KP_JSON_WINDOW ? s->n : (w + 1) * KP_JSON_WINDOW;

	win->len = 0;
	win->failed = false;
	for (size_t i = w * KP_JSON_WINDOW; i < end && !win->failed; i++) {
		struct json_object *o;
		const char *str = NULL;
		size_t len = 0;

		b->failed = false;
		o = s->fn(b, i, s->data);
		if (!o && !b->failed)
			continue;
		if (!b->failed)
			str = json_object_to_json_string_length(o, s->flags, &len);
		if (!str || window_append(win, ",\n", 2) || window_append(win, str, len))
			win->failed = true;
		json_object_put(o);
	}
}

/* Claims the next window if its slot is free; with the lock held. */
static bool claim(struct json_stream *s, size_t *w)
{
	if (s->stop || s->next >= s->nwin || s->next - s->written >= s->nslots)
		return false;
	*w = s->next++;
	return true;
}

static void *stream_helper(void *arg)
{
	struct json_stream *s = arg;
	struct kp_jb b = { 0 };
	size_t w;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		if (claim(s, &w)) {
			pthread_mutex_unlock(&s->lock);
			build_window(s, &b, w);
			pthread_mutex_lock(&s->lock);
			s->slots[w % s->nslots].done = true;
			pthread_cond_signal(&s->filled);
		} else if (s->stop || s->next >= s->nwin) {
			break;
		} else {
			pthread_cond_wait(&s->freed, &s->lock);
		}
	}
	pthread_mutex_unlock(&s->lock);
	jb_release(&b);
	return NULL;
}

int kp_json_stream(FILE *f, size_t n, kp_json_item_fn *fn, void *data, bool pretty, unsigned jobs)
{
	struct json_stream s = { .fn = fn, .data = data, .n = n, .flags = emit_flags(pretty) };
	struct kp_jb b = { 0 };
	pthread_t *threads = NULL;
	size_t started = 0;
	bool first = true;
	int rc = 0;

	if (!n)
		return 0;
	s.nwin = (n - 1) / KP_JSON_WINDOW + 1;
	if (!jobs) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

		jobs = ncpu > 0 ? (unsigned)ncpu : 1;
	}
	if (jobs > s.nwin)
		jobs = (unsigned)s.nwin;
	s.nslots = 2 * (size_t)jobs;
	s.slots = calloc(s.nslots, sizeof(*s.slots));
	if (!s.slots)
		return -1;
	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.filled, NULL);
	pthread_cond_init(&s.freed, NULL);
	if (jobs > 1)
		threads = calloc(jobs - 1, sizeof(*threads));
	for (unsigned i = 1; threads && i < jobs; i++)
		if (pthread_create(&threads[started], NULL, stream_helper, &s) == 0)
			started++;

	/* The calling thread writes the windows out in order, and builds when it can. */
	pthread_mutex_lock(&s.lock);
	while (s.written < s.nwin) {
		struct json_window *win = &s.slots[s.written % s.nslots];
		size_t w;

		if (!win->done) {
			if (claim(&s, &w)) {
				pthread_mutex_unlock(&s.lock);
				build_window(&s, &b, w);
				pthread_mutex_lock(&s.lock);
				s.slots[w % s.nslots].done = true;
			} else {
				pthread_cond_wait(&s.filled, &s.lock);
			}
			continue;
		}
		if (win->failed) {
			rc = -1;
			break;
		}
		pthread_mutex_unlock(&s.lock);
		if (win->len) {
			/* the first item written follows "\n", not ",\n" */
			fwrite(win->buf + first, 1, win->len - first, f);
			first = false;
		}
		pthread_mutex_lock(&s.lock);
		win->done = false;
		s.written++;
		pthread_cond_broadcast(&s.freed);
	}
	s.stop = true;
	pthread_cond_broadcast(&s.freed);
	pthread_mutex_unlock(&s.lock);

	for (size_t i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	pthread_cond_destroy(&s.freed);
	pthread_cond_destroy(&s.filled);
	pthread_mutex_destroy(&s.lock);
	for (size_t i = 0; i < s.nslots; i++)
		free(s.slots[i].buf);
	free(s.slots);
	jb_release(&b);
	return rc;
}
