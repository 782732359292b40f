// SPDX-License-Identifier: GPL-2.0-or-later
/* What the inputs tests share (manifest-sink.h). */
#include "manifest-sink.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file/inputs.h"

int kp_test_manifest_put(void *arg, const void *p, size_t len)
{
	struct kp_test_manifest *m = arg;

	if (m->len + len > m->cap) {
		size_t cap = (m->len + len) * 2;
		unsigned char *q = realloc(m->p, cap);

		if (!q)
			return -1;
		m->p = q;
		m->cap = cap;
	}
	memcpy(m->p + m->len, p, len);
	m->len += len;
	m->pieces++;
	if (len > m->largest)
		m->largest = len;
	return 0;
}

void kp_test_read_inputs(int n, void (*path_of)(char *buf, size_t len, int i))
{
	char p[256];
	struct stat st;

	for (int i = 0; i < n; i++) {
		int fd;

		path_of(p, sizeof(p), i);
		kp_in_stat(p, &st);
		fd = kp_in_open(p, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			close(fd);
	}
}

int kp_test_spill_file(const char *dir)
{
	char tmpl[256];
	int fd;

	snprintf(tmpl, sizeof(tmpl), "%s/spill-XXXXXX", dir);
	fd = mkstemp(tmpl);
	if (fd >= 0)
		unlink(tmpl);
	return fd;
}

int kp_test_write_inputs(int n, void (*path_of)(char *buf, size_t len, int i))
{
	char p[256];

	for (int i = 0; i < n; i++) {
		FILE *f;

		path_of(p, sizeof(p), i);
		f = fopen(p, "w");
		if (!f)
			return -1;
		fprintf(f, "%d\n", i);
		if (fclose(f) != 0)
			return -1;
	}
	return 0;
}

int kp_test_record(struct kp_test_manifest *m, const char *spill_dir, void (*reads)(void),
		   const char **why)
{
	int spill = kp_test_spill_file(spill_dir);
	struct kp_inputs *in = spill >= 0 ? kp_inputs_new(spill, 0) : NULL;
	uint64_t len = 0, count = 0;
	int r = -1;

	memset(m, 0, sizeof(*m));
	*why = "no recorder";
	if (in) {
		kp_inputs_attach(in);
		reads();
		kp_inputs_attach(NULL);
		r = kp_inputs_stream(in, kp_test_manifest_put, m, &len, &count, why);
		kp_inputs_free(in);
	}
	if (spill >= 0)
		close(spill);
	if (r == 0 && len != m->len) {
		*why = "the stream's length is not what was written";
		r = -1;
	}
	return r;
}
