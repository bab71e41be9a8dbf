/*
 * Leak.java — a memory leak through a long linked list, for jdk.OldObjectSample
 * reference chains (test/oracle/oldobject.py).
 *
 *   java -XX:+UseSerialGC -Xmn4m -XX:FlightRecorderOptions:old-object-queue-size=24 \
 *        -XX:StartFlightRecording:filename=out.jfr,path-to-gc-roots=true,settings=test/java/leak.jfc \
 *        test/java/Leak.java 12000
 *
 * N list nodes, each with a 256-byte payload, hang off a static field. The
 * old-object sampler picks some payloads and nodes late in the list, whose
 * path to the GC root runs through thousands of `next` references: HotSpot
 * writes up to about 200 edges of it (the leak context next to the object,
 * the root context next to the root, the edges between them elided).
 *
 * The recording is stopped here, with the list still reachable: at JVM exit
 * HotSpot skips the breadth-first search and finds no such deep paths. A
 * small young generation (serial GC) makes the sampling regular; the small
 * queue (24) keeps the JSON of the deep chains (7 MB each) to a few of them
 * (1 to 8 in 10 runs with JDK 17 and 25; with 20, 1 run in 3 kept none).
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */

import jdk.jfr.FlightRecorder;
import jdk.jfr.Recording;

public class Leak {
    static final class Node {
        Node next;
        byte[] payload;
    }

    static Node head;

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 12000;
        Node tail = null;
        for (int i = 0; i < n; i++) {
            Node x = new Node();
            x.payload = new byte[256];
            if (tail == null) {
                head = x;
            } else {
                tail.next = x;
            }
            tail = x;
        }
        for (Recording r : FlightRecorder.getFlightRecorder().getRecordings()) {
            r.stop(); // written to its file, paths to GC roots included
        }
        int len = 0;
        for (Node x = head; x != null; x = x.next) {
            len++;
        }
        System.out.println("Leak: " + len + " nodes");
    }
}
