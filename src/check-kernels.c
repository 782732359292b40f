// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kopolicy check -b ROOT --all-kernels: every kernel installed in ROOT, and for each the
 * out-of-tree modules depmod would use for it (updates/, extra/, DKMS builds: everything
 * outside kernel/), predicted against that kernel. One table, like `dkms status` with the
 * loader's verdicts. With --kernel-release R, the one kernel R (the kernel install hook's
 * report when the running kernel is not installed: another kernel's broken modules made
 * mode=fail refuse a kernel whose modules all load).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "check-output.h"
#include "json-out.h"
#include "system/kernel-tree.h"
#include "system/out-of-tree.h"

/* "loads", "loads, P", "fails (ENOENT)", then the first rule ids. */
static void verdict_text(const struct kp_verdict *v, char *buf, size_t len)
{
	size_t k;

	if (v->loads)
		k = (size_t)snprintf(buf, len, "loads%s", (v->taints & 1) ? ", P" : "");
	else if (v->hangs)
		k = (size_t)snprintf(buf, len, "the kernel oopses and hangs");
	else if (v->err == KP_ERR_OOPS && v->holds_module_mutex)
		k = (size_t)snprintf(buf, len, "the kernel oopses holding module_mutex");
	else if (v->err == KP_ERR_OOPS)
		k = (size_t)snprintf(buf, len, "the kernel oopses");
	else if (v->err == KP_ERR_BLOCKED)
		k = (size_t)snprintf(buf, len, "blocks for ever");
	else if (v->err == KP_ERR_NOT_RUN)
		k = (size_t)snprintf(buf, len, "never runs (the machine hung)");
	else
		k = (size_t)snprintf(buf, len, "fails (%s)", kp_errno_name(v->err));
	for (size_t i = 0; i < v->nfindings && k < len; i++) {
		const struct kp_finding *f = &v->findings[i];

		if (f->severity == KP_SEV_NOTE)
			continue;
		k += (size_t)snprintf(buf + k, len - k, "%s%s", k ? ", " : "", f->id);
	}
}

static struct json_object *module_json(const struct kp_ctx *a, const struct kp_verdict *v)
{
	struct json_object *m = json_object_new_object(), *fs = json_object_new_array();
	const struct kp_node *nd = &a->graph.nodes[v->node];
	char letters[32];

	kp_taint_letters(v->taints, letters, sizeof(letters));
	kp_json_add(m, "name", kp_json_string(nd->mod->name));
	kp_json_add(m, "path", kp_json_string(nd->path));
	kp_json_add(m, "loads", json_object_new_boolean(v->loads));
	kp_json_add(m, "errno", v->loads ? NULL : kp_json_string(kp_errno_name(v->err)));
	kp_json_add(m, "taint", json_object_new_string(letters));
	for (size_t i = 0; i < v->nfindings; i++) {
		struct json_object *f = json_object_new_object();

		kp_json_add(f, "id", json_object_new_string(v->findings[i].id));
		kp_json_add(f, "severity",
			    json_object_new_string(kp_severity_name(v->findings[i].severity)));
		kp_json_add(f, "message", kp_json_string(v->findings[i].message));
		json_object_array_add(fs, f);
	}
	kp_json_add(m, "findings", fs);
	return m;
}

/*
 * Runs the analysis of @release's out-of-tree modules into @a (initialised from @tmpl;
 * the caller frees it). Returns 0, or an exit status after printing why.
 */
static int analyse_release(struct kp_cli *cli, const struct kp_ctx_opts *tmpl, const char *release,
			   struct kp_ctx *a)
{
	struct kp_err err = { 0 };

	kp_cli_ctx_init(a, cli, tmpl);
	a->o.fo.release = release;
	if (kp_out_of_tree_depmod(tmpl->basedir, release, &a->set, &err) < 0) {
		kp_cli_error(tmpl->basedir, "%s: %s", release, err.msg);
		return KP_EXIT_ERROR;
	}
	if (!a->set.n)
		return 0;
	return kp_cli_ctx_load(a, NULL, 0, KP_CTX_SIMULATE);
}

/* The verdict of the module called @name in @a, or NULL. */
static const struct kp_verdict *find_verdict(const struct kp_ctx *a, const char *name)
{
	size_t i = a->set.n ? kp_graph_find(&a->graph, name) : SIZE_MAX;

	return i == SIZE_MAX ? NULL : &a->sim.v[i];
}

