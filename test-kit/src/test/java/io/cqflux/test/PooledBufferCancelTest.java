package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.Opcode;
import io.cqflux.reactor.BufferPool;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

/**
 * The buffer of a pooled operation ({@code RdmaConnection}'s {@code byte[]}/{@code ByteBuffer}
 * forms) outlives the cancellation of its subscriber: it goes back to the pool when the operation's
 * completion arrives, or when the connection's native objects are destroyed, and never earlier.
 * The faulty transport holds a completion back (delay) or never posts (hang) so that the
 * cancellation lands while the operation is in flight.
 */
@ExtendWith(VerifyTimeoutExtension.class)
class PooledBufferCancelTest {
    static final Duration T = Duration.ofSeconds(10);
    static final Duration DELAY = Duration.ofMillis(1000);

    Faults faults;
    LoopbackPeer peer;

    @BeforeEach
    void start() {
        faults = Faults.create();
        peer = CqfluxTest.loopback().faults(faults).client(b -> b.bufferPool(2, 4096)).start();
    }

    @AfterEach
    void stop() {
        peer.close();
    }

    private BufferPool pool() {
        return peer.client().buffers();
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed + i * 13);
        }
        return b;
    }

    /** Cancels an in-flight pooled operation and checks its buffer stays leased until the delayed completion. */
    private void cancelInFlight_bufferHeldUntilCompletion(Fault f, java.util.function.Supplier<Disposable> subscribe) {
        long t0 = System.nanoTime(); // before the post, from which the delay counts
        Disposable d = subscribe.get();
        FaultsTest.awaitHit(f); // posted; its completion is held back
        d.dispose();
        // The invariant: leased until the completion, which cannot arrive before t0 + DELAY (a
        // test thread descheduled past that may see 0, which is then right).
        assertTrue(pool().leased() == 1 || System.nanoTime() - t0 >= DELAY.toNanos(),
                "cancel must not give the buffer back: the NIC may still use it");
        Await.pause(DELAY.dividedBy(2));
        assertTrue(pool().leased() == 1 || System.nanoTime() - t0 >= DELAY.toNanos(),
                "still in flight, still leased");
        assertTrue(Await.until(() -> pool().leased() == 0, T), "the completion did not give the buffer back: " + pool());
        long took = System.nanoTime() - t0;
        assertTrue(took >= DELAY.toNanos() * 9 / 10, "the buffer came back after " + took / 1_000_000
                + " ms, before the completion (delay " + DELAY.toMillis() + " ms)");
    }

    @Test
    void write_cancelledBeforeItsCompletion_keepsItsBufferUntilTheCompletionArrives() {
        Fault f = faults.on(Opcode.WRITE).once().delay(DELAY);
        byte[] data = pattern(1000, 1);
        cancelInFlight_bufferHeldUntilCompletion(f, () -> peer.connection().write(peer.remote(), 256, data).subscribe());
        // The write did happen: cancellation only detached the subscriber.
        assertArrayEquals(data, peer.memory().asSlice(256, 1000).toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void durableWrite_cancelledBeforeItsFlushCompletes_keepsItsBufferUntilThen() {
        Fault f = faults.on(Opcode.FLUSH).once().delay(DELAY);
        cancelInFlight_bufferHeldUntilCompletion(f, () -> peer.connection()
                .durableWrite(peer.remote(), 0, ByteBuffer.wrap(pattern(3000, 2))).subscribe());
        assertArrayEquals(pattern(3000, 2), peer.memory().asSlice(0, 3000).toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void read_cancelledBeforeItsCompletion_keepsItsBufferUntilTheCompletionArrives() {
        Fault f = faults.on(Opcode.READ).once().delay(DELAY);
        cancelInFlight_bufferHeldUntilCompletion(f, () -> peer.connection().read(peer.remote(), 0, 4096).subscribe());
    }

    @Test
    void write_cancelledWhileItsCompletionNeverComes_keepsItsBufferUntilTheConnectionIsFreed() {
        Fault f = faults.on(Opcode.WRITE).once().hang();
        Disposable d = peer.connection().write(peer.remote(), 0, pattern(64, 3)).subscribe();
        FaultsTest.awaitHit(f);
        d.dispose();
        Await.pause(Duration.ofMillis(200));
        assertEquals(1, pool().leased(), "no completion yet: still leased");
        peer.connection().disposeNow(T);
        assertEquals(0, pool().leased(), "the native connection is freed: nothing can use the buffer any more");
    }

    @Test
    void write_waitingBehindTwoCancelledWrites_getsABufferOnlyWhenACompletionArrives_allLandIntact() {
        Fault f = faults.on(Opcode.WRITE).matching(op -> op.remoteOffset() < 8192).delay(DELAY);
        byte[] a = pattern(4096, 4);
        byte[] b = pattern(4096, 5);
        byte[] c = pattern(4096, 6);
        long t0 = System.nanoTime();
        Disposable da = peer.connection().write(peer.remote(), 0, a).subscribe();
        Disposable db = peer.connection().write(peer.remote(), 4096, b).subscribe();
        assertTrue(Await.until(() -> f.hits() == 2, T), "both writes posted");
        da.dispose();
        db.dispose();
        assertEquals(2, pool().leased(), "both buffers stay with the cancelled writes");
        StepVerifier.create(peer.connection().write(peer.remote(), 8192, c))
                .expectComplete()
                .verify(T);
        long took = System.nanoTime() - t0;
        assertTrue(took >= DELAY.toNanos() * 9 / 10, "the third write got a buffer after " + took / 1_000_000
                + " ms, before a cancelled write's completion (delay " + DELAY.toMillis() + " ms)");
        assertTrue(Await.until(() -> pool().leased() == 0, T), pool().toString());
        assertArrayEquals(a, peer.memory().asSlice(0, 4096).toArray(ValueLayout.JAVA_BYTE));
        assertArrayEquals(b, peer.memory().asSlice(4096, 4096).toArray(ValueLayout.JAVA_BYTE));
        assertArrayEquals(c, peer.memory().asSlice(8192, 4096).toArray(ValueLayout.JAVA_BYTE));
    }
}
