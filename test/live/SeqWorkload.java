/*
 * SeqWorkload.java — emits the custom JFR event jfrstream.Seq with a running
 * sequence number (0, 1, 2, ...) and its commit time (epoch ns), at a given
 * rate for a given time, for the live end-to-end tests (test/live/).
 *
 *   java test/live/SeqWorkload.java [--rate N] [--duration S] [--wait-enabled S]
 *        [--wait-recordings N] [--linger S] [--threads N]
 *
 *   --rate N            events per second (default 1000), spread evenly
 *   --duration S        seconds of emission (default 5; fractions allowed)
 *   --wait-enabled S    first wait (at most S s) until a running recording
 *                       enables jfrstream.Seq (e.g. the pump's)
 *   --wait-recordings N first wait until at least N recordings run
 *   --linger S          stay alive S seconds after the emission (so that a
 *                       pump can drain, or so that the last chunk lives long
 *                       enough for a tail to open it), then exit normally
 *   --rotate S          during the emission, start and stop a small recording
 *                       every S seconds: the JVM starts a new chunk each time
 *   --threads N         N extra threads computing and allocating a little
 *                       (default 1), so that the JDK events have something to record
 *
 * Prints on stdout: "pid=PID" at start (flushed), "start=EPOCH_NS" when the
 * emission starts, then "last=SEQ" (the last sequence number committed,
 * -1 if none) and "count=N" when it ends. Exit status 3 when a wait timed out.
 *
 * Recorded either by its own recording (-XX:StartFlightRecording) or by a
 * recording that tools/jfr-pump starts. Single-file program, JDK 17+.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Recording;
import jdk.jfr.RecordingState;
import jdk.jfr.StackTrace;

public final class SeqWorkload {

    @Name("jfrstream.Seq")
    @Label("Sequence")
    @Category("jfrstream")
    @Description("A running number and its commit time, for loss and latency checks")
    @StackTrace(false)
    static final class Seq extends Event {
        @Label("Sequence number")
        long seq;
        @Label("Commit time (epoch ns)")
        long commitNanos;
    }

    static volatile boolean running = true;
    static volatile boolean emitting = true;
    static volatile long sink;

    static long epochNanos() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    static double seconds(String s) {
        return Double.parseDouble(s.endsWith("s") ? s.substring(0, s.length() - 1) : s);
    }

    static int runningRecordings() {
        if (!FlightRecorder.isInitialized()) {
            return 0;
        }
        int n = 0;
        for (Recording r : FlightRecorder.getFlightRecorder().getRecordings()) {
            if (r.getState() == RecordingState.RUNNING) {
                n++;
            }
        }
        return n;
    }

    public static void main(String[] args) throws Exception {
        double rate = 1000, duration = 5, waitEnabled = -1, linger = 0, rotate = 0;
        int waitRecordings = 0, threads = 1;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (a) {
                case "--rate": rate = Double.parseDouble(v); i++; break;
                case "--duration": duration = seconds(v); i++; break;
                case "--wait-enabled": waitEnabled = seconds(v); i++; break;
                case "--wait-recordings": waitRecordings = Integer.parseInt(v); i++; break;
                case "--linger": linger = seconds(v); i++; break;
                case "--rotate": rotate = seconds(v); i++; break;
                case "--threads": threads = Integer.parseInt(v); i++; break;
                default:
                    System.err.println("SeqWorkload: unknown argument " + a);
                    System.exit(2);
            }
        }
        System.out.println("pid=" + ProcessHandle.current().pid());
        System.out.flush();

        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread w = new Thread(() -> {
                long x = 0;
                while (running) {
                    byte[] b = new byte[256 + (int) (x & 1023)];
                    x += b.length;
                    for (int k = 0; k < 2000; k++) {
                        x = x * 6364136223846793005L + k;
                    }
                    sink = x;
                    LockSupport.parkNanos(1_000_000);
                }
            }, "seq-worker-" + t);
            w.setDaemon(true);
            w.start();
            workers.add(w);
        }

        long deadline = System.nanoTime() + 60_000_000_000L;
        if (waitRecordings > 0) {
            while (runningRecordings() < waitRecordings) {
                if (System.nanoTime() > deadline) {
                    System.err.println("SeqWorkload: timed out waiting for " + waitRecordings + " recordings");
                    System.exit(3);
                }
                Thread.sleep(10);
            }
        }
        if (waitEnabled >= 0) {
            long until = System.nanoTime() + (long) (waitEnabled * 1e9);
            while (!new Seq().isEnabled()) {
                if (System.nanoTime() > until) {
                    System.err.println("SeqWorkload: timed out waiting for jfrstream.Seq to be enabled");
                    System.exit(3);
                }
                Thread.sleep(10);
            }
        }

        System.out.println("start=" + epochNanos());
        System.out.flush();
        Thread rotator = null;
        if (rotate > 0) {
            long every = (long) (rotate * 1000);
            rotator = new Thread(() -> {
                try {
                    while (emitting) {
                        Thread.sleep(every);
                        if (!emitting) {
                            break;
                        }
                        try (Recording r = new Recording()) {
                            r.setToDisk(true);
                            r.start(); // a new chunk
                            r.stop();  // and another one
                        }
                    }
                } catch (InterruptedException e) {
                    // done
                }
            }, "seq-rotator");
            rotator.setDaemon(true);
            rotator.start();
        }
        long n = (long) Math.floor(rate * duration);
        double periodNanos = 1e9 / rate;
        long t0 = System.nanoTime();
        long seq = 0;
        for (; seq < n; seq++) {
            long target = t0 + (long) (seq * periodNanos);
            long now;
            while ((now = System.nanoTime()) < target) {
                LockSupport.parkNanos(target - now);
            }
            Seq e = new Seq();
            e.seq = seq;
            e.commitNanos = epochNanos();
            e.commit();
        }
        emitting = false;
        if (rotator != null) {
            rotator.interrupt();
            rotator.join();
        }
        System.out.println("last=" + (seq - 1));
        System.out.println("count=" + seq);
        System.out.flush();
        if (linger > 0) {
            Thread.sleep((long) (linger * 1000));
        }
        running = false;
    }
}
