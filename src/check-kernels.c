// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kopolicy check -b ROOT --all-kernels: every kernel installed in ROOT, and for each the
 * out-of-tree modules depmod would use for it (updates/, extra/, DKMS builds: everything
 * outside kernel/), predicted against that kernel. One table, like `dkms status` with the
 * loader's verdicts.
 */
#include "config.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check-output.h"
#include "json-out.h"

struct release_list {
	char **names;
	size_t n, cap;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The releases under ROOT/lib/modules and ROOT/usr/lib/modules (one entry each). */
static int list_releases(const char *root, struct release_list *l)
{
	static const char *const dirs[] = { "lib/modules", "usr/lib/modules" };

	for (size_t d = 0; d < KP_ARRAY_SIZE(dirs); d++) {
		char dir[PATH_MAX];
		struct dirent *de;
		DIR *dh;

		snprintf(dir, sizeof(dir), "%s/%s", strcmp(root, "/") ? root : "", dirs[d]);
		if (!(dh = opendir(dir)))
			continue;
		while ((de = readdir(dh))) {
			char path[2 * PATH_MAX];
			struct stat st;
			size_t k;

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
				continue;
			for (k = 0; k < l->n && strcmp(l->names[k], de->d_name); k++)
				;
			if (k < l->n)
				continue; /* /lib -> /usr/lib: the same release twice */
			if (kp_grow(&l->names, &l->cap, l->n + 1, sizeof(*l->names)) < 0 ||
			    !(l->names[l->n] = strdup(de->d_name))) {
				closedir(dh);
				return -1;
			}
			l->n++;
		}
		closedir(dh);
	}
	if (l->n)
		qsort(l->names, l->n, sizeof(*l->names), cmp_str);
	return 0;
}

/* The files depmod uses for @release that are not under kernel/: the out-of-tree modules. */
static int out_of_tree(const char *root, const char *release, struct kp_module_set *set,
		       struct kp_err *err)
{
	struct kp_depmod_shadow *sh = NULL;
	struct kp_depmod_cfg cfg;
	struct kp_tree t;
	size_t nsh = 0, kept = 0, klen;
	char kdir[PATH_MAX];
	int r = -1;

	memset(&t, 0, sizeof(t));
	if (kp_tree_open(&t, root, release, err) < 0)
		return -1;
	if (kp_depmod_cfg_load(&cfg, root, release, err) < 0)
		goto out_tree;
	if (kp_set_add_path(set, t.moddir) < 0 ||
	    kp_depmod_select(&cfg, t.moddir, set, &sh, &nsh, err) < 0) {
		kp_err_set(err, "out of memory");
		goto out_cfg;
	}
	snprintf(kdir, sizeof(kdir), "%s/kernel/", t.moddir);
	klen = strlen(kdir);
	for (size_t i = 0; i < set->n; i++) {
		if (!strncmp(set->entries[i].path, kdir, klen)) {
			free(set->entries[i].path);
			continue;
		}
		set->entries[kept++] = set->entries[i];
	}
	set->n = kept;
	r = 0;
out_cfg:
	kp_depmod_shadows_free(sh, nsh);
	kp_depmod_cfg_free(&cfg);
out_tree:
	kp_tree_release(&t);
	return r;
}

/* "loads", "loads, P", "fails (ENOENT)", then the first rule ids. */
static void verdict_text(const struct kp_verdict *v, char *buf, size_t len)
{
	size_t k;

	if (v->loads)
		k = (size_t)snprintf(buf, len, "loads%s", (v->taints & 1) ? ", P" : "");
	else
		k = (size_t)snprintf(buf, len, "fails (%s)", kp_errno_name(v->err));
	for (size_t i = 0; i < v->nfindings && k < len; i++) {
		const struct kp_finding *f = &v->findings[i];

		if (f->severity == KP_SEV_NOTE)
			continue;
		k += (size_t)snprintf(buf + k, len - k, "%s%s", k ? ", " : "", f->id);
	}
}

static struct json_object *module_json(const struct kp_analysis *a, const struct kp_verdict *v)
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

/* Checks one release; adds its rows to @text or @json. Returns the exit status. */
static int check_release(struct kp_cli *cli, const struct kp_analysis *tmpl, const char *root,
			 const char *release, const struct kp_check_out *o,
			 struct json_object *kernels)
{
	struct json_object *k = json_object_new_object(), *mods = json_object_new_array();
	struct kp_err err = { "" };
	struct kp_analysis a = *tmpl;
	int rc = KP_EXIT_OK;

	kp_json_add(k, "release", json_object_new_string(release));
	a.fo.release = release;
	if (out_of_tree(root, release, &a.set, &err) < 0) {
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
	rc = kp_analysis_run(&a, cli, NULL, 0, true);
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
	kp_analysis_free(&a);
	return rc;
}

int kp_check_all_kernels(struct kp_cli *cli, const struct kp_analysis *tmpl,
			 const struct kp_check_out *o, bool json)
{
	struct json_object *kernels = json ? json_object_new_array() : NULL;
	struct release_list l = { 0 };
	int rc = KP_EXIT_OK;

	if (list_releases(tmpl->basedir, &l) < 0) {
		kp_cli_error(NULL, "out of memory");
		return KP_EXIT_ERROR;
	}
	if (!l.n) {
		kp_cli_error(tmpl->basedir, "no installed kernel (no lib/modules/<release>)");
		return KP_EXIT_ERROR;
	}
	if (!json)
		fprintf(o->f, "%-28s %-24s %-40s %s\n", "KERNEL", "MODULE", "RESULT", "FILE");
	for (size_t i = 0; i < l.n; i++) {
		int r = check_release(cli, tmpl, tmpl->basedir, l.names[i], o, kernels);

		if (r > rc)
			rc = r;
		free(l.names[i]);
	}
	free(l.names);
	if (json) {
		struct json_object *top = json_object_new_object();

		kp_json_add(top, "schema_version", json_object_new_int(KP_CHECK_SCHEMA_VERSION));
		kp_json_add(top, "kernels", kernels);
		kp_json_emit(o->f, top, o->pretty); /* releases @top */
		fputc('\n', o->f);
	}
	return rc;
}
