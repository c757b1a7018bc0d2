package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.QueueFullException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * What waits on a connection, and what it holds while it waits (fabric/tcp, public API):
 * {@code pendingLimit} bounds only what waits, so 0 posts whatever finds a credit; and messages
 * to a peer that takes none wait without the instance's staging buffers, so that such a peer
 * stalls no staged operation of its own connection or of another.
 */
class SendBacklogTest {
    private static final Duration T = FaultRig.T;

    @Test
    void pendingLimitZero_postsEveryOperationThatFindsACredit_andRefusesOnlyWhatWouldWait() {
        try (FaultRig rig = new FaultRig(b -> b, b -> b.pendingLimit(0)
                .connectionConfig(io.cqflux.core.ConnectionConfig.DEFAULT.withSendQueueSize(2)))) {
            RdmaConnection c = rig.conn;
            PeerRegion r = rig.remote();
            // One at a time, each finds a credit: all go out.
            c.write(r, 0, rig.local, 0, 8).block(T);
            c.read(rig.local, 8, r, 0, 8).block(T);
            c.durableWrite(r, 0, rig.local, 0, 8).block(T);
            c.write(r, 16, new byte[8]).block(T);
            assertNotNull(c.read(r, 16, 8).block(T));
            // Messages too, once the peer receives (its credit and a send credit are free).
            List<byte[]> got = new CopyOnWriteArrayList<>();
            Disposable rx = rig.serverConn.receive().subscribe(m -> got.add(m.data()));
            try {
                // Refused while the peer's next credit is on its way (it would wait), then sent.
                assertTrue(FaultRig.await(() -> sendOnce(c, new byte[] {7}), T), "a send with pendingLimit 0");
                assertTrue(FaultRig.await(() -> sendOnce(c, new byte[] {8}), T), "a second send");
                assertTrue(FaultRig.await(() -> got.size() == 2, T), "both arrived: " + got.size());
            } finally {
                rx.dispose();
            }
            // Four at once inside one loop callback: two take the credits, two would wait and are refused.
            long refusedBefore = c.rejections();
            List<String> outcomes = c.read(rig.local, 0, r, 0, 8).thenMany(Flux.range(0, 4).flatMap(i ->
                    c.write(r, 8L * i, rig.local, 0, 8).thenReturn("ok")
                            .onErrorResume(QueueFullException.class, e -> Mono.just("full:" + e.limit())), 4))
                    .collectList().block(T);
            assertNotNull(outcomes);
            assertEquals(List.of("full:0", "full:0", "ok", "ok"), outcomes.stream().sorted().toList());
            assertEquals(2, c.rejections() - refusedBefore, "the two refused are counted");
        }
    }

    /** {@return whether a send went out; false when it was refused for want of the peer's first credit} */
    private static boolean sendOnce(RdmaConnection c, byte[] data) {
        try {
            c.send(data).block(T);
            return true;
        } catch (QueueFullException e) {
            return false;
        }
    }

