/* The listener's TLS: OpenSSL over our own input BIO and a memory BIO (tls.h). */
#include "tls.h"
#include "mem.h"

#include <stdio.h>
#include <string.h>

#ifndef JFRUV_HAVE_TLS

bool jfr_uv_tls_available(void) { return false; }

jfr_status jfr__tls_ctx_new(const jfr_uv_tls_config *cfg, const jfr_allocator *a,
                            jfr__tls_ctx **out, char *err, size_t errlen) {
    (void)cfg, (void)a;
    *out = NULL;
    snprintf(err, errlen, "TLS: built without OpenSSL (-Dtls, Debian package libssl-dev)");
    return JFR_UNSUPPORTED;
}
void jfr__tls_ctx_free(jfr__tls_ctx *x) { (void)x; }
uint64_t jfr__tls_ctx_timeout_ms(const jfr__tls_ctx *x) { return (void)x, 0; }
jfr__tls *jfr__tls_new(jfr__tls_ctx *x) { return (void)x, NULL; }
void jfr__tls_free(jfr__tls *t) { (void)t; }
jfr_status jfr__tls_in(jfr__tls *t, const void *p, size_t n, char *why, size_t whylen) {
    (void)t, (void)p, (void)n, (void)why, (void)whylen;
    return JFR_UNSUPPORTED;
}
jfr_status jfr__tls_in_end(jfr__tls *t) { return (void)t, JFR_UNSUPPORTED; }
jfr_status jfr__tls_handshake(jfr__tls *t, char *why, size_t whylen) {
    (void)t, (void)why, (void)whylen;
    return JFR_UNSUPPORTED;
}
long jfr__tls_read(jfr__tls *t, void *buf, size_t cap, char *why, size_t whylen) {
    (void)t, (void)buf, (void)cap, (void)why, (void)whylen;
    return -1;
}
jfr_status jfr__tls_write(jfr__tls *t, const void *p, size_t n) {
    (void)t, (void)p, (void)n;
    return JFR_UNSUPPORTED;
}
size_t jfr__tls_out_pending(jfr__tls *t) { return (void)t, 0; }
size_t jfr__tls_out(jfr__tls *t, void *buf, size_t cap) { return (void)t, (void)buf, (void)cap, 0; }
bool jfr__tls_peer_closed(const jfr__tls *t) { return (void)t, false; }

#else

#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

struct jfr__tls_ctx {
    jfr_allocator al;
    SSL_CTX *ctx;
    char **allow; /* copies of the patterns */
    size_t nallow;
    uint64_t timeout_ms;
    bool verify;  /* client_ca_file: a client certificate is required */
    BIO_METHOD *in_method; /* in_read & co. */
};

struct jfr__tls {
    jfr__tls_ctx *x;
    SSL *ssl;
    BIO *in, *out; /* socket -> OpenSSL (in_read), OpenSSL -> socket (memory); owned by ssl */
    /* What OpenSSL reads: first `kept` (from `kept_off`), then the read
     * being handled, borrowed from the caller (src, n_src) until
     * jfr__tls_in_end copies its unread rest into `kept`. A memory BIO
     * would clear, copy in, and compact every read's bytes: three passes
     * over 1,000 connections' buffers, which do not stay in the cache. */
    const unsigned char *src;
    size_t n_src, kept_off;
    jfr_buf kept;
    uint64_t fed;  /* bytes fed before admission */
    bool admitted;
    bool closed;   /* the peer's close_notify came (ours is queued) */
};

bool jfr_uv_tls_available(void) { return true; }

/* OpenSSL's reason for the last failure (its error queue is per thread:
 * emptied after each use). */
static const char *ssl_reason(const char *dflt) {
    unsigned long e = ERR_peek_error(); /* the first: the cause, not the callers */
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    ERR_clear_error();
    return r ? r : dflt;
}

/* A file's load failure: JFR_IO when it cannot be opened (errno's text),
 * else JFR_INVALID_ARG with OpenSSL's reason. */
