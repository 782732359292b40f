// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * json-string.c: strings as JSON values (json-out.h): valid UTF-8 as json-c writes it, each
 * byte of an invalid sequence as a lone surrogate escape; space-separated words as an array;
 * a CRC as "0x%08x".
 */
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

static void free_text(struct json_object *o, void *text)
{
	(void)o;
	free(text);
}

/*
 * @s (@len bytes, with invalid UTF-8) as JSON text: invalid bytes as lone low surrogates
 * "\udcHH" (the "surrogateescape" convention: Python's json.loads() then
 * .encode("utf-8", "surrogateescape") gives the bytes back). No valid UTF-8 string encodes
 * a surrogate, so two different byte strings never give the same JSON string.
 */
static char *surrogate_escaped(const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	char *out = malloc(len * 6 + 3), *q = out;

	if (!out)
		return NULL;
	*q++ = '"';
	for (size_t i = 0; i < len;) {
		const unsigned char c = (unsigned char)s[i];
		size_t n = utf8_seq((const unsigned char *)s + i);

		if (c == '"' || c == '\\') {
			*q++ = '\\';
			*q++ = (char)c;
		} else if (c < 0x20 || !n) {
			memcpy(q, c < 0x20 ? "\\u00" : "\\udc", 4);
			q[4] = hex[c >> 4];
			q[5] = hex[c & 15];
			q += 6;
		} else {
			memcpy(q, s + i, n);
			q += n;
			i += n;
			continue;
		}
		i++;
	}
	*q++ = '"';
	*q = '\0';
	return out;
}

struct json_object *kp_json_string(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	struct json_object *o;
	size_t ascii, len, bad = 0;
	char *fixed, *q, *text;

	if (!s)
		return NULL;
	/* the usual case, all ASCII, needs no look at sequences */
	for (ascii = 0; p[ascii] && p[ascii] < 0x80; ascii++)
		;
	if (!p[ascii])
		return json_object_new_string_len(s, (int)ascii);
	len = ascii + strlen(s + ascii);
	for (size_t i = ascii; i < len;) {
		size_t n = utf8_seq(p + i);

		bad += !n;
		i += n ? n : 1;
	}
	if (!bad)
		return json_object_new_string_len(s, (int)len);
	/* The object's value has U+FFFD; what is written is the surrogate-escaped text. */
	fixed = malloc(len + bad * 2 + 1);
	text = surrogate_escaped(s, len);
	if (!fixed || !text) {
		free(fixed);
		free(text);
		return NULL;
	}
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
	if (o)
		json_object_set_serializer(o, json_object_userdata_to_json_string, text, free_text);
	else
		free(text);
	return o;
}

struct json_object *kp_json_words(const char *s)
{
	struct json_object *arr;

	if (!s)
		return NULL;
	arr = json_object_new_array();
	while (arr && *s) {
		size_t n = strcspn(s, " ");
		char *w = strndup(s, n);

		json_object_array_add(arr, kp_json_string(w));
		free(w);
		s += n;
		s += *s == ' ';
	}
	return arr;
}

struct json_object *kp_json_crc(bool has, uint32_t crc)
{
	static const char hex[] = "0123456789abcdef";
	char buf[10] = { '0', 'x' };

	if (!has)
		return NULL;
	/* by hand: snprintf() is slow for one call per import */
	for (int i = 0; i < 8; i++)
		buf[2 + i] = hex[(crc >> (28 - 4 * i)) & 0xf];
	return json_object_new_string_len(buf, sizeof(buf));
}
