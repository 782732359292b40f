// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The hand-written JSON text of graph imports must be the bytes json-c writes for the
 * same values: kp_jtext_*() against json_object_to_json_string_ext() on awkward strings.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "json-out.h"
#include "tap.h"

static const char *plain(struct json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							 JSON_C_TO_STRING_NOSLASHESCAPE);
}

static void check_string(struct tap *t, const char *s, const char *what)
{
	struct kp_jtext txt = { 0 };
	struct json_object *o = kp_json_string(s);

	kp_jtext_str(&txt, s);
	tap_is_str(t, txt.buf, plain(o), what);
	json_object_put(o);
	free(txt.buf);
}

int main(void)
{
	static const char *const strings[][2] = {
		{ "__symbol_get", "identifier" },
		{ "", "empty string" },
		{ "a\"b", "double quote" },
		{ "a\\b", "backslash" },
		{ "drivers/net/e1000", "slash (not escaped)" },
		{ "tab\there\nnl\rcr\bbs\ffeed", "control characters" },
		{ "\x01\x1f", "other control characters" },
		{ "del\x7f", "DEL" },
		{ "caf\xc3\xa9", "valid UTF-8" },
		{ "bad\xff\xfe", "invalid UTF-8 (repaired)" },
		{ "trunc\xe2\x82", "truncated UTF-8 sequence" },
	};
	struct tap t = { 0 };
	struct kp_jtext txt = { 0 };
	struct json_object *obj;
	struct kp_jb *b;
	const char *want;

	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
		check_string(&t, strings[i][0], strings[i][1]);

	kp_jtext_str(&txt, NULL);
	kp_jtext_lit(&txt, ",");
	kp_jtext_bool(&txt, true);
	kp_jtext_lit(&txt, ",");
	kp_jtext_bool(&txt, false);
	kp_jtext_lit(&txt, ",");
	kp_jtext_crc(&txt, true, 0x0a19b956);
	kp_jtext_lit(&txt, ",");
	kp_jtext_crc(&txt, false, 0);
	tap_is_str(&t, txt.buf, "null,true,false,\"0x0a19b956\",null", "null, booleans and CRCs");
	free(txt.buf);

	/* A text value inside a json-c object serialises to its text, in place. */
	b = kp_jb_new();
	obj = json_object_new_object();
	memset(&txt, 0, sizeof(txt));
	kp_jtext_lit(&txt, "[{\"symbol\":");
	kp_jtext_str(&txt, "x\"y");
	kp_jtext_lit(&txt, "}]");
	json_object_object_add(obj, "imports", kp_jb_text(b, &txt));
	want = "{\"imports\":[{\"symbol\":\"x\\\"y\"}]}";
	tap_is_str(&t, plain(obj), want, "text value inside an object");
	tap_ok(&t, txt.buf == NULL && !kp_jb_failed(b), "the text moved into the value");
	json_object_put(obj);
	kp_jb_free(b);

	printf("1..%d\n", t.n);
	return t.failed ? 1 : 0;
}
