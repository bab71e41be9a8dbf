/*
 * GcWorkload.java — a JVM with something for the JDK's periodic and GC events
 * to record, for test/metrics/metrics_prom_jvm.py: allocation (young collections),
 * a retained ring of arrays that gets promoted and a System.gc() every
 * --full-every seconds (old collections), a contended monitor (one thread
 * holds it 25 ms at a time: jdk.JavaMonitorEnter over the 10 ms threshold of
 * settings=profile), thrown and caught exceptions, and a few sleeping
 * threads (jdk.JavaThreadStatistics).
 *
 *   java [-XX:+UseSerialGC -Xmx64m] test/metrics/GcWorkload.java [--seconds S]
 *        [--full-every S] [--threads N] [--mb-per-s N]
 *
 * Allocation is paced to N MB a second (default 100: a few young collections
 * a second with -Xmx64m, leaving the CPU to the pump and the listener).
 * Prints "pid=PID" at start (flushed), runs S seconds (default 60), prints
 * "done allocated=BYTES" and exits. Single-file program, JDK 17+.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */

import java.util.ArrayList;
import java.util.List;

public final class GcWorkload {

    static final Object LOCK = new Object();
    static volatile boolean running = true;
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        double seconds = 60;
        double fullEvery = 2;
        int threads = 3;
        double mbPerS = 100;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--seconds" -> seconds = Double.parseDouble(args[++i]);
                case "--full-every" -> fullEvery = Double.parseDouble(args[++i]);
                case "--threads" -> threads = Integer.parseInt(args[++i]);
                case "--mb-per-s" -> mbPerS = Double.parseDouble(args[++i]);
                default -> {
                    System.err.println("unknown option " + args[i]);
                    System.exit(2);
                }
            }
        }
        System.out.println("pid=" + ProcessHandle.current().pid());
        System.out.flush();
        List<Thread> all = new ArrayList<>();
        // a holder and a waiter on the same monitor: contention
        Thread holder = new Thread(() -> {
            while (running) {
                synchronized (LOCK) {
                    sleep(25);
                }
                sleep(5);
            }
        }, "lock-holder");
        Thread waiter = new Thread(() -> {
            while (running) {
                synchronized (LOCK) {
                    sink++;
                }
                sleep(3);
            }
        }, "lock-waiter");
        all.add(holder);
        all.add(waiter);
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(() -> {
                while (running) {
                    sleep(100);
                }
            }, "idle-" + i);
            t.setDaemon(i % 2 == 0);
            all.add(t);
        }
        for (Thread t : all) {
            t.start();
        }
        long t0 = System.nanoTime();
        long end = t0 + (long) (seconds * 1e9);
        long nextFull = System.nanoTime() + (long) (fullEvery * 1e9);
        byte[][] ring = new byte[2048][];   // up to ~16 MiB retained, promoted over time
        long allocated = 0;
        int k = 0;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 256; i++) {
                byte[] b = new byte[1024 + (k & 8191)];
                allocated += b.length;
                if ((k & 7) == 0) {
                    ring[(k >>> 3) & (ring.length - 1)] = b;
                }
                k++;
            }
            if ((k & 0xffff) == 0) {
                try {
                    throw new IllegalStateException("workload " + k);
                } catch (IllegalStateException e) {
                    sink += e.getMessage().length();
                }
            }
            if (System.nanoTime() >= nextFull) {
                System.gc();
                nextFull = System.nanoTime() + (long) (fullEvery * 1e9);
            }
            // pace: ahead of N MB/s -> sleep the difference
            long due = t0 + (long) (allocated / (mbPerS * 1e6) * 1e9);
            long ahead = due - System.nanoTime();
            if (ahead > 1_000_000) {
                Thread.sleep(ahead / 1_000_000);
            }
        }
        running = false;
        for (Thread t : all) {
            t.join();
        }
        System.out.println("done allocated=" + allocated);
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
