import java.io.BufferedReader;
import java.io.File;
import java.io.StringWriter;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * Runs many mutants in one warm JVM: each mutant's file is compiled in process (javax.tools)
 * into its own directory, then the tests run through the JUnit Platform Launcher API in a fresh
 * URLClassLoader [mutant classes, original classes, test classes] whose parent holds only JUnit.
 *
 * usage: MutantRunner MANIFEST CLASSES TEST_CLASSES RELEASE FIRST_INDEX TIMEOUT_S
 * MANIFEST lines: id TAB mutant-dir TAB java-file TAB test classes (comma-separated, or * for all)
 * Prints "RESULT id compile-error|killed|survived failures tests" per mutant. A mutant still
 * running after TIMEOUT_S makes the runner print "TIMEOUT id" and halt; the driver restarts it.
 */
public final class MutantRunner {
    private static volatile long started;
    private static volatile String current;

    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8);
        File classes = new File(args[1]);
        File testClasses = new File(args[2]);
        String release = args[3];
        int first = Integer.parseInt(args[4]);
        long timeoutMs = Long.parseLong(args[5]) * 1000;
        Thread dog = new Thread(() -> {
            while (true) {
                try {
                    Thread.sleep(500);
                } catch (InterruptedException e) {
                    return;
                }
                if (current != null && System.currentTimeMillis() - started > timeoutMs) {
                    System.out.println("TIMEOUT " + current);
                    System.out.flush();
                    Runtime.getRuntime().halt(3);
                }
            }
        });
        dog.setDaemon(true);
        dog.start();
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        for (int i = first; i < lines.size(); i++) {
            String[] f = lines.get(i).split("\t", -1);
            current = f[0];
            started = System.currentTimeMillis();
            File out = new File(f[1], "classes");
            out.mkdirs();
            StringWriter err = new StringWriter();
            boolean ok = javac.getTask(err, null, null,
                    Arrays.asList("--release", release, "-nowarn", "-d", out.getPath(), "-cp", classes.getPath()),
                    null, javac.getStandardFileManager(null, null, StandardCharsets.UTF_8)
                            .getJavaFileObjects(f[2])).call();
            if (!ok) {
                System.out.println("RESULT " + f[0] + " compile-error 0 0");
                continue;
            }
            URL[] urls = {out.toURI().toURL(), classes.toURI().toURL(), testClasses.toURI().toURL()};
            ClassLoader prev = Thread.currentThread().getContextClassLoader();
            try (URLClassLoader loader = new URLClassLoader(urls, MutantRunner.class.getClassLoader())) {
                Thread.currentThread().setContextClassLoader(loader);
                List<DiscoverySelector> sel = new ArrayList<>();
                if (f[3].equals("*")) {
                    sel.addAll(DiscoverySelectors.selectClasspathRoots(
                            java.util.Collections.singleton(testClasses.toPath())));
                } else {
                    for (String c : f[3].split(",")) {
                        sel.add(DiscoverySelectors.selectClass(loader.loadClass(c)));
                    }
                }
                LauncherDiscoveryRequest req = LauncherDiscoveryRequestBuilder.request().selectors(sel).build();
                Launcher launcher = LauncherFactory.create();
                SummaryGeneratingListener summary = new SummaryGeneratingListener();
                launcher.execute(req, summary);
                TestExecutionSummary s = summary.getSummary();
                long bad = s.getTotalFailureCount();
                System.out.println("RESULT " + f[0] + " " + (bad > 0 ? "killed" : "survived") + " " + bad
                        + " " + s.getTestsFoundCount());
            } finally {
                Thread.currentThread().setContextClassLoader(prev);
            }
            System.out.flush();
        }
        current = null;
    }
}
