/*
 * jfrstream_uv.h — libuv front ends for jfrstream: a TCP listener for
 * FlightRecorderMXBean-style byte streams (many JVMs at once) and a tail of a
 * JFR disk repository or of one growing chunk file.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 *
 * Both only move bytes: every connection and every tailed repository gets its
 * own jfr_parser (see jfrstream.h), built from the options and callbacks in
 * the config, so events arrive through the same callbacks as for files. Live
 * chunks are dispatched per flush segment (about one flush period after the
 * JVM wrote them).
 *
 * Callbacks of a connection's or tail's parser receive the jfr_uv_conn* /
 * jfr_uv_tail* as their `user` pointer; the handles carry a `data` pointer
 * for the application (libuv style).
 *
 * Everything runs on the caller's uv_loop_t, on the loop's thread.
 *
 * ONE FAMILY. The listener, its connections and the tail follow one scheme:
 * jfr_uv_X_start starts a handle (the listener or the tail; a connection is
 * started by the listener, announced by on_conn_start), jfr_uv_X_stop asks it
 * to end, and its end callback (on_end, on_conn_end) reports the end, with a
 * status and a message where one applies; the handle is freed after that
 * callback returns. Durations are uint64_t milliseconds (`_ms`).
 *
 * The configs are structs you hand in (jfrstream.h, "STRUCTS YOU HAND IN"):
 * they start with `size`, set by jfr_uv_listener_config_init /
 * jfr_uv_tail_config_init or JFR_UV_LISTENER_CONFIG_INIT /
 * JFR_UV_TAIL_CONFIG_INIT, and point to their jfr_options and jfr_callbacks
 * (NULL: defaults, no callbacks), which are copied at start.
 *
 * MEMORY. Every allocation of these front ends (the listener, each
 * connection and the bytes it holds back, the tail and its read buffer)
 * goes through the allocator of the config's jfr_options (NULL options or a
 * zeroed allocator: malloc/realloc/free), as do their parsers'.
 *
 * PAUSE (the core's rule, jfrstream.h, at the end of input too). A callback
 * returning JFR_CB_PAUSE stops the parser; nothing is fed, and no
 * jfr_parser_finish is called, until the application resumes it:
 * jfr_uv_conn_resume for a connection, jfr_uv_tail_resume for a tail with
 * manual_resume (otherwise the tail's next poll resumes it). While paused, a
 * connection reads nothing (TCP back-pressure) and a tail reads no file;
 * neither counts as idle. When the input ends while paused (the peer
 * closed, a limit, jfr_uv_listener_stop, the tail's idle_ms or
 * jfr_uv_tail_stop), the end waits for the resume: then the bytes held back
 * are fed and the parser is finished. A pause from a callback run by that
 * finish (JFR_PAUSED) is waited for the same way, then finish is called
 * again, until it returns another status: that one is the end's status
 * (on_conn_end, on_end), never JFR_PAUSED. A paused connection therefore
 * delays the listener's on_end until it is resumed (or stopped with
 * jfr_uv_conn_stop, which ends it at once).
 *
 * ACKNOWLEDGEMENTS (doc/protocol.md, "JFRS/1"). A peer may start its
 * connection with one hello line, "JFRS/1 ack\n" (at most
 * JFR_UV_HELLO_MAX bytes, '\n' included, printable ASCII; words after
 * "JFRS/1" that the listener does not know are ignored). The listener
 * tells it from a bare JFR stream by the first byte ('J', not the 'F' of
 * "FLR\0"); the line's bytes are never fed to the parser, and every
 * position (the parser's offsets, jfr_uv_conn_ack) counts from the byte
 * after its '\n'. A line of another version, longer, or with another byte
 * ends the connection: on_conn_end with JFR_BAD_MAGIC, "PEER: bad hello
 * line: ...". A peer without a hello line is never written to.
 * With the word "ack" (jfr_uv_conn_acks), the application says what it has
 * handed on with jfr_uv_conn_ack(c, N), and the listener writes "ACK N\n"
 * (decimal) to the peer when N grew: at most one write in flight per
 * connection, and then the newest N only (a peer that never reads costs one
 * pending 32-byte write), at most one every 50 ms, but at once when N
 * reaches the end of the last chunk the parser finished, and at the clean
 * end of the input (the last N, written without waiting: nothing delays
 * the end for the write). A connection written no ack for
 * ack_keepalive_ms (5 s by default) gets the last N again, so that its
 * sender can tell a silent connection from one whose output is slow to
 * deliver (Kafka down: N stops growing, the line still comes). With
 * ack_linger_ms set, a clean end of input waits up to that long for jfr_uv_conn_ack to cover every byte (the
 * application's output delivering what it took) before it ends the
 * connection and writes that final ack; the connection counts as open
 * meanwhile, and jfr_uv_listener_stop ends it at once.
 *
 * RETURN VALUES. jfr_uv_listener_start and jfr_uv_tail_start return a
 * jfr_status: JFR_OK (and *out set); JFR_INVALID_ARG for a NULL loop,
 * config or out, an uninitialised config (or options, callbacks) or no
 * path; JFR_NOMEM; JFR_IO
 * when libuv refused (bad address, bind, listen, a path that cannot be
 * read): *uv_error, when not NULL, then gets libuv's negative error code
 * (for uv_strerror), and 0 otherwise. The listener's TLS files: JFR_IO
 * for one that cannot be opened, JFR_INVALID_ARG for one OpenSSL cannot
 * use (not PEM, a key that does not match the certificate), no cert_file
 * or key_file, or an allow list without client_ca_file; JFR_UNSUPPORTED
 * in a build without OpenSSL. The listener's config.error then gets
 * "MEMBER FILE: REASON", MEMBER the jfr_uv_tls_config member
 * ("cert_file /etc/x.pem: No such file or directory"). The getters return their value
 * (0, "" or NULL for a NULL handle); stop, resume and the rest return
 * nothing and cannot fail (a NULL handle: nothing).
 */
