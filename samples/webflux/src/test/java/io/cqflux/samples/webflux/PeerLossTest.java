package io.cqflux.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.spring.boot.CqfluxPeer;
import io.cqflux.spring.boot.CqfluxPeers;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.availability.ApplicationAvailability;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.HttpHeaders;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

@AutoConfigureWebTestClient
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "cqflux.transport=fabric", "records.storage-transport=fabric", "records.slots=1024",
                "cqflux.peers.store.min-backoff=50ms", "cqflux.peers.store.max-backoff=500ms" })
@DirtiesContext
class PeerLossTest {

    @DynamicPropertySource
    static void storagePort(DynamicPropertyRegistry r) {
        r.add("cqflux.peers.store.port", FreePort::next);
    }

    @Autowired
    WebTestClient web;

    @Autowired
    StoragePeer storage;

    @Autowired
    CqfluxPeers peers;

    @Autowired
    ApplicationAvailability availability;

    /**
     * A connection per request: the refusals, 503s, /baseline and /actuator are answered
     * synchronously, after which Reactor Netty 1.2.18 can stop reading a reused connection
     * (reactor/reactor-netty#4361; see {@link Services}).
     */
    @BeforeEach
    void connectionPerRequest() {
        web = web.mutate().defaultHeader(HttpHeaders.CONNECTION, "close").build();
    }

    @Test
    void storagePeerGoneAndBack_503AndNotReadyWhileAway_thenServingAgainWithEveryRecordIntact() {
        byte[] first = { 1, 2, 3 };
        web.post().uri("/records/1").bodyValue(first).exchange().expectStatus().isCreated();

        storage.stop();
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !peers.get("store").isAvailable());
        web.post().uri("/records/2").bodyValue(new byte[] { 4 }).exchange().expectStatus().isEqualTo(503)
                // A generic detail: the exception's message names the peer's address, for the log only.
                .expectBody().jsonPath("$.detail").isEqualTo("the storage peer is unavailable; try again later");
        web.get().uri("/records/1").exchange().expectStatus().isEqualTo(503);
        Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> availability.getReadinessState() == ReadinessState.REFUSING_TRAFFIC);
        web.get().uri("/actuator/health").exchange().expectBody()
                .jsonPath("$.components.cqflux.components.peers.components.store.status").isEqualTo("DOWN");

        // The peer comes back on the same address (its memory kept, as persistent memory would be):
        // the starter's pool reconnects and learns its region again, without the application.
        storage.start();
        peers.get("store").awaitAvailable(Duration.ofSeconds(20)).block(Duration.ofSeconds(30));
        Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> availability.getReadinessState() == ReadinessState.ACCEPTING_TRAFFIC);
        web.post().uri("/records/2").bodyValue(new byte[] { 4 }).exchange().expectStatus().isCreated();
        web.get().uri("/records/1").exchange().expectStatus().isOk().expectBody(byte[].class).isEqualTo(first);
        StoragePeer.Verification v = storage.verify();
        assertThat(v.corrupt()).isZero();
        assertThat(v.stored()).isEqualTo(2);
        assertThat(peers.get("store").state()).isEqualTo(CqfluxPeer.State.UP);
    }
}
