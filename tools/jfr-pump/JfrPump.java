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
      + "         (--connect [HOST:]PORT | --out FILE | --out -)\n"
      + "         with --connect: [--no-ack | --ack] [--buffer 64m] [--retry-max 30s] [--ack-timeout 30s]\n"
      + "         [--verbose]\n"
      + "         [--tls] [--tls-ca FILE] [--tls-cert FILE --tls-key FILE] [--tls-verify-host on|off]\n";

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
        final SendOptions send = new SendOptions();

        Options() {
            send.ack = false;      // the pump's default: the raw bytes only (--ack opts in)
        }

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
                    send.host = connectHost;
                    send.port = connectPort;
                }
                case "--buffer" -> send.bufferMax = size(key, v);
                case "--retry-max" -> send.retryMaxMs = Math.max(100, millis(key, v));
                case "--ack-timeout" -> send.ackTimeoutMs = millis(key, v);
                case "--tls-ca" -> send.tlsCa = v;
                case "--tls-cert" -> send.tlsCert = v;
                case "--tls-key" -> send.tlsKey = v;
                case "--tls-verify-host" -> send.verifyHost = SendOptions.bool(key, v);
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

        /** 250m, 1g, 64k, or bytes. */
        static long size(String k, String v) throws Usage {
            String t = v.trim().toLowerCase(Locale.ROOT);
            long mul = 1;
            if (t.endsWith("b")) {
                t = t.substring(0, t.length() - 1);
            }
            if (t.endsWith("k")) {
                mul = 1L << 10;
            } else if (t.endsWith("m")) {
                mul = 1L << 20;
            } else if (t.endsWith("g")) {
                mul = 1L << 30;
            }
            if (mul > 1) {
                t = t.substring(0, t.length() - 1);
            }
            return number(k, t, 0) * mul;
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
                case "--ack" -> o.send.ack = true;
                case "--no-ack" -> o.send.ack = false;
                case "--tls" -> o.send.tls = true;
                case "--verbose" -> o.send.verbose = true;
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
        o.send.check();
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
                    o.send.connectTimeoutMs = 5000;
                    socket = Tls.open(o.send, o.send.useTls() ? Tls.factory(o.send) : null, new Socket[1]);
                    os = socket.getOutputStream();
                    what = (o.send.useTls() ? "tls " : "tcp ") + o.connectHost + ":" + o.connectPort;
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

    /** The chunk file that was deleted under the stream (JFR's exit removes the repository), or null. */
    static String deletedFile(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof java.nio.file.NoSuchFileException n) {
                return n.getFile() != null ? n.getFile() : "";
            }
        }
        return null;
    }

    /**
     * In process (the agent): JFR's shutdown hook stops the recordings and deletes the disk
     * repository, in parallel with the agent's own hook, so a chunk file that the live stream
     * has not opened yet (a rotation shortly before the exit, a stream that lags under load)
     * would be lost with it. The pin opens each chunk file of the repository as it is created
     * (a watch thread: a deleted file stays readable through an open descriptor), closes it once
     * the stream has passed it, and, when the stream cannot open one, reads it and the newer
     * ones from there, as the stream would have.
     */
    static final class RepositoryPin {
        static final int MAX = 64;            // files held at most (a stream 64 chunks behind loses the older)
        static final long TRIM_NANOS = 100_000_000L;

        static final class File {
            final java.nio.channels.FileChannel ch;
            long start;                       // the chunk's start (epoch ns, header offset 32); 0: not yet written

            File(java.nio.channels.FileChannel ch) {
                this.ch = ch;
            }
        }

        final java.util.TreeMap<String, File> open = new java.util.TreeMap<>();   // names sort by time
        java.nio.file.WatchService watch;
        long lastTrim;

        /** Watches the repository (the system property jdk.jfr.repository, set by JFR) on a daemon
         * thread; false when it cannot (no repository yet, no watch service): nothing is pinned. */
        boolean start() {
            String d = System.getProperty("jdk.jfr.repository");
            if (d == null) {
                return false;
            }
            try {
                Path p = Path.of(d);
                java.nio.file.WatchService w = p.getFileSystem().newWatchService();
                p.register(w, java.nio.file.StandardWatchEventKinds.ENTRY_CREATE);
                synchronized (this) {
                    watch = w;
                }
                try (java.nio.file.DirectoryStream<Path> ds = Files.newDirectoryStream(p, "*.jfr")) {
                    for (Path f : ds) {
                        pin(f);
                    }
                }
                Thread t = new Thread(() -> watchLoop(w, p), "jfrstream-agent-pin");
                t.setDaemon(true);
                t.start();
                return true;
            } catch (IOException | RuntimeException e) {
                close();
                return false;
            }
        }

        void watchLoop(java.nio.file.WatchService w, Path d) {
            try {
                while (true) {
                    java.nio.file.WatchKey k = w.take();
                    for (java.nio.file.WatchEvent<?> e : k.pollEvents()) {
                        if (e.context() instanceof Path name && name.toString().endsWith(".jfr")) {
                            pin(d.resolve(name));
                        }
                    }
                    if (!k.reset()) {
                        return;           // the repository is gone
                    }
                }
            } catch (InterruptedException | java.nio.file.ClosedWatchServiceException e) {
                // closed
            }
        }

        synchronized void pin(Path p) {
            String n = p.getFileName().toString();
            if (watch == null || open.containsKey(n)) {
                return;
            }
            try {
                open.put(n, new File(java.nio.channels.FileChannel.open(p, java.nio.file.StandardOpenOption.READ)));
            } catch (IOException | RuntimeException e) {
                // deleted meanwhile (maxage, maxsize): not ours to read any more
            }
            if (open.size() > MAX) {
                closeQuietly(open.pollFirstEntry().getValue().ch);
            }
        }

        /** At most every 100 ms: closes the files that the stream has passed (they start
         * before passedNanos, the start of its current chunk). */
        synchronized void trim(long now, long passedNanos) {
            if (now - lastTrim < TRIM_NANOS || open.isEmpty()) {
                return;
            }
            lastTrim = now;
            java.nio.ByteBuffer h = java.nio.ByteBuffer.allocate(8);
            for (java.util.Iterator<File> it = open.values().iterator(); it.hasNext();) {
                File f = it.next();
                if (f.start <= 0) {
                    try {
                        if (f.ch.read(h.clear(), 32) == 8) {
                            f.start = h.getLong(0);
                        }
                    } catch (IOException e) {
                        // again at the next trim
                    }
                }
                if (f.start > 0 && f.start < passedNanos) {
                    closeQuietly(f.ch);
                    it.remove();
                }
            }
        }

        /** The file the stream could not open and every newer pinned one, in order, through
         * the tracker and the sink; the bytes given, or -1 when that file was not pinned. */
        synchronized long rescue(String missing, LiveTracker tr, Sink sink, int block) throws Fail {
            Path m = Path.of(missing).getFileName();
            if (m == null || !open.containsKey(m.toString())) {
                return -1;
            }
            long n = 0;
            java.nio.ByteBuffer bb = java.nio.ByteBuffer.allocate(block);
            for (File f : open.tailMap(m.toString(), true).values()) {
                try {
                    for (long at = 0;;) {
                        int r = f.ch.read(bb.clear(), at);
                        if (r <= 0) {
                            break;
                        }
                        at += r;
                        byte[] b = java.util.Arrays.copyOf(bb.array(), r);
                        tr.feed(b);
                        sink.write(b);
                        n += r;
                    }
                } catch (IOException e) {
                    break;
                }
            }
            return n;
        }

        /** Nothing streamed yet and the repository deleted (JFR's hook at the JVM's exit, after which
         * the stream reads nothing): every pinned file, oldest first, through tr and sink; -1 when the
         * repository is still there or nothing is pinned. */
        synchronized long rescueAll(LiveTracker tr, Sink sink, int block) throws Fail {
            String d = System.getProperty("jdk.jfr.repository");
            if (open.isEmpty() || d == null || Files.exists(Path.of(d))) {
                return -1;
            }
            return rescue(open.firstKey(), tr, sink, block);
        }

        synchronized void close() {
            if (watch != null) {
                try {
                    watch.close();
                } catch (IOException e) {
                    // ignore
                }
                watch = null;
            }
            for (File f : open.values()) {
                closeQuietly(f.ch);
            }
            open.clear();
        }

        static void closeQuietly(java.nio.channels.FileChannel ch) {
            try {
                ch.close();
            } catch (IOException e) {
                // ignore
            }
        }
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
    Output out;             // --out, or --connect in classic mode
    AckedSender sender;     // --connect in live mode
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
            // after connect: no empty file when the target is unreachable
            if (o.live && o.connectPort >= 0) {
                sender = new AckedSender(o.send, fr);
            } else {
                out = new Output(o);
            }
            return o.live ? runLive() : runClassic();
        } finally {
            cleanup();
            if (out != null) {
                out.close();
            }
            if (sender != null) {
                sender.close();
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
                () -> {
                    boolean t = stopRequested || durationExpired();
                    if (t && sender != null && sender.exitDeadline == 0) {
                        sender.exitDeadline = System.nanoTime() + o.drainTimeoutMs * 1_000_000L;
                        sender.lastChance = true;
                    }
                    return t;
                }, sender != null ? sender : out);
        ls.durT0 = durT0;
        int rc = ls.run();
        recClosed |= ls.recClosed;
        if (sender != null) {
            sender.finish(sender.exitDeadline != 0 ? sender.exitDeadline
                    : System.nanoTime() + o.drainTimeoutMs * 1_000_000L);
            if (sender.connections == 0) {
                err("never connected to " + o.send.where() + "; nothing was sent");
                return 1;
            }
        }
        return rc;
    }

    /** Where a live stream's bytes go: the pump's Output (a file), or an AckedSender. */
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
        RepositoryPin pin;         // in process only (the agent): see RepositoryPin

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
                    if (pin != null) {
                        pin.trim(rt, tr.chunks > 0 ? tr.chunkStartNanos : Long.MIN_VALUE);
                    }
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
                            // connected only at the exit (the listener came up between two attempts):
                            // JFR's hook has stopped the recording and deleted the repository, so the
                            // stream has nothing; the files held open have the whole recording
                            long saved = tr.chunks == 0 && tr.atBoundary() && pin != null
                                    ? pin.rescueAll(tr, sink, blockSize) : -1;
                            if (saved > 0) {
                                endReason = "final chunk complete (" + saved + " bytes read from chunk files"
                                        + " held open: JFR deleted its repository at the JVM's exit before"
                                        + " the stream read them)";
                                clean = tr.atBoundary();
                                break;
                            }
                            if (tr.atBoundary() && tr.chunks > 0 && ++emptyAtBoundary >= 2) {
                                // JFR's hook stopped the recording before the agent (no stop time
                                // of our own): its last chunk's header says whether it was the end
                                endReason = tr.lastChunkFinal
                                        ? "final chunk complete (the last chunk has JFR's final flag)"
                                        : "caught up after stop";
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
                    tr.feed(b);          // first: the sink reads the chunk starts in b from tr
                    sink.write(b);
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
                String gone = deletedFile(e);
                long saved = gone != null && pin != null && tr.atBoundary() ? pin.rescue(gone, tr, sink, blockSize) : -1;
                if (saved >= 0) {
                    endReason = "final chunk complete (" + saved + " bytes read from chunk files held open: JFR"
                            + " deleted its repository at the JVM's exit before the stream opened them)";
                    clean = tr.atBoundary();
                } else if (gone != null) {
                    endReason = "the recording's files were deleted before they were read (JFR removes its"
                            + " repository at the JVM's exit; " + describe(e) + "): the rest of the recording"
                            + " is lost";
                    clean = false;
                } else if (!connectionLoss(e)) {
                    throw e;
                } else {
                    endReason = "target connection lost (" + describe(e) + ")";
                    targetGone = true;
                    clean = tr.atBoundary();
                }
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

    // ------------------------------------------------------------------ sending: acks, TLS
    /** Where and how a live stream is sent: the pump's --connect and the agent's connect=. */
    static final class SendOptions {
        String host = "127.0.0.1";
        int port = -1;
        boolean ack = true;             // the hello line, ACK lines, the resend buffer
        long bufferMax = 64L << 20;     // bytes kept for a resend
        long retryMaxMs = 30000;
        long ackTimeoutMs = 30000;      // silence that gives a connection up, once it spoke; 0: never
        long connectTimeoutMs = 2000;
        boolean tls;                    // TLS with the JVM's default trust store
        String tlsCa, tlsCert, tlsKey;  // PEM files; tls-ca or tls-cert imply TLS
        boolean verifyHost = true;
        boolean verbose;                // a log line per connection attempt

        boolean useTls() {
            return tls || tlsCa != null || tlsCert != null;
        }

        String where() {
            return host + ":" + port;
        }

        void check() throws Usage {
            if ((tlsCert == null) != (tlsKey == null)) {
                throw new Usage("a client certificate needs both tls-cert and tls-key");
            }
        }

        static boolean bool(String k, String v) throws Usage {
            switch (v.toLowerCase(Locale.ROOT)) {
                case "on", "true", "yes", "1" -> {
                    return true;
                }
                case "off", "false", "no", "0" -> {
                    return false;
                }
                default -> throw new Usage("bad value for " + k + ": " + v + " (on or off)");
            }
        }
    }

    /**
     * JSSE from PEM files, in memory: the CAs to trust (CertificateFactory reads PEM), the
     * client certificate chain and its key (PKCS#8 "PRIVATE KEY", or PKCS#1 "RSA PRIVATE KEY" /
     * SEC1 "EC PRIVATE KEY", rewrapped as PKCS#8). TLS 1.2 and 1.3 only.
     */
    static final class Tls {
        static javax.net.ssl.SSLSocketFactory factory(SendOptions o) throws Fail {
            try {
                javax.net.ssl.TrustManagerFactory tmf = javax.net.ssl.TrustManagerFactory.getInstance(
                        javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
                if (o.tlsCa != null) {
                    java.security.KeyStore ts = java.security.KeyStore.getInstance("PKCS12");
                    ts.load(null, null);
                    int i = 0;
                    for (java.security.cert.Certificate c : certs(o.tlsCa)) {
                        ts.setCertificateEntry("ca" + i++, c);
                    }
                    tmf.init(ts);
                } else {
                    tmf.init((java.security.KeyStore) null);
                }
                javax.net.ssl.KeyManager[] km = null;
                if (o.tlsCert != null) {
                    java.util.List<java.security.cert.Certificate> chain = certs(o.tlsCert);
                    java.security.PrivateKey k = key(o.tlsKey);
                    java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
                    ks.load(null, null);
                    char[] pw = "in-memory".toCharArray();
                    ks.setKeyEntry("client", k, pw, chain.toArray(new java.security.cert.Certificate[0]));
                    javax.net.ssl.KeyManagerFactory kmf = javax.net.ssl.KeyManagerFactory.getInstance(
                            javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
                    kmf.init(ks, pw);
                    km = kmf.getKeyManagers();
                }
                javax.net.ssl.SSLContext ctx = javax.net.ssl.SSLContext.getInstance("TLS");
                ctx.init(km, tmf.getTrustManagers(), null);
                return ctx.getSocketFactory();
            } catch (Fail f) {
                throw f;
            } catch (Exception e) {
                throw new Fail("TLS set-up failed: " + describe(e), e);
            }
        }

        static java.util.List<java.security.cert.Certificate> certs(String file) throws Fail {
            try (java.io.InputStream in = Files.newInputStream(Path.of(file))) {
                java.util.List<java.security.cert.Certificate> l = new java.util.ArrayList<>(
                        java.security.cert.CertificateFactory.getInstance("X.509").generateCertificates(in));
                if (l.isEmpty()) {
                    throw new Fail(file + ": no PEM certificate");
                }
                return l;
            } catch (IOException | java.security.GeneralSecurityException e) {
                throw new Fail(file + ": cannot read certificates: " + describe(e), e);
            }
        }

        static java.security.PrivateKey key(String file) throws Fail {
            String text;
            try {
                text = Files.readString(Path.of(file), StandardCharsets.US_ASCII);
            } catch (IOException e) {
                throw new Fail(file + ": " + describe(e), e);
            }
            Matcher m = Pattern.compile("-----BEGIN ([A-Z ]*PRIVATE KEY)-----(.*?)-----END \\1-----",
                    Pattern.DOTALL).matcher(text);
            if (!m.find()) {
                throw new Fail(file + ": no PEM private key (BEGIN PRIVATE KEY)");
            }
            String type = m.group(1);
            String body = m.group(2);
            if (type.startsWith("ENCRYPTED") || body.contains("ENCRYPTED")) {
                throw new Fail(file + ": an encrypted key; decrypt it: openssl pkcs8 -topk8 -nocrypt -in "
                        + file + " -out KEY.pem");
            }
            byte[] der;
            try {
                der = java.util.Base64.getMimeDecoder().decode(body.trim());
            } catch (IllegalArgumentException e) {
                throw new Fail(file + ": bad base64 in the PEM key", e);
            }
            try {
                if (type.equals("RSA PRIVATE KEY")) {       // PKCS#1 inside PKCS#8
                    der = tlv(0x30, cat(new byte[] { 2, 1, 0 },
                            tlv(0x30, cat(hex("06092a864886f70d010101"), hex("0500"))), tlv(4, der)));
                } else if (type.equals("EC PRIVATE KEY")) { // SEC1: the curve is its [0] parameter
                    der = tlv(0x30, cat(new byte[] { 2, 1, 0 },
                            tlv(0x30, cat(hex("06072a8648ce3d0201"), sec1Curve(der))), tlv(4, der)));
                } else if (!type.equals("PRIVATE KEY")) {
                    throw new Fail(file + ": unsupported key type " + type
                            + " (convert: openssl pkcs8 -topk8 -nocrypt -in " + file + ")");
                }
            } catch (RuntimeException e) {
                throw new Fail(file + ": malformed " + type, e);
            }
            java.security.spec.PKCS8EncodedKeySpec spec = new java.security.spec.PKCS8EncodedKeySpec(der);
            for (String alg : new String[] { "RSA", "EC", "EdDSA", "RSASSA-PSS" }) {
                try {
                    return java.security.KeyFactory.getInstance(alg).generatePrivate(spec);
                } catch (java.security.GeneralSecurityException e) {
                    // the next algorithm
                }
            }
            throw new Fail(file + ": not an RSA, EC or EdDSA private key");
        }

        /** The curve OID (TLV) of an ECPrivateKey: SEQUENCE { INTEGER, OCTET STRING, [0] OID, ... }. */
        static byte[] sec1Curve(byte[] d) {
            int[] seq = readTlv(d, 0);
            for (int p = seq[1]; p < seq[1] + seq[2];) {
                int[] e = readTlv(d, p);
                if (e[0] == 0xA0) {
                    int[] oid = readTlv(d, e[1]);
                    return java.util.Arrays.copyOfRange(d, e[1], oid[1] + oid[2]);
                }
                p = e[1] + e[2];
            }
            throw new IllegalArgumentException("no curve parameter");
        }

        /** {tag, content offset, content length} of the DER element at p. */
        static int[] readTlv(byte[] d, int p) {
            int tag = d[p] & 0xFF;
            int len = d[p + 1] & 0xFF;
            int c = p + 2;
            if (len >= 0x80) {
                int n = len & 0x7F;
                if (n < 1 || n > 3) {
                    throw new IllegalArgumentException("bad DER length");
                }
                len = 0;
                for (int i = 0; i < n; i++) {
                    len = (len << 8) | (d[c++] & 0xFF);
                }
            }
            if (c + len > d.length) {
                throw new IllegalArgumentException("truncated DER");
            }
            return new int[] { tag, c, len };
        }

        static byte[] tlv(int tag, byte[] content) {
            int n = content.length;
            byte[] h = n < 0x80 ? new byte[] { (byte) tag, (byte) n }
                    : n < 0x100 ? new byte[] { (byte) tag, (byte) 0x81, (byte) n }
                    : n < 0x10000 ? new byte[] { (byte) tag, (byte) 0x82, (byte) (n >> 8), (byte) n }
                    : new byte[] { (byte) tag, (byte) 0x83, (byte) (n >> 16), (byte) (n >> 8), (byte) n };
            return cat(h, content);
        }

        static byte[] cat(byte[]... parts) {
            java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
            for (byte[] p : parts) {
                b.writeBytes(p);
            }
            return b.toByteArray();
        }

        static byte[] hex(String s) {
            return java.util.HexFormat.of().parseHex(s);
        }

        /** A connected socket: TCP, then (with a factory) the TLS handshake, TLS 1.2+ only. */
        static Socket open(SendOptions o, javax.net.ssl.SSLSocketFactory f, Socket[] raw) throws IOException {
            Socket s = new Socket();
            raw[0] = s;
            try {
                s.connect(new InetSocketAddress(o.host, o.port), (int) o.connectTimeoutMs);
                s.setTcpNoDelay(true);
                s.setKeepAlive(true);      // a peer gone without a word is found in the end
                if (f == null) {
                    return s;
                }
                javax.net.ssl.SSLSocket t = (javax.net.ssl.SSLSocket) f.createSocket(s, o.host, o.port, true);
                java.util.List<String> want = new java.util.ArrayList<>();
                for (String p : t.getSupportedProtocols()) {
                    if (p.equals("TLSv1.3") || p.equals("TLSv1.2")) {
                        want.add(p);
                    }
                }
                t.setEnabledProtocols(want.toArray(new String[0]));
                javax.net.ssl.SSLParameters sp = t.getSSLParameters();
                if (o.verifyHost) {
                    sp.setEndpointIdentificationAlgorithm("HTTPS");   // SAN IP or DNS = the host
                }
                t.setSSLParameters(sp);
                t.setSoTimeout((int) Math.max(5000, o.connectTimeoutMs));
                t.startHandshake();
                t.setSoTimeout(0);
                return t;
            } catch (IOException | RuntimeException e) {
                try {
                    s.close();
                } catch (IOException e2) {
                    // ignore
                }
                throw e;
            }
        }
    }

    /**
     * The live stream's sender (tools/jfrstream-agent and the pump's --connect): a TCP or TLS
     * connection that is made again, forever, with exponential backoff (0.5 s doubling up to
     * retry-max) and full jitter. With acks (doc/protocol: the hello line "JFRS/1 ack", the
     * listener's "ACK N" lines read on a daemon thread) it keeps every byte from the start of the
     * chunk holding the first unacknowledged byte, at most bufferMax bytes (past it whole chunks
     * are dropped, oldest first, counted), and a new connection starts with them. Without acks,
     * or when the current chunk was dropped, a loss inside a chunk drops the rest of that chunk
     * (a rotation is asked for, so that it is short). While no listener is connected nothing is
     * read: the recording's maxage/maxsize bound what the JVM's repository keeps meanwhile.
     * All buffer state is the streaming thread's; the ack reader only publishes numbers.
     */
    static final class AckedSender implements Sink {
        static final byte[] HELLO = "JFRS/1 ack\n".getBytes(StandardCharsets.US_ASCII);

        record Piece(byte[] b, int off, int len) { }

        static final class Chunk {
            final long start;         // stream offset of its header
            long size;
            final java.util.ArrayList<Piece> pieces = new java.util.ArrayList<>();

            Chunk(long start) {
                this.start = start;
            }
        }

        /** One connection; the reader thread sets acked and lost. */
        static final class Conn {
            final Socket raw, s;
            final OutputStream os;
            final long base;          // stream offset of this connection's byte 0
            volatile long acked = -1; // the last ACK N
            volatile String lost;     // why it ended, seen by the reader
            volatile boolean closing;

            Conn(Socket raw, Socket s, long base) throws IOException {
                this.raw = raw;
                this.s = s;
                this.base = base;
                this.os = s.getOutputStream();
            }
        }

        final SendOptions o;
        final FlightRecorderMXBean fr;     // for a rotation after a cut chunk
        javax.net.ssl.SSLSocketFactory tlsf;
        long tlsStamp;                 // the TLS files' modification times when tlsf was built
        final java.util.ArrayDeque<Chunk> kept = new java.util.ArrayDeque<>();
        Chunk cur;                // the kept chunk being read; null at a boundary or when dropped
        long keptBytes, pos, bytes, resent, droppedChunks, droppedBytes, skipped, skippedTotal;
        int connections;
        LiveTracker tr;
        volatile Conn conn;
        volatile boolean ackSeen;
        boolean skipping, everConnected, statsLogged;
        int failures;
        String lastFailure;
        long nextTry, lastDownLog;
        volatile boolean lastChance;   // set at exit: one more attempt, whatever the backoff
        volatile long exitDeadline;    // set at exit: the last moment to wait for the final ack

        AckedSender(SendOptions o, FlightRecorderMXBean fr) throws Fail {
            this.o = o;
            this.fr = fr;
            this.tlsf = o.useTls() ? Tls.factory(o) : null;
            this.tlsStamp = tlsStamp();
        }

        /** The sum of the TLS files' modification times (0 without TLS files). */
        long tlsStamp() {
            long t = 0;
            for (String f : new String[] {o.tlsCa, o.tlsCert, o.tlsKey}) {
                if (f != null) {
                    t += new java.io.File(f).lastModified();
                }
            }
            return t;
        }

        /** Before a connection: certificates renewed on disk (cert-manager, a
         * Vault agent) are read again, so that a long-running JVM keeps connecting;
         * files that cannot be used now keep the previous ones. */
        void reloadTls() {
            if (tlsf == null) {
                return;
            }
            long t = tlsStamp();
            if (t == tlsStamp) {
                return;
            }
            tlsStamp = t;
            try {
                tlsf = Tls.factory(o);
                log("TLS files changed: read them again");
            } catch (Fail e) {
                log("TLS files changed but cannot be used (" + e.getMessage() + "); keeping the previous ones");
            }
        }

        @Override
        public long bytes() {
            return bytes;
        }

        @Override
        public boolean ready(LiveTracker t) {
            tr = t;
            Conn c = conn;
            if (c != null) {
                if (c.lost == null) {
                    freeAcked(c);
                    return true;
                }
                lose(c, c.lost);
            }
            if (skipping && t.atBoundary()) {
                skipping = false;
                if (skipped > 0) {
                    log("dropped " + skipped + " bytes of an interrupted chunk");
                    skippedTotal += skipped;
                    skipped = 0;
                }
            }
            if (!t.atBoundary() && cur == null) {
                skipping = true;      // not kept: read the rest of the chunk, and drop it
                return true;
            }
            long now = System.nanoTime();
            if (now < nextTry) {
                if (!lastChance) {
                    return false;
                }
                lastChance = false;
            }
            return connect(now);
        }

        boolean connect(long now) {
            Socket[] raw = new Socket[1];
            Conn c;
            reloadTls();
            try {
                Socket s = Tls.open(o, tlsf, raw);
                c = new Conn(raw[0], s, kept.isEmpty() ? pos : kept.peekFirst().start);
            } catch (javax.net.ssl.SSLException e) {
                failed(now, "TLS handshake with " + o.where() + " failed: " + describe(e));
                return false;
            } catch (IOException | RuntimeException e) {
                failed(now, "listener " + o.where() + " not reachable (" + describe(e) + ")");
                return false;
            }
            long again = pos - c.base;
            try {
                if (o.ack) {
                    c.os.write(HELLO);
                    Thread r = new Thread(() -> readAcks(c), "jfrstream-acks");
                    r.setDaemon(true);
                    r.start();
                    for (Chunk k : kept) {
                        for (Piece p : k.pieces) {
                            c.os.write(p.b, p.off, p.len);
                        }
                    }
                }
            } catch (IOException e) {
                close(c);
                failed(now, "connection to " + o.where() + " lost while resending (" + describe(e) + ")"
                        + refusedHint(c));
                return false;
            }
            resent += again;
            connections++;
            conn = c;
            String tls = c.s instanceof javax.net.ssl.SSLSocket t
                    ? " (" + t.getSession().getProtocol() + ", " + t.getSession().getCipherSuite() + ")" : "";
            log((everConnected ? "reconnected to " : "connected to ") + o.where() + tls
                    + (failures > 0 ? " after " + failures + (failures == 1 ? " failed attempt" : " failed attempts") : "")
                    + (again > 0 ? "; resending " + again + " bytes from the start of chunk at stream offset "
                            + c.base : ""));
            everConnected = true;
            failures = 0;
            lastFailure = null;
            return true;
        }

        /** A failed attempt: the next one after a random wait in [0, min(retry-max, 0.5 s * 2^n)]. */
        void failed(long now, String why) {
            failures++;
            long cap = Math.min(o.retryMaxMs, 500L << Math.min(failures - 1, 20));
            long wait = java.util.concurrent.ThreadLocalRandom.current().nextLong(cap + 1);
            nextTry = now + wait * 1_000_000L;
            if (!why.equals(lastFailure)) {
                log(why + "; retrying with backoff (0.5 s doubling up to " + o.retryMaxMs
                        + " ms, jittered)" + keptText());
                lastFailure = why;
                lastDownLog = now;
            } else if (now - lastDownLog > 60_000_000_000L) {
                log("still down after " + failures + " attempts: " + why + keptText());
                lastDownLog = now;
            }
            if (o.verbose) {
                log("attempt " + failures + " failed; next attempt in " + wait + " ms (backoff cap " + cap + " ms)");
            }
        }

        String keptText() {
            return kept.isEmpty() ? "" : "; keeping " + keptBytes + " bytes of " + kept.size()
                    + (kept.size() == 1 ? " chunk" : " chunks");
        }

        /** With TLS 1.3 a listener checks the client certificate after our handshake has
         * ended, so its refusal shows here only as a connection closed before any ack. */
        String refusedHint(Conn c) {
            if (!o.ack || c.acked >= 0) {
                return "";
            }
            return tlsf != null
                    ? "; closed before any acknowledgement: the listener may refuse this client"
                      + " certificate (its log says 'refused: ...')"
                    : "; closed before any acknowledgement (if this repeats: a receiver that does"
                      + " not speak JFRS/1, such as an older jfrstream, ends the connection at the"
                      + " hello line; use ack=off, --no-ack, for it)";
        }

        void lose(Conn c, String why) {
            close(c);
            conn = null;
            long now = System.nanoTime();
            failures = 0;
            failed(now, "connection to " + o.where() + " lost (" + why + ")" + refusedHint(c));
            if (cur == null && tr != null && !tr.atBoundary()) {
                skipping = true;
                rotate();
            }
        }

        /** The ack reader: "ACK N" lines; anything else is logged once and ignored. */
        void readAcks(Conn c) {
            byte[] buf = new byte[512];
            byte[] line = new byte[64];
            int n = 0;
            boolean bad = false, timed = false, silent = false;
            String why;
            try {
                java.io.InputStream in = c.s.getInputStream();
                while (true) {
                    int r;
                    try {
                        r = in.read(buf);
                    } catch (java.net.SocketTimeoutException e) {
                        why = "the listener said nothing for " + o.ackTimeoutMs / 1000.0
                                + " s (ack-timeout; it writes at least every 5 s): a silent network cut?";
                        silent = true;
                        break;
                    }
                    if (r < 0) {
                        why = "the listener closed the connection";
                        break;
                    }
                    for (int i = 0; i < r; i++) {
                        byte x = buf[i];
                        if (x != '\n') {
                            if (n < line.length) {
                                line[n] = x;
                            }
                            n++;
                            continue;
                        }
                        long v = n <= line.length ? ackValue(line, n) : -1;
                        if (v >= 0) {
                            ackSeen = true;
                            if (!timed && o.ackTimeoutMs > 0) {
                                // it speaks acks, and so at least every 5 s (doc/protocol.md)
                                c.s.setSoTimeout((int) Math.min(Integer.MAX_VALUE, o.ackTimeoutMs));
                                timed = true;
                            }
                            synchronized (c) {
                                if (v > c.acked) {
                                    c.acked = v;
                                    c.notifyAll();
                                }
                            }
                        } else if (!bad) {
                            bad = true;
                            log("ignoring a line from the listener that is not \"ACK N\" ("
                                    + n + " bytes)");
                        }
                        n = 0;
                    }
                }
            } catch (Throwable e) {
                why = describe(e);
            }
            synchronized (c) {
                if (!c.closing) {
                    c.lost = why;
                }
                c.notifyAll();
            }
            if (silent) {
                try {
                    c.raw.close();   // a write blocked on the dead connection returns
                } catch (IOException x) {
                    // closed already
                }
            }
        }

        static long ackValue(byte[] l, int n) {
            if (n < 5 || n > 24 || l[0] != 'A' || l[1] != 'C' || l[2] != 'K' || l[3] != ' ') {
                return -1;
            }
            long v = 0;
            for (int i = 4; i < n; i++) {
                if (l[i] < '0' || l[i] > '9') {
                    return -1;
                }
                v = v * 10 + (l[i] - '0');
            }
            return v;
        }

        @Override
        public void write(byte[] b) {
            long base = pos;
            pos += b.length;
            if (o.ack) {
                keep(b, base);
            }
            Conn c = conn;
            if (skipping || c == null) {
                if (cur == null) {
                    skipped += b.length;
                }
                return;
            }
            try {
                c.os.write(b);
                bytes += b.length;
            } catch (IOException e) {
                if (cur == null && tr != null && !tr.atBoundary()) {
                    skipped += b.length;
                }
                String lost = c.lost;    // the ack reader's reason comes first (ack-timeout)
                lose(c, lost != null ? lost : describe(e));
                return;
            }
            if (o.ack) {
                freeAcked(c);
                bound();
            }
        }

        /** Adds b (stream offset base) to the kept chunks, split where chunks start in it. */
        void keep(byte[] b, long base) {
            int from = 0;
            for (int i = 0; tr != null && i < tr.nStarts; i++) {
                long at = tr.starts[i] - base;
                if (at < 0 || at >= b.length) {
                    continue;
                }
                if (cur != null && at > from) {
                    add(b, from, (int) at - from);
                }
                cur = new Chunk(base + at);
                kept.addLast(cur);
                from = (int) at;
            }
            if (cur != null && from < b.length) {
                add(b, from, b.length - from);
            }
            if (tr != null && tr.atBoundary()) {
                cur = null;          // complete: freed once acknowledged
            }
            if (conn == null) {
                bound();
            }
        }

        void add(byte[] b, int off, int len) {
            cur.pieces.add(new Piece(b, off, len));
            cur.size += len;
            keptBytes += len;
        }

        /** Frees the complete chunks wholly below the ack. */
        void freeAcked(Conn c) {
            long a = c.acked;
            if (a < 0) {
                return;
            }
            a = Math.min(a + c.base, pos);   // a listener cannot acknowledge more than was sent
            while (!kept.isEmpty()) {
                Chunk k = kept.peekFirst();
                if (k == cur || k.start + k.size > a) {
                    break;
                }
                kept.pollFirst();
                keptBytes -= k.size;
            }
        }

        /** Past bufferMax: drops whole chunks, the oldest first (the current one last). */
        void bound() {
            while (keptBytes > o.bufferMax && !kept.isEmpty()) {
                Chunk k = kept.pollFirst();
                keptBytes -= k.size;
                droppedChunks++;
                droppedBytes += k.size;
                if (k == cur) {
                    cur = null;      // a loss inside it now cuts it
                }
                if (ackSeen) {
                    log("resend buffer full (buffer=" + o.bufferMax + "): dropped the unacknowledged chunk at"
                            + " stream offset " + k.start + " (" + k.size + " bytes); " + droppedChunks
                            + " chunks dropped in all");
                } else if (droppedChunks == 1) {
                    log("the listener has acknowledged nothing (an older jfrstream or a plain socket?): keeping"
                            + " only the newest " + o.bufferMax + " bytes for a resend, older chunks are dropped"
                            + " and counted without a log line");
                }
            }
        }

        /** A new chunk soon: start and stop an empty recording. */
        void rotate() {
            if (fr == null) {
                return;
            }
            try {
                long id = fr.newRecording();
                try {
                    fr.startRecording(id);
                    fr.stopRecording(id);
                } finally {
                    fr.closeRecording(id);
                }
            } catch (Throwable e) {
                // not essential: the chunk ends at its own time
            }
        }

        /**
         * The stream is over: with acks, wait until the listener acknowledged every byte of this
         * connection, until deadline (System.nanoTime) at most; then close and log the counts.
         * Plain TCP is half-closed first: the listener acks at the end of its input.
         */
        void finish(long deadline) {
            Conn c = conn;
            if (c != null && o.ack && c.lost == null) {
                long want = pos - c.base;
                if (!(c.s instanceof javax.net.ssl.SSLSocket)) {
                    try {
                        c.s.shutdownOutput();
                    } catch (IOException e) {
                        // the reader sees the end
                    }
                }
                synchronized (c) {
                    while (c.acked < want && c.lost == null) {
                        long left = (deadline - System.nanoTime()) / 1_000_000L;
                        if (left <= 0) {
                            break;
                        }
                        try {
                            c.wait(left);
                        } catch (InterruptedException e) {
                            break;
                        }
                    }
                }
                if (c.acked >= want) {
                    log("the listener acknowledged all " + want + " bytes of the connection");
                } else {
                    log("the final acknowledgement did not come (" + Math.max(0, c.acked) + " of " + want
                            + " bytes acknowledged" + (c.lost != null ? "; " + c.lost : ", drain= is over") + ")");
                }
            }
            close();
        }

        String stats() {
            return String.format(Locale.ROOT, "sent %d bytes on %d connections, %d resent, %d chunks (%d bytes) "
                    + "dropped from the resend buffer, %d bytes of cut chunks dropped, %d bytes kept at the end",
                    bytes, connections, resent, droppedChunks, droppedBytes, skippedTotal + skipped, keptBytes);
        }

        synchronized void close() {
            Conn c = conn;
            conn = null;
            if (c != null) {
                close(c);
            }
            if (!statsLogged && connections > 0) {
                statsLogged = true;
                log(stats());
            }
        }

        /** From another thread (the exit hook): unblock a write that waits for a listener that does not read. */
        void closeNow() {
            Conn c = conn;
            if (c != null) {
                c.closing = true;
                try {
                    c.raw.close();
                } catch (IOException e) {
                    // ignore
                }
            }
        }

        static void close(Conn c) {
            synchronized (c) {
                c.closing = true;
            }
            try {
                if (!(c.s instanceof javax.net.ssl.SSLSocket)) {
                    c.s.shutdownOutput();
                }
            } catch (IOException e) {
                // ignore
            }
            try {
                c.s.close();
            } catch (IOException e) {
                // ignore
            }
            try {
                c.raw.close();
            } catch (IOException e) {
                // ignore
            }
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
        // stream offsets of the chunk headers that begin in the block fed last (AckedSender)
        long[] starts = new long[4];
        int nStarts;

        boolean atBoundary() {
            return error != null ? false : wantHeader && hdrFill == 0;
        }

        void feed(byte[] b) {
            int i = 0, n = b.length;
            nStarts = 0;
            while (i < n) {
                if (error != null) {
                    total += n - i;
                    return;
                }
                if (wantHeader) {
                    if (hdrFill == 0) {
                        if (nStarts == starts.length) {
                            starts = java.util.Arrays.copyOf(starts, nStarts * 2);
                        }
                        starts[nStarts++] = total;
                    }
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
