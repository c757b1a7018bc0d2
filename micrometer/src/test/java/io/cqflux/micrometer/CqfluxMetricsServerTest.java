package io.cqflux.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.Authenticator;
import io.cqflux.reactor.ConnectOptions;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.RefusalKind;
import io.cqflux.reactor.Region;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The server meters over libfabric's tcp provider on loopback: one {@code cqflux.server.refusals}
 * counter per {@link RefusalKind}, each moved by its own kind of refusal, and the gauges of what
 * the servers hold; a disposed server's counts stay.
 */
class CqfluxMetricsServerTest {
    private static final Duration T = Duration.ofSeconds(10);

    @Test
    void eachKindOfRefusal_movesItsOwnCounter_andDisposedServersCountsStay() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        InetAddress lo = InetAddress.getLoopbackAddress();
        try (Arena arena = Arena.ofShared();
                Cqflux server = Cqflux.builder().transport("fabric").fabricProvider("tcp").localAddress(lo)
                        .threadNamePrefix("cqflux-meters-server").build();
                Cqflux client = Cqflux.builder().transport("fabric").fabricProvider("tcp").localAddress(lo)
                        .threadNamePrefix("cqflux-meters-client").build();
                CqfluxMetrics metrics = new CqfluxMetrics(server)) {
            metrics.bindTo(registry);
            for (RefusalKind k : RefusalKind.values()) {
                assertEquals(0.0, refusals(registry, k), k::toString);
            }
            Region region = server.register(arena.allocate(4096, 4096), RegionAccess.READ_SRC);
            InetSocketAddress any = new InetSocketAddress(lo, 0);
            // maxConnections(1): the first is served, the second refused at admission.
            RdmaServer limited = server.bind(any, AcceptOptions.exposing(region).withMaxConnections(1)).block(T);
            RdmaConnection kept = client.connect(limited.address()).block(T);
            rejected(client.connect(limited.address()));
            assertEquals(1.0, refusals(registry, RefusalKind.MAX_CONNECTIONS), () -> "" + server.serverStats());
            await(() -> registry.get("cqflux.server.connections").gauge().value() == 1.0,
                    () -> "connections " + server.serverStats());
            assertEquals(1.0, registry.get("cqflux.server.exposures").gauge().value());
            // The authenticator says no, twice.
            RdmaServer denying = server.bind(any, AcceptOptions.exposing(region)
                    .authenticatedBy(r -> Mono.just(Authenticator.Decision.deny("not you")))).block(T);
            // Not a hello: refused before anything is opened, before the authenticator is asked
            // (on a server with room: the limits are applied before the hello is read).
            rejected(client.connect(denying.address(), ConnectOptions.rawPrivateData(new byte[] {'X', 'Y', 1, 0})));
            assertEquals(1.0, refusals(registry, RefusalKind.MALFORMED_HELLO));
            assertEquals(0.0, refusals(registry, RefusalKind.AUTHENTICATOR), "asked about a malformed hello");
            for (int i = 0; i < 2; i++) {
                rejected(client.connect(denying.address(), ConnectOptions.defaults().credentials(new byte[] {1})));
            }
            await(() -> refusals(registry, RefusalKind.AUTHENTICATOR) == 2.0, () -> "" + server.serverStats());
            // Never decides: the handshake timeout.
            RdmaServer silent = server.bind(any, AcceptOptions.exposing(region).authenticatedBy(r -> Mono.never())
                    .withHandshakeTimeout(Duration.ofMillis(200))).block(T);
            rejected(client.connect(silent.address(), ConnectOptions.defaults().credentials(new byte[] {1})));
            await(() -> refusals(registry, RefusalKind.HANDSHAKE_TIMEOUT) == 1.0, () -> "" + server.serverStats());
            // Its own kinds only: nothing else moved.
            assertEquals(0.0, refusals(registry, RefusalKind.MAX_PENDING));
            assertEquals(0.0, refusals(registry, RefusalKind.CONTROL_WORD));
            // A disposed server's counts stay in the instance's counters.
            limited.disposeNow(T);
            denying.disposeNow(T);
            assertEquals(1.0, refusals(registry, RefusalKind.MAX_CONNECTIONS));
            assertEquals(2.0, refusals(registry, RefusalKind.AUTHENTICATOR));
            kept.disposeNow(T);
            silent.disposeNow(T);
        }
    }

    private static double refusals(SimpleMeterRegistry registry, RefusalKind k) {
        return registry.get("cqflux.server.refusals").tag("kind", k.tagValue()).functionCounter().count();
    }

    private static void rejected(Mono<RdmaConnection> connect) {
        StepVerifier.create(connect)
                .expectErrorSatisfies(e -> assertEquals(ConnectionEvent.REJECTED,
                        org.junit.jupiter.api.Assertions.assertInstanceOf(ConnectionException.class, e).event(),
                        e::toString))
                .verify(T);
    }

    private static void await(BooleanSupplier cond, Supplier<String> what) {
        long end = System.nanoTime() + T.toNanos();
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > end) {
                org.junit.jupiter.api.Assertions.fail(what.get());
            }
            LockSupport.parkNanos(10_000_000L);
        }
    }
}
