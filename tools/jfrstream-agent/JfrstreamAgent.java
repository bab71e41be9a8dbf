/*
 * JfrstreamAgent.java — a Java agent that streams the JVM's own JFR recording, live,
 * to `jfrstream listen` over TCP: the pump's streaming core (tools/jfr-pump/JfrPump.java,
 * compiled into the same jar) on the platform FlightRecorderMXBean, in process.
 *
 *   java -javaagent:jfrstream-agent.jar=connect=HOST:PORT[,settings=profile|default|FILE.jfc]
 *        [,maxage=15m][,maxsize=250m][,name=NAME][,drain=5s][,quiet] -jar app.jar
 *   JAVA_TOOL_OPTIONS=-javaagent:jfrstream-agent.jar=connect=HOST:PORT java -jar app.jar
 *   java -jar jfrstream-agent.jar PID connect=HOST:PORT[,...]      (into a running JVM)
 *
 * Everything runs on daemon threads; nothing is thrown into the application. See
 * tools/jfrstream-agent/README.md.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */

import com.sun.tools.attach.VirtualMachine;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.instrument.Instrumentation;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

import jdk.management.jfr.FlightRecorderMXBean;

public final class JfrstreamAgent {

    static final String USAGE =
        "usage: java -javaagent:jfrstream-agent.jar=connect=HOST:PORT[,settings=profile|default|FILE.jfc]\n"
      + "            [,maxage=15m][,maxsize=250m][,name=NAME][,drain=5s][,quiet] ...\n"
      + "       java -jar jfrstream-agent.jar PID connect=HOST:PORT[,...]\n";

    /** The agent's options: KEY=VALUE pairs separated by commas. */
    static final class Config {
        String host;
        int port = -1;
        String settings = "default";
        long maxAgeMs = 0;                 // 0: no limit
        long maxSize = 250L * 1024 * 1024; // bytes of the repository kept for the recording
        String name = "jfrstream-agent";
        long drainMs = 5000;
        boolean quiet;
        int blockSize = 262144;
        long pollMs = 50;              // JFR flushes once a second: 50 ms adds little latency
        long retryMaxMs = 30000;

        static Config parse(String args) throws JfrPump.Usage {
            Config c = new Config();
            if (args != null) {
                for (String kv : args.split(",")) {
                    kv = kv.trim();
                    if (kv.isEmpty()) {
                        continue;
                    }
                    int eq = kv.indexOf('=');
                    String k = eq < 0 ? kv : kv.substring(0, eq);
                    String v = eq < 0 ? null : kv.substring(eq + 1);
                    if (k.equals("quiet")) {
                        c.quiet = v == null || !v.equals("false");
                        continue;
                    }
                    if (v == null) {
                        throw new JfrPump.Usage("missing value for " + k);
                    }
                    switch (k) {
                        case "connect" -> {
                            int i = v.lastIndexOf(':');
                            c.host = i > 0 ? v.substring(0, i) : "127.0.0.1";
                            c.port = (int) JfrPump.Options.number(k, v.substring(i + 1), 1);
                            if (c.port > 65535) {
                                throw new JfrPump.Usage("bad port in connect=" + v);
                            }
                        }
                        case "settings" -> c.settings = v;
                        case "maxage" -> c.maxAgeMs = JfrPump.Options.millis(k, v);
                        case "maxsize" -> c.maxSize = size(k, v);
                        case "name" -> c.name = v;
                        case "drain" -> c.drainMs = JfrPump.Options.millis(k, v);
                        case "block-size" -> c.blockSize = (int) Math.min(1 << 24, JfrPump.Options.number(k, v, 1));
                        case "poll-ms" -> c.pollMs = JfrPump.Options.number(k, v, 1);
                        case "retry-max" -> c.retryMaxMs = Math.max(100, JfrPump.Options.millis(k, v));
                        default -> throw new JfrPump.Usage("unknown option " + k);
                    }
                }
            }
            if (c.port < 0) {
                throw new JfrPump.Usage("connect=HOST:PORT is required");
            }
            return c;
        }

        /** 250m, 1g, 64k, or bytes. */
        static long size(String k, String v) throws JfrPump.Usage {
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
            return JfrPump.Options.number(k, t, 0) * mul;
        }
    }

    // ------------------------------------------------------------------ entry points

    public static void premain(String args, Instrumentation inst) {
        start(args);
    }

    public static void premain(String args) {
        start(args);
    }

    public static void agentmain(String args, Instrumentation inst) {
        start(args);
    }

    public static void agentmain(String args) {
        start(args);
    }

