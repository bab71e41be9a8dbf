/*
 * JfrPump.java — copy the raw bytes of a JFR recording out of a running JVM,
 * through the FlightRecorderMXBean stream API, to a TCP socket, a file or stdout.
 *
 * Single-file program, no build step, JDK 17+, JDK modules only:
 *
 *   java tools/jfr-pump/JfrPump.java (--pid PID | --jmx URL) [options]
 *        (--connect HOST:PORT | --out FILE | --out -)
 *
 * Live mode (default, target JDK 16+) opens the stream with streamVersion=1.0:
 * the bytes are the repository chunks as they are flushed, each chunk starting
 * with a header whose size/offset/duration fields are zeroed (state 1); the real
 * header travels in-band in the chunk-header checkpoints (jfr-format.md §9.3).
 * Classic mode copies finished chunks of a stopped recording (a normal .jfr file).
 * The bytes are written exactly as readStream returns them; nothing is added.
 * Run with --help for the options; see README.md next to this file.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */

import com.sun.tools.attach.VirtualMachine;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.RuntimeMXBean;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.management.JMX;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnectionNotification;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import jdk.management.jfr.FlightRecorderMXBean;
import jdk.management.jfr.RecordingInfo;

public final class JfrPump {

    static final String USAGE =
        "usage: java JfrPump.java (--pid PID | --jmx URL) [--settings profile|default|FILE.jfc]\n"
      + "         [--recording ID] [--duration 10s] [--mode live|classic] [--block-size N]\n"
      + "         [--poll-ms N] [--flush-ms N] [--name NAME] [--drain-timeout 30s] [--quiet]\n"
      + "         (--connect [HOST:]PORT | --out FILE | --out -)\n";

    static final int HEADER_SIZE = 68;
    static final String MBEAN_NAME = "jdk.management.jfr:type=FlightRecorder";
    static final String DCMD_NAME = "com.sun.management:type=DiagnosticCommand";

    // ------------------------------------------------------------------ state shared with the shutdown hook
    static volatile boolean quiet;
    static volatile boolean stopRequested;     // set by the shutdown hook (SIGINT/SIGTERM)
    static volatile boolean inShutdown;
    static volatile boolean targetGone;        // JMX connection failed/closed
    static volatile int exitCode = 1;
    static final CountDownLatch finished = new CountDownLatch(1);

    /** The log prefix: tools/jfrstream-agent sets its own. */
    static volatile String prefix = "jfr-pump: ";

    static void log(String s) {
        if (!quiet) {
            System.err.println(prefix + s);
        }
    }

    /** The agent's quiet silences its errors too; the pump always prints them. */
    static volatile boolean quietErrors;

    static void err(String s) {
        if (!quietErrors) {
            System.err.println(prefix + s);
        }
    }

    static final class Usage extends Exception {
        private static final long serialVersionUID = 1L;
        Usage(String m) { super(m); }
    }

    static final class Fail extends Exception {
        private static final long serialVersionUID = 1L;
        Fail(String m) { super(m); }
        Fail(String m, Throwable cause) { super(m, cause); }
    }

    // ------------------------------------------------------------------ options
    static final class Options {
        long pid = -1;
        String jmx;
        String settings = "default";
        long recording = -1;
        long durationMs = -1;
        boolean live = true;
        int blockSize = 262144;
        long pollMs = 20;
        long flushMs = -1;
        String name = "jfr-pump";
        long drainTimeoutMs = 30000;
        String connectHost;
        int connectPort = -1;
        String out;

        void quiet() {
            JfrPump.quiet = true;
        }

        void set(String key, String v) throws Usage {
            switch (key) {
                case "--pid" -> pid = number(key, v, 1);
                case "--jmx" -> jmx = v;
                case "--settings" -> settings = v;
                case "--recording" -> recording = number(key, v, 0);
                case "--duration" -> durationMs = millis(key, v);
                case "--drain-timeout" -> drainTimeoutMs = millis(key, v);
                case "--mode" -> {
                    if (!v.equals("live") && !v.equals("classic")) {
                        throw new Usage("--mode is live or classic");
                    }
                    live = v.equals("live");
                }
                case "--block-size" -> blockSize = (int) Math.min(Integer.MAX_VALUE, number(key, v, 1));
                case "--poll-ms" -> pollMs = number(key, v, 1);
                case "--flush-ms" -> flushMs = number(key, v, 1);
                case "--name" -> name = v;
                case "--out" -> out = v;
                case "--connect" -> {
                    int c = v.lastIndexOf(':');
                    connectHost = c > 0 ? v.substring(0, c) : "127.0.0.1";
                    connectPort = (int) number(key, v.substring(c + 1), 1);
                    if (connectPort > 65535) {
                        throw new Usage("bad port in --connect " + v);
                    }
                }
                default -> throw new Usage("unknown option " + key);
            }
        }