static jfr_status file_error(const char *member, const char *file, char *err, size_t errlen) {
    FILE *f = fopen(file, "r");
    if (!f) {
        snprintf(err, errlen, "%s %s: %s", member, file, strerror(errno));
        ERR_clear_error();
        return JFR_IO;
    }
    fclose(f);
    snprintf(err, errlen, "%s %s: %s", member, file, ssl_reason("cannot be used"));
    return JFR_INVALID_ARG;
}

void jfr__tls_ctx_free(jfr__tls_ctx *x) {
    if (!x)
        return;
    for (size_t i = 0; x->allow && i < x->nallow; i++)
        if (x->allow[i])
            jfr__free(&x->al, x->allow[i], strlen(x->allow[i]) + 1);
    jfr__free(&x->al, x->allow, x->nallow * sizeof *x->allow);
    SSL_CTX_free(x->ctx);
    BIO_meth_free(x->in_method);
    jfr_allocator al = x->al;
    jfr__free(&al, x, sizeof *x);
}

/* The input BIO: OpenSSL's record layer reads ciphertext from what
 * jfr__tls_in was given; empty means "retry later", never end of file. */
static int in_read(BIO *b, char *buf, size_t cap, size_t *got) {
    jfr__tls *t = BIO_get_data(b);
    size_t n = 0;
    BIO_clear_retry_flags(b);
    if (t->kept_off < t->kept.len) {
        n = t->kept.len - t->kept_off;
        n = n < cap ? n : cap;
        memcpy(buf, t->kept.data + t->kept_off, n);
        t->kept_off += n;
        if (t->kept_off == t->kept.len)
            t->kept_off = t->kept.len = 0;
    }
    if (n < cap && t->n_src) {
        size_t k = t->n_src < cap - n ? t->n_src : cap - n;
        memcpy(buf + n, t->src, k);
        t->src += k;
        t->n_src -= k;
        n += k;
    }
    *got = n;
    if (n)
        return 1;
    BIO_set_retry_read(b);
    return 0;
}

static int in_write(BIO *b, const char *p, size_t n, size_t *put) {
    (void)b, (void)p, (void)n;
    *put = 0;
    return 0; /* never written: OpenSSL writes to `out` */
}

static long in_ctrl(BIO *b, int cmd, long num, void *ptr) {
    (void)num, (void)ptr;
    jfr__tls *t = BIO_get_data(b);
    switch (cmd) {
    case BIO_CTRL_PENDING:
        return t ? (long)(t->kept.len - t->kept_off + t->n_src) : 0;
    case BIO_CTRL_FLUSH:
        return 1;
    default:
        return 0;
    }
}

static int in_create(BIO *b) {
    BIO_set_init(b, 1);
    return 1;
}

