package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

class LoopbackPeerTest {
    static final Duration T = Duration.ofSeconds(10);

    @Test
    void oneLine_writeThenRead_roundTripsTheBytes() {
        try (LoopbackPeer peer = CqfluxTest.loopback().regionSize(1 << 20).start()) {
            byte[] hello = "hello, loopback".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            peer.localMemory().asSlice(0, hello.length).copyFrom(java.lang.foreign.MemorySegment.ofArray(hello));
            StepVerifier.create(peer.connection().write(peer.remote(), 4096, peer.local(), 0, hello.length))
                    .expectComplete()
                    .verify(T);
            assertArrayEquals(hello, peer.memory().asSlice(4096, hello.length).toArray(ValueLayout.JAVA_BYTE));

            peer.memory().set(ValueLayout.JAVA_LONG, 8192, 0x1234_5678_9abc_def0L);
            CqfluxTest.verify(StepVerifier.create(peer.connection().read(peer.local(), 64, peer.remote(), 8192, 8))
                    .expectComplete());
            assertEquals(0x1234_5678_9abc_def0L, peer.localMemory().get(ValueLayout.JAVA_LONG, 64));
            assertEquals(1 << 20, peer.remote().size());
            assertFalse(peer.serverConnection().isDisposed());
        }
    }

    @Test
    void close_isIdempotent_andDisposesBothInstances() {
        LoopbackPeer peer = CqfluxTest.loopback().start();
        peer.close();
        peer.close();
        assertTrue(peer.client().isDisposed());
        assertTrue(peer.server().isDisposed());
        assertTrue(peer.connection().isDisposed());
    }

    @Test
    void connectAnother_givesASecondEstablishedConnection() {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            var second = peer.connectAnother();
            CqfluxTest.verify(StepVerifier.create(second.write(second.remoteRegion(0), 0, peer.local(), 0, 64))
                    .expectComplete());
        }
    }

    /** Each connection's server end is its own: a message from it arrives on that connection only. */
    @Test
    void serverEndOf_eachConnectionMade_isItsOwnServerEnd() {
        try (LoopbackPeer peer = CqfluxTest.loopback().start()) {
            var second = peer.connectAnother();
            var third = peer.connectAnother();
            assertSame(peer.serverConnection(), peer.serverEndOf(peer.connection()));
            assertNotSame(peer.serverEndOf(second), peer.serverEndOf(third));
            peer.memory().setString(0, "to the third");
            CqfluxTest.verify(StepVerifier.create(third.receive().next().map(m ->
                                    java.lang.foreign.MemorySegment.ofArray(m.data()).getString(0)))
                    .then(() -> peer.serverEndOf(third).send(peer.exposed(), 0, 16).subscribe())
                    .expectNext("to the third")
                    .expectComplete());
            try (LoopbackPeer other = CqfluxTest.loopback().start()) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> other.serverEndOf(second));
                assertTrue(e.getMessage().contains("was not made by this loopback peer"), e.getMessage());
            }
        }
    }

    @Test
    void regionSize_outOfBounds_isRejectedNamingTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CqfluxTest.loopback().regionSize(8));
        assertTrue(e.getMessage().contains("regionSize 8"), e.getMessage());
    }

    @Test
    void timeout_outOfBounds_isRejectedNamingTheValueAndTheBound() {
        // The waits take it in nanoseconds: unbounded, a long one would fail start() with an
        // ArithmeticException that names neither the value nor the bound.
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CqfluxTest.loopback().timeout(Duration.ofSeconds(Long.MAX_VALUE)));
        assertTrue(e.getMessage().contains("PT" + Long.MAX_VALUE / 3600 + "H") && e.getMessage().contains("PT24H"),
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> CqfluxTest.loopback().timeout(Duration.ZERO));
        assertTrue(e.getMessage().contains("PT0S") && e.getMessage().contains("PT24H"), e.getMessage());
    }

    @Test
    void close_onTheEventLoop_returnsWithoutWaitingForIt_andFreesTheMemoryOnceBothEnded() {
        // Closing from a subscriber's callback, which runs on the client's event loop.
        LoopbackPeer peer = CqfluxTest.loopback().timeout(Duration.ofSeconds(30)).start();
        java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
        peer.connection().write(peer.remote(), 0, peer.local(), 0, 64)
                .doOnSuccess(v -> {
                    peer.close();
                    closed.set(true);
                })
                .subscribe();
        // A close() that waited there for its own loop to end would hold it to the builder's
        // timeout (30 s), past this wait, and then leave the memory allocated.
        assertTrue(Await.until(closed::get, T), "close() on the loop did not return");
        assertTrue(Await.until(() -> !peer.localMemory().scope().isAlive(), T), "the memory was not freed");
        assertTrue(peer.client().isDisposed());
        assertTrue(peer.server().isDisposed());
    }

    @Test
    void close_onAnInterruptedThread_freesTheMemoryOnlyOnceBothInstancesEnded() {
        LoopbackPeer peer = CqfluxTest.loopback().start();
        Thread.currentThread().interrupt();
        try {
            peer.close();
            assertTrue(Thread.currentThread().isInterrupted(), "close() cleared the interrupt flag");
        } finally {
            Thread.interrupted();
        }
        // The memory is checked before the instances: freed memory with an instance still
        // running is memory a transport may still use.
        boolean freed = !peer.localMemory().scope().isAlive();
        boolean ended = peer.client().onDispose().toFuture().isDone() && peer.server().onDispose().toFuture().isDone();
        assertTrue(!freed || ended, "the memory was freed while an instance was still ending");
        assertTrue(Await.until(() -> !peer.localMemory().scope().isAlive(), T), "the memory was not freed");
    }

    @Test
    void connectAnother_afterClose_failsWithResourceClosed() {
        LoopbackPeer peer = CqfluxTest.loopback().start();
        peer.close();
        assertThrows(io.cqflux.core.ResourceClosedException.class, peer::connectAnother);
    }
}