    @Test
    void messagesToAPeerThatTakesNone_waitWithoutTheInstancesStagingBuffers_andNothingElseStalls() {
        try (FaultRig rig = new FaultRig(b -> b, b -> b.bufferPool(4, 64))) {
            RdmaConnection c = rig.conn;
            BufferPool pool = rig.client.buffers();
            List<Disposable> sends = new ArrayList<>();
            List<Throwable> errors = new CopyOnWriteArrayList<>();
            int n = 12; // three times the pool
            for (int i = 0; i < n; i++) {
                sends.add(c.send(new byte[] {(byte) i}).subscribe(v -> { }, errors::add));
            }
            assertTrue(FaultRig.await(() -> c.waiting() >= 1, T), "the sends wait for the peer");
            FaultRig.drainLoop(c);
            assertEquals(0, pool.leased(), "buffers held by messages waiting for the peer");
            // Staged operations of the same connection and of another one go on.
            c.write(rig.remote(), 0, new byte[] {1, 2, 3, 4, 5, 6, 7, 8}).block(T);
            assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, c.read(rig.remote(), 0, 8).block(T));
            RdmaConnection other = rig.connectOne();
            other.write(other.remoteRegion(0), 64, new byte[] {9}).block(T);
            assertArrayEquals(new byte[] {9}, other.read(other.remoteRegion(0), 64, 1).block(T));
            // The peer starts to receive: every message arrives, in the order sent, none twice.
            List<Integer> got = rig.serverConn.receive().take(n).map(m -> (int) m.data()[0])
                    .collectList().block(T);
            List<Integer> expected = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                expected.add(i);
            }
            assertEquals(expected, got);
            assertEquals(List.of(), errors);
            assertTrue(FaultRig.await(() -> pool.leased() == 0, T), "leased after: " + pool.leased());
            other.dispose();
        }
    }

    @Test
    void heldMessagesCancelledWhileTheyWait_areNeverSent_andTheOthersStillGoInOrder() {
        try (FaultRig rig = new FaultRig(b -> b, b -> b.bufferPool(4, 64))) {
            RdmaConnection c = rig.conn;
            List<Throwable> errors = new CopyOnWriteArrayList<>();
            List<Disposable> kept = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                Disposable d = c.send(new byte[] {(byte) i}).subscribe(v -> { }, errors::add);
                if (i % 2 == 1) {
                    d.dispose(); // cancelled while held (or, the first waiting one, while queued)
                } else {
                    kept.add(d);
                }
            }
            FaultRig.drainLoop(c);
            List<Integer> got = rig.serverConn.receive().take(4).map(m -> (int) m.data()[0]).collectList().block(T);
            assertEquals(List.of(0, 2, 4, 6), got);
            // Nothing more comes: a cancelled one would arrive before a later send does.
            java.util.concurrent.CompletableFuture<Integer> next = rig.serverConn.receive().next()
                    .map(m -> (int) m.data()[0]).toFuture();
            c.send(new byte[] {42}).block(T);
            assertEquals(42, next.orTimeout(T.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS).join());
            assertEquals(List.of(), errors);
            assertTrue(FaultRig.await(() -> rig.client.buffers().leased() == 0, T));
        }
    }

    @Test
    void heldMessages_countAgainstPendingLimit_likeEveryWaitingOperation() {
        try (FaultRig rig = new FaultRig(b -> b, b -> b.bufferPool(4, 64).pendingLimit(3))) {
            RdmaConnection c = rig.conn;
            List<String> outcomes = new CopyOnWriteArrayList<>();
            for (int i = 0; i < 6; i++) {
                int id = i;
                c.send(new byte[] {(byte) i}).subscribe(null,
                        e -> outcomes.add(e instanceof QueueFullException q ? "full:" + q.limit() : e.toString()),
                        () -> outcomes.add("sent:" + id));
            }
            assertTrue(FaultRig.await(() -> outcomes.size() == 3, T), "refused: " + outcomes);
            assertEquals(List.of("full:3", "full:3", "full:3"), outcomes);
            assertEquals(3, c.waiting(), "three held, waiting for the peer's first credit");
            assertEquals(3, c.rejections());
            assertEquals(0, rig.client.buffers().leased(), "held messages hold no buffer");
            List<Integer> got = rig.serverConn.receive().take(3).map(m -> (int) m.data()[0]).collectList().block(T);
            assertEquals(List.of(0, 1, 2), got);
            assertTrue(FaultRig.await(() -> outcomes.size() == 6, T), "sent: " + outcomes);
            assertEquals(List.of("sent:0", "sent:1", "sent:2"), outcomes.subList(3, 6).stream().sorted().toList());
        }
    }

    /**
     * A cancel from another thread can come while a staged send is being held (between its
     * subscription and its place in the hold): each side sees the other, and the hold goes on.
     */
    @Test
    void sendsCancelledFromAnotherThreadAsTheySubscribe_neverStallTheHold() throws Exception {
        try (FaultRig rig = new FaultRig(b -> b, b -> b.bufferPool(4, 64))) {
            RdmaConnection c = rig.conn;
            java.util.concurrent.atomic.AtomicReference<org.reactivestreams.Subscription> toCancel =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Thread canceller = Thread.ofPlatform().daemon().name("canceller").start(() -> {
                int spins = 0;
                while (!Thread.currentThread().isInterrupted()) {
                    org.reactivestreams.Subscription s = toCancel.getAndSet(null);
                    if (s != null) {
                        for (int i = 0, n = spins++ % 64; i < n; i++) {
                            Thread.onSpinWait(); // lands at different points of the subscription
                        }
                        s.cancel();
                    }
                }
            });
            try {
                c.send(new byte[] {0}).subscribe(); // waits for the peer, which takes nothing yet
                for (int i = 0; i < 2000; i++) {
                    c.send(new byte[] {1}).subscribe(new reactor.core.publisher.BaseSubscriber<Void>() {
                        @Override
                        protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                            toCancel.set(s);
                        }
                    });
                    long until = System.nanoTime() + T.toNanos();
                    while (toCancel.get() != null && System.nanoTime() < until) {
                        Thread.onSpinWait();
                    }
                }
            } finally {
                canceller.interrupt();
            }
            FaultRig.drainLoop(c);
            List<Integer> got = new CopyOnWriteArrayList<>();
            Disposable rx = rig.serverConn.receive().subscribe(m -> got.add((int) m.data()[0]));
            try {
                c.send(new byte[] {42}).block(T);
                assertTrue(FaultRig.await(() -> got.contains(42), T), "received: " + got);
                assertEquals(0, got.get(0), "the first send first");
                assertTrue(FaultRig.await(() -> c.waiting() == 0, T), "waiting: " + c.waiting());
                assertTrue(FaultRig.await(() -> rig.client.buffers().leased() == 0, T));
            } finally {
                rx.dispose();
            }
        }
    }

    @Test
    void theConnectionsEnd_failsTheHeldMessagesWithIt_andLeavesNoBufferLeased() {
        try (FaultRig rig = new FaultRig(b -> b, b -> b.bufferPool(4, 64))) {
            RdmaConnection c = rig.conn;
            List<Throwable> errors = new CopyOnWriteArrayList<>();
            for (int i = 0; i < 6; i++) {
                c.send(new byte[] {(byte) i}).subscribe(null, errors::add);
            }
            FaultRig.drainLoop(c);
            assertEquals(6, c.waiting());
            rig.serverConn.disposeNow(T); // the peer closes: every waiting message fails with the end
            assertTrue(FaultRig.await(() -> errors.size() == 6, T), "failed: " + errors);
            for (Throwable e : errors) {
                assertTrue(e instanceof io.cqflux.core.ConnectionException, e::toString);
            }
            assertTrue(FaultRig.await(() -> rig.client.buffers().leased() == 0, T),
                    "leased: " + rig.client.buffers().leased());
        }
    }
}