#ifndef JFRSTREAM_UV_H
#define JFRSTREAM_UV_H

#include "jfrstream.h"

#include <uv.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------- listener */

typedef struct jfr_uv_listener {
    void *data; /* for the application */
} jfr_uv_listener;

typedef struct jfr_uv_conn {
    void *data; /* for the application */
} jfr_uv_conn;

/* The longest hello line, '\n' included (see ACKNOWLEDGEMENTS). */
#define JFR_UV_HELLO_MAX 256u

/* Defaults of the limits below (a 0 in the config selects them). */
#define JFR_UV_DEFAULT_MAX_CONNECTIONS 1024u
#define JFR_UV_DEFAULT_ACK_KEEPALIVE_MS 5000u

typedef struct jfr_uv_listener_config {
    size_t size;             /* sizeof: jfr_uv_listener_config_init        */
    const char *host;        /* bind address; NULL = "127.0.0.1"          */
    int port;                /* 0 = any free port (see _port())           */
    const jfr_options *options;     /* for each connection's parser; NULL:
                                       defaults; copied at start           */
    const jfr_callbacks *callbacks; /* for each connection's parser, user =
                                       the conn; NULL: none; copied         */
    /* A connection was accepted: subscribe per type here with
     * jfr_parser_on(jfr_uv_conn_parser(c), ...). Optional. */
    void (*on_conn_start)(jfr_uv_conn *c, void *user);
    /* A connection ended: peer closed (status JFR_OK, or JFR_TRUNCATED with
     * what was dropped), bad input (the parser's status and message, with
     * chunk number and byte offset), a limit (JFR_LIMIT), jfr_uv_conn_stop
     * (JFR_STOPPED) or jfr_uv_listener_stop. The message starts with the
     * peer ("127.0.0.1:54321: ..."). A connection refused over
     * max_connections (JFR_LIMIT), or for lack of memory for its
     * connection or parser (JFR_NOMEM), or by TLS (JFR_REFUSED, see
     * jfr_uv_tls_config), gets on_conn_end without on_conn_start (and
     * counts in jfr_uv_listener_refused); its c->data is NULL and no byte
     * of it reached a parser. The conn is freed after this returns. */
    void (*on_conn_end)(jfr_uv_conn *c, jfr_status status, const char *message,
                        void *user);
    /* After jfr_uv_listener_stop: every connection has ended and every
     * handle is closed; the listener is freed after this returns. Optional. */
    void (*on_end)(jfr_uv_listener *l, void *user);
    void *user;              /* passed to on_conn_start, on_conn_end, on_end */
    /*
     * Limits. Each one closes only the connection concerned, through on_conn_end
     * with JFR_LIMIT and a message naming the peer and the limit; a chunk
     * left unfinished is first reported to the parser's on_error
     * (JFR_TRUNCATED, with chunk, offset and what was dropped).
     *
     * max_connections: open connections at a time; one more is accepted and
     *   closed at once. 0 = 1024 (JFR_UV_DEFAULT_MAX_CONNECTIONS): well above
     *   the JVMs one collector serves, while bounding memory (a connection
     *   holds at most its unfinished chunk, see jfr_options.max_chunk_size)
     *   and file descriptors (one per connection: the process needs
     *   RLIMIT_NOFILE above this, 1024 is the usual soft limit; a refused
     *   accept for lack of descriptors is dropped by libuv unreported).
     * max_bytes_per_conn: bytes one connection may send over its life.
     *   0 = unlimited, because a JVM streams for as long as it runs (days);
     *   set it for peers you do not trust: it also bounds what one peer can
     *   make us buffer (otherwise up to options.max_chunk_size, 1 GiB by
     *   default, for a chunk or a live record that never completes).
     * idle_ms: a connection that sends no byte for this long is closed. A
     *   slow peer is not idle (one byte a second resets it), nor is one the
     *   application paused (we stopped reading). 0 = never, because a quiet
     *   JVM may legitimately send nothing for long: its flush period (1 s by
     *   default) only writes when there is data, and the FlightRecorderMXBean
     *   stream is polled by the pump. A value of a few minutes is sensible
     *   for a collector exposed to arbitrary peers.
     * read_buffer: bytes per read, one buffer shared by all connections.
     *   0 = 64 KiB (a socket's typical receive window: few reads per chunk).
     */
    unsigned max_connections;
    uint64_t max_bytes_per_conn;
    uint64_t idle_ms;
    size_t read_buffer;
    /* Appended (ABI rule). */
    /* TLS on every connection (see jfr_uv_tls_config below); NULL: plain
     * TCP. Copied at start, with its files loaded and patterns copied. */
    const struct jfr_uv_tls_config *tls;
    /* Optional: when start fails, a message naming the input (a TLS file
     * and OpenSSL's reason, the address) is written here, NUL-terminated
     * and cut to error_size; "" on success. NULL or 0: none. */
    char *error;
    size_t error_size;
    /* A connection that asked for acks and whose input ended cleanly waits
     * up to this long for jfr_uv_conn_ack to cover all its bytes before it
     * ends (see ACKNOWLEDGEMENTS); 0: it ends at once. */
    uint64_t ack_linger_ms;
    /* A connection that asked for acks and was written no ack for this long
     * gets the last N again ("ACK 0" before the first), as a sign of life:
     * a sender that hears nothing for longer knows the connection is dead
     * (a network cut without a reset; see ACKNOWLEDGEMENTS). 0:
     * JFR_UV_DEFAULT_ACK_KEEPALIVE_MS; UINT64_MAX: never. */
    uint64_t ack_keepalive_ms;
} jfr_uv_listener_config;