    /** Never throws: a bad option or any failure is one line on stderr. */
    static void start(String args) {
        try {
            Config c = Config.parse(args);
            JfrPump.prefix = "jfrstream-agent: ";
            JfrPump.quiet = c.quiet;
            JfrPump.quietErrors = c.quiet;
            Thread t = new Thread(() -> new JfrstreamAgent(c).run(), "jfrstream-agent");
            t.setDaemon(true);
            t.start();
        } catch (JfrPump.Usage u) {
            if (args == null || !args.matches("(^|.*,)\\s*quiet\\s*(,.*|$)")) {
                System.err.println("jfrstream-agent: " + u.getMessage() + "; the agent is not started");
            }
        } catch (Throwable e) {
            System.err.println("jfrstream-agent: " + JfrPump.describe(e) + "; the agent is not started");
        }
    }

    /** java -jar jfrstream-agent.jar PID OPTIONS: load this jar as an agent into JVM PID. */
    public static void main(String[] argv) {
        if (argv.length == 1 && (argv[0].equals("-h") || argv[0].equals("--help"))) {
            System.out.print(USAGE);
            System.exit(0);
        }
        if (argv.length != 2) {
            System.err.print("jfrstream-agent: give PID and OPTIONS\n" + USAGE);
            System.exit(2);
        }
        String opts = argv[1];
        try {
            Config.parse(opts);
        } catch (JfrPump.Usage u) {
            System.err.print("jfrstream-agent: " + u.getMessage() + "\n" + USAGE);
            System.exit(2);
        }
        try {
            String jar = new File(JfrstreamAgent.class.getProtectionDomain().getCodeSource()
                    .getLocation().toURI()).getPath();
            VirtualMachine vm = VirtualMachine.attach(argv[0]);
            try {
                vm.loadAgent(jar, opts);
            } finally {
                vm.detach();
            }
            System.err.println("jfrstream-agent: loaded into pid " + argv[0]);
        } catch (Exception e) {
            System.err.println("jfrstream-agent: loading into pid " + argv[0] + " failed: " + JfrPump.describe(e));
            System.exit(1);
        }
    }

    // ------------------------------------------------------------------ the agent

    final Config c;
    volatile boolean stop;
    volatile Thread worker;
    volatile ReconnectingSocket sink;

    JfrstreamAgent(Config c) {
        this.c = c;
    }

    void run() {
        worker = Thread.currentThread();
        FlightRecorderMXBean fr = null;
        long recId = -1;
        boolean closed = false;
        try {
            fr = ManagementFactory.getPlatformMXBean(FlightRecorderMXBean.class);
            recId = startRecording(fr);
            try {
                Thread hook = new Thread(this::onExit, "jfrstream-agent-exit");
                hook.setDaemon(true);
                Runtime.getRuntime().addShutdownHook(hook);
            } catch (IllegalStateException e) {
                JfrPump.log("the JVM is exiting; not streaming");
                return;
            }
            long setupCpu = threadCpu();
            sink = new ReconnectingSocket(c, fr);
            JfrPump.LiveStreamer ls = new JfrPump.LiveStreamer(fr, recId, true, c.blockSize, c.pollMs,
                    c.drainMs, () -> stop, sink);
            int rc = ls.run();
            closed = ls.recClosed;
            long cpu = threadCpu();
            JfrPump.log((rc == 0 ? "done" : "ended with an error") + (cpu < 0 ? "" : String.format(Locale.ROOT,
                    "; the agent's thread used %.0f ms of CPU: %.0f ms to start the recording, %.0f ms streaming",
                    cpu / 1e6, setupCpu / 1e6, (cpu - setupCpu) / 1e6)));
        } catch (Throwable e) {
            JfrPump.err("error: " + JfrPump.describe(e));
        } finally {
            if (sink != null) {
                sink.close();
            }
            if (fr != null && recId >= 0 && !closed) {
                try {
                    fr.closeRecording(recId);
                } catch (Throwable e) {
                    // already closed, or JFR shut down
                }
            }
        }
    }

    /** This thread's CPU time in ns, -1 when the JVM does not measure it. */
    static long threadCpu() {
        try {
            return ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
        } catch (Throwable e) {
            return -1;
        }
    }

    long startRecording(FlightRecorderMXBean fr) throws Exception {
        long id = fr.newRecording();
        Map<String, String> ro = new HashMap<>();
        ro.put("name", c.name);
        ro.put("disk", "true");
        ro.put("dumpOnExit", "false");
        if (c.maxAgeMs > 0) {
            ro.put("maxAge", c.maxAgeMs + " ms");
        }
        ro.put("maxSize", Long.toString(c.maxSize));
        try {
            fr.setRecordingOptions(id, ro);
            boolean predefined = !c.settings.endsWith(".jfc") && !c.settings.contains("/");
            if (predefined) {
                fr.setPredefinedConfiguration(id, c.settings);
            } else {
                fr.setConfiguration(id, Files.readString(Path.of(c.settings), StandardCharsets.UTF_8));
            }
            fr.startRecording(id);
        } catch (Exception e) {
            try {
                fr.closeRecording(id);
            } catch (Exception e2) {
                // ignore
            }
            throw e;
        }
        JfrPump.log("started recording " + id + " (settings " + c.settings + "), streaming to "
                + c.host + ":" + c.port);
        return id;
    }

