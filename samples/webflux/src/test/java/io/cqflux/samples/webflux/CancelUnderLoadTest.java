package io.cqflux.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.core.Opcode;
import io.cqflux.spring.boot.CqfluxPeers;
import io.cqflux.test.Faults;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Clients that go away mid-request, under load: WebFlux cancels their Monos while the NIC may
 * still be reading the staged record. Every record that got its 201 must be intact at the peer,
 * and no stored record may be corrupt (a staging buffer reused too early would show here).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "cqflux.transport=faulty", "records.storage-transport=fabric", "records.slots=4096",
                "cqflux.buffer-pool.buffers=32" })
class CancelUnderLoadTest {
    static final Faults FAULTS = Faults.create();

    @DynamicPropertySource
    static void props(DynamicPropertyRegistry r) {
        r.add("cqflux.peers.store.port", FreePort::next);
        r.add("cqflux.transport-properties[faulty.id]", FAULTS::id);
    }

    @LocalServerPort
    int port;

    @Autowired
    StoragePeer storage;

    @Autowired
    CqfluxPeers peers;

    @Autowired
    MeterRegistry meters;

    @Test
    void clientsGoingAwayMidRequest_everyStoredRecordVerifiesAtThePeer() {
        // One flush in five completes 30 ms late: clients with a 5..25 ms budget leave mid-write.
        FAULTS.on(Opcode.FLUSH).matching(op -> op.remoteOffset() % 5 == 0).delay(Duration.ofMillis(30));
        WebClient client = WebClient.create("http://127.0.0.1:" + port);
        Map<Integer, byte[]> created = new ConcurrentHashMap<>();
        AtomicInteger cancelled = new AtomicInteger();
        int n = 2000;
        Flux.range(0, n)
                .flatMap(i -> {
                    int id = i % 4096;
                    byte[] body = ("record " + i + " " + "x".repeat(i % 200)).getBytes(StandardCharsets.UTF_8);
                    Duration budget = Duration.ofMillis(i % 3 == 0 ? 5 + i % 20 : 5_000);
                    return client.post().uri("/records/{id}", id).bodyValue(body).retrieve().toBodilessEntity()
                            .timeout(budget)
                            .doOnNext(r -> created.put(id, body))
                            .onErrorResume(e -> {
                                cancelled.incrementAndGet();
                                return Mono.empty();
                            });
                }, 64)
                .then().block(Duration.ofSeconds(120));
        FAULTS.clear();
        assertThat(cancelled.get()).as("requests abandoned by their clients").isPositive();
        // The starter's meters saw durable writes cancelled in flight (not only requests cancelled before them).
        double cancelledWrites = meters.find("cqflux.operation").tag("kind", "durableWrite").tag("outcome", "cancelled")
                .timers().stream().mapToDouble(t -> t.count()).sum();
        assertThat(cancelledWrites).as("durable writes cancelled in flight").isPositive();
        assertThat(created).isNotEmpty();
        // Everything posted reaches its end at the NIC; nothing stays in flight.
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> peers.inFlight() == 0);

        StoragePeer.Verification v = storage.verify();
        assertThat(v.corrupt()).as("corrupt records at the peer: %s", v.firstCorruptIds()).isZero();
        assertThat(v.stored()).isGreaterThanOrEqualTo(created.size());
        WebClient reader = WebClient.create("http://127.0.0.1:" + port);
        Flux.fromIterable(created.entrySet())
                .flatMap(e -> reader.get().uri("/records/{id}", e.getKey()).retrieve().bodyToMono(byte[].class)
                        .doOnNext(got -> assertThat(got).as("record %d", e.getKey()).isEqualTo(e.getValue())), 32)
                .then().block(Duration.ofSeconds(60));
        // The staging buffers of the abandoned writes came back: a full round of new writes succeeds.
        Flux.range(0, 64).flatMap(i -> client.post().uri("/records/{id}", 4000 + i).bodyValue(new byte[100])
                        .retrieve().toBodilessEntity(), 64)
                .then().block(Duration.ofSeconds(30));
    }
}
