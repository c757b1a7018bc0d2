package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.QueueFullException;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.reactor.internal.op.StagedSubscription;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The staging buffer pool's forms when something ends around them, over fabric/tcp on 127.0.0.1:
 * the pool closed (its Cqflux disposed) while a buffer is being handed to a waiting operation.
 */
class BufferPoolFaultTest {
    static final Duration T = FaultRig.T;

    FaultRig rig;

    @AfterEach
    void tearDown() {
        if (rig != null) {
            rig.close();
        }
    }

    private void start(int buffers, int bufferSize, int maxWaiters) {
        rig = new FaultRig(b -> b, b -> b.bufferPool(buffers, bufferSize, maxWaiters));
    }

    private BufferPool pool() {
        return rig.client.buffers();
    }

    /** Records the subscription and the one terminal signal of a {@code Mono<Void>}. */
    static final class Outcome implements CoreSubscriber<Void> {
        final AtomicReference<Subscription> subscription = new AtomicReference<>();
        final AtomicReference<Object> signal = new AtomicReference<>();

        @Override
        public void onSubscribe(Subscription s) {
            subscription.set(s);
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Void v) {
        }

        @Override
        public void onError(Throwable t) {
            assertTrue(signal.compareAndSet(null, t), "a second terminal signal: " + t);
        }

        @Override
        public void onComplete() {
            assertTrue(signal.compareAndSet(null, "complete"), "a second terminal signal: complete");
        }

        boolean await(Duration max) {
            return FaultRig.await(() -> signal.get() != null, max);
        }
    }

    // ---------------------------------------------------------------- the pool closes mid-grant

    /**
     * The race of the pool's grant with its close, made deterministic: the grant takes the waiter
     * out of the queue under the lock and offers it the lease outside it; the close runs in
     * between (so it no longer sees the waiter) and the offer comes after it. Here another
     * operation still uses the pool's region, so its memory stays registered: the data is copied,
     * and the operation must fail with ResourceClosedException (nothing posted) and the buffer
     * come back. Before, the offer threw on the closed pool, the grant logged it and the
     * subscriber never heard anything.
     */
    @Test
    void stagedWrite_poolClosedBetweenGrantAndOffer_failsWithResourceClosed_andTheBufferComesBack() {
        start(1, 4096, 16);
        BufferLease lease = pool().acquire().block(T);
        Region poolRegion = pool().region();
        poolRegion.acquire("another operation's"); // keeps the memory registered past the close
        try {
            Outcome out = grantAfterClose(lease);
            assertInstanceOf(ResourceClosedException.class, out.signal.get());
            assertFalse(lease.isHeld());
            assertEquals(0, pool().leased());
        } finally {
            poolRegion.release();
        }
        StepVerifier.create(poolRegion.onClose()).expectComplete().verify(T);
    }

    /**
     * The same race when no operation uses the pool's region any more: the close deregistered it
     * and freed its memory, so the copy into the buffer fails; the subscriber still gets the
     * pool's ResourceClosedException, not the memory's "already closed".
     */
    @Test
    void stagedWrite_poolClosedAndFreedBetweenGrantAndOffer_failsWithResourceClosed() {
        start(1, 4096, 16);
        BufferLease lease = pool().acquire().block(T);
        Outcome out = grantAfterClose(lease);
        assertInstanceOf(ResourceClosedException.class, out.signal.get());
        assertFalse(lease.isHeld());
        assertEquals(0, pool().leased());
    }

    /** Queues a staged write behind {@code lease}, then runs the grant's two halves around a close. */
    private Outcome grantAfterClose(BufferLease lease) {
        Outcome out = new Outcome();
        rig.conn.write(rig.remote(), 0, new byte[64]).subscribe(out);
        assertEquals(1, pool().waiters());
        StagedSubscription<?> waiter = (StagedSubscription<?>) out.subscription.get();

        assertTrue(pool().withdraw(waiter)); // what the grant does under the lock
        pool().close();                       // what Cqflux.dispose does first
        try {
            waiter.take(lease);               // the offer, after the close ("must not throw")
        } catch (RuntimeException e) {
            // before the fix: the grant logged this and gave the lease back, nothing more
            lease.release();
        }
        assertTrue(out.await(T), "the staged write never terminated");
        return out;
    }

    // ---------------------------------------------------------------- the connection ends