/* @v's symbol_get() result for @sym, or NULL when it does not look @sym up. */
static const struct kp_symget_result *symget_of(const struct kp_verdict *v, const char *sym)
{
	for (size_t i = 0; i < v->nsymget; i++)
		if (v->symget[i].symbol && !strcmp(v->symget[i].symbol, sym))
			return &v->symget[i];
	return NULL;
}

static void change(const struct kp_check_out *o, struct json_object *arr, const char *name,
		   const char *kind, const char *what)
{
	if (arr) {
		struct json_object *c = json_object_new_object();

		kp_json_add(c, "module", kp_json_string(name));
		kp_json_add(c, "change", json_object_new_string(kind));
		kp_json_add(c, "detail", kp_json_string(what));
		json_object_array_add(arr, c);
	} else {
		fprintf(o->f, "  %s: %s: %s\n", name, kind, what);
	}
}

/* The first error finding's message: the reason chain of a failure. */
static const char *first_error(const struct kp_verdict *v)
{
	for (size_t i = 0; i < v->nfindings; i++)
		if (v->findings[i].severity == KP_SEV_ERROR)
			return v->findings[i].message;
	return v->nmessages ? v->messages[v->nmessages - 1] : "";
}

/* What changes for each out-of-tree module of @from when the system boots @to. */
static size_t compare_releases(const struct kp_check_out *o, struct json_object *arr,
			       const struct kp_ctx *a, const struct kp_ctx *b)
{
	size_t n = 0;
	char buf[1024];

	for (size_t k = 0; k < a->graph.n; k++) {
		const struct kp_verdict *x = &a->sim.v[a->graph.order[k]];
		const char *name = a->graph.nodes[x->node].mod->name;
		const struct kp_verdict *y = find_verdict(b, name);

		if (!y) {
			change(o, arr, name, "missing",
			       "no out-of-tree build for the new kernel: not rebuilt (DKMS) or not "
			       "installed");
			n++;
			continue;
		}
		if (x->loads && !y->loads) {
			snprintf(buf, sizeof(buf), "loads now, fails with %s: %s",
				 kp_errno_name(y->err), first_error(y));
			change(o, arr, name, "fails", buf);
			n++;
		} else if (!x->loads && y->loads) {
			change(o, arr, name, "loads", "fails now, loads on the new kernel");
		}
		if (!(x->taints & 1) && (y->taints & 1)) {
			change(o, arr, name, "gains-p",
			       "becomes proprietary (P) on the new kernel");
			n++;
		}
		for (size_t i = 0; i < x->nsymget && y->loads; i++) {
			const struct kp_symget_result *r;

			if (!x->symget[i].symbol || !x->symget[i].ok)
				continue;
			r = symget_of(y, x->symget[i].symbol);
			if (r && r->ok)
				continue;
			snprintf(buf, sizeof(buf),
				 "symbol_get(%s) returns NULL on the new kernel%s%s",
				 x->symget[i].symbol, r && r->reason ? ": " : "",
				 r && r->reason ? r->reason : "");
			change(o, arr, name, "loses-symbol-get", buf);
			n++;
		}
	}
	return n;
}

int kp_check_upgrade(struct kp_cli *cli, const struct kp_ctx_opts *tmpl, const char *from,
		     const char *to, const struct kp_check_out *o, bool json)
{
	struct kp_ctx a, b;
	struct json_object *arr = json ? json_object_new_array() : NULL;
	size_t n;
	int rc;

	memset(&b, 0, sizeof(b));
	rc = analyse_release(cli, tmpl, from, &a);
	if (!rc)
		rc = analyse_release(cli, tmpl, to, &b);
	if (rc) {
		kp_ctx_release(&a);
		kp_ctx_release(&b);
		json_object_put(arr);
		return rc;
	}
	if (!json)
		fprintf(o->f, "Out-of-tree modules of %s on %s:\n", from, to);
	n = compare_releases(o, arr, &a, &b);
	if (json) {
		struct json_object *top = json_object_new_object();

		kp_json_add(top, "schema_version", json_object_new_int(KP_CHECK_SCHEMA_VERSION));
		kp_json_add(top, "from", json_object_new_string(from));
		kp_json_add(top, "to", json_object_new_string(to));
		kp_json_add(top, "changes", arr);
		kp_json_emit(o->f, top, o->pretty); /* releases @top */
		fputc('\n', o->f);
	} else if (!n) {
		fprintf(o->f, "  nothing breaks (%zu module%s)\n", a.graph.n,
			a.graph.n == 1 ? "" : "s");
	}
	rc = (a.read_failures || b.read_failures) ? KP_EXIT_ERROR
	     : n				  ? KP_EXIT_FINDINGS
						  : KP_EXIT_OK;
	kp_ctx_release(&a);
	kp_ctx_release(&b);
	return rc;
}

