// SPDX-License-Identifier: GPL-2.0-or-later
/* `kopolicy check --format json`: schema_version 1, documented in kopolicy(1). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "check-output.h"
#include "kernel/sig-keys.h"
#include "sim/open-record.h"
#include "json-out.h"

struct json_object *kp_check_symget_json(const struct kp_verdict *v)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < v->nsymget; i++) {
		const struct kp_symget_result *r = &v->symget[i];
		struct json_object *e = json_object_new_object();
		char *line = NULL;

		if (r->kernel_logs && asprintf(&line, KP_SYMGET_FAIL_FMT, r->symbol) < 0)
			line = NULL;
		kp_json_add(e, "symbol", kp_json_string(r->symbol));
		kp_json_add(e, "result", json_object_new_string(r->ok ? "ok" : "null"));
		kp_json_add(e, "reason", kp_json_string(r->reason));
		kp_json_add(e, "owner", kp_json_string(r->owner));
		kp_json_add(e, "method",
			    json_object_new_string(r->method_heuristic ? "heuristic" : "exact"));
		kp_json_add(e, "when", json_object_new_string(kp_symget_when_name(r->when)));
		kp_json_add(e, "path", kp_json_words(r->path));
		kp_json_add(e, "function", kp_json_string(r->function));
		/* the kernel's line when the call runs (JSON's "messages" are the load's) */
		kp_json_add(e, "dmesg", kp_json_string(line));
		free(line);
		json_object_array_add(arr, e);
	}
	return arr;
}

struct json_object *kp_check_finding_json(const struct kp_finding *f, const char *fix)
{
	struct json_object *e = json_object_new_object();

	kp_json_add(e, "id", json_object_new_string(f->id));
	kp_json_add(e, "severity", json_object_new_string(kp_severity_name(f->severity)));
	kp_json_add(e, "consequence", json_object_new_string(kp_consequence_name(f->consequence)));
	kp_json_add(e, "symbol", kp_json_string(f->symbol));
	kp_json_add(e, "message", kp_json_string(f->message));
	kp_json_add(e, "fix", kp_json_string(fix));
	kp_json_add(e, "waived", json_object_new_boolean(f->waived));
	return e;
}

struct json_object *kp_check_findings_json(const struct kp_ctx *a, const struct kp_verdict *v)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; i < v->nfindings; i++) {
		char *fix = kp_finding_fix(a, v, &v->findings[i]);

		json_object_array_add(arr, kp_check_finding_json(&v->findings[i], fix));
		free(fix);
	}
	return arr;
}

/* @v as a "modules" item, built with the calling thread's @b (kp_json_stream()). */
static struct json_object *verdict_json(struct kp_jb *b, const struct kp_ctx *a,
					const struct kp_verdict *v)
{
	const struct kp_node *nd = &a->graph.nodes[v->node];
	struct json_object *o = kp_jb_object(b), *arr;
	const char *open;
	char letters[32];

	kp_jb_add(b, o, "name", kp_jb_string(b, nd->mod->name));
	kp_jb_add(b, o, "path", kp_jb_string(b, nd->path));
	kp_jb_add(b, o, "license", kp_jb_string(b, nd->mod->license));
	kp_jb_add(b, o, "loads", kp_jb_bool(b, v->loads));
	/* an oops is no errno: the loading process is killed */
	kp_jb_add(b, o, "oops", kp_jb_bool(b, v->err == KP_ERR_OOPS));
	/* the oops left printk's lock held: the machine hangs (before 5.13) */
	kp_jb_add(b, o, "hang", kp_jb_bool(b, v->hangs));
	/* an earlier oops left the loader stuck: the call never returns, or never happens */
	kp_jb_add(b, o, "blocked", kp_jb_bool(b, v->err == KP_ERR_BLOCKED));
	kp_jb_add(b, o, "not_run", kp_jb_bool(b, v->err == KP_ERR_NOT_RUN));
	kp_jb_add(b, o, "stalled_by", kp_jb_string(b, kp_check_stalled_by(a, v)));
	kp_jb_add(b, o, "errno",
		  kp_errno_name(v->err) && !KP_ERR_IS_STALL(v->err)
			  ? kp_jb_string(b, kp_errno_name(v->err))
			  : NULL);
	kp_jb_add(b, o, "errno_value",
		  kp_jb_take(b, json_object_new_int(KP_ERR_IS_STALL(v->err) ? 0 : v->err)));
	kp_taint_letters(v->taints, letters, sizeof(letters));
	kp_jb_add(b, o, "taint", kp_jb_string(b, letters));
	kp_taint_letters(v->global_added, letters, sizeof(letters));
	kp_jb_add(b, o, "global_taint_added", kp_jb_string(b, letters));
	/* what dmesg shows during the load: an earlier load's open record first (open-record.h) */
	arr = kp_jb_array(b);
	if ((open = kp_open_record_before(&a->sim, v)))
		kp_jb_push(b, arr, kp_jb_string(b, open));
	for (size_t i = 0; i < kp_msgs_shown(v); i++)
		kp_jb_push(b, arr, kp_jb_string(b, v->messages[i]));
	kp_jb_add(b, o, "messages", arr);
	kp_jb_add(b, o, "symbol_get", kp_jb_take(b, kp_check_symget_json(v)));
	kp_jb_add(b, o, "findings", kp_jb_take(b, kp_check_findings_json(a, v)));
	/* the global mask after this step, less what was set before the first load */
	kp_taint_letters(v->global_after, letters, sizeof(letters));
	kp_jb_add(b, o, "global_taint", kp_jb_string(b, letters));
	return o;
}