    /** The shutdown hook: stop, let the worker drain the final chunk, wait at most drain= + 1 s. */
    void onExit() {
        try {
            awaitDrain();
        } catch (Throwable e) {
            JfrPump.err("at exit: " + JfrPump.describe(e));
        }
    }

    void awaitDrain() {
        ReconnectingSocket s0 = sink;
        if (s0 != null) {
            s0.lastChance = true;
        }
        stop = true;
        Thread w = worker;
        if (w == null) {
            return;
        }
        try {
            w.join(c.drainMs + 1000);
        } catch (InterruptedException e) {
            // fall through
        }
        if (w.isAlive()) {
            JfrPump.log("drain did not end within " + (c.drainMs + 1000) + " ms; closing the connection");
            ReconnectingSocket s = sink;
            if (s != null) {
                s.close();
            }
        }
    }

    /**
     * The agent's Sink: a TCP connection to the listener that is made again, with a backoff
     * (0.5 s doubling up to retry-max=), when it is down or goes away. A connection always
     * starts at a chunk header: after a loss the rest of the current chunk is read and
     * dropped (a chunk rotation is asked for, so that this is short); while no listener is
     * connected at a chunk boundary nothing is read, and the recording's maxage/maxsize bound
     * what the repository keeps meanwhile.
     */
    static final class ReconnectingSocket implements JfrPump.Sink {
        final Config c;
        final FlightRecorderMXBean fr;
        volatile Socket socket;
        OutputStream os;
        boolean skipping;
        boolean everConnected;
        long bytes, dropped;
        long backoffMs = 500;
        long nextTry;
        int failures;
        volatile boolean lastChance;   // set at exit: one more attempt, whatever the backoff

        ReconnectingSocket(Config c, FlightRecorderMXBean fr) {
            this.c = c;
            this.fr = fr;
        }

        @Override
        public long bytes() {
            return bytes;
        }

        @Override
        public boolean ready(JfrPump.LiveTracker tr) {
            if (skipping && tr.atBoundary()) {
                skipping = false;
                if (dropped > 0) {
                    JfrPump.log("dropped " + dropped + " bytes of an interrupted chunk");
                    dropped = 0;
                }
            }
            if (socket != null) {
                return true;
            }
            if (!tr.atBoundary()) {
                skipping = true;
                return true;          // read the rest of the chunk, and drop it
            }
            long now = System.nanoTime();
            if (now < nextTry) {
                if (!lastChance) {
                    return false;
                }
                lastChance = false;
            }
            try {
                Socket s = new Socket();
                s.connect(new InetSocketAddress(c.host, c.port), 2000);
                s.setTcpNoDelay(true);
                os = s.getOutputStream();
                socket = s;
                JfrPump.log((everConnected ? "reconnected to " : "connected to ") + c.host + ":" + c.port
                        + (failures > 0 ? " after " + failures + " failed attempts" : ""));
                everConnected = true;
                failures = 0;
                backoffMs = 500;
                return true;
            } catch (IOException e) {
                if (failures++ == 0) {
                    JfrPump.log("listener " + c.host + ":" + c.port + " not reachable (" + e.getMessage()
                            + "); retrying every " + backoffMs + " ms up to " + c.retryMaxMs + " ms");
                }
                nextTry = now + backoffMs * 1_000_000L;
                backoffMs = Math.min(c.retryMaxMs, backoffMs * 2);
                return false;
            }
        }

        @Override
        public void write(byte[] b) {
            if (skipping || socket == null) {
                dropped += b.length;
                return;
            }
            try {
                os.write(b);
                bytes += b.length;
            } catch (IOException e) {
                JfrPump.log("connection to " + c.host + ":" + c.port + " lost (" + e.getMessage()
                        + "); reconnecting");
                close();
                skipping = true;
                dropped += b.length;
                nextTry = System.nanoTime() + backoffMs * 1_000_000L;
                rotate();
            }
        }

        /** A new chunk soon: start and stop an empty recording. */
        void rotate() {
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

        synchronized void close() {
            Socket s = socket;
            socket = null;
            if (s != null) {
                try {
                    s.shutdownOutput();
                } catch (IOException e) {
                    // ignore
                }
                try {
                    s.close();
                } catch (IOException e) {
                    // ignore
                }
            }
        }
    }
}
