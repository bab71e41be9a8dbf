/*
 * Workload.java — test-data generator for jfrstream.
 *
 * Run as a single-file program (JDK 17+, no build step), with JFR started on the
 * command line, e.g.
 *
 *   java -XX:StartFlightRecording:filename=out.jfr,settings=profile \
 *        test/java/Workload.java --seconds 3
 *
 * It does two things:
 *  1. generates ordinary JVM activity so that the JDK's own events show up:
 *     allocation (TLAB / outside-TLAB / samples / GC), CPU work with deep-ish and
 *     very deep stacks (recursion beyond the default stack depth of 64 frames, so
 *     some stack traces are truncated), threads with non-ASCII names, sleeps,
 *     contended monitors, Object.wait, parking on a ReentrantLock, thrown errors,
 *     and virtual threads when the JDK has them (21+, via reflection);
 *  2. commits custom jdk.jfr.Event subclasses ("jfrstream.*") that use every field
 *     kind JFR supports (boolean byte char short int long float double String
 *     Thread Class) with extreme values, and every unit/interpretation annotation
 *     (@Unsigned @Timestamp @Timespan @DataAmount @Percentage @Frequency
 *     @MemoryAddress @BooleanFlag) plus @Label @Description @Category @Name
 *     @Experimental, custom @MetadataDefinition annotations, a custom setting,
 *     event inheritance, a periodic event, and a global sequence number "seq".
 *
 * Options (all optional):
 *   --seconds S      duration of the load phase (default 2)
 *   --threads N      CPU worker threads (default 2)
 *   --edge-rounds N  how many times the whole edge-case set is committed (default 1)
 *   --bulk N         extra jfrstream.Bulk events (~1 KiB each) spread over the run,
 *                    to fill chunks (default 0)
 *   --depth N        maximum recursion depth of the CPU workers (default 90)
 *   --rotate N       start and stop N short in-process recordings spread over the
 *                    run; each start forces a chunk rotation (default 0)
 *   --quiet          no progress output
 *
 * Copyright (c) 2026 the jfrstream authors. MIT licence, see COPYING.
 */

import jdk.jfr.BooleanFlag;
import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Enabled;
import jdk.jfr.Event;
import jdk.jfr.Experimental;
import jdk.jfr.FlightRecorder;
import jdk.jfr.Frequency;
import jdk.jfr.Label;
import jdk.jfr.MemoryAddress;
import jdk.jfr.MetadataDefinition;
import jdk.jfr.Name;
import jdk.jfr.Percentage;
import jdk.jfr.Period;
import jdk.jfr.Recording;
import jdk.jfr.Relational;
import jdk.jfr.SettingControl;
import jdk.jfr.SettingDefinition;
import jdk.jfr.StackTrace;
import jdk.jfr.Threshold;
import jdk.jfr.Timespan;
import jdk.jfr.Timestamp;
import jdk.jfr.Unsigned;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

public class Workload {

    // ------------------------------------------------------------ annotations

    /** Custom marker annotation (no elements). */
    @MetadataDefinition
    @Label("Custom Marker")
    @Description("A custom annotation without elements")
    @Retention(RetentionPolicy.RUNTIME)
    @Target({ElementType.FIELD, ElementType.TYPE})
    @interface Marker {
    }

    /** Custom annotation with elements of many kinds, including an array. */
    @MetadataDefinition
    @Name("jfrstream.Tagged")
    @Label("Tagged")
    @Retention(RetentionPolicy.RUNTIME)
    @Target({ElementType.FIELD, ElementType.TYPE})
    @interface Tagged {
        String value();
        int level() default 3;
        long big() default Long.MIN_VALUE;
        boolean flag() default true;
        double ratio() default 0.5;
        char letter() default '\u00e9';
        String[] tags() default {"alpha", "\u03b2eta", ""};
    }

