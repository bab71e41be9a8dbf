/*
 * pyroscope.h — the insides of the Pyroscope sink (jfrstream_sink.h,
 * "Pyroscope") shared by pyroscope.c (queues, the worker, delivery) and
 * pyroscope_auth.c (what authenticates a request: credentials, tenant,
 * headers, the TLS files). Built with libcurl only (JFRS_HAVE_CURL).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#ifndef JFRSTREAM_SINK_PYROSCOPE_H
#define JFRSTREAM_SINK_PYROSCOPE_H

#include "jfrstream_sink.h"
#include "sink.h"

#include <curl/curl.h>

/* The sink's copies of the config's authentication and TLS members. */
typedef struct pyro_auth {
    char *user, *password, *bearer; /* secrets: wiped when freed */
    char *tenant, *ca, *cert, *key;
    /* every request's headers: Content-Type, "Expect:" (no 100-continue),
     * X-Scope-OrgID, the caller's (wiped when freed: they may hold keys) */
    struct curl_slist *hdrs;
} pyro_auth;

/* Check and copy c's members into au (zeroed before). JFR_INVALID_ARG for
 * a bad value (jfrstream_sink.h), JFR_NOMEM; au is then empty. */
jfr_status pyro_auth_init(pyro_auth *au, const jfrs_pyroscope_config *c,
                          const jfr_allocator *a);
/* The headers, credentials and TLS files on one request. */
void pyro_auth_apply(const pyro_auth *au, CURL *e);
/* The last_error of an answer `status` of 401 or 403: what was sent. */
void pyro_auth_refusal(const pyro_auth *au, long status, char *msg, size_t n);
/* After libcurl's message of a connection error: a hint when it may be a
 * client certificate the server wanted. */
void pyro_auth_conn_hint(const pyro_auth *au, bool https, CURLcode rc, char *msg, size_t n);
/* Whether a libcurl error is a certificate problem that no retry mends. */
bool pyro_tls_permanent(CURLcode rc);
void pyro_auth_free(pyro_auth *au, const jfr_allocator *a);

#endif
