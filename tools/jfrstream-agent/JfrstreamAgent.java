/*
 * JfrstreamAgent.java — a Java agent that streams the JVM's own JFR recording, live,
 * to `jfrstream listen` over TCP: the pump's streaming core (tools/jfr-pump/JfrPump.java,
 * compiled into the same jar) on the platform FlightRecorderMXBean, in process.
 *
 *   java -javaagent:jfrstream-agent.jar=connect=HOST:PORT[,settings=profile|default|FILE.jfc]
 *        [,maxage=15m][,maxsize=250m][,name=NAME][,drain=5s][,quiet][,ack=on|off][,buffer=64m]
 *        [,tls=on][,tls-ca=FILE][,tls-cert=FILE,tls-key=FILE][,tls-verify-host=false] -jar app.jar
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
import java.lang.instrument.Instrumentation;
import java.lang.management.ManagementFactory;
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
      + "            [,maxage=15m][,maxsize=250m][,name=NAME][,drain=5s][,quiet]\n"
      + "            [,ack=on|off][,buffer=64m][,retry-max=30s][,ack-timeout=30s][,verbose]\n"
      + "            [,tls=on][,tls-ca=FILE][,tls-cert=FILE,tls-key=FILE][,tls-verify-host=false] ...\n"
      + "       java -jar jfrstream-agent.jar PID connect=HOST:PORT[,...]\n";

    /** The agent's options: KEY=VALUE pairs separated by commas. */
    static final class Config {
        final JfrPump.SendOptions send = new JfrPump.SendOptions();
        String settings = "default";
        long maxAgeMs = 0;                 // 0: no limit
        long maxSize = 250L * 1024 * 1024; // bytes of the repository kept for the recording
        String name = "jfrstream-agent";
        long drainMs = 5000;
        boolean quiet;
        int blockSize = 262144;
        long pollMs = 50;              // JFR flushes once a second: 50 ms adds little latency

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
                    if (k.equals("verbose")) {
                        c.send.verbose = v == null || !v.equals("false");
                        continue;
                    }
                    if (v == null) {
                        throw new JfrPump.Usage("missing value for " + k);
                    }
                    switch (k) {
                        case "connect" -> {
                            int i = v.lastIndexOf(':');
                            c.send.host = i > 0 ? v.substring(0, i) : "127.0.0.1";
                            c.send.port = (int) JfrPump.Options.number(k, v.substring(i + 1), 1);
                            if (c.send.port > 65535) {
                                throw new JfrPump.Usage("bad port in connect=" + v);
                            }
                        }
                        case "settings" -> c.settings = v;
                        case "maxage" -> c.maxAgeMs = JfrPump.Options.millis(k, v);
                        case "maxsize" -> c.maxSize = JfrPump.Options.size(k, v);
                        case "name" -> c.name = v;
                        case "drain" -> c.drainMs = JfrPump.Options.millis(k, v);
                        case "block-size" -> c.blockSize = (int) Math.min(1 << 24, JfrPump.Options.number(k, v, 1));
                        case "poll-ms" -> c.pollMs = JfrPump.Options.number(k, v, 1);
                        case "retry-max" -> c.send.retryMaxMs = Math.max(100, JfrPump.Options.millis(k, v));
                        case "ack-timeout" -> c.send.ackTimeoutMs = JfrPump.Options.millis(k, v);
                        case "ack" -> c.send.ack = JfrPump.SendOptions.bool(k, v);
                        case "buffer" -> c.send.bufferMax = JfrPump.Options.size(k, v);
                        case "tls" -> c.send.tls = JfrPump.SendOptions.bool(k, v);
                        case "tls-ca" -> c.send.tlsCa = v;
                        case "tls-cert" -> c.send.tlsCert = v;
                        case "tls-key" -> c.send.tlsKey = v;
                        case "tls-verify-host" -> c.send.verifyHost = JfrPump.SendOptions.bool(k, v);
                        default -> throw new JfrPump.Usage("unknown option " + k);
                    }
                }
            }
            if (c.send.port < 0) {
                throw new JfrPump.Usage("connect=HOST:PORT is required");
            }
            c.send.check();
            return c;
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
    volatile JfrPump.AckedSender sink;
    final JfrPump.RepositoryPin pin = new JfrPump.RepositoryPin();   // the final chunks at exit

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
            JfrPump.AckedSender s = new JfrPump.AckedSender(c.send, fr);   // reads the PEM files
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
            sink = s;
            JfrPump.LiveStreamer ls = new JfrPump.LiveStreamer(fr, recId, true, c.blockSize, c.pollMs,
                    c.drainMs, () -> stop, sink);
            if (pin.start()) {
                ls.pin = pin;
            }
            int rc = ls.run();
            closed = ls.recClosed;
            long dl = s.exitDeadline;
            s.finish(dl != 0 ? dl : System.nanoTime() + c.drainMs * 1_000_000L);
            long cpu = threadCpu();
            JfrPump.log((rc == 0 ? "done" : "ended with an error") + (cpu < 0 ? "" : String.format(Locale.ROOT,
                    "; the agent's thread used %.0f ms of CPU: %.0f ms to start the recording, %.0f ms streaming",
                    cpu / 1e6, setupCpu / 1e6, (cpu - setupCpu) / 1e6)));
        } catch (JfrPump.Fail e) {
            JfrPump.err(e.getMessage() + "; the agent is not streaming");
        } catch (Throwable e) {
            JfrPump.err("error: " + JfrPump.describe(e));
        } finally {
            pin.close();
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
                + c.send.where() + (c.send.useTls() ? " over TLS" : "")
                + (c.send.ack ? " with acks (buffer " + c.send.bufferMax + " bytes)" : " without acks"));
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
        JfrPump.AckedSender s0 = sink;
        if (s0 != null) {
            s0.exitDeadline = System.nanoTime() + c.drainMs * 1_000_000L;
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
            JfrPump.AckedSender s = sink;
            if (s != null) {
                s.closeNow();
            }
        }
    }
}
