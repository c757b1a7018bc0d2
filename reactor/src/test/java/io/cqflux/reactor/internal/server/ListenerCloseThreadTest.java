package io.cqflux.reactor.internal.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.TransportChoice;
import io.cqflux.reactor.internal.resources.ApiAccess;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Where a server closes its listener: a fabric/tcp listener's close joins the listener's own
 * request reader (Listener#closesOffLoop), so the server runs it on the instance's close thread,
 * never on its loop, and lets the server go (onDispose) only once it returned; the port is free
 * then.
 */
class ListenerCloseThreadTest {

    private static final Duration T = Duration.ofSeconds(10);

    @Test
    void aTcpListener_isClosedOnTheInstancesCloseThread_andTheServerReleasedAfter() throws Exception {
        InetAddress lo = InetAddress.getLoopbackAddress();
        try (Cqflux server = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(lo).loops(1)
                .threadNamePrefix("cqflux-lct").build()) {
            RdmaServer s = server.bind(new InetSocketAddress(lo, 0)).block(T);
            ServerCore core = ApiAccess.get().core(s);
            CompletableFuture<String> closedOn = new CompletableFuture<>();
            core.beforeListenerClose = () -> closedOn.complete(Thread.currentThread().getName());
            InetSocketAddress address = s.address();
            s.dispose();
            String thread = closedOn.get(T.toMillis(), TimeUnit.MILLISECONDS);
            assertEquals("cqflux-lct-close", thread, "the listener was closed elsewhere");
            s.onDispose().block(T);
            // onDispose completed: the port is free.
            RdmaServer again = server.bind(address).block(T);
            again.disposeNow(T);
        }
    }
}
