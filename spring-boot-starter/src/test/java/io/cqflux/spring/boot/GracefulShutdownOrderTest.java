package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.Region;
import io.cqflux.test.CqfluxTest;
import io.cqflux.test.LoopbackPeer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * The shutdown order of a whole reactive web application on Reactor Netty
 * ({@code server.shutdown=graceful}), observed with raw HTTP/1.1 connections: the gate closes
 * first and refuses what arrives, kept-alive connections included, with a 503 and
 * {@code Connection: close}; the actuator still answers; a request in progress runs its RDMA
 * write and is answered before cqflux drains and closes the peer.
 */
class GracefulShutdownOrderTest {

    /** What the test hands the application and reads back from it. */
    static final class Probe {
        final CountDownLatch slowEntered = new CountDownLatch(1);
        final Sinks.Empty<Void> releaseSlow = Sinks.empty();
        final CountDownLatch holdEntered = new CountDownLatch(1);
        final CountDownLatch releaseHold = new CountDownLatch(1);
        final AtomicInteger workRuns = new AtomicInteger();
        final AtomicReference<Region> src = new AtomicReference<>();
        final AtomicReference<String> atAnswer = new AtomicReference<>();
    }

    static final AtomicReference<Probe> PROBE = new AtomicReference<>();

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        RouterFunction<ServerResponse> routes(CqfluxPeers peers, Cqflux cqflux) {
            Probe p = PROBE.get();
            CqfluxPeer store = peers.get("store");
            return RouterFunctions.route()
                    .POST("/work", r -> r.bodyToMono(String.class).then(Mono.defer(() -> {
                        p.workRuns.incrementAndGet();
                        return ServerResponse.ok().bodyValue("worked");
                    })))
                    .POST("/slow", r -> r.bodyToMono(String.class)
                            .doOnNext(b -> p.slowEntered.countDown())
                            .then(p.releaseSlow.asMono())
                            .then(store.withConnection(c -> c.durableWrite(c.remoteRegion(0), 0, p.src.get(), 0, 64)))
                            .then(Mono.fromRunnable(() -> p.atAnswer.set("disposed=" + cqflux.isDisposed()
                                    + " store=" + store.state())))
                            .then(ServerResponse.ok().bodyValue("written")))
                    .build();
        }

