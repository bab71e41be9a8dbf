/*
 * MapOrder.java — the iteration order of java.util.HashMap, the oracle of
 * test_java_map (lib/conv/java_map.c): `java MapOrder.java CASES` prints
 * CASES lines "n trailing h0 .. h(n-1) | i0 .. i(n-1)": n keys of distinct
 * hashCode()s put in this order with computeIfAbsent (the JDK's view
 * groups), one more call with the first key when trailing is 1, and the
 * indexes of the keys as the map iterates over them. The hashes crowd a
 * few bins in most cases, so that bins become trees, trees grow, split and
 * turn back into lists as the table doubles.
 */
import java.util.HashMap;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;

public class MapOrder {
    /* a key of a given hash code, equal only to itself */
    static final class Key {
        final int hash, index;

        Key(int hash, int index) {
            this.hash = hash;
            this.index = index;
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    /* HashMap.hash is its own inverse: the hash code whose spread hash is s */
    static int unspread(int s) {
        return s ^ (s >>> 16);
    }

    static int nextHash(Random r, int mode, int[] bins) {
        int s = r.nextInt();
        switch (mode) {
        case 0: return s;                                                    /* anywhere */
        case 1: return unspread((s & ~127) | bins[r.nextInt(bins.length)]); /* a few bins at any size */
        case 2: return unspread((s & ~15) | bins[0] & 15);                   /* one bin of a small table */
        default: return unspread((s & ~31) | bins[0] & 31);                  /* one class's methods */
        }
    }

    public static void main(String[] args) {
        int cases = Integer.parseInt(args[0]);
        Random r = new Random(20261208);
        StringBuilder out = new StringBuilder();
        for (int c = 0; c < cases; c++) {
            int mode = c % 4;
            int n = 1 + r.nextInt(mode == 0 ? 1500 : c % 8 == 1 ? 3000 : 400);
            int[] bins = {r.nextInt(128), r.nextInt(128), r.nextInt(128)};
            boolean trailing = r.nextBoolean();
            Set<Integer> seen = new HashSet<>();
            Key[] keys = new Key[n];
            HashMap<Key, Integer> map = new HashMap<>();
            for (int k = 0; k < n; k++) {
                int h;
                do {
                    h = nextHash(r, mode, bins);
                } while (!seen.add(h));
                keys[k] = new Key(h, k);
                map.computeIfAbsent(keys[k], x -> 1);
            }
            if (trailing)
                map.computeIfAbsent(keys[0], x -> 1);
            out.append(n).append(trailing ? " 1" : " 0");
            for (Key k : keys)
                out.append(' ').append(k.hash);
            out.append(" |");
            for (Key k : map.keySet())
                out.append(' ').append(k.index);
            out.append('\n');
        }
        System.out.print(out);
    }
}