/*
 * TLS (OpenSSL, when the library was built with it: meson -Dtls; without it
 * a config with tls set is refused at start with JFR_UNSUPPORTED and a
 * message). Every connection then speaks TLS 1.2 or later; the listener
 * hands what it read to OpenSSL in place (no copy into a memory BIO) on the
 * loop's thread and feeds the decrypted bytes to the parser as it feeds plain ones (the
 * turn's read budget, the pause and the limits count what the socket
 * carried, i.e. the encrypted bytes).
 *
 * A TLS connection is announced (on_conn_start) only once its handshake is
 * done and the client certificate admitted; until then NONE of its bytes
 * reaches the parser. A peer that fails is refused: on_conn_end without
 * on_conn_start, c->data NULL, status JFR_REFUSED, counted in
 * jfr_uv_listener_refused and jfr_uv_listener_tls_refused, and a message
 * "PEER: refused: REASON", REASON one of
 *   "not TLS (a plaintext client?)"   first byte not a handshake record
 *   "TLS handshake: OPENSSL REASON"   e.g. "no shared cipher", "peer did not
 *                                     return a certificate", a TLS 1.0 client
 *   "certificate verify failed: X509 REASON"  e.g. "unable to get local
 *                                     issuer certificate" (another CA),
 *                                     "certificate has expired"
 *   "subject CN=NAME not allowed (no allow pattern matches)"
 *   "TLS handshake timeout (N ms)", "TLS handshake over N bytes",
 *   "closed during the TLS handshake".
 * A jfr_uv_listener_stop during a handshake ends it with JFR_STOPPED
 * (not counted as a refusal). A connection in its handshake is open: it
 * counts in max_connections and jfr_uv_listener_connections (so silent
 * peers hold a slot each for at most handshake_timeout_ms).
 *
 * WRITES. A TLS listener writes to its peers (handshake replies, alerts).
 * It sends with MSG_NOSIGNAL first; only bytes the socket cannot take at
 * once are queued in libuv, whose later write(2) raises SIGPIPE if the
 * peer reset meanwhile, as for any libuv program writing to sockets: an
 * application whose peers may fill their receive window should ignore or
 * block SIGPIPE (a handshake's flight, a few KiB, always fits an empty
 * socket buffer).
 *
 * MEMORY: OpenSSL allocates its own (SSL_CTX per listener, SSL, its record
 * buffers and a memory BIO for what it writes per connection: about 25-30
 * KiB each while records are in flight) through its process-wide
 * allocator, NOT jfr_options.allocator: CRYPTO_set_mem_functions is
 * process-global and must not be taken by a library (librdkafka does the
 * same). Everything else of the listener still goes through the allocator,
 * the ciphertext OpenSSL has not read when a read is handled (a paused
 * connection) too. The handshake is bounded: handshake_timeout_ms and
 * JFR_UV_TLS_HANDSHAKE_BYTES of client bytes.
 */
