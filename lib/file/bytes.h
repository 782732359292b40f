/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A module file's bytes: read once, compression detected by magic (never by
 * suffix) and decompressed into memory with a size cap.
 */
#ifndef KP_BYTES_H
#define KP_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "util/util.h"

enum kp_compression {
	KP_COMP_NONE,
	KP_COMP_XZ,
	KP_COMP_ZSTD,
	KP_COMP_GZIP,
};

/* Default cap on a module's (decompressed) size: far above any real module. */
#define KP_DEFAULT_MAX_SIZE ((size_t)512 << 20)

struct kp_decoders;
struct kp_mem_budget;

struct kp_bytes {
	unsigned char *data; /* owned; malloc'ed */
	size_t len;
	size_t file_len; /* size on disk */
	enum kp_compression comp;
	size_t cap;		      /* allocated size of @data when decompressed */
	bool mapped;		      /* @data maps the file: read it only under kp_bytes_guard() */
	struct kp_decoders *keeper;   /* decompressed by these decoders: release offers it back */
	struct kp_mem_budget *budget; /* @held bytes of it are this buffer's until release */
	size_t held;
	/*
	 * Sparse: an uncompressed file read on demand with kp_bytes_load(); @data has the
	 * file's length but holds only what was loaded. @fd stays open until release.
	 */
	bool sparse;
	bool borrowed; /* @data is @keeper's file buffer: release keeps it */
	/*
	 * the file as it was opened (kp_bytes_read_elf(), kp_bytes_read_in(),
	 * kp_bytes_read_text_in(); st_mode 0: not opened)
	 */
	dev_t dev;
	ino_t ino;
	mode_t mode;
	uid_t uid;
	off_t size;
	struct timespec mtim, ctim;
	int fd;
	unsigned nloaded;
	struct {
		uint64_t off, end;
	} loaded[8]; /* ranges already in @data (the most recent ones) */
};

/*
 * What one reading thread keeps from module to module: the xz, zstd and gzip decoder
 * states (liblzma's dictionary, zstd's context, zlib's window) and one spare output
 * buffer of up to KP_DECODERS_SPARE_MAX bytes, so a whole tree does not allocate and
 * fault in those for every file. One per thread; NULL where taken means one-shot.
 */
#define KP_DECODERS_SPARE_MAX ((size_t)2 << 20)
#define KP_DECODERS_FILE_MAX  ((size_t)1 << 20) /* largest file buffer kept (input, sparse) */
struct kp_decoders *kp_decoders_new(void);
void kp_decoders_free(struct kp_decoders *d);
/*
 * What these decoders decompress is reserved from @b (mem-budget.h), shared with the other
 * threads of the read: the pool's decompressed bytes stay within it whatever the number of
 * threads (the spare buffer above is not counted). NULL: no budget.
 */
void kp_decoders_set_budget(struct kp_decoders *d, struct kp_mem_budget *b);

const char *kp_compression_name(enum kp_compression c);
enum kp_compression kp_detect_compression(const unsigned char *p, size_t len);

/*
 * The one way an input file is opened: @path must be a regular file (symlinks
 * followed). Directories, FIFOs, sockets and devices are refused before they are
 * opened ("is a FIFO, not a regular file"), and the open never blocks. Returns the
 * descriptor with @st filled, or -1 with the reason (no path) in @err and its errno in
 * @err->errnum (ENOENT when missing, EISDIR, EINVAL for other non-regular files).
 */
struct stat;
int kp_open_regular(const char *path, struct stat *st, struct kp_err *err);
/*
 * The same for @path under @root (a system at @root, -b ROOT or --root): opened by descriptors
 * inside it (file/rootopen.h, kp_root_openat()), so that a directory or link on the way that is
 * swapped after @path was resolved cannot lead the open out of @root; absolute links restart
 * at @root, ".." stops there. The inputs manifest records @path as kp_open_regular() does. Any
 * other @path, or a NULL or host @root: kp_open_regular().
 */
struct kp_root_dir;
int kp_open_regular_in(const struct kp_root_dir *root, const char *path, struct stat *st,
		       struct kp_err *err);
/*
 * The same under a root for a regular file or a FIFO (opened without waiting for a writer,
 * O_NONBLOCK left set): the running system's kernel files, read by a child that a FIFO can
 * stand in for (system/kernel-read.c). @path must be under @root (kp_root_rel()).
 */
int kp_open_readable_in(const struct kp_root_dir *root, const char *path, struct stat *st,
			struct kp_err *err);
/*
 * stat() of @path as kp_open_regular_in() would find it (under @root: inside it, by
 * descriptors), recorded in the inputs manifest as kp_in_stat(). 0, or -1 with errno.
 */
int kp_stat_in(const struct kp_root_dir *root, const char *path, struct stat *st);

/*
 * Reads a text file to its end whatever size it reports (procfs, sysfs), up to @max
 * bytes read and, when it is compressed (detected by magic), @max bytes decompressed.
 * 0, or -1 as kp_open_regular() (errnum EFBIG over the cap).
 */
int kp_bytes_read_text(const char *path, size_t max, struct kp_bytes *out, struct kp_err *err);
/* The same for @path under @root, opened as kp_open_regular_in(). */
int kp_bytes_read_text_in(const struct kp_root_dir *root, const char *path, size_t max,
			  struct kp_bytes *out, struct kp_err *err);

/*
 * Maps the regular file @path (at most @max bytes, not empty) read-only, uncompressed as it
 * is: read it only under kp_bytes_guard(). 0, or -1 as kp_open_regular() (EFBIG past @max).
 */
int kp_bytes_map(const char *path, size_t max, struct kp_bytes *out, struct kp_err *err);
/* The same for @path under @root, opened as kp_open_regular_in(). */
int kp_bytes_map_in(const struct kp_root_dir *root, const char *path, size_t max,
		    struct kp_bytes *out, struct kp_err *err);
