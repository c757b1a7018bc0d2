package io.cqflux.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * The executable jar as an operator runs it: {@code java -jar} with no JVM flags. It must start,
 * store and return a record over fabric/tcp to its embedded storage peer, and the JVM must not warn
 * about native access (the manifest's {@code Enable-Native-Access: ALL-UNNAMED} grants it).
 */
class ExecutableJarIT {
    private static final Duration START_BUDGET = Duration.ofSeconds(180);

    @Test
    void javaDashJar_startsAnswersAndStoresARecord_withoutANativeAccessWarning() throws Exception {
        Path jar = Path.of(System.getProperty("cqflux.sample.jar", "target/cqflux-sample-webflux-0.1.0-SNAPSHOT-exec.jar"));
        assertThat(jar).as("the executable jar (built at package)").exists();
        try (JarFile j = new JarFile(jar.toFile())) {
            assertThat(j.getManifest().getMainAttributes().getValue("Enable-Native-Access")).isEqualTo("ALL-UNNAMED");
        }
        int http = FreePort.next();
        int store = FreePort.next();
        Path log = Files.createTempFile("cqflux-sample-jar", ".log");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // C1 only, as the test JVMs (the root pom's cqflux.test.jit): the service starts, answers
        // a few requests and stops; C2's compiler threads would only take CPU from the rest of the
        // build. No flag that touches native access: the warning this test looks for stays as a
        // user's plain java -jar would get it.
        Process p = new ProcessBuilder(List.of(java, "-XX:TieredStopAtLevel=1", "-jar", jar.toString(),
                "--server.port=" + http,
                "--cqflux.transport=fabric", "--cqflux.peers.store.port=" + store, "--records.slots=256"))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            URI readiness = URI.create("http://127.0.0.1:" + http + "/actuator/health/readiness");
            long deadline = System.nanoTime() + START_BUDGET.toNanos();
            int status = 0;
            while (status != 200) {
                assertThat(p.isAlive()).as("the jar exited early:%n%s", output(log)).isTrue();
                assertThat(System.nanoTime()).as("not ready within %s:%n%s", START_BUDGET, output(log)).isLessThan(deadline);
                try {
                    status = client.send(HttpRequest.newBuilder(readiness).timeout(Duration.ofSeconds(5)).build(),
                            HttpResponse.BodyHandlers.discarding()).statusCode();
                } catch (IOException notYet) {
                    status = 0; // not listening yet
                }
                if (status != 200) {
                    // Not listening, or listening but not ready (503 until the storage peer is
                    // connected): either way the next try waits, rather than hammer the server.
                    Thread.sleep(250);
                }
            }
            byte[] record = "from java -jar".getBytes(StandardCharsets.UTF_8);
            URI uri = URI.create("http://127.0.0.1:" + http + "/records/42");
            HttpResponse<Void> created = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(record)).build(), HttpResponse.BodyHandlers.discarding());
            assertThat(created.statusCode()).as(output(log)).isEqualTo(201);
            HttpResponse<byte[]> read = client.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(read.statusCode()).isEqualTo(200);
            assertThat(read.body()).isEqualTo(record);
            assertThat(output(log)).doesNotContain("restricted method").doesNotContain("--enable-native-access");
        } finally {
            p.destroy();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
            Files.deleteIfExists(log);
        }
    }

    private static String output(Path log) throws IOException {
        return Files.readString(log);
    }
}