#define JFR_UV_TLS_HANDSHAKE_MS 10000u        /* handshake_timeout_ms 0 */
#define JFR_UV_TLS_HANDSHAKE_BYTES (256u << 10) /* client bytes before admission */

typedef struct jfr_uv_tls_config {
    size_t size;                 /* sizeof: jfr_uv_tls_config_init         */
    const char *cert_file;       /* PEM: server certificate chain (leaf
                                    first); required                       */
    const char *key_file;        /* PEM: its private key; required         */
    /* PEM: CA certificate(s). Set: every client must present a
     * certificate that verifies against them (mutual TLS); NULL: any
     * client is served (server authentication only). */
    const char *client_ca_file;
    /* fnmatch(3) patterns (no flags), with client_ca_file only: a client
     * is admitted when one pattern matches its certificate's subject CN or
     * any subjectAltName DNS, URI, email or IP (text: "127.0.0.1", "::1").
     * allow_count 0: any verified certificate. */
    const char *const *allow;
    size_t allow_count;
    uint64_t handshake_timeout_ms; /* 0 = JFR_UV_TLS_HANDSHAKE_MS           */
} jfr_uv_tls_config;

#define JFR_UV_TLS_CONFIG_INIT {.size = sizeof(jfr_uv_tls_config)}
/* Size set, every other member zero. */
JFR_API void jfr_uv_tls_config_init(jfr_uv_tls_config *cfg);
/* True when this build of the library has TLS (OpenSSL). */
JFR_API bool jfr_uv_tls_available(void);

#define JFR_UV_LISTENER_CONFIG_INIT {.size = sizeof(jfr_uv_listener_config)}
/* Size set, every other member zero (the defaults). */
JFR_API void jfr_uv_listener_config_init(jfr_uv_listener_config *cfg);

/* Bind and listen. See RETURN VALUES above. Connections are read on the
 * loop's thread, at most 1 MiB from all of them per turn of the loop (at
 * least one read): a connection over that waits, its bytes in the socket,
 * for the next turn, so that the loop's other handles (timers, new peers, a
 * metrics scrape) wait for no more than the parse of that much however many
 * peers send at once. */
JFR_API jfr_status jfr_uv_listener_start(uv_loop_t *loop, const jfr_uv_listener_config *cfg,
                                         jfr_uv_listener **out, int *uv_error);
/* The bound port (useful with port 0). */
JFR_API int jfr_uv_listener_port(const jfr_uv_listener *l);
/* Stop accepting; the input of open connections ends (bytes held back by a
 * pause are fed, then jfr_parser_finish: partial chunks are reported; a
 * paused connection after its resume, see PAUSE) and they end
 * (on_conn_end). on_end runs when every handle is closed; then the listener
 * is freed. A second call, or NULL, does nothing. */
