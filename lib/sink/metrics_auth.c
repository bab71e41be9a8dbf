/*
 * metrics_auth.c — the /metrics endpoint's basic-auth users (metrics.h,
 * jfrstream_sink.h: jfrs_metrics_http_config.basic_auth): lines
 * USER:PASSWORD, PASSWORD plain or a bcrypt hash checked by crypt(3)
 * (libxcrypt, JFRS_HAVE_CRYPT). Comparisons take a time that depends on
 * the length of what the client sent, never on where it differs from a
 * user's; every user's name is compared. A user's last password that
 * bcrypt accepted is kept (wiped when freed), so a scraper's every scrape
 * does not pay for bcrypt (tens of milliseconds at cost 10) — failures
 * always do, which slows guessing.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "metrics.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#ifdef JFRS_HAVE_CRYPT
#include <crypt.h>
#endif

#define MAX_USERS 1024
#define BCRYPT_LEN 60

typedef struct muser {
    char *name, *secret; /* secret: the password or its bcrypt hash */
    bool bcrypt;
    char *cached; /* the last password bcrypt accepted (under mu), or NULL */
} muser;

struct metrics_users {
    jfr_allocator a;
    pthread_mutex_t mu;
    muser *u;
    size_t n, cap;
};

/* a == b over the bytes of b: time by strlen(b) only. */
static bool ct_equal(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    volatile unsigned char d = la != lb;
    for (size_t i = 0; i < lb; i++)
        d |= (unsigned char)(b[i] ^ (i < la ? a[i] : 0));
    return d == 0;
}

static bool is_bcrypt(const char *s) {
    return strlen(s) == BCRYPT_LEN && s[0] == '$' && s[1] == '2' &&
           (s[2] == 'a' || s[2] == 'b' || s[2] == 'y') && s[3] == '$';
}

void metrics_users_free(metrics_users *u) {
    if (!u)
        return;
    for (size_t i = 0; i < u->n; i++) {
        jfrs_wipe_free(&u->a, u->u[i].name);
        jfrs_wipe_free(&u->a, u->u[i].secret);
        jfrs_wipe_free(&u->a, u->u[i].cached);
    }
    jfr__free(&u->a, u->u, u->cap * sizeof *u->u);
    pthread_mutex_destroy(&u->mu);
    jfr_allocator a = u->a;
    jfr__free(&a, u, sizeof *u);
}

/* One line (len bytes at s, line number `no`) into u. */
static jfr_status add_line(metrics_users *u, const char *s, size_t len, unsigned no, char *err,
                           size_t errlen) {
    if (len && s[len - 1] == '\r')
        len--;
    if (len == 0 || s[0] == '#')
        return JFR_OK;
    const char *colon = memchr(s, ':', len);
    const char *why = !colon ? "no ':' between user and password"
                      : colon == s ? "an empty user"
                      : u->n == MAX_USERS ? "more than 1024 users"
                                          : NULL;
    size_t nl = colon ? (size_t)(colon - s) : 0;
    for (size_t i = 0; !why && i < u->n; i++)
        if (strlen(u->u[i].name) == nl && memcmp(u->u[i].name, s, nl) == 0)
            why = "that user a second time";
    if (why) {
        snprintf(err, errlen, "line %u: %s", no, why);
        return JFR_INVALID_ARG;
    }
    if (!jfr__array_reserve(&u->a, (void **)&u->u, u->n, &u->cap, sizeof *u->u, 4))
        return JFR_NOMEM;
    muser *m = &u->u[u->n];
    memset(m, 0, sizeof *m);
    m->name = jfr__strndup(&u->a, s, nl);
    m->secret = jfr__strndup(&u->a, colon + 1, len - nl - 1);
    if (!m->name || !m->secret) {
        jfrs_wipe_free(&u->a, m->name);
        jfrs_wipe_free(&u->a, m->secret);
        return JFR_NOMEM;
    }
    u->n++;
    m->bcrypt = is_bcrypt(m->secret);
#ifdef JFRS_HAVE_CRYPT
    if (m->bcrypt && crypt_checksalt(m->secret) != CRYPT_SALT_OK) {
        snprintf(err, errlen, "line %u: a bcrypt hash this crypt(3) cannot check", no);
        return JFR_INVALID_ARG;
    }
#else
    if (m->bcrypt) {
        snprintf(err, errlen, "line %u: a bcrypt hash, and this build has no crypt(3) "
                 "(meson feature -Dcrypt, Debian: libcrypt-dev)", no);
        return JFR_INVALID_ARG;
    }
#endif
    return JFR_OK;
}

jfr_status metrics_users_new(const char *text, const jfr_allocator *a, metrics_users **out,
                             char *err, size_t errlen) {
    *out = NULL;
    if (err && errlen)
        *err = '\0';
    metrics_users *u = jfr__calloc(a, sizeof *u);
    if (!u)
        return JFR_NOMEM;
    u->a = *a;
    pthread_mutex_init(&u->mu, NULL);
    unsigned no = 1;
    jfr_status st = JFR_OK;
    for (const char *s = text; st == JFR_OK && *s; no++) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        st = add_line(u, s, len, no, err, errlen);
        s += len + (nl ? 1 : 0);
    }
    if (st == JFR_OK && u->n == 0) {
        snprintf(err, errlen, "no user (lines USER:PASSWORD)");
        st = JFR_INVALID_ARG;
    }
    if (st != JFR_OK) {
        metrics_users_free(u);
        return st;
    }
    *out = u;
    return JFR_OK;
}

#ifdef JFRS_HAVE_CRYPT
/* bcrypt's verdict, the cache first. */
static bool bcrypt_check(metrics_users *u, muser *m, const char *password) {
    pthread_mutex_lock(&u->mu);
    bool ok = m->cached && ct_equal(m->cached, password);
    pthread_mutex_unlock(&u->mu);
    if (ok)
        return true;
    struct crypt_data *cd = jfr__calloc(&u->a, sizeof *cd); /* 32 KiB: not on a stack */
    if (!cd)
        return false;
    const char *h = crypt_rn(password, m->secret, cd, (int)sizeof *cd);
    ok = h && ct_equal(h, m->secret);
    explicit_bzero(cd, sizeof *cd);
    jfr__free(&u->a, cd, sizeof *cd);
    if (!ok)
        return false;
    char *copy = jfr__strdup(&u->a, password);
    pthread_mutex_lock(&u->mu);
    char *old = m->cached;
    m->cached = copy; /* out of memory: no cache, still accepted */
    pthread_mutex_unlock(&u->mu);
    jfrs_wipe_free(&u->a, old);
    return true;
}
#endif

bool metrics_users_check(metrics_users *u, const char *user, const char *password) {
    muser *m = NULL;
    for (size_t i = 0; i < u->n; i++) {
        bool same = ct_equal(u->u[i].name, user);
        if (same && !m)
            m = &u->u[i];
    }
    if (!m) {
        (void)ct_equal("-", password); /* about the time of a wrong password */
        return false;
    }
    if (!m->bcrypt)
        return ct_equal(m->secret, password);
#ifdef JFRS_HAVE_CRYPT
    return bcrypt_check(u, m, password);
#else
    return false; /* refused by metrics_users_new */
#endif
}
