/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A module's interface digest: SHA-256 over what the dependency graph, the load order and
 * the other modules' loads read of its facts (its name, modinfo name, each export's name,
 * namespace, table, GPL class and CRC, each import's name and weak bit, depends=,
 * import_ns=), each list tagged with its count so no two run together. Made when the
 * module is read (kp_module.iface_sha256) and cached with its facts, so that a stored
 * simulation (sim/sim-store.h) is written and compared without hashing every module
 * again. Cryptographic: a module crafted to keep another interface's digest must not keep
 * the verdicts that read it.
 */
#ifndef KP_READ_MODULE_IFACE_H
#define KP_READ_MODULE_IFACE_H

#include "read/module.h"

#define KP_MODULE_IFACE_LEN 32 /* SHA-256 */

struct evp_md_st; /* OpenSSL's EVP_MD */

/*
 * The interface digest of @m computed from its fields now (@md: a SHA-256 the caller
 * fetched once, NULL: EVP_sha256()). 0, or -1 (out of memory, a count over 32 bits,
 * OpenSSL failed).
 */
int kp_module_iface_digest(const struct kp_module *m, const struct evp_md_st *md,
			   unsigned char out[KP_MODULE_IFACE_LEN]);
/* @m's digest as read (iface_digested), else computed as kp_module_iface_digest(). */
int kp_module_iface(const struct kp_module *m, const struct evp_md_st *md,
		    unsigned char out[KP_MODULE_IFACE_LEN]);

#endif
