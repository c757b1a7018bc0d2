package io.cqflux.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Keeps docs/interop.md what its lane test runs: every code block is a tagged region of
 * {@code RpmaInteropTest} (the same rule as {@link GuideSnippetsTest}), the page shows both
 * directions of each librpma example protocol it names, and each of those regions sits inside a
 * {@code @Test} of that class, which runs in the Soft-RoCE lane (tag {@code rpma}) against a C
 * peer that behaves like the example.
 */
class InteropSnippetsTest {

    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
    private static final Path PAGE = ROOT.resolve("docs/interop.md");
    private static final String TEST = "reactor/src/test/java/io/cqflux/reactor/RpmaInteropTest.java";
    private static final Pattern SNIPPET =
            Pattern.compile("<!-- snippet: ([^#\\s]+)#([a-z0-9-]+) -->\\n```[a-z]*\\n(.*?)```", Pattern.DOTALL);
    /** librpma's example protocols and the directions the page must show: a cqflux server, a cqflux client. */
    private static final List<String> REQUIRED =
            List.of("server-01", "client-01", "client-02", "server-05", "client-05", "server-08", "client-08");

    private static Map<String, String> snippets() throws IOException {
        Map<String, String> found = new LinkedHashMap<>();
        Matcher m = SNIPPET.matcher(Files.readString(PAGE));
        while (m.find()) {
            assertEquals(TEST, m.group(1), "docs/interop.md takes its snippets from the lane test only");
            found.put(m.group(2), m.group(3));
        }
        return found;
    }

    @Test
    void everyCodeBlock_isATaggedRegionOfTheLaneTest_exactly() throws IOException {
        String page = Files.readString(PAGE);
        int fences = 0;
        for (int i = page.indexOf("```java"); i >= 0; i = page.indexOf("```java", i + 1)) {
            fences++;
        }
        Map<String, String> snippets = snippets();
        assertEquals(fences, snippets.size(), "java blocks of docs/interop.md without a snippet marker");
        String source = Files.readString(ROOT.resolve(TEST));
        List<String> wrong = new ArrayList<>();
        snippets.forEach((name, text) -> {
            String region = GuideSnippetsTest.region(source, name);
            if (region == null) {
                wrong.add(name + ": no such region in " + TEST);
            } else if (!region.equals(text)) {
                wrong.add(name + ": differs from the test; the test has:\n" + region);
            }
        });
        assertEquals(List.of(), wrong, "snippets that are not what the lane test runs");
    }

    @Test
    void bothDirectionsOfEachExampleProtocol_areShown_andRunInsideALaneTest() throws IOException {
        Map<String, String> snippets = snippets();
        String source = Files.readString(ROOT.resolve(TEST));
        assertTrue(source.contains("@Tag(\"rpma\")\nclass RpmaInteropTest"), "RpmaInteropTest runs in the lane (tag rpma)");
        List<String> missing = new ArrayList<>();
        for (String name : REQUIRED) {
            if (!snippets.containsKey(name)) {
                missing.add(name + ": not on the page");
                continue;
            }
            int tag = source.indexOf("// tag::" + name + "[]");
            int test = source.lastIndexOf("@Test", tag);
            int methodStart = source.lastIndexOf("\n    void ", tag);
            if (tag < 0 || test < 0 || methodStart < test || source.lastIndexOf("\n    }\n", tag) > test) {
                missing.add(name + ": not inside a @Test method of " + TEST);
            }
        }
        assertEquals(List.of(), missing, "example protocols the page does not show, or does not run");
    }
}