JFR_API void jfr_uv_listener_stop(jfr_uv_listener *l);
JFR_API unsigned jfr_uv_listener_connections(const jfr_uv_listener *l); /* open now */
JFR_API unsigned jfr_uv_listener_peak(const jfr_uv_listener *l);        /* most at once */
/* Peers refused so far: over max_connections, by TLS (jfr_uv_tls_config),
 * or for lack of memory (a peer
 * that arrives when not even its connection can be allocated is accepted
 * and closed at once, so that the listener goes on accepting; it gets
 * on_conn_end with JFR_NOMEM like one refused for its parser). */
JFR_API uint64_t jfr_uv_listener_refused(const jfr_uv_listener *l);
/* Of those, TLS refusals (see jfr_uv_tls_config). */
JFR_API uint64_t jfr_uv_listener_tls_refused(const jfr_uv_listener *l);

JFR_API jfr_parser *jfr_uv_conn_parser(jfr_uv_conn *c); /* NULL for a refused one */
JFR_API jfr_uv_listener *jfr_uv_conn_listener(jfr_uv_conn *c);
JFR_API const char *jfr_uv_conn_peer(const jfr_uv_conn *c); /* "127.0.0.1:54321" */
JFR_API uint64_t jfr_uv_conn_id(const jfr_uv_conn *c);       /* 1, 2, ... */
JFR_API uint64_t jfr_uv_conn_bytes(const jfr_uv_conn *c);
/* After a callback paused the parser, reading from that peer stops (TCP
 * back-pressure); call this to feed what is pending and read again (or,
 * once the input ended, to finish: see PAUSE). Not paused: nothing. */
JFR_API void jfr_uv_conn_resume(jfr_uv_conn *c);
/* End one connection (from any callback or later): on_conn_end with
 * JFR_STOPPED. */
JFR_API void jfr_uv_conn_stop(jfr_uv_conn *c);
/* The same with your status and message (on_conn_end gets "PEER: message";
 * NULL or "": the status's name), e.g. JFR_IO when an output failed for
 * good: no ack is written past what was handed on. */
JFR_API void jfr_uv_conn_end(jfr_uv_conn *c, jfr_status status, const char *message);
/* Whether the peer's hello line asked for acks (see ACKNOWLEDGEMENTS);
 * false until its hello line was read, and for a peer without one. */
JFR_API bool jfr_uv_conn_acks(const jfr_uv_conn *c);
/* Bytes [0, n) of the connection's JFR stream (after the hello line) are
 * handed on: the listener writes "ACK N" as ACKNOWLEDGEMENTS says. n is
 * capped at the bytes received; a smaller n than before, a connection
 * without acks, or one ending: nothing. */
JFR_API void jfr_uv_conn_ack(jfr_uv_conn *c, uint64_t n);
/* The largest n given to jfr_uv_conn_ack (capped); 0 without acks. */
JFR_API uint64_t jfr_uv_conn_acked(const jfr_uv_conn *c);

/* --------------------------------------------------------------------- tail */

typedef struct jfr_uv_tail {
    void *data; /* for the application */
} jfr_uv_tail;

/* Why a tail ended. */
typedef enum jfr_uv_tail_end {
    JFR_UV_TAIL_FINAL = 1, /* a finished chunk carried the final-chunk flag */
    JFR_UV_TAIL_IDLE,      /* no new bytes for idle_ms; the parser is
                              finished first: JFR_TRUNCATED (and on_error)
                              when a chunk was left unfinished            */
    JFR_UV_TAIL_ERROR,     /* parser error (not skipped) or I/O error; also
                              JFR_TRUNCATED when the chunk files were
                              removed (JVM exit) before the one after the
                              last file read could be opened              */
    JFR_UV_TAIL_STOPPED    /* jfr_uv_tail_stop, or a callback stopped       */
} jfr_uv_tail_end;

