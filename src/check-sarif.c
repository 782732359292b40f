// SPDX-License-Identifier: GPL-2.0-or-later
/* SARIF 2.1.0 for code-scanning systems: one result per finding, located at the .ko. */
#include "config.h"

#include "check-output.h"
#include "json-out.h"

static const char *level(enum kp_severity s)
{
	return s == KP_SEV_ERROR ? "error" : s == KP_SEV_WARNING ? "warning" : "note";
}

void kp_check_print_sarif(const struct kp_check_out *o, const struct kp_analysis *a)
{
	struct json_object *root = json_object_new_object(), *runs = json_object_new_array();
	struct json_object *run = json_object_new_object(), *tool = json_object_new_object();
	struct json_object *driver = json_object_new_object(), *rules = json_object_new_array();
	struct json_object *results = json_object_new_array();

	kp_json_add(root, "$schema",
		    json_object_new_string("https://json.schemastore.org/sarif-2.1.0.json"));
	kp_json_add(root, "version", json_object_new_string("2.1.0"));
	kp_json_add(driver, "name", json_object_new_string("kopolicy"));
	kp_json_add(driver, "version", json_object_new_string(PACKAGE_VERSION));
	for (size_t i = 0; i < kp_nrule_docs; i++) {
		struct json_object *r = json_object_new_object(), *d = json_object_new_object();
		struct json_object *cfg = json_object_new_object();

		kp_json_add(r, "id", json_object_new_string(kp_rule_docs[i].id));
		kp_json_add(d, "text", json_object_new_string(kp_rule_docs[i].summary));
		kp_json_add(r, "shortDescription", d);
		kp_json_add(cfg, "level", json_object_new_string(level(kp_rule_docs[i].severity)));
		kp_json_add(r, "defaultConfiguration", cfg);
		json_object_array_add(rules, r);
	}
	kp_json_add(driver, "rules", rules);
	kp_json_add(tool, "driver", driver);
	kp_json_add(run, "tool", tool);
	for (size_t k = 0; k < a->graph.n; k++) {
		const struct kp_verdict *v = &a->sim.v[a->graph.order[k]];
		const struct kp_node *nd = &a->graph.nodes[v->node];

		for (size_t i = 0; i < v->nfindings; i++) {
			const struct kp_finding *f = &v->findings[i];
			struct json_object *r = json_object_new_object(),
					   *msg = json_object_new_object();
			struct json_object *locs = json_object_new_array(),
					   *loc = json_object_new_object();
			struct json_object *phys = json_object_new_object(),
					   *art = json_object_new_object();
			struct json_object *logs = json_object_new_array(),
					   *lg = json_object_new_object();
			char *text = NULL;

			if (asprintf(&text, "%s: %s", nd->mod->name, f->message) < 0)
				text = NULL;
			kp_json_add(r, "ruleId", json_object_new_string(f->id));
			kp_json_add(r, "level", json_object_new_string(level(f->severity)));
			kp_json_add(msg, "text", kp_json_string(text ? text : f->message));
			free(text);
			kp_json_add(r, "message", msg);
			kp_json_add(art, "uri", kp_json_string(nd->path));
			kp_json_add(phys, "artifactLocation", art);
			kp_json_add(loc, "physicalLocation", phys);
			kp_json_add(lg, "name",
				    kp_json_string(f->symbol ? f->symbol : nd->mod->name));
			kp_json_add(lg, "fullyQualifiedName", kp_json_string(nd->mod->name));
			kp_json_add(lg, "kind",
				    json_object_new_string(f->symbol ? "member" : "module"));
			json_object_array_add(logs, lg);
			kp_json_add(loc, "logicalLocations", logs);
			json_object_array_add(locs, loc);
			kp_json_add(r, "locations", locs);
			if (f->waived) {
				struct json_object *sup = json_object_new_array(),
						   *s = json_object_new_object();

				kp_json_add(s, "kind", json_object_new_string("external"));
				json_object_array_add(sup, s);
				kp_json_add(r, "suppressions", sup);
			}
			json_object_array_add(results, r);
		}
	}
	kp_json_add(run, "results", results);
	json_object_array_add(runs, run);
	kp_json_add(root, "runs", runs);
	kp_json_emit(o->f, root, o->pretty);
	fputc('\n', o->f);
}
