package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.context.support.StaticApplicationContext;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

class CqfluxRequestGateFilterTest {
    final CqfluxRequestGate gate = new CqfluxRequestGate();
    final CqfluxRequestGateFilter filter = new CqfluxRequestGateFilter(gate, List.of("/actuator"));
    final AtomicInteger chainRuns = new AtomicInteger();

    /** A handler that answers 201 with a body when {@code done} completes. */
    WebFilterChain chain(Mono<Void> done) {
        return exchange -> {
            chainRuns.incrementAndGet();
            return done.then(Mono.defer(() -> {
                exchange.getResponse().setStatusCode(HttpStatus.CREATED);
                return exchange.getResponse().writeWith(Mono.just(DefaultDataBufferFactory.sharedInstance
                        .wrap("stored".getBytes(StandardCharsets.UTF_8))));
            }));
        };
    }

    static MockServerWebExchange post(String path) {
        return MockServerWebExchange.from(MockServerHttpRequest.post(path).body("record"));
    }

    @Test
    void open_admitsAndCountsTheExchangeUntilItsAnswerIsWritten_noConnectionClose() {
        Sinks.Empty<Void> done = Sinks.empty();
        MockServerWebExchange ex = post("/records/1");
        StepVerifier.create(filter.filter(ex, chain(done.asMono())))
                .then(() -> assertThat(gate.active()).isEqualTo(1))
                .then(done::tryEmitEmpty)
                .verifyComplete();
        assertThat(gate.active()).isZero();
        assertThat(ex.getResponse().getStatusCode()).isEqualTo(HttpStatus.CREATED);
        assertThat(ex.getResponse().getHeaders().getConnection()).isEmpty();
    }

    @Test
    void anExchangeThatFailsOrIsCancelled_isNoLongerCounted() {
        StepVerifier.create(filter.filter(post("/records/1"), chain(Mono.error(new IllegalStateException("boom")))))
                .verifyErrorMessage("boom");
        assertThat(gate.active()).isZero();
        StepVerifier.create(filter.filter(post("/records/2"), chain(Mono.never())))
                .then(() -> assertThat(gate.active()).isEqualTo(1))
                .thenCancel()
                .verify(Duration.ofSeconds(5));
        assertThat(gate.active()).isZero();
        // A chain that throws instead of returning a Mono is an error, not a leaked count.
        StepVerifier.create(filter.filter(post("/records/3"), e -> {
            throw new IllegalArgumentException("thrown");
        })).verifyErrorMessage("thrown");
        assertThat(gate.active()).isZero();
    }

