// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The appended signature: "~Module signature appended~\n" at the very end,
 * preceded by struct module_signature (include/linux/module_signature.h) and
 * the PKCS#7 blob. Models mod_check_sig()/module_sig_check() (v4.14 … v6.12):
 * only the layout is read; verifying needs the target kernel's keyrings.
 */
#include <string.h>

#include "module-internal.h"

static const char marker[] = "~Module signature appended~\n";
#define MARKER_LEN   (sizeof(marker) - 1)
#define SIG_INFO_LEN 12 /* u8 algo, hash, id_type, signer_len, key_id_len, pad[3]; __be32 sig_len \
			 */

size_t kp_read_signature(struct kp_module *m, const unsigned char *image, size_t len)
{
	const unsigned char *info;
	size_t body;

	if (len < MARKER_LEN || memcmp(image + len - MARKER_LEN, marker, MARKER_LEN))
		return len;
	m->sig.present = true;
	body = len - MARKER_LEN;
	if (body < SIG_INFO_LEN) {
		m->sig.malformed = true;
		return body;
	}
	info = image + body - SIG_INFO_LEN;
	m->sig.algo = info[0];
	m->sig.hash = info[1];
	m->sig.id_type = info[2];
	m->sig.signer_len = info[3];
	m->sig.key_id_len = info[4];
	m->sig.sig_len = kp_load32(info + 8, true);
	body -= SIG_INFO_LEN;
	if ((uint64_t)m->sig.sig_len + m->sig.signer_len + m->sig.key_id_len > body) {
		m->sig.malformed = true;
		return body;
	}
	return body - m->sig.sig_len - m->sig.signer_len - m->sig.key_id_len;
}