/*
 * The same for the regular file open as @fd whose fstat() gave @st (the caller keeps @fd and
 * closes it): the bytes of that very file, whatever its name now names.
 */
int kp_bytes_map_fd(int fd, const struct stat *st, size_t max, struct kp_bytes *out,
		    struct kp_err *err);

/*
 * Hands each line of the text file @path (without its newline) to @fn, reading through one
 * small buffer: nothing mapped, the file never copied whole. A compressed file is decoded
 * first (kp_bytes_read_text()). Stops at the first non-zero return of @fn and returns it;
 * errors as kp_bytes_read_text() (EFBIG past @max bytes, lines up to 256 KiB).
 */
int kp_bytes_lines(const char *path, size_t max, int (*fn)(const char *line, size_t len, void *arg),
		   void *arg, struct kp_err *err);
/* The same for @path under @root, opened as kp_open_regular_in(). */
int kp_bytes_lines_in(const struct kp_root_dir *root, const char *path, size_t max,
		      int (*fn)(const char *line, size_t len, void *arg), void *arg,
		      struct kp_err *err);

/*
 * Reads @path (a regular file) whole and decompresses it if needed, never mapped: a file
 * that shrinks meanwhile is a read error. Output larger than @max_size is refused as a
 * probable decompression bomb.
 */
int kp_bytes_read(const char *path, size_t max_size, struct kp_bytes *out, struct kp_err *err);
/* The same for @path under @root, opened as kp_open_regular_in(). */
int kp_bytes_read_in(const struct kp_root_dir *root, const char *path, size_t max_size,
		     struct kp_bytes *out, struct kp_err *err);
/*
 * Same for a kernel module: decompression stops as soon as the output is not ELF.
 * @dec (may be NULL): the calling thread's decoders and buffers, reused. An uncompressed
 * module up to 1 MiB comes back sparse: the caller loads what it reads with
 * kp_bytes_load(), which fails cleanly if the file shrank. A larger one comes back
 * mapped: it must be read under kp_bytes_guard().
 */
int kp_bytes_read_elf(const char *path, size_t max_size, struct kp_decoders *dec,
		      struct kp_bytes *out, struct kp_err *err);
/* The same for @path under @root, opened as kp_open_regular_in(). */
int kp_bytes_read_elf_in(const struct kp_root_dir *root, const char *path, size_t max_size,
			 struct kp_decoders *dec, struct kp_bytes *out, struct kp_err *err);
/*
 * Calls @fn(@arg) and returns what it returns; when @b is mapped, a SIGBUS on the mapping
 * during the call (the file shrank) ends the call early with -1 and "file shrank while
 * being read" in @err instead of killing the process. @fn must then own nothing that the
 * jump would leak beyond what the caller can free (see module.c).
 */
int kp_bytes_guard(const struct kp_bytes *b, int (*fn)(void *), void *arg, struct kp_err *err);
/* Sparse bytes: copies [@off, @off + @len) of the file into @b->data (0, or -1 + @err). */
int kp_bytes_load(struct kp_bytes *b, uint64_t off, uint64_t len, struct kp_err *err);
/* Same, from a buffer already in memory (fuzzing, tests); @in is not kept. */
int kp_bytes_from_buffer(const unsigned char *in, size_t len, size_t max_size, struct kp_bytes *out,
			 struct kp_err *err);
/* The same for text: any decompressed content, @max_size still the cap. */
int kp_bytes_from_text_buffer(const unsigned char *in, size_t len, size_t max_size,
			      struct kp_bytes *out, struct kp_err *err);
void kp_bytes_release(struct kp_bytes *b);

/*
 * Decompresses @in (xz, zstd or gzip, by magic) without ever holding the output whole: @fn
 * gets it in consecutive pieces of at most KP_STREAM_CHUNK bytes (a kernel image scanned for
 * its certificates costs that much, not its decompressed size). A non-zero return of @fn
 * stops it. At most @max bytes in all. Concatenated zstd frames and gzip members are all
 * decoded (xz: the first stream, as for modules). 0, or -1 with @err (not compressed,
 * corrupt, too large, stopped).
 */
#define KP_STREAM_CHUNK ((size_t)256 << 10)
int kp_bytes_stream(const unsigned char *in, size_t len, size_t max,
		    int (*fn)(const unsigned char *p, size_t n, void *arg), void *arg,
		    struct kp_err *err);
/*
 * The same for the first stream only: decoding ends with the first xz stream, zstd frame or
 * gzip member of @in, and the bytes after it, whatever they are, are ignored (a compressed
 * payload inside a self-decompressing kernel image, followed by more of the decompressor's
 * code). The cap, the memory and the errors are kp_bytes_stream()'s; on an error, what was
 * decoded before it has still reached @fn, unless @fn stopped it or it would pass @max. 0,
 * -1 with @err, or -2 with @err ("<fmt>: truncated <fmt> stream") when @in ends inside the
 * stream (a payload cut short, not a chance magic whose bytes are no stream).
 */
int kp_bytes_stream_first(const unsigned char *in, size_t len, size_t max,
			  int (*fn)(const unsigned char *p, size_t n, void *arg), void *arg,
			  struct kp_err *err);
/*
 * kp_bytes_stream() for the @len bytes at @off of the file @fd, read with pread(): a zstd input is
 * read piecewise, never held whole either (xz and gzip are read whole first). Errors as above, and
 * "file shrank while being read" when the file ends before @off + @len.
 */
int kp_bytes_stream_fd(int fd, uint64_t off, size_t len, size_t max,
		       int (*fn)(const unsigned char *p, size_t n, void *arg), void *arg,
		       struct kp_err *err);

#endif