        /** Holds the close between the gate's stop and the server's graceful shutdown. */
        @Bean
        SmartLifecycle hold() {
            Probe p = PROBE.get();
            return new SmartLifecycle() {
                private volatile boolean running;

                @Override
                public void start() {
                    running = true;
                }

                @Override
                public void stop() {
                    p.holdEntered.countDown();
                    try {
                        p.releaseHold.await(20, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    running = false;
                }

                @Override
                public boolean isRunning() {
                    return running;
                }

                @Override
                public int getPhase() {
                    return CqfluxRequestGate.PHASE - 1;
                }
            };
        }
    }

    @Test
    void close_refusesNewAndKeptAliveRequests_answersTheOneInProgress_thenDrains() throws Exception {
        Probe p = new Probe();
        PROBE.set(p);
        try (LoopbackPeer server = CqfluxTest.loopback().start(); Arena arena = Arena.ofShared()) {
            ConfigurableApplicationContext ctx = new SpringApplicationBuilder(App.class)
                    .web(WebApplicationType.REACTIVE)
                    .properties("server.port=0", "server.shutdown=graceful", "cqflux.transport=fabric",
                            "cqflux.shutdown-timeout=10s", "management.endpoint.health.probes.enabled=true",
                            "cqflux.peers.store.address=127.0.0.1", "cqflux.peers.store.port=" + server.address().getPort())
                    .run();
            CompletableFuture<Void> closing = null;
            try {
                int port = Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port"));
                Cqflux cq = ctx.getBean(Cqflux.class);
                CqfluxPeer store = ctx.getBean(CqfluxPeers.class).get("store");
                MemorySegment mem = arena.allocate(64);
                mem.fill((byte) 7);
                p.src.set(cq.register(mem, RegionAccess.WRITE_SRC));

                try (Http a = new Http(port); Http b = new Http(port); Http c = new Http(port)) {
                    a.send("POST", "/slow", "x");
                    assertThat(p.slowEntered.await(10, TimeUnit.SECONDS)).isTrue();
                    assertThat(b.exchange("POST", "/work", "1").status).isEqualTo(200); // kept alive
                    assertThat(c.exchange("GET", "/actuator/health/liveness", null).status).isEqualTo(200);

                    closing = CompletableFuture.runAsync(ctx::close);
                    assertThat(p.holdEntered.await(10, TimeUnit.SECONDS)).isTrue();
                    // The gate is closed; the server has not begun its graceful shutdown.
                    assertThat(ctx.getBean(CqfluxRequestGate.class).isClosed()).isTrue();
                    Response refused = b.exchange("POST", "/work", "2");
                    assertThat(refused.status).isEqualTo(503);
                    assertThat(refused.headers.get("connection")).isEqualTo("close");
                    assertThat(refused.body).isEqualTo(CqfluxRequestGateFilter.REFUSAL);
                    assertThat(b.closedByServer()).as("the refused connection is closed after its answer").isTrue();
                    try (Http d = new Http(port)) {
                        assertThat(d.exchange("POST", "/work", "3").status).isEqualTo(503);
                    }
                    assertThat(p.workRuns.get()).as("refused requests never reach the handler").isEqualTo(1);
                    assertThat(c.exchange("GET", "/actuator/health/liveness", null).status).isEqualTo(200);
                    assertThat(c.exchange("GET", "/actuator/health/readiness", null).status).isEqualTo(503);

                    p.releaseHold.countDown();
                    Thread.sleep(300); // the server's graceful shutdown waits for /slow
                    assertThat(closing).isNotDone();
                    assertThat(cq.isDisposed()).isFalse();
                    assertThat(store.state()).isEqualTo(CqfluxPeer.State.UP);

                    p.releaseSlow.tryEmitEmpty();
                    Response slow = a.read();
                    assertThat(slow.status).isEqualTo(200);
                    assertThat(slow.body).isEqualTo("written");
                    assertThat(slow.headers.get("connection")).isEqualTo("close");
                    assertThat(p.atAnswer.get()).isEqualTo("disposed=false store=UP");
                    closing.get(20, TimeUnit.SECONDS);
                }
                assertThat(cq.isDisposed()).isTrue();
                assertThat(store.state()).isEqualTo(CqfluxPeer.State.CLOSED);
                assertThat(server.memory().get(ValueLayout.JAVA_BYTE, 63)).isEqualTo((byte) 7);
            } finally {
                p.releaseHold.countDown();
                p.releaseSlow.tryEmitEmpty();
                if (closing == null) {
                    ctx.close();
                } else {
                    closing.get(30, TimeUnit.SECONDS);
                }
            }
        } finally {
            PROBE.set(null);
        }
    }

    record Response(int status, Map<String, String> headers, String body) {
    }

    /** One HTTP/1.1 connection, kept alive unless the server closes it. */
    static final class Http implements AutoCloseable {
        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;

        Http(int port) throws IOException {
            socket = new Socket("127.0.0.1", port);
            socket.setSoTimeout(10_000);
            in = socket.getInputStream();
            out = socket.getOutputStream();
        }

        void send(String method, String path, String body) throws IOException {
            byte[] b = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
            String head = method + " " + path + " HTTP/1.1\r\nHost: localhost\r\n"
                    + (body == null ? "" : "Content-Type: text/plain\r\nContent-Length: " + b.length + "\r\n") + "\r\n";
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.write(b);
            out.flush();
        }

        Response exchange(String method, String path, String body) throws IOException {
            send(method, path, body);
            return read();
        }

        Response read() throws IOException {
            String status = line();
            Map<String, String> headers = new LinkedHashMap<>();
            for (String l = line(); !l.isEmpty(); l = line()) {
                int colon = l.indexOf(':');
                headers.put(l.substring(0, colon).trim().toLowerCase(Locale.ROOT), l.substring(colon + 1).trim());
            }
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            if (headers.containsKey("content-length")) {
                body.write(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
            } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
                for (int n = Integer.parseInt(line().trim(), 16); n > 0; n = Integer.parseInt(line().trim(), 16)) {
                    body.write(in.readNBytes(n));
                    line();
                }
                line();
            }
            return new Response(Integer.parseInt(status.split(" ")[1]), headers, body.toString(StandardCharsets.UTF_8));
        }

        /** {@return whether the server closed the connection (end of stream) within the socket timeout} */
        boolean closedByServer() throws IOException {
            try {
                return in.read() == -1;
            } catch (SocketTimeoutException e) {
                return false;
            }
        }

        private String line() throws IOException {
            ByteArrayOutputStream l = new ByteArrayOutputStream();
            for (int c = in.read(); c != '\n'; c = in.read()) {
                if (c == -1) {
                    throw new IOException("connection closed by the server mid-response: " + l);
                }
                if (c != '\r') {
                    l.write(c);
                }
            }
            return l.toString(StandardCharsets.US_ASCII);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
