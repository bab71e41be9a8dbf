/*
 * RecordingFileBench.java — the JDK's side of the jfrstream benchmarks:
 * jdk.jfr.consumer.RecordingFile reading the same file as bench/jfrbench.
 *
 *   java bench/RecordingFileBench.java [--repeat N] MODE FILE
 *
 * MODE:
 *   walk        read every event, count per type name
 *   type:NAME   read every event (RecordingFile has no per-type filter on
 *               read), keep those named NAME, resolve every stack frame to
 *               method and class names
 *   all         every field of every event: getFields() + getValue(name),
 *               recursing into RecordedObject values to depth 4, stack traces
 *               walked frame by frame (method name, descriptor, class name,
 *               line, bytecode index, frame type), as jfrbench --mode all
 *   field:TYPE.FIELD  of each event named TYPE, the one field FIELD (the
 *               name after the last dot) read and touched as `all` touches
 *               a field, as jfrbench --mode field:TYPE.FIELD
 *
 * One untimed warm-up read, then N (default 5) timed reads; the median is
 * reported. MB/s = file bytes / time / 1e6. Info lines, then exactly
 *
 *   MB/s=<x> events/s=<y> events=<n>
 *
 * rss_kb is the JVM's peak resident set (VmHWM); cpu_s is the process CPU
 * time of the median run (all JVM threads: JIT, GC), thread_cpu_s the reading
 * thread's own.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jdk.jfr.ValueDescriptor;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedObject;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

public class RecordingFileBench {
    static final int MAX_DEPTH = 4;
    static long hash;
    static long frames;

    static void mix(long v) {
        hash = (hash ^ v) * 0x100000001B3L + (hash >>> 29);
    }

    static void mixStr(String s) {
        mix(s == null ? 0x5bd1e995L : s.hashCode());
    }

    // ------------------------------------------------------------ modes

    static void walkStack(RecordedStackTrace st) {
        mix(st.isTruncated() ? 1 : 0);
        List<RecordedFrame> fs = st.getFrames();
        for (RecordedFrame f : fs) {
            RecordedMethod m = f.getMethod();
            mixStr(m.getType().getName());
            mixStr(m.getName());
            mixStr(m.getDescriptor());
            mixStr(f.getType());
            mix((long) f.getLineNumber() << 32 | (f.getBytecodeIndex() & 0xffffffffL));
        }
        frames += fs.size();
    }

    static void touchFields(RecordedObject o, int depth) {
        for (ValueDescriptor d : o.getFields())
            touchValue(o.getValue(d.getName()), depth + 1);
    }

    static void touchValue(Object v, int depth) {
        if (v == null) {
            mix(0x9e37);
        } else if (v instanceof Long || v instanceof Integer || v instanceof Short
                   || v instanceof Byte) {
            mix(((Number) v).longValue());
        } else if (v instanceof Double || v instanceof Float) {
            mix(Double.doubleToRawLongBits(((Number) v).doubleValue()));
        } else if (v instanceof Boolean) {
            mix((Boolean) v ? 1 : 0);
        } else if (v instanceof Character) {
            mix((Character) v);
        } else if (v instanceof String) {
            mixStr((String) v);
        } else if (v instanceof RecordedStackTrace) {
            walkStack((RecordedStackTrace) v);
        } else if (v instanceof RecordedObject) {
            if (depth < MAX_DEPTH)
                touchFields((RecordedObject) v, depth);
            else
                mix(System.identityHashCode(v));
        } else if (v instanceof Object[]) {
            Object[] a = (Object[]) v;
            mix(a.length);
            if (depth < MAX_DEPTH)
                for (Object e : a)
                    touchValue(e, depth + 1);
        } else {
            mix(v.hashCode());
        }
    }

    /* One read of the whole file; returns the number of events counted. */
    static long run(String mode, Path file, Map<String, long[]> counts) throws IOException {
        long n = 0;
        boolean walk = mode.equals("walk"), all = mode.equals("all");
        String type = mode.startsWith("type:") ? mode.substring(5) : null;
        String fieldType = null, field = null;
        if (mode.startsWith("field:")) {
            int dot = mode.lastIndexOf('.');
            fieldType = mode.substring(6, dot);
            field = mode.substring(dot + 1);
        }
        try (RecordingFile rf = new RecordingFile(file)) {
            while (rf.hasMoreEvents()) {
                RecordedEvent e = rf.readEvent();
                if (walk) {
                    counts.computeIfAbsent(e.getEventType().getName(), k -> new long[1])[0]++;
                    n++;
                } else if (all) {
                    touchFields(e, 0);
                    n++;
                } else if (field != null) {
                    if (e.getEventType().getName().equals(fieldType)) {
                        n++;
                        touchValue(e.getValue(field), 1);
                    }
                } else if (e.getEventType().getName().equals(type)) {
                    n++;
                    RecordedStackTrace st = e.getStackTrace();
                    if (st == null)
                        continue;
                    List<RecordedFrame> fs = st.getFrames();
                    for (RecordedFrame f : fs) {
                        RecordedMethod m = f.getMethod();
                        mixStr(m.getType().getName());
                        mixStr(m.getName());
                        mix(f.getLineNumber());
                    }
                    frames += fs.size();
                }
            }
        }
        return n;
    }

    static long vmHwmKb() {
        try {
            for (String l : Files.readAllLines(Paths.get("/proc/self/status")))
                if (l.startsWith("VmHWM:"))
                    return Long.parseLong(l.replaceAll("[^0-9]", ""));
        } catch (IOException | NumberFormatException e) {
            // not Linux
        }
        return -1;
    }

    static double median(double[] a) {
        double[] s = a.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    public static void main(String[] args) throws Exception {
        int repeat = 5;
        String mode = null, path = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--repeat") && i + 1 < args.length)
                repeat = Integer.parseInt(args[++i]);
            else if (mode == null)
                mode = args[i];
            else if (path == null)
                path = args[i];
            else
                mode = null;
        }
        if (mode == null || path == null || repeat < 1
            || !(mode.equals("walk") || mode.equals("all")
                 || (mode.startsWith("type:") && mode.length() > 5)
                 || (mode.startsWith("field:") && mode.lastIndexOf('.') > 6
                     && !mode.endsWith(".")))) {
            System.err.println("usage: java RecordingFileBench.java [--repeat N] "
                               + "walk|type:NAME|all|field:TYPE.FIELD FILE");
            System.exit(2);
        }
        Path file = Paths.get(path);
        long bytes = Files.size(file);
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        ThreadMXBean tm = ManagementFactory.getThreadMXBean();

        Map<String, long[]> counts = new HashMap<>();
        long events = run(mode, file, counts); // warm-up
        double[] wall = new double[repeat], cpu = new double[repeat], tcpu = new double[repeat];
        for (int r = 0; r < repeat; r++) {
            counts.clear();
            long c0 = os.getProcessCpuTime(), tc0 = tm.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            events = run(mode, file, counts);
            long t1 = System.nanoTime();
            wall[r] = (t1 - t0) / 1e9;
            cpu[r] = (os.getProcessCpuTime() - c0) / 1e9;
            tcpu[r] = (tm.getCurrentThreadCpuTime() - tc0) / 1e9;
        }
        double med = median(wall);
        Arrays.sort(wall);
        System.out.printf("mode=%s file=%s bytes=%d runs=%d min_s=%.4f median_s=%.4f max_s=%.4f "
                          + "java=%s%n", mode, path, bytes, repeat, wall[0], med,
                          wall[repeat - 1], System.getProperty("java.version"));
        System.out.printf("rss_kb=%d cpu_s=%.3f thread_cpu_s=%.3f frames=%d types=%d hash=%016x%n",
                          vmHwmKb(), median(cpu), median(tcpu), frames / (repeat + 1),
                          counts.size(), hash);
        System.out.printf("MB/s=%.1f events/s=%.0f events=%d%n", bytes / med / 1e6,
                          events / med, events);
    }
}
