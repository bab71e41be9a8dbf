/* tls.h — the listener's TLS (internal to libjfrstream_uv): OpenSSL over
 * BIOs of memory, so that libuv owns the socket and OpenSSL only turns
 * bytes into bytes. listen.c feeds what it read (jfr__tls_in), drives the
 * handshake (jfr__tls_handshake), takes plaintext (jfr__tls_read) and sends
 * what OpenSSL wants sent (jfr__tls_out: handshake replies, alerts,
 * encrypted writes) after each of those calls. Without OpenSSL (-Dtls
 * disabled) tls.c is a stub whose jfr__tls_ctx_new returns JFR_UNSUPPORTED.
 * OpenSSL's memory is its own (see jfrstream_uv.h, TLS). */
#ifndef JFR_UV_TLS_H
#define JFR_UV_TLS_H

#include "jfrstream_uv.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct jfr__tls_ctx jfr__tls_ctx; /* per listener: SSL_CTX, patterns */
typedef struct jfr__tls jfr__tls;         /* per connection: SSL, its BIOs */

/* Load cfg's files (see jfrstream_uv.h, RETURN VALUES): JFR_OK and *out, or
 * the status with "MEMBER FILE: REASON" in err. */
jfr_status jfr__tls_ctx_new(const jfr_uv_tls_config *cfg, const jfr_allocator *a,
                            jfr__tls_ctx **out, char *err, size_t errlen);
void jfr__tls_ctx_free(jfr__tls_ctx *x);
uint64_t jfr__tls_ctx_timeout_ms(const jfr__tls_ctx *x);

/* A connection's state; NULL for lack of memory. */
jfr__tls *jfr__tls_new(jfr__tls_ctx *x);
void jfr__tls_free(jfr__tls *t);

/* Bytes read from the socket, borrowed (not copied) until jfr__tls_in_end,
 * which the caller calls before p is reused: OpenSSL reads them in place.
 * JFR_OK, or before admission JFR_REFUSED (why: "not TLS (a plaintext
 * client?)", "TLS handshake over N bytes"). n may be 0. */
jfr_status jfr__tls_in(jfr__tls *t, const void *p, size_t n, char *why, size_t whylen);
/* The end of jfr__tls_in's loan: what OpenSSL has not read of it yet (the
 * plaintext was not all taken: a pause, a full buffer) is copied and read
 * first next time. JFR_OK or JFR_NOMEM (those bytes are lost: end the
 * connection). */
jfr_status jfr__tls_in_end(jfr__tls *t);
/* Drive the handshake on what was fed: JFR_OK once done and the client
 * admitted (at once on later calls), JFR_PAUSED when it needs more bytes,
 * JFR_REFUSED with the reason in why. */
jfr_status jfr__tls_handshake(jfr__tls *t, char *why, size_t whylen);
/* Decrypted bytes into buf (after admission): > 0 bytes, 0 when it needs
 * more from the socket or the peer sent close_notify (then
 * jfr__tls_peer_closed, and our close_notify waits in jfr__tls_out), -1 on
 * a TLS error (why: OpenSSL's reason, e.g. "bad record mac"). */
long jfr__tls_read(jfr__tls *t, void *buf, size_t cap, char *why, size_t whylen);
/* The peer ended its TLS stream (close_notify): the input's end, as TCP's
 * FIN is for plain connections (a TLS client may wait for our close_notify
 * before it closes the socket). */
bool jfr__tls_peer_closed(const jfr__tls *t);
/* Encrypt n plaintext bytes (after admission) into what jfr__tls_out gives:
 * JFR_OK, JFR_INVALID_STATE before admission, JFR_IO (OpenSSL failed). */
jfr_status jfr__tls_write(jfr__tls *t, const void *p, size_t n);
/* Ciphertext waiting to be sent; jfr__tls_out moves up to cap of it into
 * buf and returns how much. */
size_t jfr__tls_out_pending(jfr__tls *t);
size_t jfr__tls_out(jfr__tls *t, void *buf, size_t cap);

#endif
