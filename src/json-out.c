// SPDX-License-Identifier: GPL-2.0-or-later
#include "json-out.h"

#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at @s, 0 if invalid. */
static size_t utf8_seq(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))
			return 0;
		return 3;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

struct json_object *kp_json_string(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	struct json_object *o;
	size_t len, bad = 0;
	char *fixed, *q;

	if (!s)
		return NULL;
	len = strlen(s);
	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq(p + i);

		bad += !n;
		i += n ? n : 1;
	}
	if (!bad)
		return json_object_new_string_len(s, (int)len);
	fixed = malloc(len + bad * 2 + 1);
	if (!fixed)
		return NULL;
	q = fixed;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq(p + i);

		if (n) {
			memcpy(q, p + i, n);
			q += n;
			i += n;
		} else {
			memcpy(q, "\xef\xbf\xbd", 3);
			q += 3;
			i++;
		}
	}
	o = json_object_new_string_len(fixed, (int)(q - fixed));
	free(fixed);
	return o;
}

struct json_object *kp_json_crc(bool has, uint32_t crc)
{
	char buf[16];

	if (!has)
		return NULL;
	snprintf(buf, sizeof(buf), "0x%08x", crc);
	return json_object_new_string(buf);
}

void kp_json_add(struct json_object *obj, const char *key, struct json_object *val)
{
	json_object_object_add(obj, key, val);
}

void kp_json_emit(FILE *f, struct json_object *obj, bool pretty)
{
	int flags = JSON_C_TO_STRING_NOSLASHESCAPE |
		    (pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
			    : JSON_C_TO_STRING_PLAIN);

	fputs(json_object_to_json_string_ext(obj, flags), f);
	json_object_put(obj);
}
