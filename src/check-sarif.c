// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * SARIF 2.1.0 for code-scanning systems: one result per finding, located at the .ko. Paths
 * under the working directory are relative URIs against %SRCROOT% (the working directory,
 * given in originalUriBaseIds), others absolute file: URIs; both percent-encoded (RFC 3986).
 */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-output.h"
#include "json-out.h"

#define SRCROOT "%SRCROOT%"

static const char *level(enum kp_severity s)
{
	return s == KP_SEV_ERROR ? "error" : s == KP_SEV_WARNING ? "warning" : "note";
}

/* @s percent-encoded: RFC 3986 unreserved characters and '/' stay, every other byte is %XX. */
static char *uri_encode(const char *prefix, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t plen = strlen(prefix), n = strlen(s);
	char *out = malloc(plen + 3 * n + 1), *q;

	if (!out)
		return NULL;
	memcpy(out, prefix, plen);
	q = out + plen;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p)) {
			*q++ = (char)*p;
		} else {
			*q++ = '%';
			*q++ = hex[*p >> 4];
			*q++ = hex[*p & 15];
		}
	}
	*q = '\0';
	return out;
}

/* @path made absolute against @cwd and lexically normalised (".", "..", "//" removed). */
static char *abs_normal(const char *cwd, const char *path)
{
	size_t cl = cwd ? strlen(cwd) : 0, pl = strlen(path);
	char *buf = malloc(cl + pl + 3), *out, *save = NULL;
	size_t o = 0;

	if (!buf)
		return NULL;
	snprintf(buf, cl + pl + 3, "%s/%s", path[0] == '/' || !cwd ? "" : cwd, path);
	out = malloc(strlen(buf) + 2);
	if (!out) {
		free(buf);
		return NULL;
	}
	for (char *t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
		if (!strcmp(t, "."))
			continue;
		if (!strcmp(t, "..")) {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			continue;
		}
		out[o++] = '/';
		memcpy(out + o, t, strlen(t));
		o += strlen(t);
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	free(buf);
	return out;
}

/* artifactLocation of @path: relative to %SRCROOT% (@cwd) when under it, else a file: URI. */
static struct json_object *artifact_location(const char *cwd, const char *path)
{
	struct json_object *art = json_object_new_object();
	char *abs = abs_normal(cwd, path), *uri = NULL;
	size_t cl = cwd ? strlen(cwd) : 0;

	if (!abs)
		return art;
	if (cwd && cl > 1 && !strncmp(abs, cwd, cl) && abs[cl] == '/') {
		uri = uri_encode("", abs + cl + 1);
		kp_json_add(art, "uri", kp_json_string(uri));
		kp_json_add(art, "uriBaseId", json_object_new_string(SRCROOT));
	} else {
		uri = uri_encode("file://", abs);
		kp_json_add(art, "uri", kp_json_string(uri));
	}
	free(uri);
	free(abs);
	return art;
}

/* Index of rule @id in kp_rule_docs (the driver's rules array), or -1. */
static long rule_index(const char *id)
{
	for (size_t i = 0; i < kp_nrule_docs; i++)
		if (!strcmp(kp_rule_docs[i].id, id))
			return (long)i;
	return -1;
}

/* Where a rule is explained: the kernel commit of the 2020 and 2023 rules, else the manual. */
static const char *help_uri(const char *id)
{
	if (!strcmp(id, "inherit-taint") || !strcmp(id, "gpl-proprietary-mix"))
		return "https://git.kernel.org/linus/262e6ae7081d";
	if (!strncmp(id, "symbol-get-", 11))
		return "https://git.kernel.org/linus/9011e49d54dc";
	return "man:kopolicy(1)";
}

/* Stable identity of a finding across runs: FNV-1a 64 of rule, module and symbol. */
static void fingerprint(char out[17], const char *rule, const char *module, const char *symbol)
{
	const char *parts[3] = { rule, module, symbol ? symbol : "" };
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < 3; i++) {
		for (const unsigned char *p = (const unsigned char *)parts[i]; *p; p++)
			h = (h ^ *p) * 0x100000001b3ULL;
		h = (h ^ 0xff) * 0x100000001b3ULL; /* separator: no byte of a string */
	}
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* One result: @text at the module @nd (logical location @symbol or the module). */
static struct json_object *result(const char *cwd, const char *id, enum kp_severity sev,
				  const char *text, const char *fix, const struct kp_node *nd,
				  const char *symbol, bool waived)
{
	struct json_object *r = json_object_new_object(), *msg = json_object_new_object();
	struct json_object *locs = json_object_new_array(), *loc = json_object_new_object();
	struct json_object *phys = json_object_new_object(), *fps = json_object_new_object();
	struct json_object *logs = json_object_new_array(), *lg = json_object_new_object();
	long idx = rule_index(id);
	char fp[17];

	kp_json_add(r, "ruleId", json_object_new_string(id));
	if (idx >= 0)
		kp_json_add(r, "ruleIndex", json_object_new_int64(idx));
	kp_json_add(r, "level", json_object_new_string(level(sev)));
	kp_json_add(msg, "text", kp_json_string(text));
	kp_json_add(r, "message", msg);
	kp_json_add(phys, "artifactLocation", artifact_location(cwd, nd->path));
	kp_json_add(loc, "physicalLocation", phys);
	kp_json_add(lg, "name", kp_json_string(symbol ? symbol : nd->mod->name));
	kp_json_add(lg, "fullyQualifiedName", kp_json_string(nd->mod->name));
	kp_json_add(lg, "kind", json_object_new_string(symbol ? "member" : "module"));
	json_object_array_add(logs, lg);
	kp_json_add(loc, "logicalLocations", logs);
	json_object_array_add(locs, loc);
	kp_json_add(r, "locations", locs);
	fingerprint(fp, id, nd->mod->name, symbol);
	kp_json_add(fps, "kopolicyFinding/v1", json_object_new_string(fp));
	kp_json_add(r, "partialFingerprints", fps);
	if (fix) {
		struct json_object *props = json_object_new_object();

		kp_json_add(props, "fix", kp_json_string(fix));
		kp_json_add(r, "properties", props);
	}
	if (waived) {
		struct json_object *sup = json_object_new_array(), *sp = json_object_new_object();

		kp_json_add(sp, "kind", json_object_new_string("external"));
		json_object_array_add(sup, sp);
		kp_json_add(r, "suppressions", sup);
	}
	return r;
}

/*
 * A symbol_get() finding: when the call runs, as properties (the message says it in words):
 * symbolGetWhen "load" | "called" | "unknown", symbolGetPath (the direct calls from init),
 * symbolGetFunction (the function holding the call).
 */
static void add_symget_when(struct json_object *r, const struct kp_verdict *v,
			    const struct kp_finding *f)
{
	struct json_object *props;

	if (!f->symbol || strncmp(f->id, "symbol-get-", 11))
		return;
	for (size_t i = 0; i < v->nsymget; i++) {
		const struct kp_symget_result *s = &v->symget[i];

		if (!s->symbol || strcmp(s->symbol, f->symbol))
			continue;
		if (!json_object_object_get_ex(r, "properties", &props)) {
			props = json_object_new_object();
			kp_json_add(r, "properties", props);
		}
		kp_json_add(props, "symbolGetWhen",
			    json_object_new_string(kp_symget_when_name(s->when)));
		kp_json_add(props, "symbolGetPath", kp_json_words(s->path));
		kp_json_add(props, "symbolGetFunction", kp_json_string(s->function));
		return;
	}
}

/* One result per finding, in load order. */
static void add_findings(struct json_object *results, const char *cwd, const struct kp_ctx *a)
{
	for (size_t k = 0; k < a->graph.n; k++) {
		const struct kp_verdict *v = &a->sim.v[a->graph.order[k]];
		const struct kp_node *nd = &a->graph.nodes[v->node];

		for (size_t i = 0; i < v->nfindings && !nd->provider; i++) {
			const struct kp_finding *f = &v->findings[i];
			char *fix = kp_finding_fix(a, v, f), *text = NULL;
			struct json_object *r;

			/* the fix in the message too: what a code-scanning alert shows */
			if (asprintf(&text, "%s: %s%s%s", nd->mod->name, f->message,
				     fix ? ". Fix: " : "", fix ? fix : "") < 0)
				text = NULL;
			r = result(cwd, f->id, f->severity, text ? text : f->message, fix, nd,
				   f->symbol, f->waived);
			add_symget_when(r, v, f);
			json_object_array_add(results, r);
			free(text);
			free(fix);
		}
	}
}

/*
 * check --compare: one rule-set-change result per difference; an error when a module that
 * loads under the first rule set fails under the second, a warning when it gains P or loses
 * a symbol_get() target, a note for the changes the other way.
 */
static void add_changes(struct json_object *results, const char *cwd, const struct kp_ctx *a,
			const struct kp_comparison *cmp)
{
	for (size_t i = 0; i < cmp->n; i++) {
		const struct kp_change *ch = &cmp->changes[i];
		enum kp_severity sev = KP_SEV_NOTE;
		char *change = kp_change_text(a, ch), *text = NULL;

		if (ch->kind == KP_CHANGE_LOAD && strcmp(ch->to, "loads"))
			sev = KP_SEV_ERROR;
		else if (!strcmp(ch->to, "P") || !strcmp(ch->to, "NULL"))
			sev = KP_SEV_WARNING;
		if (asprintf(&text, "%s (rules %s -> %s)", change ? change : "changed", cmp->first,
			     cmp->second) < 0)
			text = NULL;
		json_object_array_add(results,
				      result(cwd, "rule-set-change", sev, text ? text : "changed",
					     NULL, &a->graph.nodes[ch->node], ch->symbol, false));
		free(text);
		free(change);
	}
}

/*
 * The run's invocation: executionSuccessful false and one error notification per input
 * that could not be read (kopolicy exits 2 then), so that no dashboard shows it as clean.
 */
static struct json_object *invocation(const char *cwd, const struct kp_ctx *a)
{
	struct json_object *inv = json_object_new_object(), *notes = json_object_new_array();
	struct kp_input_error *e;
	size_t n = kp_check_input_errors(a, &e);

	for (size_t i = 0; i < n; i++) {
		struct json_object *nt = json_object_new_object(), *msg = json_object_new_object();
		struct json_object *locs = json_object_new_array(), *loc = json_object_new_object();
		struct json_object *phys = json_object_new_object();

		kp_json_add(nt, "level",
			    json_object_new_string(e[i].warning ? "warning" : "error"));
		kp_json_add(msg, "text", kp_json_string(e[i].error));
		kp_json_add(nt, "message", msg);
		kp_json_add(phys, "artifactLocation", artifact_location(cwd, e[i].path));
		kp_json_add(loc, "physicalLocation", phys);
		json_object_array_add(locs, loc);
		kp_json_add(nt, "locations", locs);
		json_object_array_add(notes, nt);
	}
	free(e);
	kp_json_add(inv, "executionSuccessful", json_object_new_boolean(a->read_failures == 0));
	kp_json_add(inv, "toolExecutionNotifications", notes);
	return inv;
}

void kp_check_print_sarif(const struct kp_check_out *o, const struct kp_ctx *a,
			  const struct kp_comparison *cmp)
{
	struct json_object *root = json_object_new_object(), *runs = json_object_new_array();
	struct json_object *run = json_object_new_object(), *tool = json_object_new_object();
	struct json_object *driver = json_object_new_object(), *rules = json_object_new_array();
	struct json_object *results = json_object_new_array(), *invs = json_object_new_array();
	char cwdbuf[PATH_MAX];
	const char *cwd = getcwd(cwdbuf, sizeof(cwdbuf)) ? cwdbuf : NULL;

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
		kp_json_add(r, "helpUri", json_object_new_string(help_uri(kp_rule_docs[i].id)));
		json_object_array_add(rules, r);
	}
	kp_json_add(driver, "rules", rules);
	kp_json_add(tool, "driver", driver);
	kp_json_add(run, "tool", tool);
	json_object_array_add(invs, invocation(cwd, a));
	kp_json_add(run, "invocations", invs);
	if (cwd) {
		struct json_object *bases = json_object_new_object(),
				   *src = json_object_new_object();
		char *dir = uri_encode("file://", cwd), *slash = NULL;

		if (dir && asprintf(&slash, "%s%s", dir, strcmp(cwd, "/") ? "/" : "") < 0)
			slash = NULL;
		kp_json_add(src, "uri", kp_json_string(slash ? slash : "file:///"));
		kp_json_add(bases, SRCROOT, src);
		kp_json_add(run, "originalUriBaseIds", bases);
		free(slash);
		free(dir);
	}
	if (cmp)
		add_changes(results, cwd, a, cmp);
	else
		add_findings(results, cwd, a);
	kp_json_add(run, "results", results);
	json_object_array_add(runs, run);
	kp_json_add(root, "runs", runs);
	kp_json_emit(o->f, root, o->pretty);
	fputc('\n', o->f);
}
