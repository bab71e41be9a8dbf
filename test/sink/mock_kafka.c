/*
 * mock_kafka.c — a Kafka cluster for the tests: librdkafka's mock cluster
 * (rdkafka_mock.h: the real Kafka protocol on loopback ports) in a small
 * process that other processes (jfrstream listen --kafka, kcat) talk to.
 *
 *   mock_kafka [BROKERS [TOPIC[:PARTITIONS]]...]
 *
 * BROKERS: how many (default 3; ids 1..N). Each TOPIC is created with
 * PARTITIONS partitions (default 4), replication factor min(3, BROKERS);
 * other topics are created on first use (auto-create). Prints the bootstrap
 * servers on stdout as one line, then reads commands on stdin, one a line:
 *   down ID   broker ID stops answering (connections closed and refused)
 *   up ID     it answers again
 * (ID -1: all brokers), each acknowledged by "ok" on stdout. Exits on EOF
 * or SIGTERM/SIGINT.
 *
 * librdkafka 2.0's mock keeps the last 5 MiB (or 100,000 message sets) of
 * each partition and drops older ones: a test that sends more reads while
 * producing, or spreads the messages over partitions or topics.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv) {
    int brokers = 3;
    if (argc > 1) {
        char *end;
        long n = strtol(argv[1], &end, 10);
        if (*end || n < 1 || n > 32) {
            fprintf(stderr, "mock_kafka: BROKERS must be 1..32, got '%s'\n", argv[1]);
            return 2;
        }
        brokers = (int)n;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: fgets returns on a signal */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    char err[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    /* the handle only owns the cluster (bookkeeping); it produces nothing */
    rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (!rk) {
        fprintf(stderr, "mock_kafka: %s\n", err);
        return 1;
    }
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, brokers);
    if (!mc) {
        fprintf(stderr, "mock_kafka: cannot create the mock cluster\n");
        rd_kafka_destroy(rk);
        return 1;
    }
    int rc = 0;
    for (int i = 2; i < argc; i++) {
        char name[256];
        snprintf(name, sizeof name, "%s", argv[i]);
        int parts = 4;
        char *colon = strrchr(name, ':');
        if (colon) {
            *colon = '\0';
            parts = (int)strtol(colon + 1, NULL, 10);
            if (parts < 1)
                parts = 1;
        }
        rd_kafka_resp_err_t e =
            rd_kafka_mock_topic_create(mc, name, parts, brokers < 3 ? brokers : 3);
        if (e) {
            fprintf(stderr, "mock_kafka: topic %s: %s\n", name, rd_kafka_err2str(e));
            rc = 1;
            goto out;
        }
    }
    printf("%s\n", rd_kafka_mock_cluster_bootstraps(mc));
    fflush(stdout);

    char line[256];
    while (!stop && fgets(line, sizeof line, stdin)) {
        char cmd[16];
        int id;
        if (sscanf(line, "%15s %d", cmd, &id) != 2 ||
            (strcmp(cmd, "down") != 0 && strcmp(cmd, "up") != 0)) {
            fprintf(stderr, "mock_kafka: unknown command: %s", line);
            continue;
        }
        rd_kafka_resp_err_t e = strcmp(cmd, "down") == 0
                                    ? rd_kafka_mock_broker_set_down(mc, id)
                                    : rd_kafka_mock_broker_set_up(mc, id);
        if (e)
            fprintf(stderr, "mock_kafka: %s %d: %s\n", cmd, id, rd_kafka_err2str(e));
        printf("%s\n", e ? "error" : "ok");
        fflush(stdout);
    }
out:
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(rk);
    return rc;
}
