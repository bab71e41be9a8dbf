/* The thread / stack-trace / frame helpers must agree with the generic
 * value API on every event of real recordings. A stack trace seen again in
 * a chunk comes from the per-chunk frame cache, so both the first (decoding)
 * and the later (cached) reads are compared; jfr_event_constant finds every
 * frame's type by its pool key. Usage: test_helpers FILE... */
#include "../harness.h"

static long g_stacks, g_frames, g_threads, g_constants;

static int same_str(const char *a, size_t an, const jfr_value *v) {
    jfr_value u;
    if (jfr_value_unwrap(v, &u) != JFR_OK)
        return 0;
    if (u.kind == JFR_KIND_NULL)
        return a == NULL;
    return u.kind == JFR_KIND_STRING && a && u.len == an && memcmp(a, u.str, an) == 0;
}

static int on_event(jfr_parser *p, const jfr_event *e, void *u) {
    (void)p;
    (void)u;
    jfr_value st, th, v, fr, m, cls;
    jfr_stack s;
    jfr_thread t;
    if (jfr_event_field_named(e, "stackTrace", &st) == JFR_OK) {
        CHECK(jfr_event_stack(e, &s) == JFR_OK);
        CHECK(s.present == (st.kind == JFR_KIND_OBJECT));
        if (s.present) {
            g_stacks++;
            CHECK(jfr_value_field_named(&st, "truncated", &v) == JFR_OK && v.b == s.truncated);
            CHECK(jfr_value_field_named(&st, "frames", &v) == JFR_OK && v.count == s.nframes);
            for (uint32_t i = 0; i < s.nframes; i++) {
                jfr_frame f;
                CHECK(jfr_stack_frame(&s, i, &f) == JFR_OK);
                CHECK(jfr_value_index(&v, i, &fr) == JFR_OK);
                jfr_value line, bci, type;
                CHECK(jfr_value_field_named(&fr, "lineNumber", &line) == JFR_OK && line.i == f.line);
                CHECK(jfr_value_field_named(&fr, "bytecodeIndex", &bci) == JFR_OK && bci.i == f.bci);
                CHECK(jfr_value_field_named(&fr, "type", &type) == JFR_OK &&
                      same_str(f.frame_type, f.frame_type_len, &type));
                if (i == 0 && type.pooled && type.type) {
                    /* jfr_event_constant (top frames): the same pool entry by type and key;
                     * a key no pool defines reads as NULL */
                    jfr_value c;
                    CHECK(jfr_event_constant(e, type.type, type.key, &c) == JFR_OK &&
                          same_str(f.frame_type, f.frame_type_len, &c));
                    CHECK(jfr_event_constant(e, type.type, (uint64_t)1 << 40, &c) == JFR_OK &&
                          c.kind == JFR_KIND_NULL);
                    g_constants++;
                }
                CHECK(jfr_value_field_named(&fr, "method", &m) == JFR_OK);
                if (m.kind == JFR_KIND_OBJECT) {
                    jfr_value name;
                    CHECK(jfr_value_field_named(&m, "name", &name) == JFR_OK &&
                          same_str(f.method_name, f.method_name_len, &name));
                    CHECK(jfr_value_field_named(&m, "descriptor", &name) == JFR_OK &&
                          same_str(f.descriptor, f.descriptor_len, &name));
                    CHECK(jfr_value_field_named(&m, "type", &cls) == JFR_OK);
                    if (cls.kind == JFR_KIND_OBJECT) {
                        CHECK(jfr_value_field_named(&cls, "name", &name) == JFR_OK &&
                              same_str(f.class_name, f.class_name_len, &name));
                    }
                }
                g_frames++;
            }
            CHECK(jfr_stack_frame(&s, s.nframes, &(jfr_frame){0}) == JFR_NOT_FOUND);
            /* random access after sequential: the cached position must not leak */
            for (uint32_t i = s.nframes; i-- > 0;) {
                jfr_frame f, g;
                jfr_stack s2;
                CHECK(jfr_event_stack(e, &s2) == JFR_OK);
                CHECK(jfr_stack_frame(&s, i, &f) == JFR_OK);
                CHECK(jfr_stack_frame(&s2, i, &g) == JFR_OK);
                CHECK(f.line == g.line && f.bci == g.bci && f.method_name_len == g.method_name_len &&
                      (f.method_name_len == 0 ||
                       memcmp(f.method_name, g.method_name, f.method_name_len) == 0));
            }
        }
    }
    if (jfr_event_field_named(e, "eventThread", &th) == JFR_OK ||
        jfr_event_field_named(e, "sampledThread", &th) == JFR_OK) {
        CHECK(jfr_event_thread(e, &t) == JFR_OK);
        CHECK(t.present == (th.kind == JFR_KIND_OBJECT));
        if (t.present) {
            g_threads++;
            CHECK(jfr_value_field_named(&th, "javaName", &v) == JFR_OK &&
                  same_str(t.java_name, t.java_name_len, &v));
            CHECK(jfr_value_field_named(&th, "osThreadId", &v) == JFR_OK && v.i == t.os_thread_id);
        }
    }
    return JFR_CB_CONTINUE;
}

int main(int argc, char **argv) {
    int files = 0;
    for (int i = 1; i < argc; i++) {
        size_t len;
        uint8_t *buf = read_file(argv[i], &len);
        if (!buf) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 1;
        }
        jfr_callbacks cb = {.size = sizeof cb, .on_event = on_event};
        jfr_parser *p = jfr_parser_new(NULL, &cb, NULL);
        CHECK(jfr_parser_feed(p, buf, len) == JFR_OK);
        CHECK(jfr_parser_finish(p) == JFR_OK);
        jfr_parser_free(p);
        free(buf);
        files++;
    }
    printf("%d files: %ld stacks, %ld frames, %ld threads, %ld constants checked; %d failures\n",
           files, g_stacks, g_frames, g_threads, g_constants, g_failures);
    CHECK(g_stacks > 0 && g_frames > 0 && g_threads > 0 && g_constants > 0);
    return g_failures ? 1 : 0;
}
