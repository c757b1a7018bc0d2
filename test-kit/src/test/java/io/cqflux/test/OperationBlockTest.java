package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionStatus;
import io.cqflux.core.OperationFailedException;
import io.cqflux.core.Opcode;
import io.cqflux.reactor.CqfluxListener;
import io.cqflux.reactor.OperationKind;
import io.cqflux.reactor.OperationOutcome;
import io.cqflux.reactor.RdmaConnection;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * An operation's {@code block()} and {@code block(Duration)} keep Reactor's contract whether the
 * caller spins before it parks ({@code Cqflux.Builder.blockSpin} above zero, the operation's own
 * wait) or parks at once (zero: Reactor's {@code Mono.block}): each test runs both ways and
 * expects the same. The faulty transport fails or hangs the operation on purpose.
 */
class OperationBlockTest {
    static final Duration T = Duration.ofSeconds(10);

    Faults faults;
    LoopbackPeer peer;
    final List<OperationOutcome> outcomes = new CopyOnWriteArrayList<>();

    @AfterEach
    void stop() {
        if (peer != null) {
            peer.close();
        }
    }

    private RdmaConnection start(long spinMicros) {
        faults = Faults.create();
        peer = CqfluxTest.loopback().faults(faults).client(b -> b.blockSpin(Duration.ofNanos(spinMicros * 1000))).start();
        peer.client().addListener(new CqfluxListener() {
            @Override
            public void operationFinished(RdmaConnection c, OperationKind kind, OperationOutcome outcome, String error,
                                          long nanos) {
                outcomes.add(outcome);
            }
        });
        return peer.connection();
    }

    private void awaitOutcome(OperationOutcome o) {
        long end = System.nanoTime() + T.toNanos();
        while (!outcomes.contains(o)) {
            assertTrue(System.nanoTime() < end, "the listener never heard " + o + "; heard " + outcomes);
            Thread.onSpinWait();
        }
    }

    @ParameterizedTest(name = "blockSpin {0} µs")
    @ValueSource(longs = {0, 50, 1000})
    void block_returnsOnceTheWriteCompleted_withTheDataAtThePeer(long spin) {
        RdmaConnection c = start(spin);
        for (int i = 0; i < 200; i++) {
            peer.localMemory().set(ValueLayout.JAVA_LONG, 0, i);
            assertNull(c.write(peer.remote(), 8L * i, peer.local(), 0, 8).block());
            assertEquals(i, peer.memory().get(ValueLayout.JAVA_LONG, 8L * i), "write " + i + " not at the peer when block() returned");
            assertNull(c.write(peer.remote(), 8L * i, peer.local(), 0, 8).block(T));
        }
    }

    @ParameterizedTest(name = "blockSpin {0} µs")
    @ValueSource(longs = {0, 50})
    void block_pooledForms_writeThenReadBack_returnTheBytes(long spin) {
        RdmaConnection c = start(spin);
        for (int i = 0; i < 50; i++) {
            byte[] data = {(byte) i, 1, 2, 3, 4, 5, 6, (byte) -i};
            assertNull(c.write(peer.remote(), 16L * i, data).block());
            byte[] back = c.read(peer.remote(), 16L * i, data.length).block(T);
            assertEquals(Arrays.toString(data), Arrays.toString(back));
        }
    }

    @ParameterizedTest(name = "blockSpin {0} µs")
    @ValueSource(longs = {0, 50})
    void block_failedOperation_throwsItsErrorAsReactorsBlockDoes(long spin) {
        RdmaConnection c = start(spin);
        // Argument errors are signalled, then thrown by block(), before anything is posted.
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> c.write(peer.remote(), -1, peer.local(), 0, 8).block(T));
        assertTrue(bad.getMessage().contains("-1"), bad.getMessage());
        assertMarked(bad);
        faults.on(Opcode.WRITE).once().fail(CompletionStatus.REM_ACCESS_ERR);
        RuntimeException e = assertThrows(RuntimeException.class, () -> c.write(peer.remote(), 0, peer.local(), 0, 8).block());
        assertInstanceOf(OperationFailedException.class, e);
        assertMarked(e);
    }

    private static void assertMarked(Throwable e) {
        assertTrue(Arrays.stream(e.getSuppressed()).anyMatch(s -> "#block terminated with an error".equals(s.getMessage())),
                "Reactor's marker is missing: " + Arrays.toString(e.getSuppressed()));
    }

    @ParameterizedTest(name = "blockSpin {0} µs")
    @ValueSource(longs = {0, 50, 1000})
    void blockWithTimeout_hungOperation_throwsAfterTheTimeout_andCancelsIt(long spin) {
        RdmaConnection c = start(spin);
        faults.on(Opcode.WRITE).once().hang();
        long t0 = System.nanoTime();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> c.write(peer.remote(), 0, peer.local(), 0, 8).block(Duration.ofMillis(200)));
        long waited = System.nanoTime() - t0;
        assertTrue(e.getMessage().startsWith("Timeout on blocking read for 200000000 NANOSECONDS"), e.getMessage());
        assertInstanceOf(TimeoutException.class, e.getCause());
        assertTrue(waited >= 200_000_000L, "returned after " + waited + " ns, before the 200 ms timeout");
        awaitOutcome(OperationOutcome.CANCELLED);
        // A zero or negative timeout times out at once, as Reactor's does.
        faults.on(Opcode.WRITE).once().hang();
        assertThrows(IllegalStateException.class, () -> c.write(peer.remote(), 0, peer.local(), 0, 8).block(Duration.ZERO));
    }

    @ParameterizedTest(name = "blockSpin {0} µs")
    @ValueSource(longs = {0, 50})
    void block_interrupted_throwsWithTheInterruptAndCancels(long spin) {
        RdmaConnection c = start(spin);
        faults.on(Opcode.WRITE).once().hang();
        Thread.currentThread().interrupt();
        RuntimeException e;
        try {
            e = assertThrows(RuntimeException.class, () -> c.write(peer.remote(), 0, peer.local(), 0, 8).block());
        } finally {
            assertTrue(Thread.interrupted(), "the interrupt flag must be kept");
        }
        assertInstanceOf(InterruptedException.class, e.getCause());
        awaitOutcome(OperationOutcome.CANCELLED);
    }

    @ParameterizedTest(name = "blockSpin {0} µs")
    @ValueSource(longs = {0, 50})
    void block_onANonBlockingThread_isRefused(long spin) {
        RdmaConnection c = start(spin);
        peer.localMemory().set(ValueLayout.JAVA_LONG, 0, 0x5EED);
        Throwable t = Mono.fromCallable(() -> c.write(peer.remote(), 64, peer.local(), 0, 8).block())
                .subscribeOn(Schedulers.parallel())
                .map(v -> (Throwable) null)
                .onErrorResume(Mono::just)
                .block(T);
        assertInstanceOf(IllegalStateException.class, t);
        assertTrue(t.getMessage().startsWith("block()/blockFirst()/blockLast() are blocking"), t.getMessage());
        // The pooled form too (its Mono waits for a buffer before it posts).
        Throwable t2 = Mono.fromCallable(() -> c.write(peer.remote(), 64, new byte[] {1, 2, 3, 4, 5, 6, 7, 8}).block(T))
                .subscribeOn(Schedulers.parallel())
                .map(v -> (Throwable) null)
                .onErrorResume(Mono::just)
                .block(T);
        assertInstanceOf(IllegalStateException.class, t2);
        // Refused before the subscription (Reactor's own block() subscribes first, and the write
        // would go out): a later write's completion (in order on the connection) finds the
        // refused one's target untouched, and the listener heard of only the later one.
        c.write(peer.remote(), 128, peer.local(), 0, 8).block(T);
        assertEquals(0x5EED, peer.memory().get(ValueLayout.JAVA_LONG, 128));
        assertEquals(0, peer.memory().get(ValueLayout.JAVA_LONG, 64), "the refused write was posted");
        awaitOutcome(OperationOutcome.SUCCESS);
        assertEquals(List.of(OperationOutcome.SUCCESS), outcomes);
    }
}