    /** A relational annotation, like the JDK's jdk.types.GcId markers. */
    @MetadataDefinition
    @Relational
    @Name("jfrstream.WorkId")
    @Label("Work Identifier")
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.FIELD)
    @interface WorkId {
    }

    // ---------------------------------------------------------------- setting

    /** A custom setting: produces a <setting> element of a custom type. */
    @Name("jfrstream.settings.Level")
    @Label("Level")
    @Description("Minimum level; events below are dropped")
    public static final class LevelSetting extends SettingControl {
        private String value = "0";

        @Override
        public String combine(Set<String> values) {
            int max = 0;
            for (String v : values) {
                try {
                    max = Math.max(max, Integer.parseInt(v));
                } catch (NumberFormatException e) {
                    // ignore
                }
            }
            return Integer.toString(max);
        }

        @Override
        public void setValue(String v) {
            value = v;
        }

        @Override
        public String getValue() {
            return value;
        }
    }

    // ----------------------------------------------------------------- events

    static final AtomicLong SEQ = new AtomicLong();

    @Name("jfrstream.Scalars")
    @Label("Scalars")
    @Description("Every primitive field kind, with extreme values")
    @Category({"jfrstream", "Field Kinds"})
    @StackTrace(false)
    @Tagged(value = "scalars", level = -7, tags = {"x", "y\u20ac"})
    static final class Scalars extends Event {
        @Label("Sequence") @Description("Global commit order") long seq;
        @Label("Case") String caseName;
        @Label("A boolean") boolean z;
        @Label("A byte") byte b;
        @Label("A char") char c;
        @Label("A short") short s;
        @Label("An int") int i;
        @Label("A long") long l;
        @Label("A float") float f;
        @Label("A double") double d;
    }

    @Name("jfrstream.Strings")
    @Label("Strings")
    @Category({"jfrstream", "Field Kinds"})
    @StackTrace(false)
    static final class Strings extends Event {
        long seq;
        String caseName;
        @Label("Value") String value;
        @Label("Second Value") String second;
        @Label("UTF-16 Length") int length;
    }

    @Name("jfrstream.References")
    @Label("References")
    @Description("Thread and Class fields")
    @Category({"jfrstream", "Field Kinds"})
    static final class References extends Event {
        long seq;
        String caseName;
        @Label("Thread") Thread thread;
        @Label("Class") Class<?> clazz;
        @Label("Other Class") Class<?> other;
    }

    @Name("jfrstream.Unsigned")
    @Label("Unsigned Values")
    @Category({"jfrstream", "Units"})
    @StackTrace(false)
    static final class UnsignedValues extends Event {
        long seq;
        String caseName;
        @Unsigned @Label("Unsigned byte") byte ub;
        @Unsigned @Label("Unsigned short") short us;
        @Unsigned @Label("Unsigned int") int ui;
        @Unsigned @Label("Unsigned long") long ul;
        @Label("Signed int, same value") int si;
    }

    @Name("jfrstream.Timestamps")
    @Label("Timestamps")
    @Category({"jfrstream", "Units"})
    @StackTrace(false)
    static final class Timestamps extends Event {
        long seq;
        String caseName;
        @Timestamp(Timestamp.TICKS) @Label("Ticks") long ticks;
        @Timestamp(Timestamp.MILLISECONDS_SINCE_EPOCH) @Label("Epoch Millis") long millis;
    }

    @Name("jfrstream.Timespans")
    @Label("Timespans")
    @Category({"jfrstream", "Units"})
    @StackTrace(false)
    static final class Timespans extends Event {
        long seq;
        String caseName;
        @Timespan(Timespan.TICKS) long ticks;
        @Timespan(Timespan.NANOSECONDS) long nanos;
        @Timespan(Timespan.MICROSECONDS) long micros;
        @Timespan(Timespan.MILLISECONDS) long millis;
        @Timespan(Timespan.SECONDS) long seconds;
        @Timespan(Timespan.MILLISECONDS) int intMillis;
    }

    @Name("jfrstream.Amounts")
    @Label("Amounts")
    @Description("DataAmount, Percentage, Frequency, MemoryAddress, BooleanFlag")
    @Category({"jfrstream", "Units"})
    @StackTrace(false)
    static final class Amounts extends Event {
        long seq;
        String caseName;
        @DataAmount(DataAmount.BYTES) long bytes;
        @DataAmount(DataAmount.BITS) long bits;
        @DataAmount int intBytes;
        @Unsigned @DataAmount long unsignedBytes;
        @Percentage float floatPercent;
        @Percentage double doublePercent;
        @Frequency long hertz;
        @Frequency double doubleHertz;
        @MemoryAddress long address;
        @BooleanFlag boolean flag;
    }

    @Name("jfrstream.Annotated")
    @Label("Annotated \u00e9v\u00e9nement \u2615")
    @Description("Description with \"quotes\", a backslash \\ and a newline\nin it")
    @Category({"jfrstream", "Annotations", "Deeply", "Nested"})
    @Marker
    @Tagged("on the type")
    @Threshold("0 ms")
    static final class Annotated extends Event {
        long seq;
        @Name("renamedField") @Label("Renamed") String originalName;
        @Marker @Tagged(value = "field", level = 1, big = Long.MAX_VALUE, flag = false,
                ratio = -0.0, letter = 'x', tags = {})
        @Label("Tagged") int tagged;
        @Experimental @Label("Experimental field") long experimental;
        @WorkId @Label("Work Id") long workId;
        @Description("Only a description") short onlyDescription;

        @Label("Level")
        @SettingDefinition
        @Name("level")
        boolean level(LevelSetting s) {
            return true;
        }
    }

    /** Abstract base: its fields come first in the subclass' metadata. */
    @Category({"jfrstream", "Inheritance"})
    abstract static class BaseEvent extends Event {
        @Label("Sequence") long seq;
        @Label("Base Note") String baseNote;
    }

    @Name("jfrstream.Derived")
    @Label("Derived")
    static final class Derived extends BaseEvent {
        @Label("Extra") int extra;
        @Label("Owner") Thread owner;
    }

    @Name("jfrstream.Timed")
    @Label("Timed Work")
    @Description("begin()/commit() around real work, with a stack trace")
    @Category({"jfrstream", "Load"})
    static final class Timed extends Event {
        long seq;
        @Label("Recursion Depth") int depth;
        @Label("Kind") String kind;
    }

    @Name("jfrstream.Bulk")
    @Label("Bulk")
    @Category({"jfrstream", "Load"})
    @StackTrace(false)
    static final class Bulk extends Event {
        long seq;
        @Label("Index") int index;
        @Label("Payload") String payload;
        @DataAmount long payloadBytes;
    }

    @Name("jfrstream.Periodic")
    @Label("Periodic")
    @Category({"jfrstream", "Load"})
    @Period("250 ms")
    @StackTrace(false)
    static final class Periodic extends Event {
        long seq;
        @DataAmount long usedHeap;
        @Label("Live Threads") int liveThreads;
    }

    @Name("jfrstream.Disabled")
    @Enabled(false)
    static final class Disabled extends Event {
        long seq;
    }

    // ------------------------------------------------------------ edge values

    static long seq() {
        return SEQ.incrementAndGet();
    }

    record Row(String name, boolean z, byte b, char c, short s, int i, long l,
               float f, double d) {
    }

    static void commitScalars() {
        Row[] rows = {
            new Row("zero", false, (byte) 0, '\0', (short) 0, 0, 0L, 0.0f, 0.0),
            new Row("one", true, (byte) 1, '1', (short) 1, 1, 1L, 1.0f, 1.0),
            new Row("minus-one", true, (byte) -1, 'A', (short) -1, -1, -1L, -1.0f, -1.0),
            new Row("min", false, Byte.MIN_VALUE, Character.MIN_VALUE, Short.MIN_VALUE,
                    Integer.MIN_VALUE, Long.MIN_VALUE, -Float.MAX_VALUE, -Double.MAX_VALUE),
            new Row("max", true, Byte.MAX_VALUE, Character.MAX_VALUE, Short.MAX_VALUE,
                    Integer.MAX_VALUE, Long.MAX_VALUE, Float.MAX_VALUE, Double.MAX_VALUE),
            new Row("nan", true, (byte) 0x55, '\u00e9', (short) 0x5555, 0x55555555,
                    0x5555555555555555L, Float.NaN, Double.NaN),
            new Row("+inf", false, (byte) 0x7e, '\u20ac', (short) 300, 65536, 1L << 35,
                    Float.POSITIVE_INFINITY, Double.POSITIVE_INFINITY),
            new Row("-inf", true, (byte) -128, '"', (short) -300, -65536, -(1L << 35),
                    Float.NEGATIVE_INFINITY, Double.NEGATIVE_INFINITY),
            new Row("-0.0", false, (byte) 2, '\\', (short) 127, 127, 127L, -0.0f, -0.0),
            new Row("subnormal-min", true, (byte) 3, '/', (short) 128, 128, 128L,
                    Float.MIN_VALUE, Double.MIN_VALUE),
            new Row("normal-min", false, (byte) 4, '\n', (short) 16383, 16383, 16383L,
                    Float.MIN_NORMAL, Double.MIN_NORMAL),
            new Row("subnormal-mid", true, (byte) 5, '\u001f', (short) 16384, 16384, 16384L,
                    Float.intBitsToFloat(0x00400001), Double.longBitsToDouble(0x0008000000000001L)),
            new Row("1e-5", false, (byte) 6, '\u007f', (short) -16385, 2097151, 2097152L,
                    1e-5f, 1e-5),
            new Row("1e7", true, (byte) 7, '\u0080', (short) 32000, 268435455, 268435456L,
                    1e7f, 1e7),
            new Row("1e-3", false, (byte) 8, '\u00ff', (short) 8, 999, 34359738367L, 1e-3f, 1e-3),
            new Row("9999999", true, (byte) 9, '\u0100', (short) 9, 9999999, 34359738368L,
                    9999999.0f, 9999999.0),
            new Row("thirds", false, (byte) 10, '\ufeff', (short) 10, 10, 4398046511103L,
                    1.0f / 3.0f, 1.0 / 3.0),
            new Row("0.1+0.2", true, (byte) 11, '\ufffd', (short) 11, 11, 4398046511104L,
                    0.1f + 0.2f, 0.1 + 0.2),
            new Row("2e23", false, (byte) 12, '\ud83d', (short) 12, 12, 562949953421311L,
                    2e23f, 2e23),
            new Row("pi", true, (byte) 13, '\ude00', (short) 13, 13, 562949953421312L,
                    (float) Math.PI, Math.PI),
            new Row("big", false, (byte) 14, '\t', (short) 14, 14, 72057594037927935L,
                    123456789.125f, 1.23456789125E8),
            new Row("huge", true, (byte) 15, '\r', (short) 15, 15, 72057594037927936L,
                    1e38f, 1e300),
            new Row("tiny", false, (byte) 16, '\b', (short) 16, 16, Long.MIN_VALUE + 1,
                    1e-38f, 1e-300),
            new Row("1e21", true, (byte) 17, '\f', (short) 17, 17, Long.MAX_VALUE - 1,
                    1e21f, 1e21),
            new Row("100", false, (byte) 18, ' ', (short) 18, 18, 100L, 100.0f, 100.0),
            new Row("5e-324x3", true, (byte) 19, '~', (short) 19, 19, 101L,
                    Float.intBitsToFloat(3), Double.longBitsToDouble(3)),
            new Row("2^53+1", false, (byte) 20, '\u4e2d', (short) 20, 20, (1L << 53) + 1,
                    16777217.0f, 9007199254740993.0),
        };
        for (Row r : rows) {
            Scalars e = new Scalars();
            e.seq = seq();
            e.caseName = r.name;
            e.z = r.z;
            e.b = r.b;
            e.c = r.c;
            e.s = r.s;
            e.i = r.i;
            e.l = r.l;
            e.f = r.f;
            e.d = r.d;
            e.commit();
        }
    }

    static String repeat(String s, int n) {
        StringBuilder sb = new StringBuilder(s.length() * n);
        for (int k = 0; k < n; k++) {
            sb.append(s);
        }
        return sb.toString();
    }

    static void commitStrings() {
        StringBuilder controls = new StringBuilder();
        for (char ch = 0; ch < 0x20; ch++) {
            controls.append(ch);
        }
        String[][] cases = {
            {"null", null},
            {"empty", ""},
            {"one-char", "a"},
            {"short-ascii", "hello, world"},
            {"exactly-16", "0123456789abcdef"},
            {"exactly-17", "0123456789abcdefg"},
            {"long-ascii", "a long ASCII string that goes to the string pool"},
            {"long-ascii-again", "a long ASCII string that goes to the string pool"},
            {"latin1", "\u00e9"},
            {"latin1-word", "caf\u00e9 na\u00efve \u00fc\u00df \u00ff"},
            {"latin1-long", "\u00e9\u00e8\u00ea\u00eb\u00e0\u00e2\u00e4\u00f4\u00f6\u00fb\u00fc\u00e7\u00c9\u00c8\u00ca\u00cb\u00c0"},
            {"bmp", "\u20ac \u4e2d\u6587 \u0440\u0443\u0441\u0441\u043a\u0438\u0439 \u05e2\u05d1\u05e8\u05d9\u05ea"},
            {"emoji", "\ud83d\ude00"},
            {"emoji-mix", "smile \ud83d\ude00 coffee \u2615 flag \ud83c\uddeb\ud83c\uddf7 ok"},
            {"emoji-long", "\ud83d\ude00\ud83d\ude01\ud83d\ude02\ud83d\ude03\ud83d\ude04\ud83d\ude05\ud83d\ude06\ud83d\ude07\ud83d\ude08"},
            {"lone-high-surrogate", "a\ud800b"},
            {"lone-low-surrogate", "\udc00"},
            {"reversed-pair", "\ude00\ud83d"},
            {"json-escapes", "quote\" backslash\\ slash/ tab\t nl\n cr\r bs\b ff\f"},
            {"controls", controls.toString()},
            {"nul-inside", "a\0b"},
            {"del-and-c1", "\u007f\u0080\u009f\u00a0"},
            {"bom-and-specials", "\ufeff\ufffd\uffff\ufffe"},
            {"script", "</script><!-- & ' -->"},
            {"long-2000", repeat("0123456789", 200)},
            {"long-unicode", repeat("\u00e9\u20ac\ud83d\ude00x", 300)},
        };
        for (String[] c : cases) {
            Strings e = new Strings();
            e.seq = seq();
            e.caseName = c[0];
            e.value = c[1];
            e.second = c[1] == null ? "" : c[1];
            e.length = c[1] == null ? -1 : c[1].length();
            e.commit();
        }
    }

    static void commitReferences(List<Thread> namedThreads) {
        Runnable lambda = () -> { };
        Supplier<String> another = () -> "x";
        Thread unstarted = new Thread(() -> { }, "never-started \u00e9");
        Object[][] cases = {
            {"current", Thread.currentThread(), Workload.class, String.class},
            {"nulls", null, null, null},
            {"array-classes", Thread.currentThread(), int[][].class, String[].class},
            {"primitive-class", Thread.currentThread(), int.class, void.class},
            {"hidden-class", Thread.currentThread(), lambda.getClass(), another.getClass()},
            {"nested-class", Thread.currentThread(), Scalars.class, Thread.State.class},
            {"unstarted-thread", unstarted, Object.class, null},
        };
        for (Object[] c : cases) {
            References e = new References();
            e.seq = seq();
            e.caseName = (String) c[0];
            e.thread = (Thread) c[1];
            e.clazz = (Class<?>) c[2];
            e.other = (Class<?>) c[3];
            e.commit();
        }
        for (Thread t : namedThreads) {
            References e = new References();
            e.seq = seq();
            e.caseName = "named-thread";
            e.thread = t;
            e.clazz = t.getClass();
            e.commit();
        }
    }

    static void commitUnsigned() {
        long[] values = {0, 1, -1, 127, 128, 255, 256, -128, -129, 32767, 32768, 65535,
            65536, Integer.MAX_VALUE, Integer.MIN_VALUE, 0xFFFFFFFFL, Long.MIN_VALUE,
            Long.MAX_VALUE, -2};
        for (long v : values) {
            UnsignedValues e = new UnsignedValues();
            e.seq = seq();
            e.caseName = Long.toString(v);
            e.ub = (byte) v;
            e.us = (short) v;
            e.ui = (int) v;
            e.ul = v;
            e.si = (int) v;
            e.commit();
        }
    }

    static void commitTimestamps() {
        long nowMillis = System.currentTimeMillis();
        long nowTicks = System.nanoTime();
        Object[][] cases = {
            {"now", nowTicks, nowMillis},
            {"zero", 0L, 0L},
            {"one", 1L, 1L},
            {"minus-one", -1L, -1L},
            {"min", Long.MIN_VALUE, Long.MIN_VALUE},
            {"max", Long.MAX_VALUE, Long.MAX_VALUE},
            {"min+1", Long.MIN_VALUE + 1, Long.MIN_VALUE + 1},
            {"max-1", Long.MAX_VALUE - 1, Long.MAX_VALUE - 1},
            {"round-second", nowTicks - nowTicks % 1_000_000_000L, nowMillis - nowMillis % 1000},
            {"round-minute", nowTicks - nowTicks % 60_000_000_000L, nowMillis - nowMillis % 60000},
            {"millis-frac", nowTicks + 1_000_000, nowMillis - nowMillis % 1000 + 7},
            {"y2038", nowTicks + 123_456, 2147483648000L},
            {"y10000", nowTicks + 1, 253402300800000L},
            {"pre-epoch", nowTicks - 1, -62135596800000L},
        };
        for (Object[] c : cases) {
            Timestamps e = new Timestamps();
            e.seq = seq();
            e.caseName = (String) c[0];
            e.ticks = (Long) c[1];
            e.millis = (Long) c[2];
            e.commit();
        }
    }

    static void commitTimespans() {
        long[] values = {0, 1, -1, 999, 1000, 1500, 59_999, 60_000, 86_400, 3_600_000_000L,
            86_400_000_000_000L, 123_456_789_012L, Long.MIN_VALUE, Long.MAX_VALUE,
            Long.MIN_VALUE + 1, Long.MAX_VALUE - 1, -86_400, Integer.MAX_VALUE,
            Integer.MIN_VALUE};
        for (long v : values) {
            Timespans e = new Timespans();
            e.seq = seq();
            e.caseName = Long.toString(v);
            e.ticks = v;
            e.nanos = v;
            e.micros = v;
            e.millis = v;
            e.seconds = v;
            e.intMillis = (int) v;
            e.commit();
        }
    }

    static void commitAmounts() {
        Object[][] cases = {
            {"zero", 0L, 0, 0.0f, 0.0, 0.0, false},
            {"one", 1L, 1, 1.0f, 1.0, 1.0, true},
            {"kib", 1024L, 1024, 0.25f, 0.25, 50.0, true},
            {"odd", 1023L, 1025, 0.5f, 0.999, 1e9, false},
            {"mib", 1048576L, 1048575, 1.5f, -0.5, 1e-3, true},
            {"gib", 1073741824L, Integer.MAX_VALUE, 0.0001f, 1e-7, 2.4e9, false},
            {"huge", 1L << 60, Integer.MIN_VALUE, 100.0f, 12345.678, Double.MAX_VALUE, true},
            {"max", Long.MAX_VALUE, -1, Float.NaN, Double.NaN, Double.NaN, false},
            {"min", Long.MIN_VALUE, -1024, Float.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY,
                Double.NEGATIVE_INFINITY, true},
            {"minus-one", -1L, -2, -0.0f, -0.0, -0.0, false},
        };
        for (Object[] c : cases) {
            long v = (Long) c[1];
            Amounts e = new Amounts();
            e.seq = seq();
            e.caseName = (String) c[0];
            e.bytes = v;
            e.bits = v;
            e.intBytes = (Integer) c[2];
            e.unsignedBytes = v;
            e.floatPercent = (Float) c[3];
            e.doublePercent = (Double) c[4];
            e.hertz = v;
            e.doubleHertz = (Double) c[5];
            e.address = v;
            e.flag = (Boolean) c[6];
            e.commit();
        }
    }

    static void commitAnnotatedAndDerived(long round) {
        for (int k = 0; k < 3; k++) {
            Annotated a = new Annotated();
            a.seq = seq();
            a.originalName = k == 0 ? null : "value " + k;
            a.tagged = k - 1;
            a.experimental = Long.MIN_VALUE + k;
            a.workId = round * 10 + k;
            a.onlyDescription = (short) (-k);
            a.commit();

            Derived d = new Derived();
            d.seq = seq();
            d.baseNote = k == 1 ? null : "base \u00e9 " + k;
            d.extra = k * 1000;
            d.owner = k == 2 ? null : Thread.currentThread();
            d.commit();

            Disabled off = new Disabled(); // @Enabled(false): never recorded
            off.seq = -1;
            off.commit();
        }
    }

    static void commitEdgeCases(List<Thread> namedThreads, long round) {
        commitScalars();
        commitStrings();
        commitReferences(namedThreads);
        commitUnsigned();
        commitTimestamps();
        commitTimespans();
        commitAmounts();
        commitAnnotatedAndDerived(round);
    }

    // ------------------------------------------------------------------- load

    static volatile long sink;
    static volatile boolean stop;
    static final Object MONITOR = new Object();
    static final ReentrantLock LOCK = new ReentrantLock();
    static final List<Object> RETAINED = new ArrayList<>();

    /** Recursion with real work at the bottom; depth varies per call. */
    static long recurse(int depth, long acc) {
        if (depth <= 0) {
            return spin(acc);
        }
        if ((depth & 3) == 0) {
            return recurseA(depth - 1, acc + depth);
        }
        return recurse(depth - 1, acc * 31 + depth);
    }

    static long recurseA(int depth, long acc) {
        return recurse(depth - 1, acc ^ (acc >>> 7));
    }

    static long spin(long acc) {
        double x = acc;
        for (int k = 0; k < 20_000; k++) {
            x = Math.sin(x) * 1.0000001 + Math.sqrt(Math.abs(x) + k);
        }
        return (long) x;
    }

    /** One jfrstream.Timed event per ~50 ms of recursion with varying depth. */
    static void cpuWorker(int id, int maxDepth) {
        int depth = 5 + id * 7;
        while (!stop) {
            Timed t = new Timed();
            t.begin();
            long until = System.nanoTime() + 50_000_000L;
            int deepest = 0;
            do {
                sink += recurse(depth, id);
                deepest = Math.max(deepest, depth);
                depth = depth >= maxDepth ? 5 : depth + 13;
            } while (System.nanoTime() < until && !stop);
            t.seq = seq();
            t.depth = deepest;
            t.kind = (deepest > 64) ? "deeper than 64 frames" : "shallow";
            t.commit();
            allocate(id);
        }
    }

    static void allocate(int id) {
        int n = 1 + (int) (sink & 7);
        List<Object> local = new ArrayList<>();
        for (int k = 0; k < 256 * n; k++) {
            local.add(new byte[64 + (k % 17) * 32]);
            local.add(new StringBuilder("s").append(k).append(id).toString());
        }
        synchronized (RETAINED) {
            RETAINED.add(new long[256 * n]);
            if ((sink & 3) == 0) {
                RETAINED.add(new byte[2 * 1024 * 1024]); // outside TLAB
            }
            if (RETAINED.size() > 100) {
                RETAINED.subList(0, 50).clear();
            }
        }
        sink += local.size();
    }

    /** Contended monitor, contended ReentrantLock, Object.wait, a thrown Error. */
    static void lockWorker(String name) {
        while (!stop) {
            phase();
            for (int k = 0; k < 2 && !stop; k++) {
                synchronized (MONITOR) {
                    sleep(30); // the other lock worker blocks: jdk.JavaMonitorEnter
                }
            }
            phase();
            for (int k = 0; k < 2 && !stop; k++) {
                LOCK.lock();
                try {
                    sleep(30); // the other lock worker parks: jdk.ThreadPark
                } finally {
                    LOCK.unlock();
                }
            }
            synchronized (name) {
                try {
                    name.wait(25); // jdk.JavaMonitorWait
                } catch (InterruptedException e) {
                    return;
                }
            }
            try {
                throw new ExpectedError("expected error from " + name);
            } catch (ExpectedError e) {
                sink += e.getMessage().length();
            }
        }
    }

    static final CyclicBarrier PHASE = new CyclicBarrier(2);

    /** Keeps the two lock workers in the same phase, so that they contend. */
    static void phase() {
        try {
            PHASE.await(200, TimeUnit.MILLISECONDS);
        } catch (InterruptedException | BrokenBarrierException | TimeoutException e) {
            PHASE.reset();
        }
    }

    static final class ExpectedError extends Error {
        ExpectedError(String m) {
            super(m);
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static String bulkPayload(int k) {
        StringBuilder sb = new StringBuilder(1100);
        sb.append("bulk #").append(k).append(' ');
        String[] words = {"alpha", "\u00e9t\u00e9", "\u4e2d\u6587", "\ud83d\ude00", "omega",
            "\u0440\u0443\u0441", "x"};
        long h = k * 0x9E3779B97F4A7C15L;
        while (sb.length() < 1000) {
            h ^= h >>> 29;
            h *= 0xBF58476D1CE4E5B9L;
            sb.append(words[(int) ((h >>> 33) % words.length)]).append(' ').append(h & 0xffff);
        }
        return sb.toString();
    }

    static Thread startVirtualIfAvailable(Runnable r) {
        try {
            Method m = Thread.class.getMethod("ofVirtual");
            Object builder = m.invoke(null);
            Method name = builder.getClass().getMethod("name", String.class);
            name.setAccessible(true);
            builder = name.invoke(builder, "virtual-\u00e9-\ud83d\ude00");
            Method start = builder.getClass().getMethod("start", Runnable.class);
            start.setAccessible(true);
            return (Thread) start.invoke(builder, r);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null; // JDK < 21
        }
    }

    // ------------------------------------------------------------------- main

    public static void main(String[] args) throws Exception {
        double seconds = 2;
        int threads = 2;
        int edgeRounds = 1;
        int bulk = 0;
        int depth = 90;
        int rotate = 0;
        boolean quiet = false;
        for (int k = 0; k < args.length; k++) {
            switch (args[k]) {
                case "--seconds" -> seconds = Double.parseDouble(args[++k]);
                case "--threads" -> threads = Integer.parseInt(args[++k]);
                case "--edge-rounds" -> edgeRounds = Integer.parseInt(args[++k]);
                case "--bulk" -> bulk = Integer.parseInt(args[++k]);
                case "--depth" -> depth = Integer.parseInt(args[++k]);
                case "--rotate" -> rotate = Integer.parseInt(args[++k]);
                case "--quiet" -> quiet = true;
                default -> {
                    System.err.println("usage: java Workload.java [--seconds S] [--threads N]"
                            + " [--edge-rounds N] [--bulk N] [--depth N] [--rotate N] [--quiet]");
                    System.exit(2);
                }
            }
        }
        final int maxDepth = depth;
        long t0 = System.nanoTime();

        // Load every class and register every event class now, before any
        // other thread runs. JDK 17 can deadlock otherwise: the source
        // launcher's class loader is not parallel capable, and a thread that
        // registers an event class (holding JFR's MetadataRepository lock) may
        // need that loader while another thread, inside the loader, waits for
        // the MetadataRepository lock (JFR's eager-instrumentation upcall).
        ClassLoader loader = Workload.class.getClassLoader();
        for (Class<?> c : Workload.class.getDeclaredClasses()) {
            Class.forName(c.getName(), true, loader);
        }
        for (Class<?> c : Workload.class.getDeclaredClasses()) {
            if (Event.class.isAssignableFrom(c) && !java.lang.reflect.Modifier.isAbstract(c.getModifiers())) {
                FlightRecorder.register(c.asSubclass(Event.class));
            }
        }

        FlightRecorder.addPeriodicEvent(Periodic.class, () -> {
            Periodic p = new Periodic();
            p.seq = seq();
            p.usedHeap = Runtime.getRuntime().totalMemory() - Runtime.getRuntime().freeMemory();
            p.liveThreads = Thread.activeCount();
            p.commit();
        });

        String[] names = {
            "cpu-w\u00f6rker-%d \u2615",
            "\ubd84\uc11d-%d",
            "\u043f\u043e\u0442\u043e\u043a-%d",
            "emoji-\ud83d\ude00-%d",
            "tab\tquote\"back\\slash-%d",
        };
        List<Thread> all = new ArrayList<>();
        CountDownLatch started = new CountDownLatch(threads + 2);
        for (int k = 0; k < threads; k++) {
            final int id = k;
            Thread t = new Thread(() -> {
                started.countDown();
                cpuWorker(id, maxDepth);
            }, String.format(names[k % names.length], k));
            all.add(t);
        }
        for (int k = 0; k < 2; k++) {
            final String name = String.format("l\u00f6ck-%d-\u4e2d", k);
            Thread t = new Thread(() -> {
                started.countDown();
                lockWorker(name);
            }, name);
            all.add(t);
        }
        for (Thread t : all) {
            t.start();
        }
        started.await();
        Thread vt = startVirtualIfAvailable(() -> {
            for (int k = 0; k < 5; k++) {
                sleep(25);
                References e = new References();
                e.seq = seq();
                e.caseName = "virtual-thread";
                e.thread = Thread.currentThread();
                e.clazz = Thread.currentThread().getClass();
                e.commit();
            }
        });

        long round = 0;
        for (; round < edgeRounds; round++) {
            commitEdgeCases(all, round);
        }

        long deadline = t0 + (long) (seconds * 1e9);
        int bulkDone = 0;
        int rotated = 0;
        boolean gcDone = false;
        while (true) {
            long now = System.nanoTime();
            if (now >= deadline && bulkDone >= bulk) {
                break;
            }
            if (rotated < rotate && now - t0 >= (rotated + 1) * seconds * 1e9 / (rotate + 1)) {
                try (Recording r = new Recording()) {
                    r.enable(Periodic.class).withPeriod(java.time.Duration.ofMillis(100));
                    r.start(); // a new recording rotates the chunk
                    sleep(20);
                    r.stop();
                }
                rotated++;
            }
            if (bulkDone < bulk) {
                // spread the bulk events over the run, ~20 batches per second
                double frac = Math.min(1.0, (now - t0) / (seconds * 1e9));
                int target = Math.max(bulkDone + 1, (int) Math.ceil(bulk * frac));
                if (now >= deadline) {
                    target = bulk;
                }
                while (bulkDone < target) {
                    Bulk b = new Bulk();
                    b.seq = seq();
                    b.index = bulkDone;
                    b.payload = bulkPayload(bulkDone);
                    b.payloadBytes = b.payload.length() * 2L;
                    b.commit();
                    bulkDone++;
                }
            }
            if (!gcDone && now - t0 > seconds * 0.5e9) {
                System.gc(); // jdk.GarbageCollection & co
                gcDone = true;
            }
            sleep(50);
        }
        // one more set at the end: the same strings again, later in the chunk(s)
        commitEdgeCases(all, round);

        stop = true;
        for (Thread t : all) {
            t.join();
        }
        if (vt != null) {
            vt.join();
        }
        if (!quiet) {
            System.err.printf("Workload: %.1f s, %d custom events committed (seq), %d bulk, sink %d%n",
                    (System.nanoTime() - t0) / 1e9, SEQ.get(), bulkDone, sink & 0xff);
        }
    }
}
