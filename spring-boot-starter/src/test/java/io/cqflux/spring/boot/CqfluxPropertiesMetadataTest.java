package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The configuration metadata the annotation processor writes for the {@code cqflux.*} tree (what
 * an IDE completes): every property of the tree is in it, nested groups in classes of their own
 * included, with its description and default. A group class that the processor does not see as
 * nested (a top-level class without {@code @NestedConfigurationProperty}) drops its properties
 * from the file while binding still works, so only this test notices.
 */
class CqfluxPropertiesMetadataTest {

    private static final List<String> PROPERTIES = List.of(
            "cqflux.adaptive-spins", "cqflux.background-priority", "cqflux.batch-size", "cqflux.buffer-pool.buffer-size",
            "cqflux.buffer-pool.buffers", "cqflux.buffer-pool.max-waiters", "cqflux.connect-timeout",
            "cqflux.direct-write-to-persistent-memory", "cqflux.enabled", "cqflux.fabric-provider",
            "cqflux.keep-alive.interval", "cqflux.keep-alive.misses", "cqflux.local-address", "cqflux.loops",
            "cqflux.observations.enabled", "cqflux.operation-timeout", "cqflux.peers", "cqflux.pending-limit",
            "cqflux.readiness", "cqflux.send-credits", "cqflux.server.address", "cqflux.server.auth.max-skew",
            "cqflux.server.auth.shared-secret", "cqflux.server.handshake-timeout", "cqflux.server.keys-scoped-to-connection",
            "cqflux.server.max-connections", "cqflux.server.max-connections-per-address",
            "cqflux.server.max-pending-handshakes", "cqflux.server.per-address-ipv4-prefix-length",
            "cqflux.server.per-address-ipv6-prefix-length", "cqflux.server.port", "cqflux.server.regions",
            "cqflux.shutdown-timeout", "cqflux.thread-name-prefix", "cqflux.transport",
            "cqflux.transport-properties", "cqflux.wait-strategy", "cqflux.web.error-mapping.enabled",
            "cqflux.web.error-mapping.include-message", "cqflux.web.error-mapping.retry-after");

    private static final List<String> GROUPS = List.of("cqflux", "cqflux.buffer-pool", "cqflux.keep-alive",
            "cqflux.server", "cqflux.server.auth", "cqflux.web", "cqflux.web.error-mapping");

    private static String metadata() throws Exception {
        try (InputStream in = CqfluxPropertiesMetadataTest.class.getClassLoader()
                .getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("META-INF/spring-configuration-metadata.json on the class path").isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void metadata_namesEveryPropertyAndGroupOfTheTree() throws Exception {
        String json = metadata();
        List<String> properties = JsonPath.read(json, "$.properties[*].name");
        List<String> groups = JsonPath.read(json, "$.groups[*].name");
        assertThat(properties).containsExactlyInAnyOrderElementsOf(PROPERTIES);
        assertThat(groups).containsExactlyInAnyOrderElementsOf(GROUPS);
    }

    @Test
    void metadata_describesEveryProperty_andKeepsTheGroupsDefaults() throws Exception {
        String json = metadata();
        List<Map<String, Object>> properties = JsonPath.read(json, "$.properties[*]");
        assertThat(properties).allSatisfy(p ->
                assertThat((String) p.get("description")).as("description of " + p.get("name")).isNotBlank());
        assertThat(defaultOf(json, "cqflux.server.auth.max-skew")).isEqualTo("30s");
        assertThat(defaultOf(json, "cqflux.web.error-mapping.retry-after")).isEqualTo("1s");
        assertThat(defaultOf(json, "cqflux.web.error-mapping.enabled")).isEqualTo(false);
        assertThat(defaultOf(json, "cqflux.wait-strategy")).isEqualTo("blocking");
        assertThat(descriptionOf(json, "cqflux.buffer-pool.buffers"))
                .isEqualTo("Registered buffers in the pool (never grows); an operation that finds none waits for one.");
        assertThat(descriptionOf(json, "cqflux.keep-alive.misses"))
                .isEqualTo("Intervals in a row without a sign of life before the connection ends LOST (1..1000).");
    }

    private static Object defaultOf(String json, String name) {
        List<Object> d = JsonPath.read(json, "$.properties[?(@.name == '" + name + "')].defaultValue");
        assertThat(d).as("default of " + name).hasSize(1);
        return d.getFirst();
    }

    private static Object descriptionOf(String json, String name) {
        List<Object> d = JsonPath.read(json, "$.properties[?(@.name == '" + name + "')].description");
        assertThat(d).as("description of " + name).hasSize(1);
        return d.getFirst();
    }
}
