import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.nio.file.Files;
import java.nio.file.Path;

/*
 * QueryOracle.java — JDK 25's own parse of the queries of a file
 * (test/data/queries.txt): for each line "Q QUERY" ("\n" in it stands for a
 * newline), the line "A OK <Query.toString()>" or "A ERR <offset> <message>"
 * of the JDK's jdk.jfr.internal.query.Query (run with --add-opens
 * jdk.jfr/jdk.jfr.internal.query=ALL-UNNAMED). Newlines in a message are
 * written "\n".
 */
public class QueryOracle {
    public static void main(String[] args) throws Exception {
        Class<?> query = Class.forName("jdk.jfr.internal.query.Query");
        Constructor<?> make = query.getDeclaredConstructor(String.class);
        make.setAccessible(true);
        for (String line : Files.readAllLines(Path.of(args[0]))) {
            if (!line.startsWith("Q ")) {
                continue;
            }
            String text = line.substring(2).replace("\\n", "\n");
            String answer;
            try {
                answer = "OK " + make.newInstance(text);
            } catch (InvocationTargetException e) {
                if (e.getCause() instanceof java.text.ParseException pe) {
                    answer = "ERR " + pe.getErrorOffset() + " " + pe.getMessage();
                } else {
                    answer = "EXC " + e.getCause();
                }
            }
            System.out.println("A " + answer.replace("\n", "\\n"));
        }
    }
}
