package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import java.lang.foreign.Arena;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A refusal by the authenticator on fabric/tcp is a reject that carries the reason
 * ({@code fi_reject(3)}'s private data): the client reads the reason, and the server opens no
 * endpoint for the refused request (ServerRefusals#refuse), as for a refusal at admission. The same
 * on fabric/verbs in the lane ({@link FabricVerbsAuthenticatedRefusalTest}).
 */
class AuthenticatedRefusalTest {

    private static final Duration T = Duration.ofSeconds(30);
    private static final byte[] GOOD = "good".getBytes(StandardCharsets.US_ASCII);

    /** {@return a builder of the transport under test} */
    Cqflux.Builder builder() {
        return Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(InetAddress.getLoopbackAddress())
                .loops(1);
    }

    /** {@return the address servers bind to} */
    InetAddress address() {
        return InetAddress.getLoopbackAddress();
    }

    /** {@return how many bytes of a reason the reject carries: 200 at most, less on a small budget} */
    int reasonBudget() {
        return 200;
    }

    @Test
    void refusedClients_readTheReason_andTheServerOpensNoEndpointForThem() {
        InetAddress lo = address();
        try (Arena arena = Arena.ofShared(); Cqflux server = builder().build(); Cqflux client = builder().build()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.READ_SRC);
            RdmaServer s = server.bind(new InetSocketAddress(lo, 0), AcceptOptions.exposing(exposed)
                    .authenticatedBy(r -> Mono.just(Arrays.equals(r.credentials(), GOOD) ? Authenticator.Decision.allow()
                            : Authenticator.Decision.deny("not on the list"))), c -> c.onDispose()).block(T);
            assertNotNull(s);
            int n = 24;
            List<Throwable> errors = Flux.range(0, n)
                    .flatMap(i -> client.connect(s.address(), ConnectOptions.defaults().credentials(new byte[] {i.byteValue()}))
                            .map(c -> (Throwable) new AssertionError("client " + i + " was served"))
                            .onErrorResume(Mono::just), 8)
                    .collectList().block(T);
            assertNotNull(errors);
            assertEquals(n, errors.size());
            for (Throwable e : errors) {
                ConnectionException c = assertInstanceOf(ConnectionException.class, e, () -> "not a refusal: " + e);
                assertEquals(ConnectionEvent.REJECTED, c.event(), c::toString);
                assertTrue(c.getMessage().endsWith(": refused by the server: not on the list"), c::getMessage);
            }
            // The client may read its REJECTED before the server's loop has counted the reject done.
            long until = System.nanoTime() + T.toNanos();
            while ((s.stats().pendingHandshakes() != 0 || s.stats().refusedByAuthenticator() != n)
                    && System.nanoTime() < until) {
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            }
            assertEquals(n, s.stats().refusedByAuthenticator(), () -> "" + s.stats());
            assertEquals(0, s.core().refusedByAccept(), "a refusal opened an endpoint to carry its reason");
            assertEquals(0, s.stats().pendingHandshakes(), () -> "a refusal is still pending: " + s.stats());
            assertEquals(0, s.stats().exposures(), () -> "" + s.stats());

            RdmaConnection ok = client.connect(s.address(), ConnectOptions.defaults().credentials(GOOD)).block(T);
            assertNotNull(ok);
            assertEquals(1, s.stats().exposures(), () -> "the allowed client was not served: " + s.stats());
            ok.dispose();
        }
    }

    @Test
    void anAuthenticatorThatAnswersLaterOnAnotherThread_isHeardOnTheLoop_bothWays() {
        InetAddress lo = address();
        try (Arena arena = Arena.ofShared(); Cqflux server = builder().build(); Cqflux client = builder().build()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.READ_SRC);
            RdmaServer s = server.bind(new InetSocketAddress(lo, 0), AcceptOptions.exposing(exposed)
                    .authenticatedBy(r -> Mono.delay(Duration.ofMillis(50)).map(x -> Arrays.equals(r.credentials(), GOOD)
                            ? Authenticator.Decision.allow() : Authenticator.Decision.deny("later: no"))),
                    c -> c.onDispose()).block(T);
            assertNotNull(s);
            Throwable e = client.connect(s.address(), ConnectOptions.defaults().credentials(new byte[] {1}))
                    .map(c -> (Throwable) new AssertionError("served"))
                    .onErrorResume(Mono::just).block(T);
            ConnectionException c = assertInstanceOf(ConnectionException.class, e, () -> "not a refusal: " + e);
            assertEquals(ConnectionEvent.REJECTED, c.event(), c::toString);
            assertTrue(c.getMessage().endsWith(": refused by the server: later: no"), c::getMessage);
            RdmaConnection ok = client.connect(s.address(), ConnectOptions.defaults().credentials(GOOD)).block(T);
            assertNotNull(ok);
            assertEquals(1, s.stats().refusedByAuthenticator(), () -> "" + s.stats());
            assertEquals(0, s.core().refusedByAccept());
            ok.dispose();
        }
    }

    @Test
    void aLongReason_isCutToTheRejectsBudget_whichTheClientReads() {
        InetAddress lo = address();
        String reason = "r".repeat(150) + "s".repeat(50) + "t".repeat(100);
        try (Arena arena = Arena.ofShared(); Cqflux server = builder().build(); Cqflux client = builder().build()) {
            Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.READ_SRC);
            RdmaServer s = server.bind(new InetSocketAddress(lo, 0), AcceptOptions.exposing(exposed)
                    .authenticatedBy(r -> Mono.just(Authenticator.Decision.deny(reason))), c -> c.onDispose()).block(T);
            assertNotNull(s);
            Throwable e = client.connect(s.address(), ConnectOptions.defaults().credentials(new byte[] {1}))
                    .map(c -> (Throwable) new AssertionError("served"))
                    .onErrorResume(Mono::just).block(T);
            ConnectionException c = assertInstanceOf(ConnectionException.class, e, () -> "not a refusal: " + e);
            assertEquals(ConnectionEvent.REJECTED, c.event(), c::toString);
            String m = c.getMessage();
            String marker = "refused by the server: ";
            assertTrue(m.contains(marker), m);
            assertEquals(reason.substring(0, reasonBudget()), m.substring(m.indexOf(marker) + marker.length()),
                    "the reason as the client read it");
            assertEquals(0, s.core().refusedByAccept());
        }
    }
}
