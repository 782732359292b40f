/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Telling OpenSSL failing from OpenSSL saying no: a signature that does not verify or a
 * message that does not parse is a verdict on the module; an allocation or internal failure
 * is not, and must become an error of the run (never "does not verify").
 */
#ifndef KP_OPENSSL_ERR_H
#define KP_OPENSSL_ERR_H

#include <stdbool.h>

/*
 * After an OpenSSL call failed: true when this thread's error queue holds a fatal error
 * (ERR_R_MALLOC_FAILURE, ERR_R_INTERNAL_ERROR, ...: ERR_FATAL_ERROR()). The queue is emptied.
 * Clear it (ERR_clear_error()) before the call.
 */
bool kp_openssl_failed(void);

#endif
