/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `kopolicy info` output formats: formatting only, the facts come from lib/module. */
#ifndef KP_INFO_OUTPUT_H
#define KP_INFO_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "graph/module-set.h"

#define KP_INFO_SCHEMA_VERSION 1

struct json_object;
struct kp_keyring;
/* The JSON object of one module; @keys (may be NULL): check the signature against them. */
struct json_object *kp_info_module_json(const struct kp_module *m, const struct kp_keyring *keys);
/* Streaming writers: modules are printed as they are read, then dropped. */
struct kp_info_writer {
	FILE *f;
	bool json;
	bool pretty;
	bool first;
	struct json_object *errors;    /* JSON: collected, printed at the end */
	const struct kp_keyring *keys; /* --trusted-cert, --kernel-image: NULL if none */
};

void kp_info_begin(struct kp_info_writer *w);
void kp_info_entry(struct kp_info_writer *w, const struct kp_set_entry *ent);
void kp_info_end(struct kp_info_writer *w);
void kp_info_print_text_module(FILE *f, const struct kp_module *m, const struct kp_keyring *keys);

#endif
