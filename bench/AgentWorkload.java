/*
 * AgentWorkload.java — a fixed amount of busy work for bench/agent_cost.py: THREADS
 * threads each run ITERATIONS rounds of recursion (varied stacks for the execution
 * samples), allocation (a ring of arrays and strings: TLAB, sample and GC events) and a
 * little map churn. The work is the same in every run, so the process's CPU time
 * compares runs: with the agent, with -XX:StartFlightRecording alone, without JFR.
 *
 *   java -cp DIR AgentWorkload ITERATIONS THREADS
 *
 * Prints "done ms=<elapsed>" (flushed) when the work is over, then returns from main.
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */

import java.util.HashMap;
import java.util.Map;

public final class AgentWorkload {
    static volatile long sink;

    static long recurse(int depth, long x) {
        if (depth == 0) {
            for (int k = 0; k < 200; k++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
            return x;
        }
        return (depth & 1) == 0 ? recurse(depth - 1, x + depth) : recurse(depth - 1, x ^ depth);
    }

    static void work(long iterations, int seed) {
        Object[] ring = new Object[4096];
        Map<Integer, String> map = new HashMap<>();
        long x = seed;
        for (long i = 0; i < iterations; i++) {
            x = recurse(8 + (int) (i % 24), x);
            int n = 64 + (int) ((x >>> 33) & 4095);
            ring[(int) (i & 4095)] = (i & 7) == 0 ? Long.toHexString(x).repeat(4) : new byte[n];
            if ((i & 255) == 0) {
                map.put((int) (x & 1023), Long.toString(i));
                if (map.size() > 512) {
                    map.clear();
                }
            }
        }
        sink = x + ring.length + map.size();
    }

    public static void main(String[] args) throws Exception {
        long iterations = Long.parseLong(args[0]);
        int threads = Integer.parseInt(args[1]);
        long t0 = System.nanoTime();
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int seed = t + 1;
            ts[t] = new Thread(() -> work(iterations, seed), "agent-workload-" + t);
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        System.out.println("done ms=" + (System.nanoTime() - t0) / 1_000_000);
        System.out.flush();
    }
}
