package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.core.Capability;
import io.cqflux.core.QueueFullException;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.UnsupportedCapabilityException;
import io.cqflux.test.CqfluxTest;
import io.cqflux.test.LoopbackPeer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * The opt-in error mapping in a whole Boot application: a real Reactor Netty server answering
 * {@link WebTestClient} over HTTP, its peer a real fabric/tcp server on loopback.
 */
class CqfluxErrorMappingTest {
    private static final int REGION = 4096;
    /** The pool's buffer size in these applications: a write of more is refused by the library's check. */
    private static final int BUFFER = 1024;

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @RestController
    static class App {
        private final CqfluxPeers peers;
        private final CqfluxDataBuffers buffers;

        App(CqfluxPeers peers, CqfluxDataBuffers buffers) {
            this.peers = peers;
            this.buffers = buffers;
        }

        /** A request body written as the guide's handler does: through CqfluxDataBuffers' pooled copy. */
        @org.springframework.web.bind.annotation.PostMapping("/body")
        Mono<String> body(org.springframework.http.server.reactive.ServerHttpRequest request) {
            return org.springframework.core.io.buffer.DataBufferUtils.join(request.getBody(), 8 * BUFFER)
                    .flatMap(b -> peers.get("store").withConnection(c -> buffers.write(c, c.remoteRegion(0), 0, b))
                            .doFinally(x -> org.springframework.core.io.buffer.DataBufferUtils.release(b)))
                    .thenReturn("written");
        }

        @GetMapping("/inside")
        Mono<String> inside() {
            return peers.get("store").withConnection(c -> c.read(c.remoteRegion(0), 0, 16)).map(b -> "read " + b.length);
        }

        @GetMapping("/outside")
        Mono<String> outside() {
            return peers.get("store").withConnection(c -> c.read(c.remoteRegion(0), REGION - 8, 16)).map(b -> "read");
        }

        @GetMapping("/above-buffer")
        Mono<String> aboveBuffer() {
            return peers.get("store").withConnection(c -> c.write(c.remoteRegion(0), 0, new byte[2 * BUFFER]))
                    .thenReturn("written");
        }

        @GetMapping("/full")
        Mono<String> full() {
            return Mono.error(new QueueFullException("store: 64 operations wait for a connection", 64));
        }

        @GetMapping("/closing")
        Mono<String> closing() {
            return Mono.error(new ResourceClosedException("store is disposed"));
        }

        @GetMapping("/other")
        Mono<String> other() {
            return Mono.error(new UnsupportedCapabilityException("fabric", Capability.FLUSH_PERSISTENT, "no pmem"));
        }

        @GetMapping("/not-cqflux")
        Mono<String> notCqflux() {
            return Mono.error(new IllegalStateException("the application's own bug"));
        }
    }

    private static ConfigurableApplicationContext start(LoopbackPeer server, String... more) {
        return new SpringApplicationBuilder(App.class).web(WebApplicationType.REACTIVE)
                .properties("server.port=0", "cqflux.transport=fabric", "cqflux.peers.store.address=127.0.0.1",
                        "cqflux.peers.store.port=" + server.address().getPort(), "cqflux.peers.store.required=false",
                        "cqflux.buffer-pool.buffer-size=" + BUFFER)
                .properties(more)
                .run();
    }