/* Checks one release; adds its rows to @text or @json. Returns the exit status. */
static int check_release(struct kp_cli *cli, const struct kp_ctx_opts *tmpl, const char *root,
			 const char *release, const struct kp_check_out *o,
			 struct json_object *kernels)
{
	struct json_object *k = json_object_new_object(), *mods = json_object_new_array();
	struct kp_err err = { 0 };
	struct kp_ctx a;
	int rc = KP_EXIT_OK;

	kp_json_add(k, "release", json_object_new_string(release));
	kp_cli_ctx_init(&a, cli, tmpl);
	a.o.fo.release = release;
	if (kp_out_of_tree_depmod(root, release, &a.set, &err) < 0) {
		kp_cli_error(root, "%s: %s", release, err.msg);
		kp_json_add(k, "error", kp_json_string(err.msg));
		rc = KP_EXIT_ERROR;
		goto out;
	}
	if (!a.set.n) {
		if (!kernels)
			fprintf(o->f, "%-28s (no out-of-tree modules)\n", release);
		goto out;
	}
	rc = kp_cli_ctx_load(&a, NULL, 0, KP_CTX_SIMULATE);
	if (rc)
		goto out;
	for (size_t i = 0; i < a.graph.n; i++) {
		const struct kp_verdict *v = &a.sim.v[a.graph.order[i]];
		const struct kp_node *nd = &a.graph.nodes[v->node];
		char res[256];

		for (size_t j = 0; j < v->nfindings; j++)
			if (!v->findings[j].waived && v->findings[j].severity >= o->fail_on)
				rc = KP_EXIT_FINDINGS;
		if (kernels) {
			json_object_array_add(mods, module_json(&a, v));
			continue;
		}
		verdict_text(v, res, sizeof(res));
		fprintf(o->f, "%-28s %-24s %-40s %s\n", release, nd->mod->name, res, nd->path);
	}
	if (a.read_failures)
		rc = KP_EXIT_ERROR;
out:
	kp_json_add(k, "modules", mods);
	if (kernels)
		json_object_array_add(kernels, k);
	else
		json_object_put(k);
	kp_ctx_release(&a);
	return rc;
}

int kp_check_all_kernels(struct kp_cli *cli, const struct kp_ctx_opts *tmpl, const char *only,
			 const struct kp_check_out *o, bool json)
{
	struct json_object *kernels = json ? json_object_new_array() : NULL;
	struct kp_err err = { 0 };
	char **names;
	size_t n;
	int rc = KP_EXIT_OK;

	if (kp_tree_list_releases(tmpl->basedir, &names, &n, &err) < 0) {
		kp_cli_error(NULL, "%s", err.msg);
		return KP_EXIT_ERROR;
	}
	if (!n) {
		kp_cli_error(tmpl->basedir, "no installed kernel (no lib/modules/<release>)");
		return KP_EXIT_ERROR;
	}
	if (only) {
		size_t i = 0;

		while (i < n && strcmp(names[i], only))
			i++;
		if (i == n) {
			kp_cli_error(tmpl->basedir, "%s: not installed (no lib/modules/%s)", only,
				     only);
			kp_tree_releases_free(names, n);
			return KP_EXIT_ERROR;
		}
	}
	if (!json)
		fprintf(o->f, "%-28s %-24s %-40s %s\n", "KERNEL", "MODULE", "RESULT", "FILE");
	for (size_t i = 0; i < n; i++) {
		int r;

		if (only && strcmp(names[i], only))
			continue;
		r = check_release(cli, tmpl, tmpl->basedir, names[i], o, kernels);

		if (r > rc)
			rc = r;
	}
	kp_tree_releases_free(names, n);
	if (json) {
		struct json_object *top = json_object_new_object();

		kp_json_add(top, "schema_version", json_object_new_int(KP_CHECK_SCHEMA_VERSION));
		kp_json_add(top, "kernels", kernels);
		kp_json_emit(o->f, top, o->pretty); /* releases @top */
		fputc('\n', o->f);
	}
	return rc;
}
