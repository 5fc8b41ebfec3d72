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
            write("SKIPPED", id);
        }
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        if (!id.isTest()) {
            return;
        }
        String status = result.getStatus().name();
        // as the launcher's XML tells them apart: an assertion fails, any other throwable errs
        if (result.getStatus() == TestExecutionResult.Status.FAILED
                && !(result.getThrowable().orElse(null) instanceof AssertionError)) {
            status = "ERRORED";
        }
        write(status, id);
    }

    private synchronized void write(String status, TestIdentifier id) {
        if (mac == null || out == null) {
            return;
        }
        String text = (lines++) + "\t" + status + "\t" + id.getUniqueId();
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
