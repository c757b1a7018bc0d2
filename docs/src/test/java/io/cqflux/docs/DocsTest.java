package io.cqflux.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Keeps README.md and every page under docs/ (the guide's pages in docs/guide/ included) true to
 * the tree: links resolve, including their anchors into Markdown pages, and named classes and
 * packages exist.
 */
class DocsTest {

    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)#\\s]+)(#[^)]*)?\\)");
    private static final Pattern NAME = Pattern.compile("\\bio\\.cqflux(\\.[a-z][a-z0-9]*)+(\\.[A-Z][A-Za-z0-9]*)?");

    /** {@return README.md and the Markdown pages under docs/, at any depth, outside build output} */
    static List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>();
        pages.add(ROOT.resolve("README.md"));
        pages.addAll(docsPages());
        return pages;
    }

    /** {@return the Markdown pages under docs/, at any depth (the guide's topic pages too), sorted} */
    static List<Path> docsPages() throws IOException {
        Path docs = ROOT.resolve("docs");
        try (Stream<Path> s = Files.walk(docs)) {
            return s.filter(p -> p.toString().endsWith(".md"))
                    .filter(p -> !docs.relativize(p).startsWith("target") && !docs.relativize(p).startsWith("src"))
                    .sorted()
                    .toList();
        }
    }

    @Test
    void pages_includeEveryGuideTopicPage() throws IOException {
        List<Path> guidePages = docsPages().stream().filter(p -> p.getParent().endsWith("guide")).toList();
        // The guide is split into topic pages; a walk that stopped at docs/ would check none of them.
        assertTrue(guidePages.size() >= 8, "guide topic pages found under docs/guide: " + guidePages);
    }

    @Test
    void relativeLinks_pointToFilesThatExist() throws IOException {
        List<String> broken = new ArrayList<>();
        for (Path page : pages()) {
            Matcher m = LINK.matcher(Files.readString(page));
            while (m.find()) {
                String target = m.group(1);
                if (target.contains("://") || target.startsWith("mailto:")) {
                    continue;
                }
                Path file = page.getParent().resolve(target).normalize();
                if (!Files.exists(file)) {
                    broken.add(ROOT.relativize(page) + " -> " + target);
                } else if (m.group(2) != null && target.endsWith(".md")
                        && !anchors(file).contains(m.group(2).substring(1))) {
                    broken.add(ROOT.relativize(page) + " -> " + target + m.group(2) + ": no such heading");
                }
            }
        }
        assertEquals(List.of(), broken, "broken relative links");
    }

    @Test
    void anchorsWithinAPage_nameOneOfItsHeadings() throws IOException {
        Pattern local = Pattern.compile("\\]\\(#([^)\\s]+)\\)");
        List<String> broken = new ArrayList<>();
        for (Path page : pages()) {
            Matcher m = local.matcher(Files.readString(page));
            while (m.find()) {
                if (!anchors(page).contains(m.group(1))) {
                    broken.add(ROOT.relativize(page) + " -> #" + m.group(1));
                }
            }
        }
        assertEquals(List.of(), broken, "anchors that name no heading of their page");
    }

    @Test
    void anchors_followGitHubsHeadingIds() {
        assertEquals(List.of("the-fabric-transport-on-an-rdma-nic-libfabrics-verbs-provider", "errors", "errors-1"),
                headingIds("## The fabric transport on an RDMA NIC: libfabric's `verbs` provider\n"
                        + "```\n# not a heading\n```\n# Errors\n## Errors\n"));
    }

    /** {@return the ids GitHub gives the headings of a Markdown page} */
    private static Set<String> anchors(Path page) throws IOException {
        return new HashSet<>(headingIds(Files.readString(page)));
    }

    /**
     * {@return the heading ids of Markdown text as GitHub renders them: lower case, punctuation
     * dropped, spaces to hyphens, a repeated id suffixed -1, -2; lines inside code fences skipped}
     */
    static List<String> headingIds(String markdown) {
        List<String> ids = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean fence = false;
        for (String line : markdown.lines().toList()) {
            if (line.startsWith("```")) {
                fence = !fence;
            } else if (!fence && line.matches("#{1,6} .*")) {
                String id = line.replaceFirst("^#+ ", "").strip().toLowerCase(Locale.ROOT)
                        .replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
                int n = seen.merge(id, 1, Integer::sum);
                ids.add(n == 1 ? id : id + "-" + (n - 1));
            }
        }
        return ids;
    }

    /**
     * The architecture page's module table is the map of the tree: every package of main code, in
     * every module, is named there in full, and has a {@code package-info.java} that says its role.
     */
    @Test
    void everyMainPackage_hasAPackageInfo_andIsNamedOnTheArchitecturePage() throws IOException {
        String architecture = Files.readString(ROOT.resolve("docs/architecture.md"));
        List<String> unnamed = new ArrayList<>();
        List<String> undocumented = new ArrayList<>();
        Set<String> packages = new HashSet<>();
        try (Stream<Path> roots = Files.walk(ROOT, 6)) {
            for (Path root : roots.filter(p -> p.endsWith(Path.of("src", "main", "java")))
                    .filter(p -> !p.toString().contains("/target/")).toList()) {
                try (Stream<Path> files = Files.walk(root)) {
                    for (Path dir : files.filter(f -> f.toString().endsWith(".java"))
                            .filter(f -> !f.endsWith("module-info.java"))
                            .map(Path::getParent).distinct().toList()) {
                        String name = root.relativize(dir).toString().replace('/', '.');
                        packages.add(name);
                        if (!Pattern.compile("`" + Pattern.quote(name) + "[`(]").matcher(architecture).find()) {
                            unnamed.add(name);
                        }
                        if (!Files.exists(dir.resolve("package-info.java"))) {
                            undocumented.add(ROOT.relativize(dir).toString());
                        }
                    }
                }
            }
        }
        assertTrue(packages.size() > 20, "found " + packages.size() + " main packages; expected more: " + packages);
        assertEquals(List.of(), unnamed, "main packages docs/architecture.md does not name (in backticks)");
        assertEquals(List.of(), undocumented, "main packages without a package-info.java");
    }

    @Test
    void namedClassesAndPackages_existInTheModules() throws IOException {
        List<String> missing = new ArrayList<>();
        int checked = 0;
        for (Path page : pages()) {
            Matcher m = NAME.matcher(Files.readString(page));
            while (m.find()) {
                String name = m.group();
                checked++;
                if (!exists(name)) {
                    missing.add(ROOT.relativize(page) + ": " + name);
                }
            }
        }
        assertTrue(checked > 5, "the docs name " + checked + " io.cqflux classes or packages; expected more");
        assertEquals(List.of(), missing, "names in the docs that the code does not have");
    }

    private static boolean exists(String name) {
        try {
            Class.forName(name, false, DocsTest.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            String dir = name.replace('.', '/');
            // Every module's sources, main and test (the docs name the tests that prove a
            // guarantee, and the lane's commands select them by name): a directory with
            // src/main/java or src/test/java, at any depth (core/rpma, samples/…).
            try (Stream<Path> s = Files.walk(ROOT, 6)) {
                return s.filter(p -> p.endsWith(Path.of("src", "main", "java"))
                                || p.endsWith(Path.of("src", "test", "java")))
                        .filter(p -> !p.toString().contains("/target/"))
                        .anyMatch(p -> Files.exists(p.resolve(dir)) || Files.exists(p.resolve(dir + ".java")));
            } catch (IOException io) {
                throw new java.io.UncheckedIOException(io);
            }
        }
    }
}
