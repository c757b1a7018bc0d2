package io.cqflux.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.ApplicationContext;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The service pointed at a storage peer it did not start ({@code records.embedded-storage=false}):
 * only {@code cqflux.peers.store.*} says where it is, as for a {@link StorageMain} on another host.
 */
@AutoConfigureWebTestClient
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "cqflux.transport=fabric", "records.embedded-storage=false", "records.slots=256" })
@DirtiesContext
class RemoteStorageTest {
    static final StoragePeer REMOTE = new StoragePeer(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), FreePort.next()), "fabric", 256, 1024);

    @DynamicPropertySource
    static void remote(DynamicPropertyRegistry r) {
        REMOTE.start();
        r.add("cqflux.peers.store.address", () -> "127.0.0.1");
        r.add("cqflux.peers.store.port", () -> REMOTE.address().getPort());
    }

    @AfterAll
    static void stop() {
        REMOTE.close();
    }

    @Autowired
    WebTestClient web;

    @Autowired
    ApplicationContext context;

    @Test
    void recordsGoToTheConfiguredPeer_andNoStorageRunsInTheService() {
        assertThat(context.getBeansOfType(StoragePeer.class)).isEmpty();
        byte[] body = "kept elsewhere".getBytes(StandardCharsets.UTF_8);
        web.post().uri("/records/12").bodyValue(body).exchange().expectStatus().isCreated();
        web.get().uri("/records/12").exchange().expectStatus().isOk().expectBody(byte[].class).isEqualTo(body);
        StoragePeer.Verification v = REMOTE.verify();
        assertThat(v.stored()).isEqualTo(1);
        assertThat(v.verified()).isEqualTo(1);
        web.get().uri("/admin/verify").exchange().expectStatus().isNotFound();
    }
}
