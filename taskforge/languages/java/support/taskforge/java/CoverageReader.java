package taskforge.java;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.jacoco.core.analysis.Analyzer;
import org.jacoco.core.analysis.CoverageBuilder;
import org.jacoco.core.analysis.IClassCoverage;
import org.jacoco.core.analysis.ICounter;
import org.jacoco.core.analysis.IMethodCoverage;
import org.jacoco.core.data.ExecutionData;
import org.jacoco.core.data.ExecutionDataStore;
import org.jacoco.core.tools.ExecFileLoader;

/**
 * Turns the listener's per-node exec files into covered lines and methods per source file.
 *
 * <p>usage: {@code CoverageReader COVERAGE_DIR CLASSES_DIR [--with-ancestors]}
 *
 * <p>Part of taskforge's Java support (built with javac when an environment is built).
 *
 * <p>Prints one JSON object per line for each test in {@code index.tsv}:
 * {@code {"id": ..., "status": ..., "lines": {"pkg/File.java": [n, ...]}, "methods": ["pkg/Cls#name(desc)", ...]}}.
 * A line counts as covered when at least one of its instructions ran. With {@code --with-ancestors}
 * a test also gets what ran in its containers (class-level setup, shared by all their tests).
 * Only the classes a test touched are analysed, straight from {@code CLASSES_DIR}; class files whose
 * id (CRC64) differs from the recorded one are skipped by JaCoCo as mismatched.
 */
public final class CoverageReader {
    private CoverageReader() {
    }

    public static void main(String[] args) throws IOException {
        Path dir = Paths.get(args[0]);
        File classes = new File(args[1]);
        boolean withAncestors = args.length > 2 && args[2].equals("--with-ancestors");
        Map<String, String[]> byId = new TreeMap<>();
        Path index = dir.resolve("index.tsv");
        List<String> rows = Files.exists(index) ? Files.readAllLines(index, StandardCharsets.UTF_8)
                : new ArrayList<>();
        for (String line : rows) {
            String[] f = line.split("\t", -1);
            byId.put(f[4], f);
        }
        // -Dtaskforge.coverage.out=FILE: the JSON lines go there (a sandbox keeps only the
        // tail of a command's output)
        String target = System.getProperty("taskforge.coverage.out");
        PrintStream out = target == null ? new PrintStream(System.out, false, "UTF-8")
                : new PrintStream(Files.newOutputStream(Paths.get(target)), false, "UTF-8");
        for (String[] f : byId.values()) {
            if (!f[1].equals("test")) {
                continue;
            }
            ExecFileLoader loader = new ExecFileLoader();
            load(loader, dir.resolve(f[0]));
            if (withAncestors) {
                for (String p = f[3]; byId.containsKey(p); p = byId.get(p)[3]) {
                    load(loader, dir.resolve(byId.get(p)[0]));
                }
            }
            out.println(toJson(f[4], f[2], analyze(loader.getExecutionDataStore(), classes)));
        }
        // What ran outside any test or container (before the first, after the last): id "".
        ExecFileLoader outside = new ExecFileLoader();
        load(outside, dir.resolve("_outside.exec"));
        out.println(toJson("", "OUTSIDE", analyze(outside.getExecutionDataStore(), classes)));
        out.flush();
        if (target != null) {
            out.close();
        }
    }

    private static void load(ExecFileLoader loader, Path file) throws IOException {
        if (Files.exists(file)) {
            loader.load(file.toFile());
        }
    }

    static CoverageBuilder analyze(ExecutionDataStore store, File classes) throws IOException {
        CoverageBuilder builder = new CoverageBuilder();
        Analyzer analyzer = new Analyzer(store, builder);
        for (ExecutionData d : store.getContents()) {
            if (!d.hasHits()) {
                continue;
            }
            File cls = new File(classes, d.getName() + ".class");
            if (cls.isFile()) {
                try (InputStream in = Files.newInputStream(cls.toPath())) {
                    analyzer.analyzeClass(in, cls.getPath());
                }
            }
        }
        return builder;
    }

    static String toJson(String id, String status, CoverageBuilder b) {
        Map<String, TreeSet<Integer>> lines = new TreeMap<>();
        List<String> methods = new ArrayList<>();
        for (IClassCoverage c : b.getClasses()) {
            String pkg = c.getPackageName();
            String src = (pkg.isEmpty() ? "" : pkg + "/") + c.getSourceFileName();
            TreeSet<Integer> set = lines.computeIfAbsent(src, k -> new TreeSet<>());
            for (int n = c.getFirstLine(); n >= 0 && n <= c.getLastLine(); n++) {
                int s = c.getLine(n).getStatus();
                if (s == ICounter.FULLY_COVERED || s == ICounter.PARTLY_COVERED) {
                    set.add(n);
                }
            }
            for (IMethodCoverage m : c.getMethods()) {
                if (m.getMethodCounter().getCoveredCount() > 0) {
                    methods.add(c.getName() + "#" + m.getName() + m.getDesc() + ":" + m.getFirstLine());
                }
            }
            if (set.isEmpty()) {
                lines.remove(src);
            }
        }
        StringBuilder j = new StringBuilder("{\"id\": ").append(str(id)).append(", \"status\": ").append(str(status));
        j.append(", \"lines\": {");
        String sep = "";
        for (Map.Entry<String, TreeSet<Integer>> e : lines.entrySet()) {
            j.append(sep).append(str(e.getKey())).append(": ").append(e.getValue().toString());
            sep = ", ";
        }
        j.append("}, \"methods\": [");
        sep = "";
        for (String m : methods) {
            j.append(sep).append(str(m));
            sep = ", ";
        }
        return j.append("]}").toString();
    }

    private static String str(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') {
                b.append('\\').append(ch);
            } else if (ch < 0x20) {
                b.append(String.format("\\u%04x", (int) ch));
            } else {
                b.append(ch);
            }
        }
        return b.append('"').toString();
    }
}
