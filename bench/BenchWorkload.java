/*
 * BenchWorkload.java — load generator for the jfrstream benchmarks.
 *
 * Run as a single-file program with JFR started on the command line (see
 * bench/make-recording.sh). It keeps a JVM busy with the kind of activity
 * that makes a large, event-dense recording:
 *
 *   - CPU workers with deep, varied recursive stacks (ExecutionSample)
 *   - allocators: small and large arrays, strings, maps (TLAB / outside-TLAB /
 *     ObjectAllocationSample, GC events)
 *   - contended monitors and ReentrantLocks, Object.wait (JavaMonitorEnter,
 *     JavaMonitorWait, ThreadPark)
 *   - short sleeps and a steady churn of short-lived threads
 *
 * It stops when the JFR repository directory given by --repo holds at least
 * --target-mb of chunk files, or after --max-seconds, whichever comes first.
 *
 * Options: --repo DIR  --target-mb N (200)  --max-seconds S (300)
 *          --cpu N (4)  --alloc N (3)  --lockers N (6)
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;

public class BenchWorkload {
    static volatile boolean running = true;
    static final AtomicLong SINK = new AtomicLong();
    static final Object[] MONITORS = {new Object(), new Object(), new Object()};
    static final ReentrantLock[] LOCKS = {new ReentrantLock(), new ReentrantLock()};

    // ------------------------------------------------------------- CPU work

    /* Three mutually recursive shapes so that the stack traces vary. */
    static long alpha(int depth, long x) {
        if (depth <= 0)
            return leaf(x, 2000);
        return (depth % 3 == 0 ? beta(depth - 1, x * 31 + 7) : alpha(depth - 1, x ^ depth)) + 1;
    }

    static long beta(int depth, long x) {
        if (depth <= 0)
            return leaf(x, 2000);
        return (depth % 5 == 0 ? gamma(depth - 1, x + depth) : beta(depth - 1, x * 17)) ^ depth;
    }

    static long gamma(int depth, long x) {
        if (depth <= 0)
            return leaf(x, 2000);
        return (depth % 2 == 0 ? alpha(depth - 1, x - 3) : gamma(depth - 1, x >>> 1)) + depth;
    }

    static long leaf(long x, int n) {
        long h = x;
        for (int i = 0; i < n; i++) {
            h ^= h << 13;
            h ^= h >>> 7;
            h ^= h << 17;
            if ((h & 0xff) == 0)
                h += Math.round(Math.sqrt(Math.abs((double) h)));
        }
        return h;
    }

    static void cpuWorker() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        while (running) {
            SINK.addAndGet(alpha(8 + r.nextInt(110), r.nextLong()));
        }
    }

    // ----------------------------------------------------------- allocation

    static Object allocSome(ThreadLocalRandom r, int depth) {
        if (depth > 0)
            return allocSome(r, depth - 1);
        switch (r.nextInt(6)) {
        case 0:
            return new byte[16 + r.nextInt(512)];
        case 1:
            return new long[8 + r.nextInt(64)];
        case 2: {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < 8; i++)
                sb.append(r.nextInt()).append('/');
            return sb.toString();
        }
        case 3: {
            Map<Integer, String> m = new HashMap<>();
            for (int i = 0; i < 16; i++)
                m.put(r.nextInt(), "v" + i);
            return m;
        }
        case 4: {
            List<Object> l = new ArrayList<>();
            for (int i = 0; i < 32; i++)
                l.add(Integer.valueOf(r.nextInt()));
            return l;
        }
        default: /* large: outside the TLAB */
            return new byte[4 * 1024 + r.nextInt(28 * 1024)];
        }
    }

    static void allocWorker() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        Object[] keep = new Object[4096];
        int i = 0;
        while (running) {
            keep[i++ & (keep.length - 1)] = allocSome(r, r.nextInt(40));
        }
        SINK.addAndGet(keep.length);
    }

    // ---------------------------------------------------------------- locks

    static void lockWorker(int id) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        while (running) {
            switch (r.nextInt(4)) {
            case 0:
            case 1: {
                Object m = MONITORS[r.nextInt(MONITORS.length)];
                synchronized (m) {
                    SINK.addAndGet(leaf(r.nextLong(), 50) & 1);
                    if (r.nextInt(64) == 0) {
                        try {
                            m.wait(1);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
                break;
            }
            case 2: {
                ReentrantLock l = LOCKS[id & 1];
                l.lock();
                try {
                    SINK.addAndGet(leaf(r.nextLong(), 50) & 1);
                } finally {
                    l.unlock();
                }
                break;
            }
            default:
                if (r.nextInt(8) == 0) {
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException e) {
                        return;
                    }
                } else {
                    LockSupport.parkNanos(50_000);
                }
            }
        }
    }

    // ------------------------------------------------------------ threads

    static Thread start(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    static long repoBytes(Path repo) {
        try (Stream<Path> s = Files.walk(repo)) {
            return s.filter(p -> p.toString().endsWith(".jfr")).mapToLong(p -> {
                try {
                    return Files.size(p);
                } catch (IOException e) {
                    return 0;
                }
            }).sum();
        } catch (IOException e) {
            return 0;
        }
    }

    public static void main(String[] args) throws Exception {
        Path repo = null;
        long targetMb = 200, maxSeconds = 300;
        int cpu = 4, alloc = 3, lockers = 6;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
            case "--repo": repo = Paths.get(args[++i]); break;
            case "--target-mb": targetMb = Long.parseLong(args[++i]); break;
            case "--max-seconds": maxSeconds = Long.parseLong(args[++i]); break;
            case "--cpu": cpu = Integer.parseInt(args[++i]); break;
            case "--alloc": alloc = Integer.parseInt(args[++i]); break;
            case "--lockers": lockers = Integer.parseInt(args[++i]); break;
            default:
                System.err.println("BenchWorkload: unknown option " + args[i]);
                System.exit(2);
            }
        }
        for (int i = 0; i < cpu; i++)
            start("cpu-" + i, BenchWorkload::cpuWorker);
        for (int i = 0; i < alloc; i++)
            start("alloc-" + i, BenchWorkload::allocWorker);
        for (int i = 0; i < lockers; i++) {
            final int id = i;
            start("lock-" + i, () -> lockWorker(id));
        }
        long t0 = System.nanoTime();
        long deadline = t0 + maxSeconds * 1_000_000_000L;
        long target = targetMb * 1_000_000L;
        int churn = 0;
        long lastReport = 0;
        while (System.nanoTime() < deadline) {
            /* thread churn: a few short-lived threads per round */
            for (int k = 0; k < 4; k++) {
                Thread t = start("short-" + (churn++), () -> SINK.addAndGet(alpha(20, 1)));
                t.join();
            }
            Thread.sleep(100);
            long secs = (System.nanoTime() - t0) / 1_000_000_000L;
            if (repo != null && secs != lastReport) {
                lastReport = secs;
                long have = repoBytes(repo);
                if (secs % 10 == 0)
                    System.err.printf("BenchWorkload: %d s, repository %.1f MB%n", secs, have / 1e6);
                if (have >= target)
                    break;
            }
        }
        running = false;
        System.err.printf("BenchWorkload: done after %.1f s (sink %d)%n",
                          (System.nanoTime() - t0) / 1e9, SINK.get() & 0xff);
    }
}