jfr_status jfr__tls_ctx_new(const jfr_uv_tls_config *cfg, const jfr_allocator *a,
                            jfr__tls_ctx **out, char *err, size_t errlen) {
    *out = NULL;
    if (!cfg->cert_file || !cfg->key_file) {
        snprintf(err, errlen, "TLS: %s not set", cfg->cert_file ? "key_file" : "cert_file");
        return JFR_INVALID_ARG;
    }
    if (cfg->allow_count && (!cfg->client_ca_file || !cfg->allow)) {
        snprintf(err, errlen, "TLS: allow patterns need client_ca_file");
        return JFR_INVALID_ARG;
    }
    snprintf(err, errlen, "TLS: out of memory");
    jfr__tls_ctx *x = jfr__calloc(a, sizeof *x);
    if (!x)
        return JFR_NOMEM;
    x->al = *a;
    x->timeout_ms = cfg->handshake_timeout_ms ? cfg->handshake_timeout_ms
                                              : JFR_UV_TLS_HANDSHAKE_MS;
    jfr_status st = JFR_NOMEM;
    if (cfg->allow_count) {
        if (cfg->allow_count > SIZE_MAX / sizeof *x->allow ||
            !(x->allow = jfr__calloc(a, cfg->allow_count * sizeof *x->allow)))
            goto fail;
        x->nallow = cfg->allow_count;
        for (size_t i = 0; i < x->nallow; i++)
            if (!cfg->allow[i] || !(x->allow[i] = jfr__strdup(a, cfg->allow[i]))) {
                if (!cfg->allow[i]) {
                    snprintf(err, errlen, "TLS: allow pattern %zu is NULL", i);
                    st = JFR_INVALID_ARG;
                }
                goto fail;
            }
    }
    ERR_clear_error();
    if (!(x->in_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK,
                                      "jfrstream input")) ||
        !BIO_meth_set_read_ex(x->in_method, in_read) ||
        !BIO_meth_set_write_ex(x->in_method, in_write) ||
        !BIO_meth_set_ctrl(x->in_method, in_ctrl) || !BIO_meth_set_create(x->in_method, in_create))
        goto fail;
    if (!(x->ctx = SSL_CTX_new(TLS_server_method())))
        goto fail;
    SSL_CTX_set_min_proto_version(x->ctx, TLS1_2_VERSION);
    /* one long stream per peer: no resumption (no tickets, no cache), no
     * renegotiation; buffers released while a connection is quiet (1,000
     * idle peers) */
    SSL_CTX_set_options(x->ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET);
    SSL_CTX_set_num_tickets(x->ctx, 0);
    SSL_CTX_set_session_cache_mode(x->ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_mode(x->ctx, SSL_MODE_RELEASE_BUFFERS);
    /* AES-128-GCM first, by our order (OpenSSL's default puts AES-256
     * first, about 30 % more CPU per byte decrypted, for no gain that
     * matters here); ChaCha20 for clients without AES instructions */
    SSL_CTX_set_options(x->ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    if (SSL_CTX_set_ciphersuites(x->ctx, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
                                         "TLS_CHACHA20_POLY1305_SHA256") != 1 ||
        SSL_CTX_set_cipher_list(x->ctx, "ECDHE-ECDSA-AES128-GCM-SHA256:"
                                        "ECDHE-RSA-AES128-GCM-SHA256:"
                                        "ECDHE-ECDSA-AES256-GCM-SHA384:"
                                        "ECDHE-RSA-AES256-GCM-SHA384:"
                                        "ECDHE-ECDSA-CHACHA20-POLY1305:"
                                        "ECDHE-RSA-CHACHA20-POLY1305") != 1)
        goto fail;
    if (SSL_CTX_use_certificate_chain_file(x->ctx, cfg->cert_file) != 1) {
        st = file_error("cert_file", cfg->cert_file, err, errlen);
        goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(x->ctx, cfg->key_file, SSL_FILETYPE_PEM) != 1) {
        st = file_error("key_file", cfg->key_file, err, errlen);
        goto fail;
    }
    if (SSL_CTX_check_private_key(x->ctx) != 1) {
        snprintf(err, errlen, "key_file %s: %s", cfg->key_file,
                 ssl_reason("does not match cert_file"));
        st = JFR_INVALID_ARG;
        goto fail;
    }
    if (cfg->client_ca_file) {
        STACK_OF(X509_NAME) *names = NULL;
        if (SSL_CTX_load_verify_locations(x->ctx, cfg->client_ca_file, NULL) != 1 ||
            !(names = SSL_load_client_CA_file(cfg->client_ca_file))) {
            st = file_error("client_ca_file", cfg->client_ca_file, err, errlen);
            goto fail;
        }
        SSL_CTX_set_client_CA_list(x->ctx, names); /* taken by ctx */
        SSL_CTX_set_verify(x->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
        x->verify = true;
    }
    ERR_clear_error();
    err[0] = '\0';
    *out = x;
    return JFR_OK;
fail:
    ERR_clear_error();
    jfr__tls_ctx_free(x);
    return st;
}

uint64_t jfr__tls_ctx_timeout_ms(const jfr__tls_ctx *x) { return x->timeout_ms; }

jfr__tls *jfr__tls_new(jfr__tls_ctx *x) {
    jfr__tls *t = jfr__calloc(&x->al, sizeof *t);
    if (!t)
        return NULL;
    t->x = x;
    ERR_clear_error();
    t->ssl = SSL_new(x->ctx);
    t->in = BIO_new(x->in_method);
    t->out = BIO_new(BIO_s_mem());
    if (!t->ssl || !t->in || !t->out) {
        BIO_free(t->in);
        BIO_free(t->out);
        SSL_free(t->ssl);
        jfr__free(&x->al, t, sizeof *t);
        ERR_clear_error();
        return NULL;
    }
    BIO_set_data(t->in, t);
    /* empty means "retry later", not end of file */
    BIO_set_mem_eof_return(t->out, -1);
    SSL_set_bio(t->ssl, t->in, t->out);
    SSL_set_accept_state(t->ssl);
    return t;
}

void jfr__tls_free(jfr__tls *t) {
    if (!t)
        return;
    SSL_free(t->ssl); /* and its BIOs */
    jfr__buf_free(&t->x->al, &t->kept);
    jfr__free(&t->x->al, t, sizeof *t);
}

jfr_status jfr__tls_in(jfr__tls *t, const void *p, size_t n, char *why, size_t whylen) {
    if (n == 0)
        return JFR_OK;
    if (!t->admitted) {
        /* a TLS connection starts with a handshake record (content type 22) */
        if (t->fed == 0 && *(const unsigned char *)p != 0x16) {
            snprintf(why, whylen, "not TLS (a plaintext client?)");
            return JFR_REFUSED;
        }
        t->fed += n;
        if (t->fed > JFR_UV_TLS_HANDSHAKE_BYTES) {
            snprintf(why, whylen, "TLS handshake over %u bytes", JFR_UV_TLS_HANDSHAKE_BYTES);
            return JFR_REFUSED;
        }
    }
    jfr_status st = jfr__tls_in_end(t); /* not expected: the caller ended the last one */
    if (st != JFR_OK) {
        snprintf(why, whylen, "out of memory");
        return t->admitted ? st : JFR_REFUSED;
    }
    t->src = p;
    t->n_src = n;
    return JFR_OK;
}

jfr_status jfr__tls_in_end(jfr__tls *t) {
    size_t n = t->n_src;
    if (n == 0)
        return JFR_OK;
    t->n_src = 0;
    if (t->kept_off) { /* the unread part of `kept` to the front */
        memmove(t->kept.data, t->kept.data + t->kept_off, t->kept.len - t->kept_off);
        t->kept.len -= t->kept_off;
        t->kept_off = 0;
    }
    if (jfr__buf_reserve(&t->x->al, &t->kept, n, 0) != JFR_OK)
        return JFR_NOMEM;
    memcpy(t->kept.data + t->kept.len, t->src, n);
    t->kept.len += n;
    return JFR_OK;
}

/* Every name of the peer's certificate that an allow pattern may match:
 * calls fn for the subject's CNs, then each DNS, URI, email and IP SAN,
 * until it returns true. */
static bool cert_names(X509 *cert, bool (*fn)(const char *name, void *u), void *u) {
    X509_NAME *subj = X509_get_subject_name(cert);
    for (int i = -1; (i = X509_NAME_get_index_by_NID(subj, NID_commonName, i)) >= 0;) {
        ASN1_STRING *d = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subj, i));
        unsigned char *s = NULL;
        int len = ASN1_STRING_to_UTF8(&s, d);
        bool hit = len >= 0 && strlen((char *)s) == (size_t)len && fn((char *)s, u);
        OPENSSL_free(s);
        if (hit)
            return true;
    }
    GENERAL_NAMES *sans = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
    bool hit = false;
    for (int i = 0; !hit && i < sk_GENERAL_NAME_num(sans); i++) {
        GENERAL_NAME *g = sk_GENERAL_NAME_value(sans, i);
        char text[256];
        text[0] = '\0';
        if (g->type == GEN_DNS || g->type == GEN_URI || g->type == GEN_EMAIL) {
            ASN1_IA5STRING *s = g->d.ia5;
            int len = ASN1_STRING_length(s);
            const unsigned char *d = ASN1_STRING_get0_data(s);
            if (len > 0 && (size_t)len < sizeof text && !memchr(d, 0, (size_t)len)) {
                memcpy(text, d, (size_t)len);
                text[len] = '\0';
            }
        } else if (g->type == GEN_IPADD) {
            int len = ASN1_STRING_length(g->d.ip);
            const unsigned char *d = ASN1_STRING_get0_data(g->d.ip);
            if (len == 4 || len == 16)
                inet_ntop(len == 4 ? AF_INET : AF_INET6, d, text, sizeof text);
        }
        hit = text[0] && fn(text, u);
    }
    GENERAL_NAMES_free(sans);
    return hit;
}

