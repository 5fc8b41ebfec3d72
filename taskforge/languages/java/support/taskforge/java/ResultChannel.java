package taskforge.java;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.GeneralSecurityException;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * Each test's outcome as it happens, signed: the grader's record of what the tests did, which
 * code in the test JVM cannot rewrite afterwards.
 *
 * <p>The launcher's XML report is written by the JVM the solution's code runs in, at the end of
 * the run: a shutdown hook or a thread of the solution could rewrite it after the tests ran
 * (a failure whose stack trace names the solution's class dropped, every canary left as it
 * was). So when the system property {@code taskforge.channel} names a directory, this
 * listener, created by the launcher before any test or code under test runs, reads the key
 * the grader left there in {@code key}, deletes the file, and appends one line per finished
 * or skipped test to {@code results}: {@code HMAC-SHA256(key, n TAB status TAB unique id)} in
 * hex, then that text ({@code n} counts the lines). The solution may read the lines, drop or
 * repeat them; it cannot make one (the key is in this object only, to which no code of the
 * tests holds a reference), so a test whose line is missing did not pass.
 *
 * <p>A test failed by {@code assertEquals} has one more field in the signed text: what the
 * assertion compared, {@code [[type, text] of the expected value, [type, text] of the actual]}
 * in JSON, read from JUnit 5's {@code org.opentest4j.AssertionFailedError} or JUnit 4's
 * {@code org.junit.ComparisonFailure} (those classes exactly: a subclass could say anything),
 * so the grader can tell how a test it changed failed (its expectation copies). JUnit 4
 * compares anything but two strings ({@code assertEquals(long, long)}, two objects) with a
 * plain {@code java.lang.AssertionError} thrown by {@code Assert.failNotEquals}, whose message
 * alone says what it compared: {@code expected:<5> but was:<6>} (after the assertion's own
 * message), read back where it can be read one way only, with no type ({@code ""}); its
 * {@code assertTrue} and {@code assertFalse} fail with no message of their own, so what they
 * compared comes from the stack trace: the boolean expected and the other. Without these, a
 * stub that answered the grading run only and threw in the copies' run failed a changed
 * JUnit 4 test as the original code does (nothing compared on either side), and scored 1.0.
 * A message made to look like one helps only code that knows the value the test expected
 * before: the answer.
 */
public class ResultChannel implements TestExecutionListener {
    private final Mac mac;
    private final OutputStream out;
    private long lines;

    public ResultChannel() {
        String d = System.getProperty("taskforge.channel");
        Mac made = null;
        OutputStream opened = null;
        if (d != null && !d.isEmpty()) {
            Path dir = Paths.get(d);
            try {
                byte[] key = Files.readAllBytes(dir.resolve("key"));
                Files.delete(dir.resolve("key"));
                made = Mac.getInstance("HmacSHA256");
                made.init(new SecretKeySpec(key, "HmacSHA256"));
                opened = new FileOutputStream(dir.resolve("results").toFile(), true);
            } catch (IOException | GeneralSecurityException e) {
                made = null;  // no channel: no test is reported, and none passes
                opened = null;
            }
        }
        this.mac = made;
        this.out = opened;
    }

    @Override
    public void executionSkipped(TestIdentifier id, String reason) {
        if (id.isTest()) {
            write("SKIPPED", id, null);
        }
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        if (!id.isTest()) {
            return;
        }
        String status = result.getStatus().name();
        Throwable thrown = result.getThrowable().orElse(null);
        // as the launcher's XML tells them apart: an assertion fails, any other throwable errs
        if (result.getStatus() == TestExecutionResult.Status.FAILED
                && !(thrown instanceof AssertionError)) {
            status = "ERRORED";
        }
        write(status, id, "FAILED".equals(status) ? compared(thrown) : null);
    }

    private static final int LONGEST = 100000;