typedef struct jfr_uv_tail_config {
    size_t size;             /* sizeof: jfr_uv_tail_config_init            */
    /* A JFR repository (the folder holding chunk files, or its parent holding
     * one folder per JVM: the newest is followed), or one chunk file. */
    const char *path;
    const jfr_options *options;     /* NULL: defaults; copied at start     */
    const jfr_callbacks *callbacks; /* user = the jfr_uv_tail*; NULL: none */
    uint64_t poll_ms;        /* 0 = 50 ms                                  */
    uint64_t idle_ms;        /* 0 = never end for idleness                 */
    /* Ended (see jfr_uv_tail_end); the tail is freed after this returns. */
    void (*on_end)(jfr_uv_tail *t, jfr_uv_tail_end why, jfr_status status,
                   const char *message, void *user);
    void *user;
    /* After a callback paused the parser (JFR_CB_PAUSE): false (the
     * default) resumes at the next poll; true keeps the tail paused, reading
     * nothing and not counting idle time, until jfr_uv_tail_resume (as a
     * listener's connection: for a consumer that must wait for room, e.g.
     * a full Kafka producer queue). At the end of input (idle_ms,
     * jfr_uv_tail_stop) likewise: see PAUSE at the top. */
    bool manual_resume;
} jfr_uv_tail_config;

#define JFR_UV_TAIL_CONFIG_INIT {.size = sizeof(jfr_uv_tail_config)}
/* Size set, every other member zero (the defaults). */
JFR_API void jfr_uv_tail_config_init(jfr_uv_tail_config *cfg);

/* Start following (see RETURN VALUES above; a path that cannot be read is
 * JFR_IO). Each byte of each chunk file is fed exactly once, in file-name
 * order; header rewrites are read with the writer's guard (state byte 255 =
 * retry, double read). The files are read on the loop's thread, at most
 * 1 MiB (and 64 finished files) per turn of the loop, so that its other
 * handles wait for no more than the parse of that much; the rest is read in
 * the next turn, not the next poll. */
JFR_API jfr_status jfr_uv_tail_start(uv_loop_t *loop, const jfr_uv_tail_config *cfg,
                                     jfr_uv_tail **out, int *uv_error);
/* Finish the parser (a partial chunk is reported) and end: on_end with
 * JFR_UV_TAIL_STOPPED, before this returns unless the parser is paused or
 * this is called from one of its callbacks (then after the resume or once
 * the callback returned: see PAUSE). A second call does nothing. */
JFR_API void jfr_uv_tail_stop(jfr_uv_tail *t);
/* With manual_resume: go on after a callback paused the parser (what was
 * not taken is fed at once, then the files are read again). Otherwise, or
 * when not paused, nothing. */
JFR_API void jfr_uv_tail_resume(jfr_uv_tail *t);
JFR_API jfr_parser *jfr_uv_tail_parser(jfr_uv_tail *t);
/* The chunk file being read now; between files "" (in on_end: the last one
 * read; "" when none was opened). */
JFR_API const char *jfr_uv_tail_file(const jfr_uv_tail *t);

/* ------------------------------------------------------ repository scanning
 *
 * What the tail reads, for an application that shows or chooses it (the
 * CLI's tail). A JVM's repository folder holds its chunk files (names ending
 * in ".jfr", named by time: name order is write order); its parent holds
 * one folder per JVM. Only a folder holding chunk files counts as a JVM's:
 * JDK 17 creates an empty repository folder at startup, removes it a few ms
 * later and writes its chunks in another, so an empty folder is never
 * chosen (and a folder removed before anything was read from it is chosen
 * again). These calls read the file system synchronously on the calling
 * thread (libuv's uv_fs_* without callback); names longer than `outlen`
 * are skipped. They return 1 (found: the name, not the path, in `out`), 0
 * (none) or libuv's negative error code (e.g. UV_ENOENT) when `dir` cannot
 * be read; UV_EINVAL for a NULL argument or outlen 0.
 */
/* The first chunk file of folder `dir` whose name sorts after `after` (""
 * or NULL: the first one): called with the last name each time, it lists
 * the folder's chunk files in the tail's order. */
JFR_API int jfr_uv_repo_next(uv_loop_t *loop, const char *dir, const char *after, char *out,
                             size_t outlen);
/* The newest JVM folder in `dir` (the greatest name among its sub-folders
 * that hold chunk files) whose name sorts after `after` ("" or NULL: any):
 * the folder a tail of `dir` follows, or the next JVM's. */
JFR_API int jfr_uv_repo_newest(uv_loop_t *loop, const char *dir, const char *after, char *out,
                               size_t outlen);
/* Bytes on disk that a tail of `path` reads first: the file's size, the
 * chunk files of the folder, or those of its newest JVM folder; -1 when
 * there is none (or path cannot be read). */
JFR_API int64_t jfr_uv_repo_bytes(uv_loop_t *loop, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* JFRSTREAM_UV_H */
