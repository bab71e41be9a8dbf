/*
 * JformatText.java — the oracle of test_jformat_text: prints, for a fixed
 * list of inputs (edge cases, then pseudo-random ones from a fixed seed),
 * what the JDK's own classes make of them, one case a line:
 *
 *   fixed PREC BITS      String.format("%.<PREC>f", Double.longBitsToDouble(BITS))
 *   duration S N         ValueFormatter.formatDuration(Duration.ofSeconds(S, N))
 *   bytes|bits|bytes/s|bits/s V   ValueFormatter.formatBytes / formatBits /
 *                        formatBytesPerSecond / formatBitsPerSecond(V)
 *   time|timex S N OFF   DateTimeFormatter "HH:mm:ss.SSS (yyyy-MM-dd)" /
 *                        "HH:mm:ss.SSSSSSSSS (yyyy-MM-dd)" of the instant
 *                        (S, N) at the zone offset OFF seconds
 *   hex V                String.format("0x%08X", V)
 *
 * each followed by a tab and the JDK's text ("!" and the exception's class
 * where the JDK throws). BITS is hexadecimal, the rest decimal.
 *
 *   java --add-exports jdk.jfr/jdk.jfr.internal.util=ALL-UNNAMED JformatText.java
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.Supplier;

import jdk.jfr.internal.util.ValueFormatter;

public class JformatText {
    private static BufferedWriter out;
    private static final SplittableRandom RND = new SplittableRandom(20260312L);
    /* the formatters of jdk.jfr.internal.tool.PrettyWriter */
    private static DateTimeFormatter timeFormat, timeFormatExact;

    private static void emit(String input, Supplier<String> text) throws IOException {
        String s;
        try {
            s = text.get();
        } catch (RuntimeException e) {
            s = "!" + e.getClass().getName();
        }
        out.write(input);
        out.write('\t');
        out.write(s);
        out.write('\n');
    }

    // ------------------------------------------------------------ %.Nf

    private static void fixed(double v, int prec) throws IOException {
        emit("fixed " + prec + " " + Long.toHexString(Double.doubleToRawLongBits(v)),
             () -> String.format("%." + prec + "f", v));
    }

    private static final int[] PRECS = {1, 2, 6, 9};

    private static void fixedPrecs(double v) throws IOException {
        for (int p : PRECS)
            fixed(v, p);
    }

    private static void fixedCases() throws IOException {
        double[] edges = {
            0.0, -0.0, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY,
            Double.MIN_VALUE, -Double.MIN_VALUE, Double.MIN_NORMAL, Double.MAX_VALUE,
            -Double.MAX_VALUE, 1e308, 1e-308, 1e-300, 0.125, 0.375, 1.005, 2.675, 1.45,
            4.35, 0.5, 1.5, 2.5, -0.5, -1.5, 0.05, 0.15, 0.25, 0.35, 1e-7, 5e-7, 4.9e-7,
            123456.785, 1e22, 1e23, 9.995, 99.95, 999.5, 0.95, 0.995, 9.5, 0.0005,
            -0.001, -0.004, -0.005, -0.0049, -1e-10, -1e-300, 1, 10, 100, 0.1, 0.2,
            0.3, 0.1 + 0.2, 1.0 / 3, 2.0 / 3, Math.PI, Math.E, 12.3, 1.23, 0.000123,
            9007199254740993.0, 9.223372036854776e18, 123456789012345678.0, 0.045,
            1.0000000000000002, 0.9999999999999999, 4.999999999999999, 0.49999999999999994,
        };
        for (double v : edges)
            for (int p = 0; p <= 17; p++)
                fixed(v, p);
        /* decimal ties: n * 10^-k with n ending in 5, at the precision that
         * cuts just before the 5, and the others */
        for (int i = 0; i < 1500; i++) {
            int digits = 1 + RND.nextInt(16);
            long n = RND.nextLong((long) Math.pow(10, digits - 1), (long) Math.pow(10, digits)) / 10 * 10 + 5;
            int k = 1 + RND.nextInt(22);
            double v = Double.parseDouble(n + "E-" + k);
            if (RND.nextInt(4) == 0)
                v = -v;
            if (k - 1 <= 17)
                fixed(v, k - 1);
            fixedPrecs(v);
        }
        /* any bits */
        for (int i = 0; i < 600; i++)
            fixedPrecs(Double.longBitsToDouble(RND.nextLong()));
        /* magnitudes 1e-12 .. 1e22, both signs */
        for (int i = 0; i < 1500; i++) {
            double v = Math.pow(10, RND.nextDouble(-12, 22));
            fixedPrecs(RND.nextBoolean() ? v : -v);
        }
        /* percentages as PrettyWriter makes them: 100 * a fraction */
        for (int i = 0; i < 300; i++) {
            double v = 100 * RND.nextDouble();
            fixed(v, 2);
            fixed(v, 9);
        }
        /* any precision */
        for (int i = 0; i < 300; i++)
            fixed(Math.pow(10, RND.nextDouble(-20, 20)), RND.nextInt(18));
    }

    // ------------------------------------------------------------ durations

    private static void duration(long s, long n) throws IOException {
        emit("duration " + s + " " + n,
             () -> ValueFormatter.formatDuration(Duration.ofSeconds(s, n)));
    }

    /* d and -d, given as seconds and nanos (0 <= n < 1e9) */
    private static void durationBoth(long s, long n) throws IOException {
        duration(s, n);
        if (n == 0)
            duration(-s, 0);
        else
            duration(-s - 1, 1_000_000_000 - n);
    }

    private static void durationNanos(long total) throws IOException {
        durationBoth(Math.floorDiv(total, 1_000_000_000L), Math.floorMod(total, 1_000_000_000L));
    }

    private static void durationCases() throws IOException {
        long[] nanos = {
            0, 1, 9, 10, 99, 100, 123, 999, 1000, 1001, 1004, 1005, 1234, 1235, 9994, 9995,
            9999, 10_000, 99_949, 99_950, 99_999, 100_000, 123_456, 999_499, 999_500,
            999_999, 1_000_000, 1_234_567, 9_995_000, 9_999_999, 12_300_000, 99_950_000,
            99_999_999, 123_456_789, 999_499_999, 999_500_000, 999_999_999,
        };
        for (long n : nanos)
            durationBoth(0, n);
        long[][] secs = {
            {1, 0}, {1, 4_999_999}, {1, 5_000_000}, {1, 994_999_999}, {1, 995_000_000},
            {9, 994_999_999}, {9, 995_000_000}, {9, 999_999_999}, {10, 0}, {10, 49_999_999},
            {10, 50_000_000}, {12, 345_000_000}, {12, 350_000_000}, {59, 949_999_999},
            {59, 950_000_000}, {59, 994_999_999}, {59, 995_000_000}, {59, 999_999_999},
            {60, 0}, {60, 499_999_999}, {60, 500_000_000}, {62, 0}, {119, 500_000_000},
            {3599, 0}, {3599, 499_999_999}, {3599, 500_000_000}, {3600, 0}, {3629, 999_999_999},
            {3630, 0}, {3720, 0}, {86369, 999_999_999}, {86370, 0}, {86399, 0}, {86400, 0},
            {88200, 0}, {88199, 999_999_999}, {93600, 0}, {171000, 0}, {170999, 0},
            {Long.MAX_VALUE / 2, 0}, {Long.MAX_VALUE - 1801, 999_999_999},
            {Long.MAX_VALUE - 1800, 0}, {Long.MAX_VALUE, 999_999_999}, {Long.MAX_VALUE, 0},
            {Long.MAX_VALUE - 86400, 0}, {Long.MAX_VALUE - 3600, 0},
        };
        for (long[] sn : secs)
            durationBoth(sn[0], sn[1]);
        duration(Long.MIN_VALUE, 0);
        duration(Long.MIN_VALUE, 1);
        duration(Long.MIN_VALUE + 1800, 0);
        duration(Long.MIN_VALUE + 1801, 0);
        /* the rounding ties of every branch: m * 10^j + 10^j / 2 nanos, and
         * one nanosecond either side */
        for (int i = 0; i < 400; i++) {
            int j = 1 + RND.nextInt(6);
            long unit = (long) Math.pow(10, j);
            long m = RND.nextLong(100, 1000);
            long t = m * unit + unit / 2;
            for (long d = -1; d <= 1; d++)
                durationNanos(t + d);
        }
        for (int i = 0; i < 400; i++) { /* 1 s .. 60 s: ties of the milliseconds */
            long s = RND.nextLong(1, 60);
            long ms = s < 10 ? RND.nextLong(0, 100) * 10 + 5 : RND.nextLong(0, 10) * 100 + 50;
            durationBoth(s, ms * 1_000_000 + RND.nextLong(1_000_000));
            durationBoth(s, ms * 1_000_000 - 1);
        }
        for (int i = 0; i < 300; i++) { /* minutes, hours, days: half a unit */
            long unit = new long[] {1, 60, 3600}[RND.nextInt(3)];
            long range = unit == 1 ? 3600 : unit == 60 ? 86400 : 86400L * 10000;
            long s = RND.nextLong(unit == 1 ? 60 : unit == 60 ? 3600 : 86400, range) / unit * unit;
            if (unit == 1) {
                durationBoth(s, 500_000_000);
                durationBoth(s, 499_999_999);
            } else {
                durationBoth(s + unit / 2, 0);
                durationBoth(s + unit / 2 - 1, 999_999_999);
            }
        }
        /* any length: 1 ns .. 3 years, and up to 1e15 s */
        for (int i = 0; i < 1500; i++)
            durationNanos((long) Math.pow(10, RND.nextDouble(0, 17)));
        for (int i = 0; i < 200; i++)
            durationBoth((long) Math.pow(10, RND.nextDouble(0, 15)), RND.nextLong(1_000_000_000));
    }

    // ------------------------------------------------------------ data amounts

    private static void amount(long v) throws IOException {
        emit("bytes " + v, () -> ValueFormatter.formatBytes(v));
        emit("bits " + v, () -> ValueFormatter.formatBits(v));
        emit("bytes/s " + v, () -> ValueFormatter.formatBytesPerSecond(v));
        emit("bits/s " + v, () -> ValueFormatter.formatBitsPerSecond(v));
    }

    private static void amountBoth(long v) throws IOException {
        amount(v);
        amount(-v);
    }

    private static void amountCases() throws IOException {
        long[] edges = {0, 1, 2, 12, 1000, 1023, 1024, 1025, 1075, 1076, 1126, 1127,
                        2304, 1048575, 1048576, Long.MAX_VALUE, Long.MAX_VALUE - 1,
                        Long.MAX_VALUE / 2, 1L << 62, (1L << 62) - 1, (1L << 62) + 1};
        for (long v : edges)
            amountBoth(v);
        amount(Long.MIN_VALUE);
        amount(Long.MIN_VALUE + 1);
        for (int k = 1; k <= 6; k++) {
            long p = 1L << (10 * k);
            /* where the ratio of the logarithms is near k: 2^50 - 1 is 1.0 PB */
            for (long d = -40; d <= 40; d++)
                amountBoth(p + d);
            for (long d = -3; d <= 3; d++)
                amountBoth(p * 1023 + d);
            /* where the long no longer converts exactly to a double */
            long ulp = k >= 6 ? 256 : 1;
            for (long d = -2; d <= 2; d++)
                amountBoth(p + d * ulp);
            /* the .x5 ties of %.1f: p * (m + 0.05) and its neighbours */
            for (int i = 0; i < 40; i++) {
                long m = RND.nextLong(1, k == 6 ? 8 : 1024);
                double x = (m + RND.nextInt(10) / 10.0 + 0.05) * p;
                long t = (long) x;
                for (long d = -1; d <= 1; d++)
                    amountBoth(t + d);
            }
        }
        for (int i = 0; i < 600; i++)
            amountBoth((long) Math.pow(2, RND.nextDouble(0, 63)));
    }

    // ------------------------------------------------------------ timestamps

    private static void time(long s, int n, int off) throws IOException {
        OffsetDateTime odt;
        try {
            odt = OffsetDateTime.ofInstant(Instant.ofEpochSecond(s, n), ZoneOffset.ofTotalSeconds(off));
        } catch (RuntimeException e) {
            return; /* not a value PrettyWriter can see */
        }
        String in = " " + s + " " + n + " " + off;
        emit("time" + in, () -> timeFormat.format(odt));
        emit("timex" + in, () -> timeFormatExact.format(odt));
    }

    private static final int[] OFFSETS = {0, 1, -1, 3600, -3600, 19800, -12600, 45296,
                                          -45296, 64800, -64800, 64799, -64799};

    private static void timeOffsets(long s, int n) throws IOException {
        for (int off : OFFSETS)
            time(s, n, off);
        time(s, n, RND.nextInt(-64800, 64801));
    }

    /* the epoch second of midnight, January 1st of the year (UTC) */
    private static long yearStart(long year) {
        return OffsetDateTime.of((int) year, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC).toEpochSecond();
    }

    private static void timeCases() throws IOException {
        long[] years = {-292275055, -100000, -10000, -9999, -1000, -999, -100, -99, -10,
                        -9, -1, 0, 1, 9, 10, 99, 100, 999, 1000, 1582, 1900, 1969, 1970, 1971,
                        2000, 2024, 2026, 2100, 9999, 10000, 10001, 99999, 100000, 292278994};
        int[] nanos = {0, 1, 999_999, 1_000_000, 123_456_789, 999_999_999};
        for (long y : years) {
            long s = yearStart(y);
            for (long d : new long[] {-86400, -1, 0, 1, 86400 * 59 + 43200})
                for (int n : nanos)
                    timeOffsets(s + d, n);
        }
        /* what a JFR value can reach: the milliseconds of a long */
        time(Math.floorDiv(Long.MAX_VALUE, 1000), 807_000_000, 0);
        time(Math.floorDiv(Long.MIN_VALUE, 1000), 192_000_000, 0);
        time(Math.floorDiv(Long.MAX_VALUE, 1000), 807_000_000, -64800);
        time(Math.floorDiv(Long.MIN_VALUE, 1000), 192_000_000, 64800);
        for (int i = 0; i < 600; i++) /* 1900 .. 2100 */
            timeOffsets(RND.nextLong(-2208988800L, 4102444800L), RND.nextInt(1_000_000_000));
        for (int i = 0; i < 300; i++) { /* any year of a millisecond long */
            long s = (long) Math.pow(10, RND.nextDouble(0, 15.96));
            timeOffsets(RND.nextBoolean() ? s : -s, RND.nextInt(1_000_000_000));
        }
    }

    // ------------------------------------------------------------ addresses

    private static void hex(long v) throws IOException {
        emit("hex " + v, () -> String.format("0x%08X", v));
    }

    private static void hexCases() throws IOException {
        long[] edges = {0, 1, -1, 15, 16, 255, 0xABCDEF, 0x7FFFFFFF, 0xFFFFFFFFL, 0x100000000L,
                        0x7F12345678L, Long.MAX_VALUE, Long.MIN_VALUE, Integer.MIN_VALUE};
        for (long v : edges)
            hex(v);
        for (int i = 0; i < 200; i++)
            hex(RND.nextLong() >> RND.nextInt(64));
    }

    public static void main(String[] args) throws IOException {
        Locale.setDefault(Locale.US); /* the English text `jfr print` is compared with */
        timeFormat = DateTimeFormatter.ofPattern("HH:mm:ss.SSS (yyyy-MM-dd)");
        timeFormatExact = DateTimeFormatter.ofPattern("HH:mm:ss.SSSSSSSSS (yyyy-MM-dd)");
        out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
        fixedCases();
        durationCases();
        amountCases();
        timeCases();
        hexCases();
        out.flush();
    }
}