        static long number(String key, String v, long min) throws Usage {
            try {
                long x = Long.parseLong(v.trim());
                if (x >= min) {
                    return x;
                }
            } catch (NumberFormatException e) {
                // fall through
            }
            throw new Usage("bad value for " + key + ": " + v);
        }

        /** 10s, 500ms, 2m, 1h; a bare number is seconds. */
        static long millis(String key, String v) throws Usage {
            Matcher m = Pattern.compile("(\\d+)\\s*(ms|s|m|h)?").matcher(v.trim());
            if (!m.matches()) {
                throw new Usage("bad duration for " + key + ": " + v + " (use e.g. 500ms, 10s, 2m)");
            }
            long n = Long.parseLong(m.group(1));
            String u = m.group(2) == null ? "s" : m.group(2);
            return switch (u) {
                case "ms" -> n;
                case "s" -> n * 1000;
                case "m" -> n * 60_000;
                default -> n * 3_600_000;
            };
        }
    }

    static Options parse(String[] args) throws Usage {
        Options o = new Options();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = null;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                v = a.substring(eq + 1);
                a = a.substring(0, eq);
            }
            switch (a) {
                case "-h", "--help" -> throw new Usage(null);
                case "-q", "--quiet" -> o.quiet();
                default -> {
                    if (v == null) {
                        if (i + 1 >= args.length) {
                            throw new Usage("missing value for " + a);
                        }
                        v = args[++i];
                    }
                    o.set(a, v);
                }
            }
        }
        if ((o.pid < 0) == (o.jmx == null)) {
            throw new Usage("give exactly one of --pid and --jmx");
        }
        if ((o.connectPort < 0) == (o.out == null)) {
            throw new Usage("give exactly one of --connect and --out");
        }
        return o;
    }

    // ------------------------------------------------------------------ output
    static final class Output implements Sink {
        final OutputStream os;
        final Socket socket;
        final String what;
        long bytes;

        Output(Options o) throws Fail {
            try {
                if (o.connectPort >= 0) {
                    socket = new Socket();
                    socket.connect(new InetSocketAddress(o.connectHost, o.connectPort), 5000);
                    socket.setTcpNoDelay(true);
                    os = socket.getOutputStream();
                    what = "tcp " + o.connectHost + ":" + o.connectPort;
                } else if (o.out.equals("-")) {
                    socket = null;
                    os = new FileOutputStream(FileDescriptor.out);
                    what = "stdout";
                } else {
                    socket = null;
                    os = new FileOutputStream(o.out);
                    what = o.out;
                }
            } catch (IOException e) {
                throw new Fail("cannot open output: " + e.getMessage(), e);
            }
        }

        @Override
        public long bytes() {
            return bytes;
        }

        @Override
        public void write(byte[] b) throws Fail {
            try {
                os.write(b);
                os.flush();
                bytes += b.length;
            } catch (IOException e) {
                throw new Fail("write to " + what + " failed: " + e.getMessage(), e);
            }
        }

        void close() {
            try {
                os.flush();
                if (socket != null) {
                    socket.shutdownOutput();
                    socket.close();
                } else {
                    os.close();
                }
            } catch (IOException e) {
                err("closing " + what + ": " + e.getMessage());
            }
        }
    }

    // ------------------------------------------------------------------ main
    public static void main(String[] args) {
        Options o;
        try {
            o = parse(args);
        } catch (Usage u) {
            if (u.getMessage() == null) {
                System.out.print(USAGE);
                System.exit(0);
            }
            System.err.print("jfr-pump: " + u.getMessage() + "\n" + USAGE);
            System.exit(2);
            return;
        }
        Thread hook = new Thread(() -> {
            if (finished.getCount() == 0) {
                return;
            }
            inShutdown = true;
            stopRequested = true;
            log("signal: stopping");
            try {
                finished.await(o.drainTimeoutMs + 30000, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                // fall through
            }
            System.err.flush();
            Runtime.getRuntime().halt(exitCode);
        }, "jfr-pump-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);

        int code;
        try {
            code = new JfrPump(o).run();
        } catch (Fail f) {
            err(f.getMessage());
            code = 1;
        } catch (Exception e) {
            err("error: " + describe(e));
            code = 1;
        }
        exitCode = code;
        finished.countDown();
        if (!inShutdown) {
            System.exit(code);
        }
    }

    /** True when t says the JMX connection to the target is gone (not an error raised by the MBean). */
    static boolean connectionLoss(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof java.rmi.RemoteException || c instanceof java.net.SocketException
                    || c instanceof java.io.EOFException) {
                return true;
            }
        }
        return targetGone;
    }

    static String describe(Throwable t) {
        Throwable c = t;
        while ((c instanceof java.lang.reflect.UndeclaredThrowableException
                || c instanceof java.lang.reflect.InvocationTargetException) && c.getCause() != null) {
            c = c.getCause();
        }
        String m = c.getMessage();
        if (m != null && m.indexOf("; nested exception is") >= 0) {
            m = m.substring(0, m.indexOf("; nested exception is"));
        }
        if (m != null && m.indexOf('\n') >= 0) {
            m = m.substring(0, m.indexOf('\n')).trim();
        }
        return c.getClass().getSimpleName() + (m == null ? "" : ": " + m);
    }

    // ------------------------------------------------------------------ instance
    final Options o;
    JMXConnector jmxc;
    MBeanServerConnection conn;
    FlightRecorderMXBean fr;
    Output out;
    long recId = -1;
    boolean owned;          // we created recId and must close it
    boolean recClosed;
    final long t0 = System.nanoTime();
    long durT0 = System.nanoTime();     // --duration counts from here (recording start)

    JfrPump(Options o) {
        this.o = o;
    }

    int run() throws Exception {
        try {
            connect();
            out = new Output(o);    // after connect: no empty file when the target is unreachable
            return o.live ? runLive() : runClassic();
        } finally {
            cleanup();
            if (out != null) {
                out.close();
            }
        }
    }

    void cleanup() {
        if (owned && !recClosed && !targetGone && recId >= 0) {
            try {
                fr.closeRecording(recId);
                log("closed recording " + recId);
            } catch (Exception e) {
                log("could not close recording " + recId + ": " + describe(e));
            }
            recClosed = true;
        }
        if (jmxc != null) {
            try {
                jmxc.close();
            } catch (Exception e) {
                // target may be gone
            }
        }
    }

    void connect() throws Exception {
        String url = o.jmx;
        if (o.pid >= 0) {
            if (o.pid == ProcessHandle.current().pid()) {
                throw new Fail("cannot attach to myself");
            }
            VirtualMachine vm;
            try {
                vm = VirtualMachine.attach(Long.toString(o.pid));
            } catch (Exception e) {
                throw new Fail("attach to pid " + o.pid + " failed: " + describe(e), e);
            }
            try {
                url = vm.startLocalManagementAgent();
            } finally {
                vm.detach();
            }
        }
        try {
            jmxc = JMXConnectorFactory.connect(new JMXServiceURL(url));
        } catch (Exception e) {
            throw new Fail("JMX connect to " + url + " failed: " + describe(e), e);
        }
        jmxc.addConnectionNotificationListener((n, hb) -> {
            String t = n.getType();
            if (JMXConnectionNotification.FAILED.equals(t) || JMXConnectionNotification.CLOSED.equals(t)) {
                targetGone = true;
            }
        }, null, null);
        conn = jmxc.getMBeanServerConnection();
        ObjectName on = new ObjectName(MBEAN_NAME);
        if (!conn.isRegistered(on)) {
            throw new Fail("target has no " + MBEAN_NAME + " (needs JDK 9+ with jdk.management.jfr)");
        }
        fr = JMX.newMXBeanProxy(conn, on, FlightRecorderMXBean.class);
        String ver = "?";
        int feature = -1;
        try {
            RuntimeMXBean rt = ManagementFactory.newPlatformMXBeanProxy(conn,
                    ManagementFactory.RUNTIME_MXBEAN_NAME, RuntimeMXBean.class);
            ver = rt.getVmVersion();
            String spec = rt.getSpecVersion();
            feature = Integer.parseInt(spec.startsWith("1.") ? spec.substring(2) : spec.split("\\.")[0]);
        } catch (Exception e) {
            // unknown version; go ahead
        }
        log("connected to " + (o.pid >= 0 ? "pid " + o.pid : url) + " (VM " + ver + ")");
        if (o.live && feature > 0 && feature < 16) {
            throw new Fail("live mode needs a JDK 16+ target (target is " + feature + "); use --mode classic");
        }
    }

    // ------------------------------------------------------------------ recording set-up
    // the pump's and the LiveStreamer's (the agent's) look-up of a recording
    static RecordingInfo info(FlightRecorderMXBean fr, long id) {
        for (RecordingInfo r : fr.getRecordings()) {
            if (r.getId() == id) {
                return r;
            }
        }
        return null;
    }

    static String stateOf(FlightRecorderMXBean fr, long id) {
        RecordingInfo r = info(fr, id);
        return r == null ? "CLOSED" : r.getState();
    }

    boolean predefined() {
        return !o.settings.endsWith(".jfc") && !o.settings.contains("/");
    }

    String readSettingsFile() throws Fail {
        try {
            return Files.readString(Path.of(o.settings), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new Fail("cannot read settings file " + o.settings + ": " + e.getMessage(), e);
        }
    }

    /** Creates and starts our own recording; sets recId/owned. */
    void startOwnRecording() throws Exception {
        String jfc = predefined() ? null : readSettingsFile();
        if (o.flushMs > 0) {
            // The flush interval is not a FlightRecorderMXBean option; only JFR.start has it.
            ObjectName dc = new ObjectName(DCMD_NAME);
            String[] a = {
                "name=" + o.name,
                "settings=" + (jfc == null ? o.settings : "none"),
                "disk=true",
                "flush-interval=" + o.flushMs + "ms",
            };
            String res;
            try {
                res = String.valueOf(conn.invoke(dc, "jfrStart", new Object[] { a },
                        new String[] { String[].class.getName() }));
            } catch (Exception e) {
                throw new Fail("JFR.start (for --flush-ms) failed: " + describe(e), e);
            }
            Matcher m = Pattern.compile("[Rr]ecording (\\d+)").matcher(res);
            if (m.find()) {
                recId = Long.parseLong(m.group(1));
            } else {
                for (RecordingInfo r : fr.getRecordings()) {
                    if (o.name.equals(r.getName()) && r.getId() > recId) {
                        recId = r.getId();
                    }
                }
            }
            if (recId < 0) {
                throw new Fail("JFR.start did not report a recording: " + res.trim());
            }
            owned = true;
            durT0 = System.nanoTime();
            if (jfc != null) {
                fr.setConfiguration(recId, jfc);
            }
            if (o.flushMs < 1000) {
                log("note: JDK 17..25 flush at most once per second; --flush-ms below 1000 has no effect");
            }
            log("started recording " + recId + " via JFR.start (settings " + o.settings
                    + ", flush-interval " + o.flushMs + " ms)");
            return;
        }
        recId = fr.newRecording();
        owned = true;
        Map<String, String> ro = new HashMap<>();
        ro.put("name", o.name);
        ro.put("disk", "true");
        ro.put("dumpOnExit", "false");
        fr.setRecordingOptions(recId, ro);
        if (jfc == null) {
            fr.setPredefinedConfiguration(recId, o.settings);
        } else {
            fr.setConfiguration(recId, jfc);
        }
        fr.startRecording(recId);
        durT0 = System.nanoTime();
        log("started recording " + recId + " (settings " + o.settings + ")");
    }

    boolean durationExpired() {
        return o.durationMs >= 0 && (System.nanoTime() - durT0) / 1_000_000 >= o.durationMs;
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    String recElapsed() {
        return String.format(Locale.ROOT, "%.2f s", (System.nanoTime() - durT0) / 1e9);
    }

    String elapsed() {
        return String.format(Locale.ROOT, "%.2f s", (System.nanoTime() - t0) / 1e9);
    }

    // ------------------------------------------------------------------ live mode
    int runLive() throws Exception {
        if (o.recording >= 0) {
            recId = o.recording;
            String st = stateOf(fr, recId);
            if (st.equals("CLOSED")) {
                throw new Fail("no recording with id " + recId);
            }
            durT0 = System.nanoTime();
            log("streaming existing recording " + recId + " (" + st + ")");
        } else {
            startOwnRecording();
        }
        LiveStreamer ls = new LiveStreamer(fr, recId, owned, o.blockSize, o.pollMs, o.drainTimeoutMs,
                () -> stopRequested || durationExpired(), out);
        ls.durT0 = durT0;
        int rc = ls.run();
        recClosed |= ls.recClosed;
        return rc;
    }

    /** Where a live stream's bytes go: the pump's Output, or the agent's reconnecting socket. */
    interface Sink {
        void write(byte[] b) throws Fail;

        long bytes();

        /** Called before each read with the stream's position; false: do not read now. */
        default boolean ready(LiveTracker tr) {
            return true;
        }
    }

    /**
     * The live loop shared by the pump and tools/jfrstream-agent: reads a recording's live
     * stream (openStream, streamVersion=1.0) from a FlightRecorderMXBean (a JMX proxy or the
     * platform one, in process) and hands each block to a Sink; once stopTrigger says so, stops
     * the recording it owns and drains until the chunk of the stop is complete, then closes it.
     */
    static final class LiveStreamer {
        final FlightRecorderMXBean fr;
        final long recId;
        final boolean owned;
        final int blockSize;
        final long pollMs;
        final long drainTimeoutMs;
        final java.util.function.BooleanSupplier stopTrigger;
        final Sink sink;
        final long t0 = System.nanoTime();
        long durT0 = System.nanoTime();
        volatile boolean recClosed;
        volatile long streamId = -1;

        LiveStreamer(FlightRecorderMXBean fr, long recId, boolean owned, int blockSize, long pollMs,
                long drainTimeoutMs, java.util.function.BooleanSupplier stopTrigger, Sink sink) {
            this.fr = fr;
            this.recId = recId;
            this.owned = owned;
            this.blockSize = blockSize;
            this.pollMs = pollMs;
            this.drainTimeoutMs = drainTimeoutMs;
            this.stopTrigger = stopTrigger;
            this.sink = sink;
        }

        String recElapsed() {
            return String.format(Locale.ROOT, "%.2f s", (System.nanoTime() - durT0) / 1e9);
        }

        String elapsed() {
            return String.format(Locale.ROOT, "%.2f s", (System.nanoTime() - t0) / 1e9);
        }

        int run() throws Exception {
            Map<String, String> so = new HashMap<>();
            so.put("streamVersion", "1.0");
            so.put("blockSize", Integer.toString(blockSize));
            long sid;
            try {
                sid = fr.openStream(recId, so);
                streamId = sid;
            } catch (Exception e) {
                throw new Fail("openStream (live) failed: " + describe(e), e);
            }
            LiveTracker tr = new LiveTracker();
            final int RUN = 0, DRAIN = 1, CATCHUP = 2;
            int phase = RUN;
            long stopMs = 0;             // recording stop time (epoch ms) once stopped
            long drainDeadline = 0;
            long lastCheck = System.nanoTime();
            int emptyAtBoundary = 0;
            long reads = 0, emptyReads = 0, discarded = 0, readNanos = 0;
            String endReason;
            boolean clean;
            try {
                while (true) {
                    if (phase == RUN) {
                        boolean trigger = stopTrigger.getAsBoolean();
                        boolean externalStop = false;
                        if (!trigger && System.nanoTime() - lastCheck > 1_000_000_000L) {
                            lastCheck = System.nanoTime();
                            String st = stateOf(fr, recId);
                            if (st.equals("STOPPED")) {
                                externalStop = trigger = true;
                                log("recording " + recId + " was stopped");
                            }
                        }
                        if (trigger) {
                            if (owned || externalStop) {
                                if (!externalStop) {
                                    try {
                                        fr.stopRecording(recId);
                                        log("stopped recording " + recId + " after " + recElapsed());
                                    } catch (IllegalStateException e) {
                                        // JFR's own shutdown hook stops every recording at exit
                                        log("recording " + recId + " was already stopped");
                                    } catch (RuntimeException e) {
                                        log("stopRecording: " + describe(e));
                                    }
                                }
                                RecordingInfo ri = info(fr, recId);
                                stopMs = ri == null ? 0 : ri.getStopTime();
                                phase = DRAIN;
                            } else {
                                log("leaving recording " + recId + " running; reading what is flushed");
                                phase = CATCHUP;
                            }
                            drainDeadline = System.nanoTime() + drainTimeoutMs * 1_000_000L;
                        }
                    }
                    if (!sink.ready(tr)) {
                        if (phase != RUN) {
                            endReason = "no output connected at the stop";
                            clean = tr.atBoundary();
                            break;
                        }
                        sleep(pollMs);
                        continue;
                    }
                    long rt = System.nanoTime();
                    byte[] b = fr.readStream(sid);
                    readNanos += System.nanoTime() - rt;
                    reads++;
                    if (b == null) {
                        endReason = "stream ended";
                        clean = true;
                        break;
                    }
                    if (b.length == 0) {
                        emptyReads++;
                        if (phase == CATCHUP) {
                            endReason = "caught up with the running recording";
                            clean = true;
                            break;
                        }
                        if (phase == DRAIN) {
                            if (tr.atBoundary() && tr.chunks > 0 && ++emptyAtBoundary >= 2) {
                                endReason = "caught up after stop";
                                clean = true;
                                break;
                            }
                            if (System.nanoTime() > drainDeadline) {
                                endReason = "drain timeout";
                                clean = tr.atBoundary();
                                break;
                            }
                        }
                        sleep(pollMs);
                        continue;
                    }
                    if (phase == DRAIN && stopMs > 0 && tr.atBoundary() && tr.chunks > 0
                            && b.length >= HEADER_SIZE && startsWithMagic(b)
                            && getLong(b, 32) / 1_000_000L >= stopMs) {
                        // A chunk that started at/after the stop: data of other recordings, not ours.
                        discarded += b.length;
                        endReason = "final chunk complete (next chunk starts "
                                + (getLong(b, 32) / 1_000_000L - stopMs) + " ms after the stop)";
                        clean = true;
                        break;
                    }
                    emptyAtBoundary = 0;
                    sink.write(b);
                    tr.feed(b);
                    if (phase == DRAIN && stopMs > 0 && tr.atBoundary()
                            && tr.lastChunkEndNanos / 1_000_000L >= stopMs) {
                        endReason = "final chunk complete (chunk end - recording stop time = "
                                + (tr.lastChunkEndNanos / 1_000_000L - stopMs) + " ms)";
                        clean = true;
                        break;
                    }
                }
            } catch (Fail f) {
                throw f;
            } catch (Exception e) {
                if (!connectionLoss(e)) {
                    throw e;
                }
                endReason = "target connection lost (" + describe(e) + ")";
                targetGone = true;
                clean = tr.atBoundary();
            }
            if (!targetGone) {
                if (owned && !recClosed) {
                    recClosed = true;
                    try {
                        if (stateOf(fr, recId).equals("CLOSED")) {
                            log("recording " + recId + " was closed by someone else");
                        } else {
                            fr.closeRecording(recId);
                            log("closed recording " + recId);
                        }
                    } catch (Exception e) {
                        log("closeRecording: " + describe(e));
                    }
                    // A live stream ends (null) once its recording is closed; nothing of ours is left.
                    try {
                        for (int i = 0; i < 50; i++) {
                            byte[] b = fr.readStream(sid);
                            if (b == null) {
                                break;
                            }
                            discarded += b.length;
                            if (b.length == 0) {
                                sleep(pollMs);
                            }
                        }
                    } catch (Exception e) {
                        // ignore
                    }
                }
                try {
                    fr.closeStream(sid);
                } catch (Exception e) {
                    // ignore
                }
            }
            if (discarded > 0) {
                log("discarded " + discarded + " bytes read after the end of the recording");
            }
            if (tr.error != null) {
                err("warning: stream check: " + tr.error);
            }
            log(endReason);
            String tail = tr.atBoundary() ? "" : String.format(Locale.ROOT,
                    ", last chunk unfinished (%d bytes after the last complete flush segment)",
                    tr.total - tr.lastSegmentEnd);
            log(String.format(Locale.ROOT,
                    "live: %d bytes, %d chunks (%d complete%s), %d flush segments, %s, %d reads (%d empty, %.2f ms/read)%s%s",
                    sink.bytes(), tr.chunks, tr.completeChunks, tr.lastChunkFinal ? ", final flag" : "",
                    tr.segments, elapsed(), reads, emptyReads, reads == 0 ? 0.0 : readNanos / 1e6 / reads,
                    tr.latencyText(), tail));
            if (!clean) {
                err("stream did not end cleanly: " + endReason);
                return 1;
            }
            return 0;

        }
    }

    // ------------------------------------------------------------------ classic mode
    int runClassic() throws Exception {
        long streamRec;
        boolean closeStreamRec = false;
        if (o.recording >= 0) {
            recId = o.recording;
            String st = stateOf(fr, recId);
            if (st.equals("CLOSED")) {
                throw new Fail("no recording with id " + recId);
            }
            if (st.equals("RUNNING") && o.durationMs >= 0) {
                durT0 = System.nanoTime();
                waitUntilStopTrigger();
                st = stateOf(fr, recId);
            }
            if (st.equals("STOPPED")) {
                streamRec = recId;
            } else if (st.equals("RUNNING")) {
                streamRec = fr.cloneRecording(recId, true);
                closeStreamRec = true;
                log("recording " + recId + " is running; streaming a stopped copy, recording " + streamRec);
            } else {
                throw new Fail("recording " + recId + " is " + st + "; nothing to stream yet");
            }
        } else {
            startOwnRecording();
            waitUntilStopTrigger();
            if (targetGone) {
                throw new Fail("target went away before the recording was stopped; no data");
            }
            if (stateOf(fr, recId).equals("RUNNING")) {
                fr.stopRecording(recId);
                log("stopped recording " + recId + " after " + recElapsed());
            }
            streamRec = recId;
        }
        Map<String, String> so = new HashMap<>();
        so.put("blockSize", Integer.toString(o.blockSize));
        long sid;
        try {
            sid = fr.openStream(streamRec, so);
        } catch (Exception e) {
            throw new Fail("openStream (classic) failed: " + describe(e), e);
        }
        ClassicTracker tr = new ClassicTracker();
        boolean clean = true;
        String endReason = "stream ended";
        try {
            while (true) {
                byte[] b = fr.readStream(sid);
                if (b == null) {
                    break;
                }
                if (b.length == 0) {
                    sleep(o.pollMs);
                    continue;
                }
                out.write(b);
                tr.feed(b);
            }
            try {
                fr.closeStream(sid);
            } catch (Exception e) {
                // ignore
            }
        } catch (Fail f) {
            throw f;
        } catch (Exception e) {
            if (!connectionLoss(e)) {
                throw e;
            }
            targetGone = true;
            clean = false;
            endReason = "target connection lost (" + describe(e) + ")";
        }
        if (closeStreamRec && !targetGone) {
            try {
                fr.closeRecording(streamRec);
            } catch (Exception e) {
                // ignore
            }
        }
        if (tr.error != null) {
            err("warning: stream check: " + tr.error);
        }
        log(endReason);
        log(String.format(Locale.ROOT, "classic: %d bytes, %d chunks%s, %s", out.bytes, tr.chunks,
                tr.atBoundary() ? "" : " (last one cut)", elapsed()));
        if (!clean || !tr.atBoundary()) {
            err("stream did not end cleanly: " + endReason);
            return 1;
        }
        return 0;
    }

    /** Classic mode: wait for --duration, a signal, the recording stopping or the target going away. */
    void waitUntilStopTrigger() throws Fail {
        if (o.durationMs < 0) {
            log("recording until Ctrl-C" + (o.recording >= 0 ? "" : " or until the recording is stopped"));
        }
        long lastCheck = System.nanoTime();
        while (!stopRequested && !durationExpired() && !targetGone) {
            sleep(Math.min(100, Math.max(1, o.pollMs)));
            if (System.nanoTime() - lastCheck > 1_000_000_000L) {
                lastCheck = System.nanoTime();
                String st;
                try {
                    st = stateOf(fr, recId);
                } catch (RuntimeException e) {
                    if (!connectionLoss(e)) {
                        throw e;
                    }
                    targetGone = true;
                    throw new Fail("target connection lost: " + describe(e), e);
                }
                if (st.equals("CLOSED")) {
                    throw new Fail("recording " + recId + " was closed by someone else");
                }
                if (st.equals("STOPPED")) {
                    log("recording " + recId + " was stopped");
                    break;
                }
            }
        }
    }

    // ------------------------------------------------------------------ byte helpers
    static boolean startsWithMagic(byte[] b) {
        return b.length >= 4 && b[0] == 'F' && b[1] == 'L' && b[2] == 'R' && b[3] == 0;
    }

    static long getLong(byte[] b, int off) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (b[off + i] & 0xFF);
        }
        return v;
    }

    /**
     * Follows the live stream's record framing (size varint, type varint) just far enough
     * to see the chunk-header checkpoints: they tell where flush segments and chunks end.
     * Only used for the end-of-stream decision and for the statistics; bytes are never changed.
     */
    static final class LiveTracker {
        long total;                 // bytes fed
        int chunks, completeChunks, segments;
        long chunkBytes;            // bytes of the current chunk so far (header included)
        boolean wantHeader = true;  // the next byte starts a chunk header
        final byte[] hdr = new byte[HEADER_SIZE];
        int hdrFill;
        long chunkStartNanos;
        long skip;                  // bytes of the current record still to pass
        final byte[] rec = new byte[256];
        int recFill, recNeed;
        long recSize = -1, recStart;
        long lastSegmentEnd;        // stream offset just past the last complete segment
        long lastChunkEndNanos = Long.MIN_VALUE;
        boolean lastChunkFinal;
        String error;
        // pending chunk-header checkpoint (validated at the end of its record)
        boolean pending;
        int pendType, pendState, pendFlags;
        long pendSize, pendCp, pendDur;
        long latN, latSum, latMax;

        boolean atBoundary() {
            return error != null ? false : wantHeader && hdrFill == 0;
        }

        void feed(byte[] b) {
            int i = 0, n = b.length;
            while (i < n) {
                if (error != null) {
                    total += n - i;
                    return;
                }
                if (wantHeader) {
                    int k = Math.min(HEADER_SIZE - hdrFill, n - i);
                    System.arraycopy(b, i, hdr, hdrFill, k);
                    hdrFill += k;
                    i += k;
                    total += k;
                    if (hdrFill == HEADER_SIZE) {
                        if (!startsWithMagic(hdr)) {
                            error = "no FLR magic at stream offset " + (total - HEADER_SIZE);
                            continue;
                        }
                        chunks++;
                        chunkStartNanos = getLong(hdr, 32);
                        chunkBytes = HEADER_SIZE;
                        wantHeader = false;
                        hdrFill = 0;
                        recFill = 0;
                        recSize = -1;
                    }
                    continue;
                }
                if (skip > 0) {
                    int k = (int) Math.min(skip, n - i);
                    skip -= k;
                    i += k;
                    total += k;
                    chunkBytes += k;
                    if (skip == 0) {
                        recordEnd();
                    }
                    continue;
                }
                if (recSize < 0) {
                    rec[recFill++] = b[i++];
                    total++;
                    chunkBytes++;
                    long[] v = varint(rec, 0, recFill);
                    if (v == null) {
                        if (recFill >= 9) {
                            error = "bad record size at stream offset " + (total - recFill);
                        }
                        continue;
                    }
                    recSize = v[0];
                    recStart = chunkBytes - recFill;
                    if (recSize < 2 || recSize > (1L << 40)) {
                        error = "bad record size " + recSize + " at chunk offset " + recStart;
                        continue;
                    }
                    recNeed = (int) Math.min(recSize, rec.length);
                } else {
                    int k = Math.min(recNeed - recFill, n - i);
                    System.arraycopy(b, i, rec, recFill, k);
                    recFill += k;
                    i += k;
                    total += k;
                    chunkBytes += k;
                }
                if (recFill == recNeed) {
                    prefix();
                    skip = recSize - recFill;
                    if (skip == 0 && error == null) {
                        recordEnd();
                    }
                }
            }
        }

        /** The first bytes of a record are buffered: look for a chunk-header checkpoint. */
        void prefix() {
            int[] p = { (int) varint(rec, 0, recFill)[1] };
            long type = next(p);
            if (type != 1) {
                return;
            }
            next(p); // start ticks
            next(p); // duration
            next(p); // delta to the previous checkpoint
            long cpType = next(p);
            if (p[0] < 0) {
                error = "truncated checkpoint at chunk offset " + recStart;
                return;
            }
            if ((cpType & 2) == 0) {
                if ((cpType & 1) != 0) {
                    pending = true;      // flush checkpoint without a header copy
                    pendType = (int) cpType;
                    pendState = -1;
                }
                return;
            }
            next(p); // pool count
            next(p); // pool type (jdk.types.ChunkHeader)
            next(p); // entry count
            next(p); // key
            long len = next(p);
            if (p[0] < 0 || len != HEADER_SIZE || p[0] + HEADER_SIZE > recFill) {
                error = "unexpected chunk-header checkpoint at chunk offset " + recStart;
                return;
            }
            int h = p[0];
            pending = true;
            pendType = (int) cpType;
            pendSize = getLong(rec, h + 8);
            pendCp = getLong(rec, h + 16);
            pendDur = getLong(rec, h + 40);
            pendState = rec[h + 64] & 0xFF;
            pendFlags = ((rec[h + 66] & 0xFF) << 8) | (rec[h + 67] & 0xFF);
        }

        long next(int[] p) {
            if (p[0] < 0) {
                return -1;
            }
            long[] v = varint(rec, p[0], recFill);
            if (v == null) {
                p[0] = -1;
                return -1;
            }
            p[0] += (int) v[1];
            return v[0];
        }

        void recordEnd() {
            if (pending) {
                pending = false;
                if (pendState >= 0) {
                    if (pendSize != chunkBytes || pendCp != recStart) {
                        error = "chunk-header checkpoint says size " + pendSize + "/cp " + pendCp
                                + ", stream has " + chunkBytes + "/" + recStart + " (chunk " + chunks + ")";
                        return;
                    }
                    long flushWall = chunkStartNanos + pendDur;
                    long now = System.currentTimeMillis() * 1_000_000L;
                    long lat = Math.max(0, now - flushWall);
                    latN++;
                    latSum += lat;
                    latMax = Math.max(latMax, lat);
                }
                segments++;
                lastSegmentEnd = total;
                if (pendState == 0) {
                    completeChunks++;
                    lastChunkEndNanos = chunkStartNanos + pendDur;
                    lastChunkFinal = (pendFlags & 2) != 0;
                    wantHeader = true;
                    hdrFill = 0;
                }
            }
            recFill = 0;
            recSize = -1;
        }

        String latencyText() {
            if (latN == 0) {
                return "";
            }
            return String.format(Locale.ROOT, ", flush->write latency avg %.1f ms max %.1f ms",
                    latSum / 1e6 / latN, latMax / 1e6);
        }
    }

    /** Classic stream: finished chunks back to back; the header's size field is valid. */
    static final class ClassicTracker {
        int chunks;
        long remaining;
        final byte[] hdr = new byte[HEADER_SIZE];
        int hdrFill;
        long total;
        String error;

        boolean atBoundary() {
            return error == null && remaining == 0 && hdrFill == 0;
        }

        void feed(byte[] b) {
            int i = 0, n = b.length;
            while (i < n && error == null) {
                if (remaining > 0) {
                    int k = (int) Math.min(remaining, n - i);
                    remaining -= k;
                    i += k;
                    total += k;
                    continue;
                }
                int k = Math.min(HEADER_SIZE - hdrFill, n - i);
                System.arraycopy(b, i, hdr, hdrFill, k);
                hdrFill += k;
                i += k;
                total += k;
                if (hdrFill == HEADER_SIZE) {
                    hdrFill = 0;
                    long size = getLong(hdr, 8);
                    if (!startsWithMagic(hdr) || size < HEADER_SIZE) {
                        error = "bad chunk header at offset " + (total - HEADER_SIZE);
                        return;
                    }
                    chunks++;
                    remaining = size - HEADER_SIZE;
                }
            }
        }
    }

    /** JFR compressed integer at b[off..end): {value, length} or null if incomplete. */
    static long[] varint(byte[] b, int off, int end) {
        long v = 0;
        for (int i = 0; i < 9; i++) {
            if (off + i >= end) {
                return null;
            }
            int x = b[off + i] & 0xFF;
            if (i == 8) {
                v |= ((long) x) << 56;
                return new long[] { v, 9 };
            }
            v |= ((long) (x & 0x7F)) << (7 * i);
            if ((x & 0x80) == 0) {
                return new long[] { v, i + 1 };
            }
        }
        return null;
    }
}
