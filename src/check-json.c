// SPDX-License-Identifier: GPL-2.0-or-later
/* `kopolicy check --format json`: schema_version 1, documented in kopolicy(1). */
#include "config.h"

#include "check-output.h"
#include "kernel/sig-keys.h"
#include "json-out.h"

static struct json_object *verdict_json(const struct kp_ctx *a, const struct kp_verdict *v)
{
	const struct kp_node *nd = &a->graph.nodes[v->node];
	struct json_object *o = json_object_new_object(), *arr;
	char letters[32];

	kp_json_add(o, "name", kp_json_string(nd->mod->name));
	kp_json_add(o, "path", kp_json_string(nd->path));
	kp_json_add(o, "license", kp_json_string(nd->mod->license));
	kp_json_add(o, "loads", json_object_new_boolean(v->loads));
	/* an oops is no errno: the loading process is killed */
	kp_json_add(o, "oops", json_object_new_boolean(v->err == KP_ERR_OOPS));
	kp_json_add(o, "errno", kp_errno_name(v->err) && v->err != KP_ERR_OOPS
					? json_object_new_string(kp_errno_name(v->err))
					: NULL);
	kp_json_add(o, "errno_value", json_object_new_int(v->err == KP_ERR_OOPS ? 0 : v->err));
	kp_taint_letters(v->taints, letters, sizeof(letters));
	kp_json_add(o, "taint", json_object_new_string(letters));
	kp_taint_letters(v->global_added, letters, sizeof(letters));
	kp_json_add(o, "global_taint_added", json_object_new_string(letters));
	arr = json_object_new_array();
	for (size_t i = 0; i < v->nmessages; i++)
		json_object_array_add(arr, kp_json_string(v->messages[i]));
	kp_json_add(o, "messages", arr);
	arr = json_object_new_array();
	for (size_t i = 0; i < v->nsymget; i++) {
		const struct kp_symget_result *r = &v->symget[i];
		struct json_object *e = json_object_new_object();

		kp_json_add(e, "symbol", kp_json_string(r->symbol));
		kp_json_add(e, "result", json_object_new_string(r->ok ? "ok" : "null"));
		kp_json_add(e, "reason", kp_json_string(r->reason));
		kp_json_add(e, "owner", kp_json_string(r->owner));
		kp_json_add(e, "method",
			    json_object_new_string(r->method_heuristic ? "heuristic" : "exact"));
		json_object_array_add(arr, e);
	}
	kp_json_add(o, "symbol_get", arr);
	arr = json_object_new_array();
	for (size_t i = 0; i < v->nfindings; i++) {
		const struct kp_finding *f = &v->findings[i];
		struct json_object *e = json_object_new_object();

		kp_json_add(e, "id", json_object_new_string(f->id));
		kp_json_add(e, "severity", json_object_new_string(kp_severity_name(f->severity)));
		kp_json_add(e, "consequence",
			    json_object_new_string(kp_consequence_name(f->consequence)));
		kp_json_add(e, "symbol", kp_json_string(f->symbol));
		kp_json_add(e, "message", kp_json_string(f->message));
		kp_json_add(e, "waived", json_object_new_boolean(f->waived));
		json_object_array_add(arr, e);
	}
	kp_json_add(o, "findings", arr);
	return o;
}

void kp_check_print_json(const struct kp_check_out *o, const struct kp_ctx *a)
{
	const struct kp_kernel_facts *f = &a->facts;
	struct json_object *k = json_object_new_object(), *arr;
	char letters[32];

	kp_json_add(k, "release", kp_json_string(f->release));
	if (f->profile.version_known) {
		char ver[48];

		snprintf(ver, sizeof(ver), "%d.%d.%d", f->profile.version.major,
			 f->profile.version.minor, f->profile.version.patch);
		kp_json_add(k, "version", json_object_new_string(ver));
	} else {
		kp_json_add(k, "version", NULL);
	}
	kp_json_add(k, "rules", json_object_new_string(kp_profile_rules_name(&f->profile)));
	kp_json_add(k, "modversions", json_object_new_boolean(f->modversions));
	kp_json_add(k, "sig_enforce", json_object_new_boolean(f->sig_enforce));
	kp_json_add(k, "vermagic", kp_json_string(f->vermagic));
	kp_json_add(k, "missing_version_fatal", json_object_new_boolean(f->missing_version_fatal));
	kp_json_add(k, "distro",
		    json_object_new_string(f->profile.distro == KP_DISTRO_DEBIAN ? "debian"
										 : "upstream"));
	kp_json_add(k, "newest_modelled", json_object_new_string(kp_profile_newest_modelled()));
	kp_json_add(k, "beyond_modelled", json_object_new_boolean(f->beyond_modelled != NULL));
	arr = json_object_new_array();
	for (size_t i = 0; i < f->nassumptions; i++)
		json_object_array_add(arr, kp_json_string(f->assumptions[i]));
	kp_json_add(k, "assumptions", arr);
	arr = json_object_new_array();
	for (size_t i = 0; f->keys && i < f->keys->nsources; i++)
		json_object_array_add(arr, kp_json_string(f->keys->sources[i]));
	kp_json_add(k, "key_sources", arr);
	/* Streamed a module at a time: a whole tree never sits in memory as a JSON tree. */
	fprintf(o->f, "{\"schema_version\":%d,\"kernel\":", KP_CHECK_SCHEMA_VERSION);
	kp_json_emit(o->f, k, o->pretty);
	fputs(",\"modules\":[", o->f);
	for (size_t i = 0; i < a->graph.n; i++) {
		const struct kp_verdict *v = &a->sim.v[a->graph.order[i]];
		struct json_object *m = verdict_json(a, v);

		/* the global mask after this step, less what was set before the first load */
		kp_taint_letters(v->global_after, letters, sizeof(letters));
		kp_json_add(m, "global_taint", json_object_new_string(letters));
		fputs(i ? ",\n" : "\n", o->f);
		kp_json_emit(o->f, m, o->pretty);
	}
	fputs("],\"errors\":", o->f);
	arr = json_object_new_array();
	for (size_t i = 0; i < a->set.n; i++) {
		const struct kp_set_entry *e = &a->set.entries[i];

		if (e->mod)
			continue;
		{
			struct json_object *eo = json_object_new_object();

			kp_json_add(eo, "path", kp_json_string(e->path));
			kp_json_add(eo, "error", kp_json_string(e->error));
			json_object_array_add(arr, eo);
		}
	}
	kp_json_emit(o->f, arr, o->pretty);
	/* Files of the tree that depmod does not use under their module name. */
	fputs(",\"shadowed\":", o->f);
	arr = json_object_new_array();
	for (size_t i = 0; i < a->nshadowed; i++) {
		const struct kp_depmod_shadow *sh = &a->shadowed[i];
		struct json_object *so = json_object_new_object();

		kp_json_add(so, "name", kp_json_string(sh->name));
		kp_json_add(so, "path", kp_json_string(sh->path));
		kp_json_add(so, "used", kp_json_string(sh->winner));
		kp_json_add(so, "order_decides", json_object_new_boolean(sh->tie));
		json_object_array_add(arr, so);
	}
	kp_json_emit(o->f, arr, o->pretty);
	fputs("}\n", o->f);
}
