package taskforge.java;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayDeque;
import java.util.Deque;

import org.jacoco.agent.rt.IAgent;
import org.jacoco.agent.rt.RT;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Per-test JaCoCo coverage for the JUnit Platform.
 *
 * <p>Active only when the system property {@code taskforge.coverage.dir} names a directory and the
 * JaCoCo agent is attached ({@code -javaagent:jacocoagent.jar=output=none,jmx=false}). Whatever the
 * agent recorded between two execution events is taken with {@code getExecutionData(true)} (which
 * resets the probes) and appended to the exec file of the node that was running: the innermost
 * started test or container, or {@code _outside} before the first and after the last. So a test's
 * file holds exactly what ran while it ran (its {@code @BeforeEach}/{@code @AfterEach} included),
 * and a class's container file what ran in its {@code @BeforeAll}, static initializers and
 * constructors shared by its tests. Concatenated exec dumps are a valid exec file.
 *
 * <p>{@code index.tsv} gets one line per finished node: file, kind (test/container), status
 * (SUCCESSFUL/FAILED/ABORTED/SKIPPED), parent unique id, unique id. Parallel execution would blur
 * the attribution: run with {@code junit.jupiter.execution.parallel.enabled=false} (the default).
 */
public class PerTestCoverageListener implements TestExecutionListener {
    private static final String OUTSIDE = "_outside";

    private final Path dir;
    private final Deque<String> running = new ArrayDeque<>();
    private IAgent agent;
    private TestPlan plan;

    public PerTestCoverageListener() {
        String d = System.getProperty("taskforge.coverage.dir");
        this.dir = d == null || d.isEmpty() ? null : Paths.get(d);
    }

    @Override
    public void testPlanExecutionStarted(TestPlan testPlan) {
        if (dir == null) {
            return;
        }
        this.plan = testPlan;
        try {
            agent = RT.getAgent();
        } catch (IllegalStateException | NoClassDefFoundError e) {
            System.err.println("taskforge.coverage: no JaCoCo agent attached: " + e);
            return;
        }
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        flushTo(OUTSIDE);
    }

    @Override
    public void executionStarted(TestIdentifier id) {
        if (agent == null) {
            return;
        }
        flushTo(current());
        running.push(id.getUniqueId());
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        if (agent == null) {
            return;
        }
        flushTo(id.getUniqueId());
        running.remove(id.getUniqueId());
        index(id, result.getStatus().name());
    }

    @Override
    public void executionSkipped(TestIdentifier id, String reason) {
        if (agent != null) {
            index(id, "SKIPPED");
        }
    }

    @Override
    public void testPlanExecutionFinished(TestPlan testPlan) {
        if (agent != null) {
            flushTo(OUTSIDE);
        }
    }

    private String current() {
        return running.isEmpty() ? OUTSIDE : running.peek();
    }

    private void flushTo(String uniqueId) {
        byte[] data = agent.getExecutionData(true);
        append(dir.resolve(fileName(uniqueId)), data);
    }

    private void index(TestIdentifier id, String status) {
        String parent = plan.getParent(id).map(TestIdentifier::getUniqueId).orElse("");
        String line = fileName(id.getUniqueId()) + "\t" + (id.isTest() ? "test" : "container") + "\t"
                + status + "\t" + parent + "\t" + id.getUniqueId() + "\n";
        append(dir.resolve("index.tsv"), line.getBytes(StandardCharsets.UTF_8));
    }

    static String fileName(String uniqueId) {
        if (OUTSIDE.equals(uniqueId)) {
            return OUTSIDE + ".exec";
        }
        try {
            byte[] h = MessageDigest.getInstance("SHA-1").digest(uniqueId.getBytes(StandardCharsets.UTF_8));
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < 10; i++) {
                b.append(String.format("%02x", h[i]));
            }
            return b.append(".exec").toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void append(Path file, byte[] data) {
        try (OutputStream out = Files.newOutputStream(file, StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
            out.write(data);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