    /** What the assertion that threw {@code thrown} compared, as JSON; null where unknown. */
    static String compared(Throwable thrown) {
        if (thrown == null) {
            return null;
        }
        String kind = thrown.getClass().getName();
        if (kind.equals("java.lang.AssertionError")) {
            String condition = junit4Condition(thrown);
            return condition != null ? condition : junit4NotEquals(thrown);
        }
        if (!kind.equals("org.opentest4j.AssertionFailedError")
                && !kind.equals("org.junit.ComparisonFailure")) {
            return null;
        }
        try {
            if (kind.startsWith("org.opentest4j.")
                    && !(Boolean.TRUE.equals(call(thrown, "isExpectedDefined"))
                         && Boolean.TRUE.equals(call(thrown, "isActualDefined")))) {
                return null;
            }
            return "[" + side(call(thrown, "getExpected")) + "," + side(call(thrown, "getActual")) + "]";
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    private static final String BEFORE = "expected:<";
    private static final String BETWEEN = "> but was:<";

    /** JUnit 4's {@code failNotEquals}: {@code expected:<A> but was:<B>}, after the
     * assertion's message and a space if it has one, where {@code BEFORE} and {@code BETWEEN}
     * each occur once; null otherwise. */
    private static String junit4NotEquals(Throwable thrown) {
        StackTraceElement[] frames = thrown.getStackTrace();
        String message = thrown.getMessage();
        if (frames.length < 2 || message == null
                || !frames[0].getClassName().equals("org.junit.Assert")
                || !frames[0].getMethodName().equals("fail")
                || !frames[1].getClassName().equals("org.junit.Assert")
                || !frames[1].getMethodName().equals("failNotEquals")
                || !message.endsWith(">")) {
            return null;
        }
        int before = message.indexOf(BEFORE);
        int between = message.indexOf(BETWEEN);
        if (before < 0 || message.indexOf(BEFORE, before + 1) >= 0
                || (before > 0 && message.charAt(before - 1) != ' ')
                || between < before + BEFORE.length() || message.indexOf(BETWEEN, between + 1) >= 0
                || between + BETWEEN.length() > message.length() - 1) {
            return null;
        }
        return "[[\"\"," + json(message.substring(before + BEFORE.length(), between)) + "],[\"\","
            + json(message.substring(between + BETWEEN.length(), message.length() - 1)) + "]]";
    }

    /** JUnit 4's {@code assertTrue} or {@code assertFalse} called by the test that failed
     * (its {@code fail} called by {@code assertTrue(String, boolean)}, which {@code assertFalse}
     * calls with the condition negated, each perhaps by its overload without a message): what
     * it expected against what it got; null otherwise ({@code assertNotNull} calls
     * {@code assertTrue} too). */
    private static String junit4Condition(Throwable thrown) {
        StackTraceElement[] frames = thrown.getStackTrace();
        if (frames.length < 3 || !isAssert(frames[0], "fail") || !isAssert(frames[1], "assertTrue")) {
            return null;
        }
        int next = 2;
        while (next < frames.length && isAssert(frames[next], "assertTrue")) {
            next++;
        }
        boolean negated = next < frames.length && isAssert(frames[next], "assertFalse");
        while (next < frames.length && isAssert(frames[next], "assertFalse")) {
            next++;
        }
        if (next >= frames.length || frames[next].getClassName().equals("org.junit.Assert")) {
            return null;
        }
        return negated ? "[[\"\",\"false\"],[\"\",\"true\"]]" : "[[\"\",\"true\"],[\"\",\"false\"]]";
    }

    private static boolean isAssert(StackTraceElement frame, String method) {
        return frame.getClassName().equals("org.junit.Assert") && frame.getMethodName().equals(method);
    }

    private static Object call(Object target, String method) throws ReflectiveOperationException {
        return target.getClass().getMethod(method).invoke(target);
    }

    /** One side: opentest4j's ValueWrapper (the value's type and text), or JUnit 4's text. */
    private static String side(Object wrapped) throws ReflectiveOperationException {
        if (wrapped == null || wrapped instanceof String) {
            return "[" + json(wrapped == null ? "null" : "java.lang.String") + ","
                + json((String) wrapped) + "]";
        }
        Object value = call(wrapped, "getValue");
        Object text = call(wrapped, "getStringRepresentation");
        return "[" + json(value == null ? "null" : value.getClass().getName()) + ","
            + json(text == null ? null : String.valueOf(text)) + "]";
    }

    private static String json(String text) {
        if (text == null) {
            return "null";
        }
        if (text.length() > LONGEST) {
            return "null";
        }
        StringBuilder out = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }

    private synchronized void write(String status, TestIdentifier id, String compared) {
        if (mac == null || out == null) {
            return;
        }
        String text = (lines++) + "\t" + status + "\t" + id.getUniqueId()
            + (compared == null ? "" : "\t" + compared);
        byte[] sum = mac.doFinal(text.getBytes(StandardCharsets.UTF_8));
        StringBuilder line = new StringBuilder(sum.length * 2 + text.length() + 2);
        for (byte b : sum) {
            line.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        line.append('\t').append(text).append('\n');
        try {
            out.write(line.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
        } catch (IOException e) {
            // a line not written is a test not reported: it did not pass
        }
    }
}