    /**
     * Staged operations of every shape waiting for a buffer when this side closes the connection:
     * each fails at once with the connection's end (ConnectionException CLOSED, what its queued
     * operations get) and leaves the pool's queue, freeing its place among maxWaiters; a taker of
     * acquire() (no connection) keeps waiting. Before, they waited until someone released a buffer.
     */
    @Test
    void stagedOperations_waitingForABuffer_failWithTheConnectionsEnd_andLeaveTheQueue() {
        start(1, 4096, 16);
        BufferLease held = pool().acquire().block(T);
        Outcome write = new Outcome();
        Outcome send = new Outcome();
        AtomicReference<Throwable> read = new AtomicReference<>();
        AtomicReference<BufferLease> acquirer = new AtomicReference<>();
        rig.conn.write(rig.remote(), 0, new byte[64]).subscribe(write);
        // The send waits for the peer's first receive credit before it asks for a buffer (the
        // connection's hold): it is not among the pool's waiters, and fails with the end as well.
        rig.conn.send(java.nio.ByteBuffer.allocate(16)).subscribe(send);
        rig.conn.read(rig.remote(), 0, 64).subscribe(b -> { }, read::set);
        pool().acquire().subscribe(acquirer::set);
        assertEquals(3, pool().waiters());
        assertTrue(FaultRig.await(() -> rig.conn.waiting() == 1, T), "the send held: " + rig.conn.waiting());

        rig.conn.disposeNow(T);

        assertTrue(write.await(T) && send.await(T) && FaultRig.await(() -> read.get() != null, T),
                "staged operations still waiting for a buffer after their connection ended: " + pool());
        for (Object o : new Object[] {write.signal.get(), send.signal.get(), read.get()}) {
            ConnectionException e = assertInstanceOf(ConnectionException.class, o);
            assertEquals(ConnectionEvent.CLOSED, e.event());
        }
        assertEquals(1, pool().waiters(), "only acquire() waits on");
        held.release();
        assertTrue(acquirer.get() != null && acquirer.get().isHeld());
        acquirer.get().release();
        assertEquals(0, pool().leased());
    }

    /** The same when the peer ends the connection: the client's waiting staged write hears of it. */
    @Test
    void stagedWrite_waitingForABuffer_failsWhenThePeerClosesTheConnection() {
        start(1, 4096, 16);
        BufferLease held = pool().acquire().block(T);
        Outcome write = new Outcome();
        rig.conn.write(rig.remote(), 0, new byte[64]).subscribe(write);
        assertEquals(1, pool().waiters());

        rig.serverConn.disposeNow(T);

        assertTrue(write.await(T), "a staged write still waits for a buffer after the peer closed: " + pool());
        ConnectionException e = assertInstanceOf(ConnectionException.class, write.signal.get());
        assertEquals(ConnectionEvent.CLOSED, e.event());
        assertEquals(0, pool().waiters());
        held.release();
        assertEquals(0, pool().leased());
    }

    /** A staged write subscribed after the end fails at once and never waits. */
    @Test
    void stagedWrite_afterTheConnectionEnded_failsWithoutWaiting() {
        start(1, 4096, 16);
        BufferLease held = pool().acquire().block(T);
        rig.conn.disposeNow(T);
        StepVerifier.create(rig.conn.write(rig.remote(), 0, new byte[64]))
                .expectError(ResourceClosedException.class).verify(T);
        assertEquals(0, pool().waiters());
        held.release();
    }

    // ---------------------------------------------------------------- what a listener hears

    /** Records "kind/outcome/error" of each operation a listener hears of, and its nanos. */
    static final class Heard implements CqfluxListener {
        final List<String> outcomes = new CopyOnWriteArrayList<>();
        final List<Long> nanos = new CopyOnWriteArrayList<>();

        @Override
        public void operationFinished(RdmaConnection connection, OperationKind kind, OperationOutcome outcome,
                                      String error, long ns) {
            outcomes.add(kind.tagValue() + "/" + outcome.tagValue() + "/" + error);
            nanos.add(ns);
        }
    }

