package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionException;
import io.cqflux.core.ResourceClosedException;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A JVM-fatal {@code Error} thrown by subscriber code on a loop (deep recursion, a class that
 * failed its static initialiser) is not dropped as an exception is: Reactor rethrows it
 * ({@code Exceptions.throwIfJvmFatal}) and the loop ends, failing the connections it served
 * (docs/architecture.md, "Failure"; the guide's threads page). What must hold then: the instance
 * does not hand new connections to the ended loop, where a connect would wait out its timeout for
 * a thread that is gone; they go to a loop still running, and where none is left a connect fails
 * at once, naming why.
 */
class FatalCallbackErrorTest {
    static final Duration T = FaultRig.T;

    FaultRig rig;

    @AfterEach
    void tearDown() {
        if (rig != null) {
            rig.close();
        }
    }

    @SuppressWarnings("unchecked")
    static <E extends Throwable> RuntimeException sneaky(Throwable t) throws E {
        throw (E) t;
    }

    /** Ends the loop of {@code c} with a fatal error thrown from a write's subscriber; waits until {@code c} ended. */
    void endItsLoop(RdmaConnection c) {
        c.write(c.remoteRegion(0), 0, rig.local, 0, 8)
                .doOnSuccess(v -> {
                    throw sneaky(new StackOverflowError("test: deep recursion in a subscriber"));
                })
                .subscribe(v -> { }, e -> { });
        assertTrue(FaultRig.await(c::isDisposed, T), "the connection of the ended loop is still open");
    }

    @Test
    void aFatalErrorInACallback_endsItsLoop_andNewConnectionsGoToALoopStillRunning() {
        rig = new FaultRig(b -> b, b -> b.loops(2));
        RdmaConnection onFirst = rig.conn;
        RdmaConnection onSecond = rig.connectOne();
        assertNotSame(onFirst.core().loop, onSecond.core().loop, "round-robin over two loops");
        endItsLoop(onFirst);
        // The other loop serves on, and every new connection goes to it.
        onSecond.write(onSecond.remoteRegion(0), 0, rig.local, 0, 8).block(T);
        for (int i = 0; i < 3; i++) {
            RdmaConnection c = rig.client.connect(rig.srv.address()).block(Duration.ofSeconds(5));
            c.write(c.remoteRegion(0), 0, rig.local, 0, 8).block(T);
            c.dispose();
        }
    }

    @Test
    void aFatalErrorInACallback_onTheOnlyLoop_makesTheNextConnectAndBindFailAtOnce_namingWhy() {
        rig = new FaultRig(b -> b, b -> b.loops(1));
        endItsLoop(rig.conn);
        long t0 = System.nanoTime();
        RuntimeException e = assertThrows(RuntimeException.class,
                () -> rig.client.connect(rig.srv.address()).block(T));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertInstanceOf(ResourceClosedException.class, e, e.toString());
        assertTrue(e.getMessage().contains("every event loop"), e.getMessage());
        assertTrue(ms < 2_000, "failed after " + ms + " ms, not at once");
        // A bind, whose server would listen on that (first) loop, says why it cannot.
        RuntimeException b = assertThrows(RuntimeException.class, () -> rig.client.bind(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0)).block(T));
        assertInstanceOf(ResourceClosedException.class, b, b.toString());
        assertTrue(b.getMessage().contains("ended on a fatal error"), b.getMessage());
        // The connection of the ended loop failed with its loop's end.
        ConnectionException ended = assertInstanceOf(ConnectionException.class, assertThrows(RuntimeException.class,
                () -> rig.conn.write(rig.conn.remoteRegion(0), 0, rig.local, 0, 8).block(T)));
        assertTrue(ended.getMessage().contains("event loop"), ended.getMessage());
    }
}
