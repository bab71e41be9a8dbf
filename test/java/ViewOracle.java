import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import jdk.jfr.consumer.EventStream;

/*
 * ViewOracle.java — JDK 25's own `jfr view` of many views of one file in one
 * JVM, each view isolated (its exception does not stop the others):
 *
 *   java --add-opens jdk.jfr/jdk.jfr.internal.query=ALL-UNNAMED \
 *        --add-opens jdk.jfr/jdk.jfr.internal.util=ALL-UNNAMED \
 *        ViewOracle.java FILE [--verbose] [--width N] [--truncate beginning|end]
 *        [--cell-height N] -- (VIEW | QUERY)...
 *
 * For each VIEW, a line "\u0001VIEW <name>", then the text `jfr view` prints
 * for it (the jdk.jfr.internal.query.ViewPrinter that View.java runs, with
 * the same Configuration), or a line "\u0001FAIL <exception>" where the JDK
 * throws. The "Execution: ..." line of --verbose is the JDK's own timing.
 *
 * An argument after -- whose first word is SELECT, COLUMN or FORMAT (any
 * case; no view's name is one) is a query instead: a line "\u0001QUERY
 * <query>" (its newlines written as spaces), then the text the debug-build
 * command `jfr query` prints for it (jdk.jfr.internal.query.QueryPrinter,
 * the Configuration of tool/Query.java: --verbose also sets verboseHeaders),
 * or the "\u0001FAIL <exception>" line. Views and queries may be mixed.
 *
 * Several files or option sets in one JVM (its start and the compilation
 * of this file once, and the JIT warm for the rest): jobs separated by an
 * argument "--next", each "FILE [options] -- (VIEW | QUERY)..."; each job's
 * output starts with a line "\u0001JOB <index>" when there is more than one.
 * An exception in the stream's event handlers (the query's field getters:
 * topApplicationFrame of a frame without a class) leaves out that event,
 * and `jfr query` prints its stack trace and the table of the rest; in
 * query mode that is the FAIL line of the first such exception.
 */
public class ViewOracle {
    public static void main(String[] args) throws Exception {
        List<List<String>> jobs = new ArrayList<>();
        jobs.add(new ArrayList<>());
        for (String a : args) {
            if (a.equals("--next")) {
                jobs.add(new ArrayList<>());
            } else {
                jobs.getLast().add(a);
            }
        }
        StringBuilder sb = new StringBuilder();
        for (int j = 0; j < jobs.size(); j++) {
            if (jobs.size() > 1) {
                sb.append("\u0001JOB ").append(j).append('\n');
            }
            job(jobs.get(j).toArray(new String[0]), sb);
        }
        System.out.print(sb);
    }

    private static void job(String[] args, StringBuilder sb) throws Exception {
        Path file = Path.of(args[0]);
        boolean verbose = false;
        int width = 0, cellHeight = 0;
        String truncate = null;
        int i = 1;
        for (; i < args.length && !args[i].equals("--"); i++) {
            switch (args[i]) {
                case "--verbose" -> verbose = true;
                case "--width" -> width = Integer.parseInt(args[++i]);
                case "--cell-height" -> cellHeight = Integer.parseInt(args[++i]);
                case "--truncate" -> truncate = args[++i];
                default -> throw new IllegalArgumentException(args[i]);
            }
        }
        Class<?> conf = Class.forName("jdk.jfr.internal.query.Configuration");
        Class<?> out = Class.forName("jdk.jfr.internal.util.Output");
        Class<?> lines = Class.forName("jdk.jfr.internal.util.Output$LinePrinter");
        Class<?> printer = Class.forName("jdk.jfr.internal.query.ViewPrinter");
        Class<?> trunc = Class.forName("jdk.jfr.internal.query.Configuration$Truncate");
        Constructor<?> makePrinter = printer.getConstructor(conf, EventStream.class);
        Method execute = printer.getMethod("execute", String.class);
        Class<?> qprinter = Class.forName("jdk.jfr.internal.query.QueryPrinter");
        Constructor<?> makeQueryPrinter = qprinter.getConstructor(conf, EventStream.class);
        Method executeQuery = qprinter.getMethod("execute", String.class);
        Method getLines = lines.getMethod("getLines");
        for (i = i + 1; i < args.length; i++) {
            String view = args[i];
            boolean query = isQuery(view);
            if (query) {
                sb.append("\u0001QUERY ").append(view.replace('\n', ' ')).append('\n');
            } else {
                sb.append("\u0001VIEW ").append(view).append('\n');
            }
            Object c = conf.getConstructor().newInstance();
            Object lp = lines.getConstructor().newInstance();
            conf.getField("output").set(c, lp);
            conf.getField("verbose").setBoolean(c, verbose);
            if (query) {
                conf.getField("verboseHeaders").setBoolean(c, verbose);
            }
            conf.getField("width").setInt(c, width);
            conf.getField("cellHeight").setInt(c, cellHeight);
            if (truncate != null) {
                Field t = conf.getField("truncate");
                for (Object e : trunc.getEnumConstants()) {
                    if (e.toString().equalsIgnoreCase(truncate)) {
                        t.set(c, e);
                    }
                }
            }
            try (EventStream stream = EventStream.openFile(file)) {
                if (query) {
                    List<Throwable> errors = new ArrayList<>();
                    stream.onError(errors::add);
                    executeQuery.invoke(makeQueryPrinter.newInstance(c, stream), view);
                    if (!errors.isEmpty()) {
                        throw new java.lang.reflect.InvocationTargetException(errors.getFirst());
                    }
                } else {
                    execute.invoke(makePrinter.newInstance(c, stream), view);
                }
                @SuppressWarnings("unchecked")
                List<String> text = (List<String>) getLines.invoke(lp);
                for (String line : text) {
                    sb.append(line).append('\n');
                }
            } catch (java.lang.reflect.InvocationTargetException e) {
                sb.append("\u0001FAIL ").append(String.valueOf(e.getCause()).replace('\n', ' ')).append('\n');
            }
        }
    }

    private static boolean isQuery(String arg) {
        String[] words = arg.strip().split("\\s+", 2);
        return switch (words[0].toUpperCase(java.util.Locale.ROOT)) {
            case "SELECT", "COLUMN", "FORMAT" -> true;
            default -> false;
        };
    }
}