    @Test
    void closed_refusesBeforeTheChain_503ConnectionCloseAndABodySayingSo_afterReadingTheRequestBody() {
        gate.close();
        AtomicBoolean bodyRead = new AtomicBoolean();
        Flux<DataBuffer> body = Flux.just("a record's bytes").<DataBuffer>map(s -> DefaultDataBufferFactory.sharedInstance
                .wrap(s.getBytes(StandardCharsets.UTF_8))).doOnComplete(() -> bodyRead.set(true));
        MockServerWebExchange ex = MockServerWebExchange.from(MockServerHttpRequest.post("/records/1").body(body));
        StepVerifier.create(filter.filter(ex, chain(Mono.empty()))).verifyComplete();
        assertThat(chainRuns.get()).as("the application's chain ran").isZero();
        assertThat(gate.active()).isZero();
        assertThat(bodyRead.get()).as("the request body was read (and dropped) before the answer").isTrue();
        var r = ex.getResponse();
        assertThat(r.getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(r.getHeaders().getConnection()).containsExactly("close");
        assertThat(r.getHeaders().getContentType()).isEqualTo(new MediaType(MediaType.TEXT_PLAIN, StandardCharsets.UTF_8));
        assertThat(r.getHeaders().getContentLength()).isEqualTo(CqfluxRequestGateFilter.REFUSAL.getBytes(StandardCharsets.UTF_8).length);
        assertThat(r.getBodyAsString().block(Duration.ofSeconds(5))).isEqualTo(CqfluxRequestGateFilter.REFUSAL)
                .contains("shutting down", "did not process", "retry");
    }

    @Test
    void closed_aBodyThatNeverEnds_orALargeDeclaredOne_doesNotHoldTheRefusal() {
        gate.close();
        // A body that never ends (or stalls): read for at most DRAIN_TIME, then answered anyway.
        MockServerWebExchange endless = MockServerWebExchange.from(MockServerHttpRequest.post("/records/1")
                .body(Flux.<DataBuffer>never()));
        StepVerifier.create(filter.filter(endless, chain(Mono.empty())))
                .expectComplete().verify(CqfluxRequestGateFilter.DRAIN_TIME.plusSeconds(5));
        assertThat(endless.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        // A declared body over the bound, or one sent only after a 100 Continue: not read at all.
        AtomicBoolean subscribed = new AtomicBoolean();
        Flux<DataBuffer> unread = Flux.<DataBuffer>never().doOnSubscribe(x -> subscribed.set(true));
        MockServerWebExchange large = MockServerWebExchange.from(MockServerHttpRequest.post("/records/1")
                .contentLength(CqfluxRequestGateFilter.DRAINED_BODY_BYTES + 1).body(unread));
        StepVerifier.create(filter.filter(large, chain(Mono.empty()))).expectComplete().verify(Duration.ofMillis(500));
        MockServerWebExchange expect = MockServerWebExchange.from(MockServerHttpRequest.post("/records/1")
                .header("Expect", "100-continue").body(unread));
        StepVerifier.create(filter.filter(expect, chain(Mono.empty()))).expectComplete().verify(Duration.ofMillis(500));
        assertThat(subscribed.get()).as("a body that is large or waits for 100 Continue was read").isFalse();
        assertThat(large.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(expect.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        assertThat(chainRuns.get()).isZero();
    }

    @Test
    void anExchangeAssembledButNeverSubscribed_isNotCounted() {
        Mono<Void> never = filter.filter(post("/records/1"), chain(Mono.empty()));
        assertThat(gate.active()).as("counted before anything subscribed").isZero();
        StepVerifier.create(never).verifyComplete();
        assertThat(gate.active()).isZero();
    }

    @Test
    void admittedBeforeTheClose_answeredAfterIt_isAnsweredWithConnectionClose() {
        Sinks.Empty<Void> done = Sinks.empty();
        MockServerWebExchange ex = post("/records/1");
        StepVerifier.create(filter.filter(ex, chain(done.asMono())))
                .then(gate::close)
                .then(() -> assertThat(gate.active()).as("still in progress after the close").isEqualTo(1))
                .then(done::tryEmitEmpty)
                .verifyComplete();
        assertThat(ex.getResponse().getStatusCode()).isEqualTo(HttpStatus.CREATED);
        assertThat(ex.getResponse().getHeaders().getConnection()).containsExactly("close");
        assertThat(ex.getResponse().getBodyAsString().block(Duration.ofSeconds(5))).isEqualTo("stored");
        assertThat(gate.active()).isZero();
    }

    @Test
    void closed_theActuatorsPathsPassUncounted_otherPathsAreRefused() {
        gate.close();
        for (String path : List.of("/actuator", "/actuator/health/liveness", "/actuator/metrics/cqflux.operation")) {
            Sinks.Empty<Void> done = Sinks.empty();
            MockServerWebExchange ex = post(path);
            StepVerifier.create(filter.filter(ex, chain(done.asMono())))
                    .then(() -> assertThat(gate.active()).as("%s counted", path).isZero())
                    .then(done::tryEmitEmpty)
                    .verifyComplete();
            assertThat(ex.getResponse().getStatusCode()).as(path).isEqualTo(HttpStatus.CREATED);
        }
        for (String path : List.of("/actuatorx", "/records/actuator", "/")) {
            MockServerWebExchange ex = post(path);
            StepVerifier.create(filter.filter(ex, chain(Mono.empty()))).verifyComplete();
            assertThat(ex.getResponse().getStatusCode()).as(path).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
        }
        assertThat(chainRuns.get()).isEqualTo(3);
    }

    @Test
    void passThroughPaths_areNormalised_andTheRootPassesNothing() {
        gate.close();
        CqfluxRequestGateFilter f = new CqfluxRequestGateFilter(gate, List.of("manage/", "/", " "));
        assertThat(refused(f, "/manage/health")).isFalse();
        assertThat(refused(f, "/records/1")).isTrue();
        assertThat(refused(new CqfluxRequestGateFilter(gate, List.of()), "/actuator/health")).isTrue();
    }

    @Test
    void anotherContextsExchange_passes_thisContextsIsGated() {
        StaticApplicationContext own = new StaticApplicationContext();
        StaticApplicationContext child = new StaticApplicationContext(own);
        filter.setApplicationContext(own);
        gate.close();
        MockServerWebExchange ofChild = MockServerWebExchange.builder(MockServerHttpRequest.get("/health"))
                .applicationContext(child).build();
        StepVerifier.create(filter.filter(ofChild, chain(Mono.empty()))).verifyComplete();
        assertThat(ofChild.getResponse().getStatusCode()).isEqualTo(HttpStatus.CREATED);
        MockServerWebExchange ofOwn = MockServerWebExchange.builder(MockServerHttpRequest.get("/health"))
                .applicationContext(own).build();
        StepVerifier.create(filter.filter(ofOwn, chain(Mono.empty()))).verifyComplete();
        assertThat(ofOwn.getResponse().getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
    }

    @Test
    void order_isNearTheHead_beforeSpringSecuritysChain() {
        assertThat(filter.getOrder()).isEqualTo(CqfluxRequestGateFilter.ORDER).isLessThan(-100);
    }

    private boolean refused(CqfluxRequestGateFilter f, String path) {
        ServerWebExchange ex = post(path);
        f.filter(ex, chain(Mono.empty())).block(Duration.ofSeconds(5));
        return ex.getResponse().getStatusCode() == HttpStatus.SERVICE_UNAVAILABLE
                && "close".equals(ex.getResponse().getHeaders().getFirst(HttpHeaders.CONNECTION));
    }
}
