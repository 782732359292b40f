/* SPDX-License-Identifier: GPL-2.0-or-later */
/* json-c helpers shared by the JSON outputs: valid UTF-8 always, CRCs as "0x%08x". */
#ifndef KP_JSON_OUT_H
#define KP_JSON_OUT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* A JSON string of @s (null for NULL); invalid UTF-8 bytes become U+FFFD. */
struct json_object *kp_json_string(const char *s);
/* "0x%08x", or null when @has is false. */
struct json_object *kp_json_crc(bool has, uint32_t crc);
/* Adds @val under @key; @val may be NULL (JSON null). */
void kp_json_add(struct json_object *obj, const char *key, struct json_object *val);
/* Writes @obj compactly (or pretty) and drops it. */
void kp_json_emit(FILE *f, struct json_object *obj, bool pretty);

#endif
