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
#define MARKER_LEN (sizeof(marker) - 1)
#define SIG_INFO_LEN                                                                 \
	12 /* u8 algo, hash, id_type, signer_len, key_id_len, pad[3]; __be32 sig_len \
	    */

/* A DER SEQUENCE (PKCS#7 ContentInfo) whose length is exactly @len bytes. */
static bool der_sequence(const unsigned char *p, size_t len)
{
	size_t n, hdr = 2;

	if (len < 2 || p[0] != 0x30)
		return false;
	if (p[1] < 0x80) {
		n = p[1];
	} else {
		unsigned k = p[1] & 0x7f;

		if (k == 0 || k > 4 || len < 2 + k)
			return false;
		n = 0;
		for (unsigned i = 0; i < k; i++)
			n = n << 8 | p[2 + i];
		hdr += k;
	}
	return hdr + n == len;
}

size_t kp_read_signature(struct kp_module *m, const unsigned char *image, size_t len)
{
	const unsigned char *info;
	size_t body;

	if (len < MARKER_LEN || memcmp(image + len - MARKER_LEN, marker, MARKER_LEN))
		return len;
	m->sig.present = true;
	body = len - MARKER_LEN;
	/* mod_verify_sig(): modlen <= sizeof(ms) is -EBADMSG */
	if (body <= SIG_INFO_LEN) {
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
	m->sig.params_zero =
		!info[0] && !info[1] && !info[3] && !info[4] && !info[5] && !info[6] && !info[7];
	/* mod_check_sig(): sig_len >= file_len - sizeof(*ms) is -EBADMSG */
	if (m->sig.sig_len >= body - SIG_INFO_LEN) {
		m->sig.malformed = true;
		return body;
	}
	body -= SIG_INFO_LEN;
	m->sig.pkcs7_der = der_sequence(image + body - m->sig.sig_len, m->sig.sig_len);
	return body - m->sig.sig_len;
}