/* @arr (NULL: out of memory) appended to @t as json-c writes it plainly, then dropped. */
static void jtext_json(struct kp_jtext *t, struct json_object *arr)
{
	const char *js = arr ? json_object_to_json_string_ext(
				       arr, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
			     : NULL;

	if (js)
		kp_jtext_lit(t, js);
	else
		t->failed = true;
	json_object_put(arr);
}

/* Offset @off of a block's text as a mark (kp_check_block): a block over 4 GiB is refused. */
static void mark(struct kp_jtext *t, uint32_t *m)
{
	if (t->len > UINT32_MAX)
		t->failed = true;
	*m = (uint32_t)t->len;
}

void kp_check_jtext_letters(struct kp_jtext *t, unsigned long mask)
{
	char letters[32];

	kp_taint_letters(mask, letters, sizeof(letters));
	kp_jtext_str(t, letters);
}

void kp_check_jtext_open(struct kp_jtext *t, const char *open, const struct kp_verdict *v)
{
	if (!open)
		return;
	kp_jtext_str(t, open);
	if (kp_msgs_shown(v))
		kp_jtext_lit(t, ",");
}

/*
 * verdict_json() written as text, the bytes json-c writes for it in its plain layout
 * (json-out.h, kp_jtext): a whole tree's 4,000 verdicts without 4,000 hash tables. Only
 * the symbol_get() results and findings a module has go through json-c objects.
 */
void kp_check_block_text(struct kp_jtext *t, const struct kp_ctx *a, const struct kp_verdict *v,
			 const char *open, struct kp_check_block *m)
{
	const struct kp_node *nd = &a->graph.nodes[v->node];
	struct kp_check_block unused;
	bool policy_seen;
	char num[24];

	if (!m)
		m = &unused;
	kp_jtext_lit(t, "{\"name\":");
	kp_jtext_str(t, nd->mod->name);
	kp_jtext_lit(t, ",\"path\":");
	kp_jtext_str(t, nd->path);
	kp_jtext_lit(t, ",\"license\":");
	kp_jtext_str(t, nd->mod->license);
	kp_jtext_lit(t, ",\"loads\":");
	kp_jtext_bool(t, v->loads);
	kp_jtext_lit(t, ",\"oops\":");
	kp_jtext_bool(t, v->err == KP_ERR_OOPS);
	kp_jtext_lit(t, ",\"hang\":");
	kp_jtext_bool(t, v->hangs);
	kp_jtext_lit(t, ",\"blocked\":");
	kp_jtext_bool(t, v->err == KP_ERR_BLOCKED);
	kp_jtext_lit(t, ",\"not_run\":");
	kp_jtext_bool(t, v->err == KP_ERR_NOT_RUN);
	kp_jtext_lit(t, ",\"stalled_by\":");
	kp_jtext_str(t, kp_check_stalled_by(a, v));
	kp_jtext_lit(t, ",\"errno\":");
	kp_jtext_str(t, kp_errno_name(v->err) && !KP_ERR_IS_STALL(v->err) ? kp_errno_name(v->err)
									  : NULL);
	/* json-c writes an int as "%" PRId64 */
	snprintf(num, sizeof(num), ",\"errno_value\":%d", KP_ERR_IS_STALL(v->err) ? 0 : v->err);
	kp_jtext_lit(t, num);
	kp_jtext_lit(t, ",\"taint\":");
	kp_check_jtext_letters(t, v->taints);
	kp_jtext_lit(t, ",\"global_taint_added\":");
	mark(t, &m->start[KP_MARK_ADDED]);
	kp_check_jtext_letters(t, v->global_added);
	mark(t, &m->end[KP_MARK_ADDED]);
	kp_jtext_lit(t, ",\"messages\":[");
	mark(t, &m->start[KP_MARK_OPEN]);
	kp_check_jtext_open(t, open, v);
	mark(t, &m->end[KP_MARK_OPEN]);
	for (size_t i = 0; i < kp_msgs_shown(v); i++) {
		if (i)
			kp_jtext_lit(t, ",");
		kp_jtext_str(t, v->messages[i]);
	}
	kp_jtext_lit(t, "],\"symbol_get\":");
	if (v->nsymget)
		jtext_json(t, kp_check_symget_json(v));
	else
		kp_jtext_lit(t, "[]");
	kp_jtext_lit(t, ",\"findings\":");
	/* each finding as json-c writes it, so that the policy ones can be told apart */
	mark(t, &m->start[KP_MARK_FINDINGS]);
	kp_jtext_lit(t, "[");
	mark(t, &m->fsim);
	m->policy_last = true;
	policy_seen = false;
	for (size_t i = 0; i < v->nfindings; i++) {
		const struct kp_finding *f = &v->findings[i];
		char *fix = kp_finding_fix(a, v, f);

		if (i)
			kp_jtext_lit(t, ",");
		jtext_json(t, kp_check_finding_json(f, fix));
		free(fix);
		if (kp_finding_is_policy(f)) {
			policy_seen = true;
		} else {
			mark(t, &m->fsim);
			/* a policy finding before this one: the block cannot be spliced */
			m->policy_last = m->policy_last && !policy_seen;
		}
	}
	kp_jtext_lit(t, "]");
	mark(t, &m->end[KP_MARK_FINDINGS]);
	/* the global mask after this step, less what was set before the first load */
	kp_jtext_lit(t, ",\"global_taint\":");
	mark(t, &m->start[KP_MARK_AFTER]);
	kp_check_jtext_letters(t, v->global_after);
	mark(t, &m->end[KP_MARK_AFTER]);
	kp_jtext_lit(t, "}");
}

struct module_items {
	const struct kp_ctx *a;
	bool pretty;
	struct kp_check_capture *cap; /* NULL, or the blocks kept (indexed like the nodes) */
};

/* @v's block as text (kp_check_block_text()), a copy kept in @cap when asked. */
static struct json_object *verdict_text(struct kp_jb *b, const struct kp_ctx *a,
					const struct kp_verdict *v, struct kp_check_capture *cap)
{
	struct kp_check_block *m = cap ? &cap->blocks[v->node] : NULL;
	struct kp_jtext t = { 0 };

	kp_check_block_text(&t, a, v, kp_open_record_before(&a->sim, v), m);
	if (m && !t.failed) {
		m->text = malloc(t.len ? t.len : 1);
		if (m->text) {
			memcpy(m->text, t.buf, t.len);
			m->len = t.len;
		}
	}
	return kp_jb_text(b, &t);
}

/* Item @i of "modules": the verdict of the @i-th module in load order; NULL for a provider. */
static struct json_object *module_item(struct kp_jb *b, size_t i, void *data)
{
	const struct module_items *it = data;
	const struct kp_verdict *v = &it->a->sim.v[it->a->graph.order[i]];

	if (it->a->graph.nodes[v->node].provider)
		return NULL; /* resolved against, not reported */
	return it->pretty ? verdict_json(b, it->a, v) : verdict_text(b, it->a, v, it->cap);
}

/* The inputs that could not be read: [{"path", "error"}]. */
static struct json_object *errors_json(const struct kp_ctx *a)
{
	struct json_object *arr = json_object_new_array();
	struct kp_input_error *e;
	size_t n = kp_check_input_errors(a, &e);

	for (size_t i = 0; i < n; i++) {
		struct json_object *eo = json_object_new_object();

		kp_json_add(eo, "path", kp_json_string(e[i].path));
		kp_json_add(eo, "error", kp_json_string(e[i].error));
		if (e[i].warning) /* a link depmod skips: fails nothing */
			kp_json_add(eo, "warning", json_object_new_boolean(true));
		json_object_array_add(arr, eo);
	}
	free(e);
	return arr;
}

static const char *const change_kinds[] = {
	[KP_CHANGE_LOAD] = "load",
	[KP_CHANGE_TAINT] = "taint",
	[KP_CHANGE_SYMBOL_GET] = "symbol_get",
};

/* check --compare --format json: {"compare": {from, to}, "changes": [...], "errors": [...]} */
static void print_changes_json(const struct kp_check_out *o, const struct kp_ctx *a,
			       const struct kp_comparison *cmp)
{
	struct json_object *root = json_object_new_object(), *c = json_object_new_object();
	struct json_object *arr = json_object_new_array();

	kp_json_add(root, "schema_version", json_object_new_int(KP_CHECK_SCHEMA_VERSION));
	kp_json_add(c, "from", kp_json_string(cmp->first));
	kp_json_add(c, "to", kp_json_string(cmp->second));
	kp_json_add(c, "release", kp_json_string(a->facts.release));
	kp_json_add(root, "compare", c);
	for (size_t i = 0; i < cmp->n; i++) {
		const struct kp_change *ch = &cmp->changes[i];
		const struct kp_node *nd = &a->graph.nodes[ch->node];
		struct json_object *e = json_object_new_object();

		kp_json_add(e, "name", kp_json_string(nd->mod->name));
		kp_json_add(e, "path", kp_json_string(nd->path));
		kp_json_add(e, "kind", json_object_new_string(change_kinds[ch->kind]));
		kp_json_add(e, "symbol", kp_json_string(ch->symbol));
		kp_json_add(e, "from", json_object_new_string(ch->from));
		kp_json_add(e, "to", json_object_new_string(ch->to));
		json_object_array_add(arr, e);
	}
	kp_json_add(root, "changes", arr);
	kp_json_add(root, "errors", errors_json(a));
	kp_json_emit(o->f, root, o->pretty);
	fputc('\n', o->f);
}

/* The report up to its "modules" items: {"schema_version", "kernel", "modules":[ */
static void print_head(FILE *f, const struct kp_check_out *o, const struct kp_ctx *a)
{
	const struct kp_kernel_facts *fa = &a->facts;
	struct json_object *k = json_object_new_object(), *arr;

	kp_json_add(k, "release", kp_json_string(fa->release));
	if (fa->profile.version_known) {
		char ver[48];

		snprintf(ver, sizeof(ver), "%d.%d.%d", fa->profile.version.major,
			 fa->profile.version.minor, fa->profile.version.patch);
		kp_json_add(k, "version", json_object_new_string(ver));
	} else {
		kp_json_add(k, "version", NULL);
	}
	kp_json_add(k, "rules", json_object_new_string(kp_profile_rules_name(&fa->profile)));
	kp_json_add(k, "modversions", json_object_new_boolean(fa->modversions));
	kp_json_add(k, "sig_enforce", json_object_new_boolean(fa->sig_enforce));
	kp_json_add(k, "lockdown", json_object_new_boolean(fa->lockdown));
	kp_json_add(k, "secure_boot",
		    fa->secure_boot < 0 ? NULL : json_object_new_boolean(fa->secure_boot));
	/* the keyrings mod_verify_sig() searches, in its order (kp_keyring_model) */
	arr = json_object_new_array();
	json_object_array_add(arr, json_object_new_string(".builtin_trusted_keys"));
	json_object_array_add(arr, json_object_new_string(".secondary_trusted_keys"));
	if (fa->keymodel.machine_keyring && fa->keymodel.mok_trusted && fa->keymodel.secure_boot)
		json_object_array_add(arr, json_object_new_string(".machine"));
	if (fa->keymodel.platform_keyring && fa->keymodel.platform_for_modules)
		json_object_array_add(arr, json_object_new_string(".platform"));
	kp_json_add(k, "module_keyrings", arr);
	kp_json_add(k, "vermagic", kp_json_string(fa->vermagic));
	kp_json_add(k, "missing_version_fatal", json_object_new_boolean(fa->missing_version_fatal));
	kp_json_add(k, "distro",
		    json_object_new_string(fa->profile.distro == KP_DISTRO_DEBIAN ? "debian"
										  : "upstream"));
	kp_json_add(k, "newest_modelled", json_object_new_string(kp_profile_newest_modelled()));
	kp_json_add(k, "beyond_modelled", json_object_new_boolean(fa->beyond_modelled != NULL));
	arr = json_object_new_array();
	for (size_t i = 0; i < fa->nassumptions; i++)
		json_object_array_add(arr, kp_json_string(fa->assumptions[i]));
	kp_json_add(k, "assumptions", arr);
	arr = json_object_new_array();
	for (size_t i = 0; fa->keys && i < fa->keys->nsources; i++)
		json_object_array_add(arr, kp_json_string(fa->keys->sources[i]));
	kp_json_add(k, "key_sources", arr);
	fprintf(f, "{\"schema_version\":%d,\"kernel\":", KP_CHECK_SCHEMA_VERSION);
	kp_json_emit(f, k, o->pretty);
	fputs(",\"modules\":[", f);
}

/* The report after its "modules" items: ],"errors","shadowed"} and the newline. */
static void print_tail(FILE *f, const struct kp_check_out *o, const struct kp_ctx *a)
{
	struct json_object *arr;

	fputs("],\"errors\":", f);
	kp_json_emit(f, errors_json(a), o->pretty);
	/* Files of the tree that depmod does not use under their module name. */
	fputs(",\"shadowed\":", f);
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
	kp_json_emit(f, arr, o->pretty);
	fputs("}\n", f);
}

void kp_check_capture_release(struct kp_check_capture *cap, size_t n)
{
	for (size_t i = 0; cap->blocks && !cap->borrowed && i < n; i++)
		free(cap->blocks[i].text);
	free(cap->blocks);
	free(cap->head);
	free(cap->tail);
	memset(cap, 0, sizeof(*cap));
}

/* @part (print_head() or print_tail()) written to @o->f, its bytes kept in *@text too. */
static int print_kept(const struct kp_check_out *o, const struct kp_ctx *a,
		      void (*part)(FILE *, const struct kp_check_out *, const struct kp_ctx *),
		      char **text, size_t *len)
{
	FILE *m = open_memstream(text, len);

	if (!m)
		return -1;
	part(m, o, a);
	if (fclose(m) != 0)
		return -1;
	fwrite(*text, 1, *len, o->f);
	return 0;
}

int kp_check_print_json(const struct kp_check_out *o, const struct kp_ctx *a,
			const struct kp_comparison *cmp)
{
	struct kp_check_capture *cap = o->pretty ? NULL : o->capture;
	struct module_items items = { .a = a, .pretty = o->pretty, .cap = cap };

	if (cmp) {
		print_changes_json(o, a, cmp);
		return 0;
	}
	if (!cap)
		print_head(o->f, o, a);
	else if (print_kept(o, a, print_head, &cap->head, &cap->headlen) < 0)
		return -1;
	/*
	 * Streamed a window of modules at a time, built and serialised by o->jobs threads and
	 * written in load order: a whole tree never sits in memory as a JSON tree.
	 */
	if (kp_json_stream(o->f, a->graph.n, module_item, &items, o->pretty, o->jobs) < 0)
		return -1;
	if (!cap)
		print_tail(o->f, o, a);
	else if (print_kept(o, a, print_tail, &cap->tail, &cap->taillen) < 0)
		return -1;
	return 0;
}
