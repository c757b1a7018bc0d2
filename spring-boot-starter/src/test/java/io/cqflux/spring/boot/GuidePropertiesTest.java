package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * The docs' Spring Boot {@code properties} examples are what Spring Boot reads: each block is
 * loaded as a {@code .properties} file is ({@link Properties#load}) and bound to
 * {@link CqfluxProperties}, then turned into a builder (which checks every value).
 */
class GuidePropertiesTest {

    private static final Path DOCS = Path.of(System.getProperty("user.dir")).getParent().resolve("docs");
    private static final Pattern BLOCK = Pattern.compile("```properties\\n(.*?)```", Pattern.DOTALL);

    @Test
    void guidePropertiesBlocks_bindAsSpringBootReadsThem() throws Exception {
        // The Spring section (docs/guide/spring-boot.md) and any page of the guide that shows properties.
        List<Properties> blocks = new ArrayList<>();
        List<Path> pages;
        try (var list = Files.walk(DOCS)) {
            pages = list.filter(f -> f.toString().endsWith(".md")).sorted().toList();
        }
        for (Path page : pages) {
            Matcher m = BLOCK.matcher(Files.readString(page));
            while (m.find()) {
                Properties p = new Properties();
                p.load(new StringReader(m.group(1)));
                blocks.add(p);
            }
        }
        assertThat(blocks).as("```properties blocks in " + DOCS + "/*.md").isNotEmpty();
        for (Properties p : blocks) {
            // '#' starts a comment only at the beginning of a line: after a value it is the value.
            assertThat(p.stringPropertyNames()).allSatisfy(k -> assertThat(p.getProperty(k)).as(k).doesNotContain("#"));
            // The guide's local address is its example host's (an RDMA NIC's); the builder refuses an
            // address this host does not have, so it is checked to parse and then replaced here.
            if (p.containsKey("cqflux.local-address")) {
                assertThat(java.net.InetAddress.getByName(p.getProperty("cqflux.local-address"))).isNotNull();
                p.setProperty("cqflux.local-address", "127.0.0.1");
            }
            CqfluxProperties bound = new Binder(new MapConfigurationPropertySource(p))
                    .bind("cqflux", CqfluxProperties.class).orElseGet(CqfluxProperties::new);
            assertThat(CqfluxAutoConfiguration.builder(bound)).isNotNull();
        }
    }
}
