/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the inputs tests share: a manifest streamed into memory, a file to spill to, inputs. */
#ifndef KP_TEST_MANIFEST_SINK_H
#define KP_TEST_MANIFEST_SINK_H

#include <stddef.h>

/* A manifest streamed into memory (kp_inputs_stream()'s writer: kp_test_manifest_put()). */
struct kp_test_manifest {
	unsigned char *p;
	size_t len, cap;
	size_t pieces, largest; /* the writes, the largest one */
};

/* Appends @len bytes of @p to the kp_test_manifest @arg: 0, or -1 out of memory. */
int kp_test_manifest_put(void *arg, const void *p, size_t len);
/* Files 0 to @n - 1 named by @path_of, file i holding "i\n": 0, or -1 when one cannot be written.
 */
int kp_test_write_inputs(int n, void (*path_of)(char *buf, size_t len, int i));
/* Files 0 to @n - 1 named by @path_of each stat()ed then opened through the inputs recorder. */
void kp_test_read_inputs(int n, void (*path_of)(char *buf, size_t len, int i));
/* An empty unnamed file in @dir for the recorder to spill to; -1 when none can be made. */
int kp_test_spill_file(const char *dir);
/*
 * What @reads looks up, recorded by an inputs recorder spilling to a file in @spill_dir and
 * streamed into @m: 0, or -1 with @why (also when the stream's length is not @m's).
 */
int kp_test_record(struct kp_test_manifest *m, const char *spill_dir, void (*reads)(void),
		   const char **why);

#endif
