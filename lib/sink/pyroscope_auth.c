/*
 * pyroscope_auth.c — what authenticates the Pyroscope sink's requests
 * (pyroscope.h): basic auth or a bearer token through libcurl's own
 * options, the tenant and the caller's headers, the CA bundle and the
 * client certificate. Secrets are copied once, wiped when the sink is
 * freed, and never written into a message.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifdef JFRS_HAVE_CURL

#include "pyroscope.h"

#include <stdio.h>
#include <string.h>

/* No byte a header cannot carry as is: controls (CR, LF...) and DEL. */
static bool clean(const char *s, bool spaces) {
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        if (*c < 0x20 || *c == 0x7f || (!spaces && *c == ' '))
            return false;
    return true;
}

/* RFC 9110 token characters: a header's name. */
static bool token_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* "Name: value" (value may be empty, its leading blanks dropped by curl). */
static bool header_ok(const char *h) {
    const char *c = h;
    while (token_char(*c))
        c++;
    return c > h && *c == ':' && clean(c + 1, true);
}

void pyro_auth_free(pyro_auth *au, const jfr_allocator *a) {
    jfrs_wipe_free(a, au->user);
    jfrs_wipe_free(a, au->password);
    jfrs_wipe_free(a, au->bearer);
    jfrs_wipe_free(a, au->tenant);
    jfrs_wipe_free(a, au->ca);
    jfrs_wipe_free(a, au->cert);
    jfrs_wipe_free(a, au->key);
    for (struct curl_slist *h = au->hdrs; h; h = h->next)
        explicit_bzero(h->data, strlen(h->data));
    curl_slist_free_all(au->hdrs);
    memset(au, 0, sizeof *au);
}

/* A copy of s (NULL: none) into *dst; false when out of memory. */
static bool copy(const jfr_allocator *a, char **dst, const char *s) {
    return !s || (*dst = jfr__strdup(a, s)) != NULL;
}

static bool add_header(pyro_auth *au, const char *h) {
    struct curl_slist *n = curl_slist_append(au->hdrs, h);
    if (!n)
        return false;
    au->hdrs = n;
    return true;
}

jfr_status pyro_auth_init(pyro_auth *au, const jfrs_pyroscope_config *c,
                          const jfr_allocator *a) {
    memset(au, 0, sizeof *au);
    const char *colon = c->basic_auth ? strchr(c->basic_auth, ':') : NULL;
    if ((c->basic_auth && (!colon || colon == c->basic_auth || !clean(c->basic_auth, true))) ||
        (c->bearer_token && (!*c->bearer_token || !clean(c->bearer_token, false))) ||
        (c->basic_auth && c->bearer_token) ||
        (c->tenant && (!*c->tenant || !clean(c->tenant, true))) ||
        (c->nheaders && !c->headers))
        return JFR_INVALID_ARG;
    for (size_t i = 0; i < c->nheaders; i++)
        if (!c->headers[i] || !header_ok(c->headers[i]))
            return JFR_INVALID_ARG;
    bool ok = add_header(au, "Content-Type: application/octet-stream") &&
              add_header(au, "Expect:");
    if (ok && c->tenant) {
        size_t n = strlen(c->tenant) + sizeof "X-Scope-OrgID: ";
        char *h = jfr__alloc(a, n);
        if (h) {
            snprintf(h, n, "X-Scope-OrgID: %s", c->tenant);
            ok = add_header(au, h);
            jfr__free(a, h, n);
        } else {
            ok = false;
        }
    }
    for (size_t i = 0; ok && i < c->nheaders; i++)
        ok = add_header(au, c->headers[i]);
    if (ok && colon) {
        au->user = jfr__strndup(a, c->basic_auth, (size_t)(colon - c->basic_auth));
        ok = au->user && copy(a, &au->password, colon + 1);
    }
    ok = ok && copy(a, &au->bearer, c->bearer_token) && copy(a, &au->tenant, c->tenant) &&
         copy(a, &au->ca, c->ca_file) && copy(a, &au->cert, c->cert_file) &&
         copy(a, &au->key, c->key_file);
    if (!ok) {
        pyro_auth_free(au, a);
        return JFR_NOMEM;
    }
    return JFR_OK;
}

void pyro_auth_apply(const pyro_auth *au, CURL *e) {
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, au->hdrs);
    if (au->user) {
        curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(e, CURLOPT_USERNAME, au->user);
        curl_easy_setopt(e, CURLOPT_PASSWORD, au->password);
    } else if (au->bearer) {
        curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
        curl_easy_setopt(e, CURLOPT_XOAUTH2_BEARER, au->bearer);
    }
    /* HTTPS: TLS 1.2 or later, the server verified (libcurl's default,
     * said again: a caller's credentials never go to an unverified peer) */
    curl_easy_setopt(e, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    if (au->ca) { /* these CAs instead of the system's (bundle and folder) */
        curl_easy_setopt(e, CURLOPT_CAINFO, au->ca);
        curl_easy_setopt(e, CURLOPT_CAPATH, NULL);
    }
    if (au->cert) {
        curl_easy_setopt(e, CURLOPT_SSLCERT, au->cert);
        curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
    }
    if (au->key) {
        curl_easy_setopt(e, CURLOPT_SSLKEY, au->key);
        curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
    }
}

void pyro_auth_refusal(const pyro_auth *au, long status, char *msg, size_t n) {
    const char *what = status == 401 ? "Unauthorized" : "Forbidden";
    char tenant[96] = "";
    if (au->tenant)
        snprintf(tenant, sizeof tenant, " (tenant '%.64s')", au->tenant);
    if (au->user)
        snprintf(msg, n, "HTTP %ld %s: the server refused the basic auth credentials of "
                 "user '%.64s'%s", status, what, au->user, tenant);
    else if (au->bearer)
        snprintf(msg, n, "HTTP %ld %s: the server refused the bearer token%s", status, what,
                 tenant);
    else
        snprintf(msg, n, "HTTP %ld %s: the server wants credentials (none were sent)%s",
                 status, what, tenant);
}

void pyro_auth_conn_hint(const pyro_auth *au, bool https, CURLcode rc, char *msg, size_t n) {
    /* A server that requires a client certificate and gets none ends the
     * connection in the handshake or (TLS 1.3) just after it, which libcurl
     * reports as a send, receive or connect error of its own wording. */
    if (!https || au->cert ||
        (rc != CURLE_SSL_CONNECT_ERROR && rc != CURLE_SEND_ERROR && rc != CURLE_RECV_ERROR))
        return;
    size_t len = strlen(msg);
    if (len < n)
        snprintf(msg + len, n - len, " (HTTPS without a client certificate: does the server "
                 "require one?)");
}

bool pyro_tls_permanent(CURLcode rc) {
    switch (rc) {
    case CURLE_PEER_FAILED_VERIFICATION: /* not signed by ca_file, name mismatch */
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM: /* the client certificate or key unreadable */
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_UNSUPPORTED_PROTOCOL:
        return true;
    default:
        return false;
    }
}

#endif /* JFRS_HAVE_CURL */
