package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionException;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.Disposable;

/**
 * A server whose transport's accept fails with an {@code Error}, as the bindings report a
 * downcall's unexpected {@code Throwable} (an {@code AssertionError}): the request is answered, its
 * pending handshake's slot comes back, and the next client is served. The faulty transport (a test
 * double around fabric/tcp) rejects the request and throws, as a real transport's failed accept
 * answers its request first.
 */
@ExtendWith(VerifyTimeoutExtension.class)
class ServerAcceptErrorTest {
    static final Duration T = Duration.ofSeconds(10);

    @Test
    void anAcceptThatThrowsAnError_givesItsHandshakeSlotBack_andTheNextClientIsServed() throws Exception {
        Faults faults = Faults.create();
        try (Cqflux server = faults.configure(Cqflux.builder().loops(1)).build();
             Cqflux client = Cqflux.builder().loops(1).build()) {
            // One pending handshake at a time: a slot the failed accept kept would refuse the next.
            RdmaServer s = server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                    AcceptOptions.exposing().withMaxPendingHandshakes(1)).block(T);
            List<RdmaConnection> served = new CopyOnWriteArrayList<>();
            Disposable sub = s.connections().subscribe(served::add);
            try {
                faults.failNextAccept(new AssertionError("test double: the accept's downcall failed"));
                long t0 = System.nanoTime();
                Throwable refused = null;
                try {
                    client.connect(s.address()).block(T);
                } catch (RuntimeException e) {
                    refused = e;
                }
                long ms = (System.nanoTime() - t0) / 1_000_000;
                assertInstanceOf(ConnectionException.class, refused, "the first connect, whose accept failed");
                assertTrue(ms < 4_000, "answered after " + ms + " ms, not at once");
                assertTrue(Await.until(() -> s.stats().pendingHandshakes() == 0, T),
                        () -> "the failed accept kept its handshake's slot: " + s.stats());
                assertEquals(0, s.stats().exposures(), () -> "" + s.stats());

                RdmaConnection c = client.connect(s.address()).block(T);
                try {
                    assertTrue(Await.until(() -> served.size() == 1, T), "the next client was not served");
                    assertEquals(0, s.stats().refusedOverMaxPending(), () -> "" + s.stats());
                } finally {
                    c.dispose();
                }
            } finally {
                sub.dispose();
                served.forEach(RdmaConnection::dispose);
                s.disposeNow(T);
            }
        }
    }
}