    /**
     * Outcomes of staged forms that never reach the operation they stage are reported once each,
     * as the Region forms' are: a failed size check, a full queue of waiters, a cancel while
     * waiting, the connection's end while waiting, the pool closed under a waiter. Before, the
     * listener heard of none of them.
     */
    @Test
    void listener_hearsOfStagedOutcomesThatNeverReachAnOperation_onceEach() {
        start(1, 4096, 1);
        Heard heard = new Heard();
        rig.client.addListener(heard);
        BufferLease held = pool().acquire().block(T);

        StepVerifier.create(rig.conn.write(rig.remote(), 0, new byte[4097]))
                .expectError(IllegalArgumentException.class).verify(T);
        Disposable waiting = rig.conn.durableWrite(rig.remote(), 0, new byte[8]).subscribe();
        assertEquals(1, pool().waiters());
        StepVerifier.create(rig.conn.write(rig.remote(), 8, new byte[8])).expectError(QueueFullException.class).verify(T);
        waiting.dispose();
        assertEquals(List.of("write/error/IllegalArgumentException", "write/error/QueueFullException",
                "durableWrite/cancelled/none"), heard.outcomes);

        AtomicReference<Throwable> read = new AtomicReference<>();
        rig.conn.read(rig.remote(), 0, 8).subscribe(b -> { }, read::set);
        assertEquals(1, pool().waiters());
        rig.conn.disposeNow(T);
        assertTrue(FaultRig.await(() -> read.get() != null, T));
        assertEquals("read/error/ConnectionException", heard.outcomes.getLast());

        RdmaConnection another = rig.connectOne();
        AtomicReference<Throwable> write = new AtomicReference<>();
        another.write(another.remoteRegion(0), 0, new byte[8]).subscribe(v -> { }, write::set);
        assertEquals(1, pool().waiters());
        pool().close(); // what the Cqflux's dispose does first
        assertInstanceOf(ResourceClosedException.class, write.get());
        assertEquals("write/error/ResourceClosedException", heard.outcomes.getLast());

        held.release();
        assertEquals(5, heard.outcomes.size(), heard.outcomes::toString);
    }

    /**
     * A staged operation that got its buffer after a wait is reported once, by the operation it
     * staged, with the time from its own subscription: the wait for the buffer included (as the
     * wait for a send-queue credit is). Before, the time started when the buffer was granted.
     */
    @Test
    void listener_timesAStagedOperationFromItsSubscription_theWaitForABufferIncluded() throws Exception {
        start(1, 4096, 16);
        Heard heard = new Heard();
        rig.client.addListener(heard);
        BufferLease held = pool().acquire().block(T);
        long wait = Duration.ofMillis(300).toNanos();
        StepVerifier.create(rig.conn.write(rig.remote(), 0, new byte[64]))
                .then(() -> {
                    try {
                        Thread.sleep(Duration.ofNanos(wait));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    held.release();
                })
                .expectComplete().verify(T);
        assertEquals(List.of("write/success/none"), heard.outcomes);
        assertTrue(heard.nanos.getFirst() >= wait, "reported " + heard.nanos.getFirst() + " ns, waited " + wait);
    }

    // ---------------------------------------------------------------- the lease forms

    /**
     * A lease of another Cqflux's pool handed to this connection's lease form: the subscription
     * fails with IllegalArgumentException and, owning the lease whatever the outcome, gives it
     * back to its pool (as a failed size check does); nothing happens before subscription. The
     * listener hears of the failure. Before, the lease stayed leased for good.
     */
    @Test
    void leaseForm_withALeaseOfAnotherPool_failsOnSubscription_andGivesTheLeaseBack() {
        start(1, 4096, 16);
        Heard heard = new Heard();
        rig.client.addListener(heard);
        BufferPool other = rig.server.buffers();
        BufferLease foreign = other.acquire().block(T);
        Mono<Void> write = rig.conn.write(rig.remote(), 0, foreign, 8);
        assertTrue(foreign.isHeld(), "assembling takes nothing over");

        StepVerifier.create(write).expectErrorSatisfies(e -> {
            assertInstanceOf(IllegalArgumentException.class, e);
            assertTrue(e.getMessage().contains("another Cqflux's pool"), e.getMessage());
        }).verify(T);
        assertFalse(foreign.isHeld());
        assertEquals(0, other.leased());
        assertEquals(List.of("write/error/IllegalArgumentException"), heard.outcomes);

        BufferLease own = pool().acquire().block(T);
        StepVerifier.create(rig.conn.send(own, own.size() + 1)).expectError(IllegalArgumentException.class).verify(T);
        assertEquals(0, pool().leased());
        assertEquals("send/error/IllegalArgumentException", heard.outcomes.getLast());
    }
}