static bool name_allowed(const char *name, void *u) {
    const jfr__tls_ctx *x = u;
    for (size_t i = 0; i < x->nallow; i++)
        if (fnmatch(x->allow[i], name, 0) == 0)
            return true;
    return false;
}

static bool first_name(const char *name, void *u) {
    snprintf(u, 128, "%s", name);
    return true;
}

jfr_status jfr__tls_handshake(jfr__tls *t, char *why, size_t whylen) {
    if (t->admitted)
        return JFR_OK;
    ERR_clear_error();
    int r = SSL_do_handshake(t->ssl);
    if (r != 1) {
        int e = SSL_get_error(t->ssl, r);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            ERR_clear_error();
            return JFR_PAUSED;
        }
        long v = SSL_get_verify_result(t->ssl);
        if (v != X509_V_OK) {
            snprintf(why, whylen, "certificate verify failed: %s",
                     X509_verify_cert_error_string(v));
            ERR_clear_error();
        } else {
            snprintf(why, whylen, "TLS handshake: %s", ssl_reason("failed"));
        }
        return JFR_REFUSED;
    }
    if (t->x->verify && t->x->nallow) {
        X509 *cert = SSL_get0_peer_certificate(t->ssl);
        if (!cert) { /* not reached: SSL_VERIFY_FAIL_IF_NO_PEER_CERT */
            snprintf(why, whylen, "no client certificate");
            return JFR_REFUSED;
        }
        if (!cert_names(cert, name_allowed, t->x)) {
            char cn[128] = "";
            X509_NAME *subj = X509_get_subject_name(cert);
            if (X509_NAME_get_index_by_NID(subj, NID_commonName, -1) >= 0)
                cert_names(cert, first_name, cn); /* the CN comes first */
            snprintf(why, whylen, "subject %s%s not allowed (no allow pattern matches)",
                     cn[0] ? "CN=" : "", cn[0] ? cn : "without a CN");
            return JFR_REFUSED;
        }
    }
    t->admitted = true;
    return JFR_OK;
}

