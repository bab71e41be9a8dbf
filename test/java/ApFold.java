/*
 * ApFold.java — folded stacks of a recording computed with the JDK's own
 * reader (jdk.jfr.consumer.RecordingFile) and the semantics of
 * async-profiler's converter (jfrconv), as jfrstream documents them. The
 * oracle of test/profile/profile-producers.py; run as a source file:
 *
 *   java test/java/ApFold.java [options] FILE...
 *   java test/java/ApFold.java --jobs JOBFILE
 *
 * A job file holds one job a line: a label, a tab, the options and files
 * separated by spaces; each job's output follows a line "#job LABEL" (or
 * "#error LABEL message" when the JDK cannot read an input).
 *
 * Options (as `jfrstream collapsed`): --event cpu|cputime|wall|alloc|live|
 * nativemem|lock, --threads, --dot, --count, --leak, --lines, --reverse,
 * --state LIST, --include RE, --exclude RE, --minwidth PCT, --from MS,
 * --to MS (milliseconds only). Prints "stack weight" lines (any order).
 *
 * Every chunk is read on its own (the file is split at the chunk sizes of
 * the headers), so constant keys are per chunk as in jfrstream and the
 * converter. A chunk is taken for async-profiler's when its event types
 * include "profiler.*" ones: there a Native frame is a C function and is
 * named by the method alone. Thread frames carry RecordedThread.getId(),
 * the thread's constant-pool key.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.*;
import java.util.regex.Pattern;

import jdk.jfr.EventType;
import jdk.jfr.consumer.*;

public class ApFold {
    static final String[] SUFFIX = {"_[0]", "_[j]", "_[i]", "", "", "_[k]", "_[1]"};
    static final List<String> FT = List.of("Interpreted", "JIT compiled", "Inlined", "Native", "C++",
            "Kernel", "C1 compiled");

    static String event = "cpu";
    static boolean threads, dot, count, leak, lines, reverse;
    static List<String> states;
    static Pattern include, exclude;
    static double minwidth;
    static Long fromMs, toMs;

    static final class Node {
        final Map<String, Node> kids = new LinkedHashMap<>();
        final String name;
        final int cls;
        long total, self, interpreted, inlined, c1;
        Node(String name, int cls) { this.name = name; this.cls = cls; }
    }

    static Node root;

    record Frame(String name, int type) {}

    static void add(List<Frame> path, long w) {
        if (include != null || exclude != null) {
            boolean needInclude = include != null;
            boolean out = false;
            for (Frame f : path) {
                if (exclude != null && exclude.matcher(f.name).matches()) { out = true; break; }
                if (needInclude && include.matcher(f.name).matches()) {
                    needInclude = false;
                    if (exclude == null) break;
                }
            }
            if (out || needInclude) return;
        }
        Node n = root;
        root.total += w;
        for (int i = 0; i < path.size(); i++) {
            Frame f = path.get(reverse ? path.size() - 1 - i : i);
            int cls = f.type == 0 || f.type == 1 || f.type == 2 || f.type == 6 ? 1 : f.type;
            String key = f.name + "\u0000" + cls;
            Node c = n.kids.get(key);
            if (c == null) n.kids.put(key, c = new Node(f.name, cls));
            c.total += w;
            if (f.type == 0) c.interpreted += w;
            else if (f.type == 2) c.inlined += w;
            else if (f.type == 6) c.c1 += w;
            n = c;
        }
        n.self += w;
    }

    static String suffix(Node n) {
        if (n.cls != 1) return SUFFIX[n.cls];
        if (n.inlined * 3 >= n.total) return "_[i]";
        if (n.c1 * 2 >= n.total) return "_[1]";
        if (n.interpreted * 2 >= n.total) return "_[0]";
        return "_[j]";
    }

    static void print(Node n, String prefix, long min, StringBuilder out) {
        for (Node c : n.kids.values()) {
            if (c.total < min) continue;
            String line = prefix + c.name.replace(';', '|') + suffix(c);
            if (c.self > 0) out.append(line).append(' ').append(c.self).append('\n');
            print(c, line + ";", min, out);
        }
    }

    static String className(RecordedClass c) {
        if (c == null) return "null";
        String n = c.getString("name");
        int depth = 0;
        while (depth < n.length() && n.charAt(depth) == '[') depth++;
        String base;
        if (depth > 0 && depth < n.length() && "BCSIJZFD".indexOf(n.charAt(depth)) >= 0) {
            base = switch (n.charAt(depth)) {
                case 'B' -> "byte"; case 'C' -> "char"; case 'S' -> "short"; case 'I' -> "int";
                case 'J' -> "long"; case 'Z' -> "boolean"; case 'F' -> "float"; default -> "double";
            };
        } else {
            String s = n.substring(depth);
            if (depth > 0 && s.startsWith("L")) s = s.endsWith(";") ? s.substring(1, s.length() - 1) : s.substring(1);
            base = s.replace('/', '.');
        }
        return base + "[]".repeat(depth);
    }

    static String frameName(RecordedFrame f, int type, boolean ap) {
        RecordedMethod m = f.getMethod();
        if (m == null) return "unknown";
        // the symbol as written (slashes): RecordedClass.getName() has dots
        String cls = m.getType() == null ? null : m.getType().getString("name");
        if (cls == null) cls = "";
        String meth = m.getName() == null ? "" : m.getName();
        String s;
        if (cls.isEmpty() || type == 4 || type == 5 || (type == 3 && ap)) s = meth;
        else {
            if (dot) cls = cls.replace('/', '.');
            s = meth.isEmpty() ? cls : cls + "." + meth;
        }
        if (lines && f.getLineNumber() > 0) s += ":" + f.getLineNumber();
        return s;
    }

    static List<String> types() {
        return switch (event) {
            case "cpu" -> List.of("jdk.ExecutionSample");
            case "cputime" -> List.of("jdk.CPUTimeSample");
            case "wall" -> List.of("jdk.NativeMethodSample", "profiler.WallClockSample");
            case "alloc" -> List.of("jdk.ObjectAllocationInNewTLAB", "jdk.ObjectAllocationOutsideTLAB",
                    "jdk.ObjectAllocationSample");
            case "live" -> List.of("profiler.LiveObject");
            case "nativemem" -> List.of("profiler.Malloc", "profiler.Free");
            case "lock" -> List.of("jdk.JavaMonitorEnter", "jdk.ThreadPark");
            default -> throw new IllegalArgumentException(event);
        };
    }

    record Mem(long time, long addr, long size, List<Frame> path, int seq) {}

    static Map<Long, Mem> alive;
    static long startNanos, endNanos;

    static long rangeNanos(long ms) {
        long ns = ms * 1_000_000;
        if (ms < 0) return endNanos + ns;
        if (ms < 1_500_000_000_000L) return startNanos + ns;
        return ns;
    }

    static void chunk(Path p, long chunkStart, long chunkDuration) throws IOException {
        startNanos = Math.min(startNanos, chunkStart);
        endNanos = Math.max(endNanos, chunkStart + chunkDuration);
        long from = fromMs != null ? rangeNanos(fromMs) : Long.MIN_VALUE;
        long to = toMs != null ? rangeNanos(toMs) : Long.MAX_VALUE;
        Set<String> want = new HashSet<>(types());
        List<Mem> mem = new ArrayList<>();
        try (RecordingFile rf = new RecordingFile(p)) {
            boolean ap = false;
            for (EventType t : rf.readEventTypes()) ap |= t.getName().startsWith("profiler.");
            while (rf.hasMoreEvents()) {
                RecordedEvent e = rf.readEvent();
                String t = e.getEventType().getName();
                if (!want.contains(t)) continue;
                java.time.Instant st = e.getStartTime();
                long ns = st.getEpochSecond() * 1_000_000_000L + st.getNano();
                if (ns < from || ns > to) continue;
                if (states != null && e.hasField("state")) {
                    String s = e.getString("state");
                    boolean keep = false;
                    if (s != null && s.startsWith("STATE_"))
                        for (String x : states) keep |= s.startsWith(x, 6);
                    if (!keep) continue;
                }
                if (t.equals("profiler.Free")) {
                    if (leak) mem.add(new Mem(ns, e.getLong("address"), 0, null, mem.size()));
                    continue;
                }
                RecordedStackTrace stack = e.getStackTrace();
                if (stack == null) continue;
                List<Frame> path = new ArrayList<>();
                if (threads) {
                    RecordedThread th = e.hasField("sampledThread") ? e.getValue("sampledThread")
                            : e.hasField("eventThread") ? e.getThread("eventThread") : null;
                    if (th == null) path.add(new Frame("[tid=0]", 3));
                    else {
                        String nm = th.getJavaName() != null ? th.getJavaName() : th.getOSName();
                        if (nm == null) path.add(new Frame("[tid=" + th.getId() + "]", 3));
                        else if (nm.startsWith("[tid=")) path.add(new Frame(nm, 3));
                        else path.add(new Frame("[" + nm + " tid=" + th.getId() + "]", 3));
                    }
                }
                List<RecordedFrame> fr = stack.getFrames();
                for (int i = fr.size() - 1; i >= 0; i--) {
                    int type = FT.indexOf(fr.get(i).getType());
                    if (type < 0) type = 1;
                    path.add(new Frame(frameName(fr.get(i), type, ap), type));
                }
                long w = 1;
                int ctype = 2;
                RecordedClass cls = null;
                boolean hasCls = false;
                switch (t) {
                    case "profiler.WallClockSample" -> w = e.getLong("samples");
                    case "jdk.ObjectAllocationInNewTLAB" -> {
                        w = e.getLong("tlabSize");
                        if (w == 0) { w = e.getLong("allocationSize"); ctype = 5; }
                        cls = e.getClass("objectClass"); hasCls = true;
                    }
                    case "jdk.ObjectAllocationOutsideTLAB" -> {
                        w = e.getLong("allocationSize"); ctype = 5; cls = e.getClass("objectClass"); hasCls = true;
                    }
                    case "jdk.ObjectAllocationSample" -> {
                        w = e.getLong("weight"); ctype = 5; cls = e.getClass("objectClass"); hasCls = true;
                    }
                    case "profiler.LiveObject" -> {
                        w = e.getLong("allocationSize"); cls = e.getClass("objectClass"); hasCls = true;
                    }
                    case "profiler.Malloc" -> w = e.getLong("size");
                    case "jdk.JavaMonitorEnter" -> {
                        w = Math.max(0, e.getDuration().toNanos()); cls = e.getClass("monitorClass"); hasCls = true;
                    }
                    case "jdk.ThreadPark" -> {
                        w = Math.max(0, e.getDuration().toNanos()); cls = e.getClass("parkedClass"); hasCls = true;
                    }
                    default -> { }
                }
                if (hasCls && cls != null) path.add(new Frame(className(cls), ctype));
                if (t.equals("profiler.Malloc") && leak) {
                    mem.add(new Mem(ns, e.getLong("address"), w, path, mem.size()));
                    continue;
                }
                add(path, count ? 1 : w);
            }
        }
        // --leak: the chunk's mallocs and frees in time order on the address table
        mem.sort(Comparator.comparingLong(Mem::time).thenComparingInt(Mem::seq));
        for (Mem m : mem) {
            if (m.size > 0) alive.put(m.addr, m);
            else alive.remove(m.addr);
        }
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 2 && args[0].equals("--jobs")) {
            for (String job : Files.readAllLines(Path.of(args[1]))) {
                if (job.isBlank()) continue;
                String[] lt = job.split("\t", 2);
                try {
                    String out = run(lt[1].trim().split(" +"));
                    System.out.print("#job " + lt[0] + "\n" + out);
                } catch (Exception | Error e) {
                    System.out.print("#error " + lt[0] + " " + String.valueOf(e).replace('\n', ' ') + "\n");
                }
            }
        } else {
            System.out.print(run(args));
        }
        System.out.flush();
    }

    static String run(String[] args) throws IOException {
        event = "cpu";
        threads = dot = count = leak = lines = reverse = false;
        states = null;
        include = exclude = null;
        minwidth = 0;
        fromMs = toMs = null;
        root = new Node("all", 3);
        alive = new LinkedHashMap<>();
        startNanos = Long.MAX_VALUE;
        endNanos = Long.MIN_VALUE;
        List<String> files = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--event" -> event = args[++i];
                case "--threads" -> threads = true;
                case "--dot" -> dot = true;
                case "--count" -> count = true;
                case "--leak" -> leak = true;
                case "--lines" -> lines = true;
                case "--reverse" -> reverse = true;
                case "--state" -> states = Arrays.asList(args[++i].toUpperCase().split(","));
                case "--include" -> include = Pattern.compile(args[++i]);
                case "--exclude" -> exclude = Pattern.compile(args[++i]);
                case "--minwidth" -> minwidth = Double.parseDouble(args[++i]);
                case "--from" -> fromMs = Long.parseLong(args[++i]);
                case "--to" -> toMs = Long.parseLong(args[++i]);
                default -> files.add(args[i]);
            }
        }
        Path tmp = Files.createTempFile("apfold", ".jfr");
        try {
            for (String f : files) {
                try (RandomAccessFile in = new RandomAccessFile(f, "r")) {
                    long pos = 0, len = in.length();
                    while (pos + 68 <= len) {
                        in.seek(pos + 8);
                        long size = in.readLong();
                        in.seek(pos + 32);
                        long start = in.readLong(), dur = in.readLong();
                        if (size <= 0 || pos + size > len) break;
                        byte[] b = new byte[(int) size];
                        in.seek(pos);
                        in.readFully(b);
                        Files.write(tmp, b);
                        chunk(tmp, start, dur);
                        pos += size;
                    }
                }
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
        for (Mem m : alive.values()) add(m.path, count ? 1 : m.size);
        StringBuilder out = new StringBuilder();
        print(root, "", (long) (root.total * minwidth / 100), out);
        return out.toString();
    }
}
