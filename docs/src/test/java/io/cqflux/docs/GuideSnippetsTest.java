package io.cqflux.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Keeps the snippets of every page under docs/ (the guide's topic pages included) that name their
 * test true to it: a code block preceded by
 * {@code <!-- snippet: PATH#NAME -->} must be, line for line, the text between
 * {@code // tag::NAME[]} and {@code // end::NAME[]} in the file PATH (from the project root),
 * less the region's common indentation.
 */
class GuideSnippetsTest {

    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
    private static final Pattern SNIPPET =
            Pattern.compile("<!-- snippet: ([^#\\s]+)#([a-z0-9-]+) -->\\n```[a-z]*\\n(.*?)```", Pattern.DOTALL);

    @Test
    void taggedSnippets_areExactlyWhatTheirTestsRun() throws IOException {
        List<String> wrong = new ArrayList<>();
        int checked = 0;
        for (Path page : DocsTest.docsPages()) {
            Matcher m = SNIPPET.matcher(Files.readString(page));
            while (m.find()) {
                checked++;
                Path source = ROOT.resolve(m.group(1));
                String where = ROOT.relativize(page) + " -> " + m.group(1) + "#" + m.group(2);
                if (!Files.exists(source)) {
                    wrong.add(where + ": no such file");
                    continue;
                }
                String region = region(Files.readString(source), m.group(2));
                if (region == null) {
                    wrong.add(where + ": no tag::" + m.group(2) + "[] ... end::" + m.group(2) + "[] region");
                } else if (!region.equals(m.group(3))) {
                    wrong.add(where + ": differs from the test; the test has:\n" + region);
                }
            }
        }
        assertEquals(List.of(), wrong, "snippets that are not what their tests run");
        // The guide's StepVerifier recipes: one operation, a chain, an expected failure,
        // cancellation, a virtual-time timeout, a slow consumer of receive().
        assertTrue(checked >= 6, "only " + checked + " tagged snippets found");
    }

    /** {@return the lines between the region's tags, less their common indentation, each ending in a newline; or null} */
    static String region(String source, String name) {
        Matcher m = Pattern.compile("(?m)^[ \\t]*// tag::" + Pattern.quote(name) + "\\[\\]\\n(.*?)^[ \\t]*// end::"
                + Pattern.quote(name) + "\\[\\]", Pattern.DOTALL).matcher(source);
        if (!m.find()) {
            return null;
        }
        List<String> lines = m.group(1).lines().toList();
        int indent = Integer.MAX_VALUE;
        for (String l : lines) {
            if (!l.isBlank()) {
                indent = Math.min(indent, l.length() - l.stripLeading().length());
            }
        }
        StringBuilder b = new StringBuilder();
        for (String l : lines) {
            b.append(l.isBlank() ? "" : l.substring(indent)).append('\n');
        }
        return b.toString();
    }
}
