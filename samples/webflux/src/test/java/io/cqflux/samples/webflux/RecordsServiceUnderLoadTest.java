package io.cqflux.samples.webflux;

import static io.cqflux.samples.webflux.Services.atPeer;
import static io.cqflux.samples.webflux.Services.get;
import static io.cqflux.samples.webflux.Services.port;
import static io.cqflux.samples.webflux.Services.post;
import static io.cqflux.samples.webflux.Services.start;
import static io.cqflux.samples.webflux.Services.uri;
import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.spring.boot.CqfluxPeers;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.springframework.boot.availability.ApplicationAvailability;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The service's promises under concurrency, over the real fabric/tcp transport on loopback, each
 * test with a service of its own: more requests than registered buffers, the storage peer lost
 * and back under load, overwrites of one record through a pool of connections, and a service
 * started before its peer. Every answer is one the README names (201, 503, 504, 404), never a
 * 500 or a hang, and every 201 is at the peer byte for byte.
 */
class RecordsServiceUnderLoadTest {

    /**
     * 400 simultaneous POSTs against 4 registered buffers and 16 waiters: each answer is a 201 or
     * a 503 naming the reason; nothing hangs, nothing is a 500, every 201 is at the peer.
     */
    @Test
    void moreRequestsThanBuffers_201or503_neverHangNever500() throws Exception {
        ConfigurableApplicationContext ctx = start("--cqflux.buffer-pool.buffers=4", "--cqflux.buffer-pool.max-waiters=16");
        try (HttpClient http = Services.client()) {
            StoragePeer storage = ctx.getBean(StoragePeer.class);
            Map<Integer, Integer> statuses = new ConcurrentHashMap<>();
            Map<Integer, byte[]> created = new ConcurrentHashMap<>();
            ConcurrentLinkedQueue<String> bodies503 = new ConcurrentLinkedQueue<>();
            List<CompletableFuture<?>> all = new ArrayList<>();
            for (int i = 0; i < 400; i++) {
                int id = i;
                byte[] body = ("r" + i + "-" + "y".repeat(i % 500)).getBytes(StandardCharsets.UTF_8);
                all.add(http.sendAsync(HttpRequest.newBuilder(uri(ctx, "/records/" + id)).timeout(Duration.ofSeconds(30))
                                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString())
                        .thenAccept(r -> {
                            statuses.merge(r.statusCode(), 1, Integer::sum);
                            if (r.statusCode() == 201) {
                                created.put(id, body);
                            } else if (r.statusCode() == 503) {
                                bodies503.add(r.body());
                            }
                        }));
            }
            CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            assertThat(statuses.keySet()).as("statuses %s", statuses).isSubsetOf(201, 503);
            assertThat(bodies503).allSatisfy(b -> assertThat(b).isNotBlank());
            for (var e : created.entrySet()) {
                assertThat(atPeer(storage.memory(), e.getKey(), 1024)).as("record %d", e.getKey()).isEqualTo(e.getValue());
            }
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> ctx.getBean(CqfluxPeers.class).inFlight() == 0);
            assertThat(post(ctx, "/records/999", new byte[] { 9 }).statusCode()).isEqualTo(201);
        } finally {
            ctx.close();
        }
    }

    /**
     * Load of durable POSTs while the storage peer goes away and comes back: every answer is a
     * 201 (and then the bytes are at the peer), a 503 or a 504, never a 500; readiness says so
     * over HTTP while liveness stays up; afterwards the service serves again.
     */
    @Test
    void peerGoneAndBackUnderLoad_onlyDurable201s_then503_thenRecovers() throws Exception {
        ConfigurableApplicationContext ctx = start("--cqflux.peers.store.min-backoff=50ms",
                "--cqflux.peers.store.max-backoff=200ms");
        try {
            StoragePeer storage = ctx.getBean(StoragePeer.class);
            ApplicationAvailability availability = ctx.getBean(ApplicationAvailability.class);
            // A connection per request: the 503s are answered synchronously (see Services on reactor-netty#4361).
            WebClient client = WebClient.builder().baseUrl("http://127.0.0.1:" + port(ctx))
                    .defaultHeader(HttpHeaders.CONNECTION, "close").build();
            Map<Integer, Integer> statuses = new ConcurrentHashMap<>();
            ConcurrentLinkedQueue<String> odd = new ConcurrentLinkedQueue<>();
            Map<Integer, byte[]> created = new ConcurrentHashMap<>();
            AtomicBoolean stopLoad = new AtomicBoolean();
            AtomicInteger seq = new AtomicInteger();
            Mono<Void> load = Flux.range(0, 16).flatMap(worker -> Flux.defer(() -> {
                int n = seq.getAndIncrement();
                int id = worker * 64 + n % 64; // each worker its own ids: no two writes of one id at once
                byte[] body = ("w" + worker + " n" + n + " " + "q".repeat(n % 700)).getBytes(StandardCharsets.UTF_8);
                return client.post().uri("/records/{id}", id).bodyValue(body)
                        .exchangeToMono(r -> r.bodyToMono(String.class).defaultIfEmpty("").map(b -> {
                            statuses.merge(r.statusCode().value(), 1, Integer::sum);
                            if (r.statusCode().value() == 201) {
                                created.put(id, body);
                            } else if (r.statusCode().value() != 503 && r.statusCode().value() != 504) {
                                odd.add(r.statusCode().value() + " " + b);
                            }
                            return b;
                        }))
                        .timeout(Duration.ofSeconds(10));
            }).repeat(() -> !stopLoad.get())).then();
            CompletableFuture<Void> running = load.toFuture();
            Thread.sleep(800);
            storage.stop();
            Awaitility.await().atMost(Duration.ofSeconds(10))
                    .until(() -> availability.getReadinessState() == ReadinessState.REFUSING_TRAFFIC);
            assertThat(get(ctx, "/actuator/health/readiness").statusCode()).isEqualTo(503);
            assertThat(get(ctx, "/actuator/health/liveness").statusCode()).isEqualTo(200);
            Thread.sleep(500);
            storage.start();
            ctx.getBean(CqfluxPeers.class).get("store").awaitAvailable(Duration.ofSeconds(20)).block(Duration.ofSeconds(30));
            Thread.sleep(800);
            stopLoad.set(true);
            running.get(60, TimeUnit.SECONDS);
            assertThat(odd).as("answers other than 201/503/504 (statuses %s)", statuses).isEmpty();
            assertThat(statuses.get(503)).as("statuses %s", statuses).isNotNull();
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> ctx.getBean(CqfluxPeers.class).inFlight() == 0);
            StoragePeer.Verification v = storage.verify();
            assertThat(v.corrupt()).as("corrupt at the peer: %s", v.firstCorruptIds()).isZero();
            for (var e : created.entrySet()) {
                assertThat(atPeer(storage.memory(), e.getKey(), 1024)).as("record %d", e.getKey()).isEqualTo(e.getValue());
            }
            Awaitility.await().atMost(Duration.ofSeconds(10))
                    .until(() -> availability.getReadinessState() == ReadinessState.ACCEPTING_TRAFFIC);
            assertThat(get(ctx, "/actuator/health/readiness").statusCode()).isEqualTo(200);
            assertThat(post(ctx, "/records/1000", new byte[] { 7 }).statusCode()).isEqualTo(201);
        } finally {
            ctx.close();
        }
    }

    /**
     * Two clients overwrite one record at once while others read it, through a pool of 4
     * connections ({@code cqflux.peers.store.connections}, a documented property). Each write got
     * its 201, so the slot must hold one of the two records whole; reads must see one of them
     * (a 500 "does not verify" for a record nobody corrupted is a torn read).
     */
    @Test
    void concurrentOverwritesOfOneRecordOverAPool_neverMixed_readsNeverTorn() throws Exception {
        // The claim is about torn and mixed records, not latency: 1,500 requests on a loaded 2-core
        // host can stall the loops for a second, and the default 2 s records.timeout then answers a
        // write 504, which is the timeout working, not a torn write.
        ConfigurableApplicationContext ctx = start("--cqflux.peers.store.connections=4", "--records.timeout=30s");
        try {
            StoragePeer storage = ctx.getBean(StoragePeer.class);
            WebClient client = WebClient.create("http://127.0.0.1:" + port(ctx));
            byte[] a = new byte[1000];
            byte[] b = new byte[1000];
            Arrays.fill(a, (byte) 'a');
            Arrays.fill(b, (byte) 'b');
            Map<Integer, Integer> writeStatuses = new ConcurrentHashMap<>();
            Map<String, Integer> reads = new ConcurrentHashMap<>();
            List<Integer> mixedAfter = new CopyOnWriteArrayList<>();
            Flux.range(0, 1500).flatMap(i -> {
                int id = i % 4; // four hot records
                if (i % 3 == 2) {
                    return client.get().uri("/records/{id}", id).exchangeToMono(r -> r.bodyToMono(byte[].class)
                            .defaultIfEmpty(new byte[0]).map(body -> {
                                String what = r.statusCode().value() + (r.statusCode().value() == 200
                                        ? (Arrays.equals(body, a) ? " a" : Arrays.equals(body, b) ? " b"
                                        : " other") : "");
                                reads.merge(what, 1, Integer::sum);
                                return body;
                            }));
                }
                return client.post().uri("/records/{id}", id).bodyValue(i % 2 == 0 ? a : b)
                        .exchangeToMono(r -> r.releaseBody().thenReturn(r.statusCode().value()))
                        .doOnNext(st -> writeStatuses.merge(st, 1, Integer::sum));
            }, 32).then().block(Duration.ofSeconds(120));
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> ctx.getBean(CqfluxPeers.class).inFlight() == 0);
            for (int id = 0; id < 4; id++) {
                byte[] held = atPeer(storage.memory(), id, 1024);
                if (held == null || !(Arrays.equals(held, a) || Arrays.equals(held, b))) {
                    mixedAfter.add(id);
                }
            }
            assertThat(writeStatuses.keySet()).isEqualTo(Set.of(201));
            assertThat(mixedAfter).as("records that hold neither write whole").isEmpty();
            assertThat(reads.keySet()).as("reads %s", reads).isSubsetOf("200 a", "200 b", "404");
        } finally {
            ctx.close();
        }
    }

    /**
     * The service starts before its remote storage peer (a rolling deploy): it must start, say
     * not-ready and 503, then serve once the peer appears, without a restart.
     */
    @Test
    void serviceStartedBeforeItsPeer_notReadyAnd503_thenServesWhenThePeerComes() throws Exception {
        StoragePeer remote = new StoragePeer(new InetSocketAddress(InetAddress.getLoopbackAddress(), FreePort.next()),
                "fabric", 1024, 1024);
        ConfigurableApplicationContext ctx = start("--records.embedded-storage=false",
                "--cqflux.peers.store.port=" + remote.address().getPort(), "--cqflux.connect-timeout=1s",
                "--cqflux.peers.store.min-backoff=50ms", "--cqflux.peers.store.max-backoff=200ms");
        try {
            HttpResponse<String> early = post(ctx, "/records/1", new byte[] { 1 });
            assertThat(early.statusCode()).as(early.body()).isEqualTo(503);
            assertThat(get(ctx, "/actuator/health/readiness").statusCode()).isEqualTo(503);
            remote.start();
            ctx.getBean(CqfluxPeers.class).get("store").awaitAvailable(Duration.ofSeconds(20)).block(Duration.ofSeconds(30));
            Awaitility.await().atMost(Duration.ofSeconds(10))
                    .until(() -> get(ctx, "/actuator/health/readiness").statusCode() == 200);
            assertThat(post(ctx, "/records/1", new byte[] { 1 }).statusCode()).isEqualTo(201);
            assertThat(atPeer(remote.memory(), 1, 1024)).isEqualTo(new byte[] { 1 });
        } finally {
            ctx.close();
            remote.close();
        }
    }
}
