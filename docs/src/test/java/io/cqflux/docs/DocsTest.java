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
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Keeps README.md and docs/*.md true to the tree: links resolve, named classes and packages exist. */
class DocsTest {

    private static final Path ROOT = Path.of(System.getProperty("user.dir")).getParent();
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)#\\s]+)(#[^)]*)?\\)");
    private static final Pattern NAME = Pattern.compile("\\bio\\.cqflux(\\.[a-z][a-z0-9]*)+(\\.[A-Z][A-Za-z0-9]*)?");

    private static List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>();
        pages.add(ROOT.resolve("README.md"));
        try (Stream<Path> s = Files.list(ROOT.resolve("docs"))) {
            s.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        return pages;
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
                if (!Files.exists(page.getParent().resolve(target).normalize())) {
                    broken.add(ROOT.relativize(page) + " -> " + target);
                }
            }
        }
        assertEquals(List.of(), broken, "broken relative links");
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
            // Every module's sources: a directory with src/main/java, at any depth (core/rpma, samples/…).
            try (Stream<Path> s = Files.walk(ROOT, 6)) {
                return s.filter(p -> p.endsWith(Path.of("src", "main", "java")))
                        .filter(p -> !p.toString().contains("/target/"))
                        .anyMatch(p -> Files.exists(p.resolve(dir)) || Files.exists(p.resolve(dir + ".java")));
            } catch (IOException io) {
                throw new java.io.UncheckedIOException(io);
            }
        }
    }
}
