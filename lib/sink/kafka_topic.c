/*
 * kafka_topic.c — the topic of an event type (kafka.h): the configured
 * topic with {type} replaced, its librdkafka handle made once and kept in
 * the producer's list (freed with the producer, kafka.c).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include "kafka.h"
#include "jfrstream_conv.h"

/* The topic of events of type `name` (per-type topics). */
rd_kafka_topic_t *kafka_topic_for(jfrs_kafka *k, const char *name) {
    jfrc_out *b = jfrc_out_new_memory_advanced(256, &k->a);
    if (!b)
        return NULL;
    const char *p = k->topic, *at;
    while ((at = strstr(p, "{type}")) != NULL) {
        jfrc_out_write(b, p, (size_t)(at - p));
        for (const char *q = name; *q; q++) {
            char c = *q;
            bool okc = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
            jfrc_out_putc(b, (char)(okc ? c : '_'));
        }
        p = at + 6;
    }
    jfrc_out_puts(b, p);
    const char *full = jfrs_out_cstr(b, NULL);
    rd_kafka_topic_t *rkt = NULL;
    if (full) {
        for (ktopic *t = k->topics; t; t = t->next)
            if (strcmp(t->name, full) == 0) {
                rkt = t->rkt;
                break;
            }
        if (!rkt && (rkt = rd_kafka_topic_new(k->rk, full, NULL)) != NULL) {
            size_t n = strlen(full);
            ktopic *t = jfr__alloc(&k->a, sizeof *t + n + 1);
            if (t) {
                t->rkt = rkt;
                memcpy(t->name, full, n + 1);
                t->next = k->topics;
                k->topics = t;
            } else {
                rd_kafka_topic_destroy(rkt);
                rkt = NULL;
            }
        }
    }
    jfrc_out_free(b);
    return rkt;
}
