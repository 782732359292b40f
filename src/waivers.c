// SPDX-License-Identifier: GPL-2.0-or-later
#include "config.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file/rootfs.h"
#include "waivers.h"

int kp_waivers_load_buffer(struct kp_waivers *ws, const char *path, const char *buf, size_t len,
			   struct kp_err *err)
{
	const char *pos = buf, *end = buf + len;
	size_t wcap = 0;
	unsigned lineno = 0;
	char *line = NULL;
	int r = 0;

	memset(ws, 0, sizeof(*ws));
	line = malloc(len + 1);
	ws->path = strdup(path);
	if (!line || !ws->path) {
		free(line);
		free(ws->path);
		ws->path = NULL;
		return kp_err_set(err, "out of memory");
	}
	while (pos < end && r == 0) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		size_t l = nl ? (size_t)(nl - pos) : (size_t)(end - pos);
		char *hash, *save = NULL, *tok[4] = { 0 };
		size_t nt = 0;

		lineno++;
		if (memchr(pos, '\0', l)) {
			r = kp_err_set(err, "%s:%u: NUL byte: not a text file", path, lineno);
			break;
		}
		memcpy(line, pos, l);
		line[l] = '\0';
		pos = nl ? nl + 1 : end;
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		for (char *t = strtok_r(line, " \t\r\n", &save); t && nt < 4;
		     t = strtok_r(NULL, " \t\r\n", &save))
			tok[nt++] = t;
		if (nt == 0)
			continue;
		if (nt > 3) {
			r = kp_err_set(err, "%s:%u: expected RULE [MODULE [SYMBOL]]", path, lineno);
			break;
		}
		if (kp_grow(&ws->w, &wcap, ws->n + 1, sizeof(*ws->w)) < 0) {
			r = kp_err_set(err, "out of memory");
			break;
		}
		ws->w[ws->n].rule = strdup(tok[0]);
		ws->w[ws->n].module = strdup(tok[1] ? tok[1] : "*");
		ws->w[ws->n].symbol = strdup(tok[2] ? tok[2] : "*");
		ws->w[ws->n].line = lineno;
		ws->w[ws->n].used = 0;
		ws->n++;
		if (!ws->w[ws->n - 1].rule || !ws->w[ws->n - 1].module ||
		    !ws->w[ws->n - 1].symbol) {
			r = kp_err_set(err, "out of memory");
			break;
		}
	}
	free(line);
	if (r < 0)
		kp_waivers_free(ws);
	return r;
}

int kp_waivers_load(struct kp_waivers *ws, const char *path, struct kp_err *err)
{
	struct kp_bytes b;
	int r;

	memset(ws, 0, sizeof(*ws));
	/* The common reader: a regular file only (no FIFO, no /dev/zero), capped. */
	if (kp_read_file(path, KP_WAIVERS_MAX_SIZE, &b, err) < 0)
		return -1;
	r = kp_waivers_load_buffer(ws, path, (const char *)b.data, b.len, err);
	kp_bytes_release(&b);
	return r;
}

size_t kp_waivers_apply(struct kp_waivers *ws, struct kp_simulation *sim)
{
	size_t n = 0;

	for (size_t i = 0; i < sim->n; i++) {
		struct kp_verdict *v = &sim->v[i];
		const char *mod = sim->graph->nodes[v->node].mod->name;

		if (sim->graph->nodes[v->node].provider)
			continue; /* not reported (check --provider) */

		for (size_t j = 0; j < v->nfindings; j++) {
			struct kp_finding *f = &v->findings[j];

			for (size_t k = 0; k < ws->n; k++) {
				struct kp_waiver *w = &ws->w[k];

				if (fnmatch(w->rule, f->id, 0) || fnmatch(w->module, mod, 0) ||
				    fnmatch(w->symbol, f->symbol ? f->symbol : "", 0))
					continue;
				f->waived = true;
				w->used++;
				n++;
				break;
			}
		}
	}
	return n;
}

size_t kp_waivers_report_unused(const struct kp_waivers *ws, FILE *f)
{
	size_t n = 0;

	for (size_t i = 0; i < ws->n; i++) {
		const struct kp_waiver *w = &ws->w[i];

		if (w->used)
			continue;
		fprintf(f, "kopolicy: %s:%u: warning: unused waiver: %s %s %s\n",
			ws->path ? ws->path : "waivers", w->line, w->rule, w->module, w->symbol);
		n++;
	}
	return n;
}

void kp_waivers_free(struct kp_waivers *ws)
{
	for (size_t i = 0; i < ws->n; i++) {
		free(ws->w[i].rule);
		free(ws->w[i].module);
		free(ws->w[i].symbol);
	}
	free(ws->w);
	free(ws->path);
	memset(ws, 0, sizeof(*ws));
}
