/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `kopolicy info` output formats: formatting only, the facts come from lib/module. */
#ifndef KP_INFO_OUTPUT_H
#define KP_INFO_OUTPUT_H

#include <stdio.h>

#include "module-set.h"

#define KP_INFO_SCHEMA_VERSION 1

struct json_object;
/* The JSON object of one module (also embedded by other commands). */
struct json_object *kp_info_module_json(const struct kp_module *m);
void kp_info_print_json(FILE *f, const struct kp_module_set *set, int pretty);
void kp_info_print_text(FILE *f, const struct kp_module_set *set);

#endif
