/* SPDX-License-Identifier: GPL-2.0-or-later
 *
 * loader: the guest-side half of the kopolicy oracle (tests/oracle/).
 *
 *   loader [-f FLAGS] FILE [PARAMS]
 *
 * Loads FILE with finit_module(2) (raw syscall, flags 0 unless -f is given, so
 * a signature is honoured exactly as the kernel sees it) and prints exactly
 * one line on stdout:
 *
 *   KPLOAD <basename> rc=<0|-errno> <ERRNAME>
 *
 * ERRNAME is "OK" on success, otherwise the errno's symbolic name (ENOENT,
 * ENOEXEC, EKEYREJECTED, ...).  busybox/kmod insmod are not used because they
 * translate or hide the errno.  Built with gcc -static -O2 on the host and
 * copied into the initramfs; it has no other dependency.
 *
 * -f FLAGS passes finit_module() flags as kmod does for modprobe/insmod
 * --force-modversion (MODULE_INIT_IGNORE_MODVERSIONS = 1), --force-vermagic
 * (MODULE_INIT_IGNORE_VERMAGIC = 2) and --force (both, 3): kmod's
 * do_finit_module() passes exactly these for an uncompressed module.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MODULE_INIT_IGNORE_MODVERSIONS
#define MODULE_INIT_IGNORE_MODVERSIONS 1
#endif
#ifndef MODULE_INIT_IGNORE_VERMAGIC
#define MODULE_INIT_IGNORE_VERMAGIC 2
#endif

#ifndef SYS_finit_module
#define SYS_finit_module 313 /* x86_64 */
#endif

static const char *errname(int e)
{
	switch (e) {
	case 0: return "OK";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EIO: return "EIO";
	case ENOEXEC: return "ENOEXEC";
	case EBADF: return "EBADF";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case ENOSPC: return "ENOSPC";
	case ERANGE: return "ERANGE";
	case ENOSYS: return "ENOSYS";
	case ENODATA: return "ENODATA";
	case ENOPKG: return "ENOPKG";
	case EBADMSG: return "EBADMSG";
	case EOVERFLOW: return "EOVERFLOW";
	case EMSGSIZE: return "EMSGSIZE";
	case ENXIO: return "ENXIO";
	case EAGAIN: return "EAGAIN";
	case ETXTBSY: return "ETXTBSY";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ENOKEY: return "ENOKEY";
	case EKEYEXPIRED: return "EKEYEXPIRED";
	case EKEYREVOKED: return "EKEYREVOKED";
	case EKEYREJECTED: return "EKEYREJECTED";
	default: {
		const char *n = strerrorname_np(e);
		return n ? n : "EUNKNOWN";
	}
	}
}

int main(int argc, char **argv)
{
	const char *params;
	const char *base;
	long flags = 0, known;
	long rc;
	int fd, err = 0;

	if (argc > 2 && strcmp(argv[1], "-f") == 0) {
		char *end;

		flags = strtol(argv[2], &end, 0);
		known = MODULE_INIT_IGNORE_MODVERSIONS | MODULE_INIT_IGNORE_VERMAGIC;
		if (*argv[2] == '\0' || *end != '\0' || (flags & ~known)) {
			fprintf(stderr, "loader: bad -f flags '%s' (0..3)\n", argv[2]);
			return 2;
		}
		argc -= 2;
		argv += 2;
	}
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: loader [-f FLAGS] FILE [PARAMS]\n");
		return 2;
	}
	params = argc > 2 ? argv[2] : "";
	base = strrchr(argv[1], '/');
	base = base ? base + 1 : argv[1];

	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		printf("KPLOAD %s rc=%d %s open-failed\n", base, -err, errname(err));
		fflush(stdout);
		return 1;
	}
	rc = syscall(SYS_finit_module, fd, params, flags);
	if (rc != 0)
		err = errno;
	close(fd);
	printf("KPLOAD %s rc=%d %s\n", base, -err, errname(err));
	fflush(stdout);
	return 0;
}