long jfr__tls_read(jfr__tls *t, void *buf, size_t cap, char *why, size_t whylen) {
    if (!t->admitted)
        return 0;
    ERR_clear_error();
    int k = cap > (1u << 30) ? 1 << 30 : (int)cap;
    int r = SSL_read(t->ssl, buf, k);
    if (r > 0)
        return r;
    int e = SSL_get_error(t->ssl, r);
    if (e == SSL_ERROR_ZERO_RETURN && !t->closed) {
        t->closed = true;
        SSL_shutdown(t->ssl); /* our close_notify, into t->out */
    }
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_ZERO_RETURN) {
        ERR_clear_error();
        return 0;
    }
    snprintf(why, whylen, "TLS: %s", ssl_reason("read failed"));
    return -1;
}

jfr_status jfr__tls_write(jfr__tls *t, const void *p, size_t n) {
    if (!t->admitted)
        return JFR_INVALID_STATE;
    while (n) {
        int k = n > (1u << 30) ? 1 << 30 : (int)n;
        ERR_clear_error();
        int r = SSL_write(t->ssl, p, k); /* a memory BIO takes it all */
        if (r <= 0) {
            ERR_clear_error();
            return JFR_IO;
        }
        p = (const char *)p + r;
        n -= (size_t)r;
    }
    return JFR_OK;
}

size_t jfr__tls_out_pending(jfr__tls *t) { return BIO_ctrl_pending(t->out); }

bool jfr__tls_peer_closed(const jfr__tls *t) { return t->closed; }

size_t jfr__tls_out(jfr__tls *t, void *buf, size_t cap) {
    int k = cap > (1u << 30) ? 1 << 30 : (int)cap;
    int r = k ? BIO_read(t->out, buf, k) : 0;
    return r > 0 ? (size_t)r : 0;
}

#endif