    private static WebTestClient client(ConfigurableApplicationContext ctx) {
        String port = ctx.getEnvironment().getProperty("local.server.port");
        return WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port)
                .responseTimeout(Duration.ofSeconds(20)).build();
    }

    @Test
    void enabled_eachCqfluxErrorIsAnsweredWithItsStatusAndAProblem_andThePeerAwayWithRetryAfter() {
        try (LoopbackPeer server = CqfluxTest.loopback().regionSize(REGION).start();
                ConfigurableApplicationContext ctx = start(server, "cqflux.web.error-mapping.enabled=true",
                        "cqflux.web.error-mapping.retry-after=7s")) {
            WebTestClient web = client(ctx);
            web.get().uri("/inside").exchange().expectStatus().isOk().expectBody(String.class).isEqualTo("read 16");

            web.get().uri("/outside").exchange().expectStatus().isBadRequest()
                    .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody().jsonPath("$.status").isEqualTo(400)
                    .jsonPath("$.detail").value(d -> assertThat((String) d).contains("exceeds the region size 4096"));
            // Another of the library's argument checks (the staging buffer's bound): also the client's value.
            web.get().uri("/above-buffer").exchange().expectStatus().isBadRequest()
                    .expectBody().jsonPath("$.status").isEqualTo(400)
                    .jsonPath("$.detail").value(d -> assertThat((String) d).contains("exceeds the buffer pool's buffer size "
                            + BUFFER));
            // A request body above a pooled buffer, through CqfluxDataBuffers: the client's value too.
            web.post().uri("/body").bodyValue(new byte[BUFFER]).exchange().expectStatus().isOk();
            web.post().uri("/body").bodyValue(new byte[2 * BUFFER]).exchange().expectStatus().isBadRequest()
                    .expectBody().jsonPath("$.status").isEqualTo(400)
                    .jsonPath("$.detail").value(d -> assertThat((String) d).contains("a data buffer of " + 2 * BUFFER
                            + " bytes does not fit a pooled buffer"));
            // 5xx: a generic detail by default, not the exception's message.
            web.get().uri("/full").exchange().expectStatus().isEqualTo(503)
                    .expectHeader().doesNotExist("Retry-After")
                    .expectBody().jsonPath("$.detail").isEqualTo("too many operations are waiting; retry later");
            web.get().uri("/closing").exchange().expectStatus().isEqualTo(503)
                    .expectBody().jsonPath("$.detail").isEqualTo("the service is shutting down");
            web.get().uri("/other").exchange().expectStatus().isEqualTo(500)
                    .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody().jsonPath("$.trace").doesNotExist()
                    .jsonPath("$.detail").value(d -> assertThat((String) d).doesNotContain("FLUSH_PERSISTENT")
                            .contains("the server's log"));
            // Not cqflux's: Spring Boot's own handler answers it, as without the mapping.
            web.get().uri("/not-cqflux").exchange().expectStatus().isEqualTo(500)
                    .expectHeader().contentType(MediaType.APPLICATION_JSON)
                    .expectBody().jsonPath("$.path").isEqualTo("/not-cqflux");

            CqfluxPeer store = ctx.getBean(CqfluxPeers.class).get("store");
            server.close();
            store.states().filter(s -> s != CqfluxPeer.State.UP).next().block(Duration.ofSeconds(10));
            web.get().uri("/inside").exchange().expectStatus().isEqualTo(503)
                    .expectHeader().valueEquals("Retry-After", "7")
                    .expectHeader().contentType(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody().jsonPath("$.status").isEqualTo(503)
                    .jsonPath("$.detail").value(d -> assertThat((String) d).doesNotContain("127.0.0.1")
                            .isEqualTo("a peer this service depends on is unavailable; retry later"));
        }
    }

    @Test
    void includeMessage_serverErrorsCarryTheExceptionsMessage() {
        try (LoopbackPeer server = CqfluxTest.loopback().regionSize(REGION).start();
                ConfigurableApplicationContext ctx = start(server, "cqflux.web.error-mapping.enabled=true",
                        "cqflux.web.error-mapping.include-message=true")) {
            WebTestClient web = client(ctx);
            web.get().uri("/full").exchange().expectStatus().isEqualTo(503)
                    .expectBody().jsonPath("$.detail").isEqualTo("store: 64 operations wait for a connection");
            web.get().uri("/closing").exchange().expectStatus().isEqualTo(503)
                    .expectBody().jsonPath("$.detail").isEqualTo("store is disposed");
            web.get().uri("/other").exchange().expectStatus().isEqualTo(500)
                    .expectBody().jsonPath("$.detail").value(d -> assertThat((String) d).contains("FLUSH_PERSISTENT"));
            web.get().uri("/outside").exchange().expectStatus().isBadRequest()
                    .expectBody().jsonPath("$.detail").value(d -> assertThat((String) d).contains("exceeds the region size"));
        }
    }

    @Test
    void argumentRefusal_isAnIllegalArgumentThrownByTheLibrarysChecks_notAnyIllegalArgument() {
        IllegalArgumentException perOperation = org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class, () -> io.cqflux.core.internal.Checks.maxLength(65, 64));
        org.assertj.core.api.Assertions.assertThat(CqfluxErrorWebExceptionHandler.isArgumentRefusal(perOperation)).isTrue();
        org.assertj.core.api.Assertions.assertThat(CqfluxErrorWebExceptionHandler.status(perOperation).value()).isEqualTo(400);
        org.assertj.core.api.Assertions.assertThat(CqfluxErrorWebExceptionHandler.cqfluxCause(
                new RuntimeException("wrapped", perOperation))).isSameAs(perOperation);
        IllegalArgumentException applications = new IllegalArgumentException("the application's own check");
        org.assertj.core.api.Assertions.assertThat(CqfluxErrorWebExceptionHandler.isArgumentRefusal(applications)).isFalse();
        org.assertj.core.api.Assertions.assertThat(CqfluxErrorWebExceptionHandler.cqfluxCause(applications)).isNull();
    }

    @Test
    void notEnabled_aCqfluxErrorIsSpringBootsDefault500() {
        try (LoopbackPeer server = CqfluxTest.loopback().regionSize(REGION).start();
                ConfigurableApplicationContext ctx = start(server)) {
            assertThat(ctx.getBeansOfType(CqfluxErrorWebExceptionHandler.class)).isEmpty();
            client(ctx).get().uri("/outside").exchange().expectStatus().isEqualTo(500);
        }
    }

    @Test
    void retryAfterBelowOneSecond_failsTheStartNamingTheProperty() {
        try (LoopbackPeer server = CqfluxTest.loopback().regionSize(REGION).start()) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> start(server,
                            "cqflux.web.error-mapping.enabled=true", "cqflux.web.error-mapping.retry-after=500ms").close())
                    .rootCause().isInstanceOf(CqfluxPropertyException.class)
                    .hasMessageContaining("cqflux.web.error-mapping.retry-after=PT0.5S is refused")
                    .hasMessageContaining("below 1 second");
        }
    }
}
