package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * Messaging, streams and buffers as a hostile user drives them, over fabric/tcp on 127.0.0.1:
 * refusals that name what they refuse, and release rules counted afterwards.
 */
class MessagingHostileTest {
    static final Duration T = FaultRig.T;

    FaultRig rig;

    @AfterEach
    void tearDown() {
        if (rig != null) {
            rig.close();
        }
    }

    @Test
    void send_longerThanThePeersReceiveBuffer_andARegionOfAnotherConnection_areRefusedNamingTheConnection() {
        rig = new FaultRig(b -> b.receiveBufferSize(1024), b -> b.bufferPool(4, 8192));
        String name = rig.conn.description();
        StepVerifier.create(rig.conn.send(new byte[2000]))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(IllegalArgumentException.class, e);
                    assertTrue(e.getMessage().contains("2000") && e.getMessage().contains("1024"), e.getMessage());
                    assertTrue(e.getMessage().contains(name), e.getMessage());
                    assertFalse(e.getMessage().contains("connection null"), e.getMessage());
                })
                .verify(T);
        assertEquals(0, rig.client.buffers().leased(), "the refused send's staging buffer went back");
        RdmaConnection other = rig.connectOne();
        StepVerifier.create(other.write(rig.remote(), 0, rig.local, 0, 8))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(IllegalArgumentException.class, e);
                    assertTrue(e.getMessage().contains(other.description()), e.getMessage());
                    assertFalse(e.getMessage().endsWith("null"), e.getMessage());
                })
                .verify(T);
    }

    @Test
    void receive_messageIsAnImmutableCopy_neitherItsArrayNorAReturnedOneChangesIt() throws Exception {
        rig = new FaultRig();
        java.util.concurrent.BlockingQueue<Message> got = new java.util.concurrent.LinkedBlockingQueue<>();
        reactor.core.Disposable d = rig.serverConn.receive().subscribe(got::add);
        try {
            rig.conn.send(new byte[] {1, 2, 3}).block(T);
            rig.conn.send(new byte[] {1, 2, 3}).block(T);
            Message m = got.poll(T.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
            Message same = got.poll(T.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
            assertNotNull(m);
            assertNotNull(same);
            m.data()[0] = 9;
            assertArrayEquals(new byte[] {1, 2, 3}, m.data(), "a returned array is a copy");
            assertEquals(same, m, "two messages with the same bytes");
            assertEquals(same.hashCode(), m.hashCode());
        } finally {
            d.dispose();
        }
        byte[] given = {4, 5};
        Message built = new Message(io.cqflux.core.Opcode.RECEIVE, given, false, 0, 2);
        given[0] = 0;
        assertArrayEquals(new byte[] {4, 5}, built.data(), "the constructor copies");
        assertNotEquals(built, new Message(io.cqflux.core.Opcode.RECEIVE, new byte[] {4, 6}, false, 0, 2));
    }

    /** Runs {@code read} on the connection's loop, where the receive side lives, and returns what it read. */
    private static int onLoop(RdmaConnection c, java.util.function.IntSupplier read) {
        java.util.concurrent.atomic.AtomicInteger v = new java.util.concurrent.atomic.AtomicInteger(-1);
        c.core().runOnLoop(() -> v.set(read.getAsInt()));
        FaultRig.drainLoop(c);
        return v.get();
    }

    /**
     * Leaves messages 1..n kept for the next subscriber of {@code rx}'s receive side: n receives
     * posted for a subscriber that leaves before the client's messages land in them.
     */
    private void keepForTheNextSubscriber(RdmaConnection rx, int n) {
        reactor.core.Disposable first = rx.receive().limitRate(n).subscribe(m -> { }, e -> { });
        assertTrue(FaultRig.await(() -> onLoop(rx, () -> rx.core().receiver.posted()) >= n, T));
        first.dispose();
        FaultRig.drainLoop(rx);
        for (int i = 1; i <= n; i++) {
            rig.conn.send(new byte[] {(byte) i}).block(T);
        }
        assertTrue(FaultRig.await(() -> onLoop(rx, () -> rx.core().receiver.backlog()) == n, T));
    }

    @Test
    void receive_decoderThatClosesTheConnection_getsEveryKeptMessageInOrder_thenResourceClosed() {
        rig = new FaultRig();
        RdmaConnection rx = rig.serverConn;
        keepForTheNextSubscriber(rx, 3);

        java.util.List<Object> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        rx.receive(in -> {
            int value = in.data().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0);
            if (value == 1) {
                rx.dispose(); // on the loop, inside the decoder: the end runs here
            }
            return in.data().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0) * 10 + value;
        }).subscribe(got::add, got::add, () -> got.add("complete"));

        assertTrue(FaultRig.await(() -> got.size() == 4, T), got.toString());
        assertEquals(java.util.List.of(11, 22, 33), got.subList(0, 3), "every kept message, once, in order");
        assertInstanceOf(io.cqflux.core.ResourceClosedException.class, got.get(3));
    }

    @Test
    void receive_subscriberThatClosesTheConnectionInOnNext_getsTheKeptMessagesAfterIt_neverInsideIt() {
        rig = new FaultRig();
        RdmaConnection rx = rig.serverConn;
        keepForTheNextSubscriber(rx, 3);

        java.util.List<Object> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        rx.receive().subscribe(m -> {
            got.add("in " + m.data()[0]);
            if (m.data()[0] == 1) {
                rx.dispose(); // on the loop: the end, which serves what is kept, runs here
            }
            got.add("out " + m.data()[0]);
        }, got::add, () -> got.add("complete"));

        assertTrue(FaultRig.await(() -> got.size() == 7, T), got.toString());
        assertEquals(java.util.List.of("in 1", "out 1", "in 2", "out 2", "in 3", "out 3"), got.subList(0, 6),
                "Reactive Streams §1.3: one onNext at a time, in order");
        assertInstanceOf(io.cqflux.core.ResourceClosedException.class, got.get(6));
    }

    @Test
    void receive_subscriberRequestingFirstThingInOnNext_getsTheKeptMessagesOneAtATime_inOrder() {
        rig = new FaultRig();
        RdmaConnection rx = rig.serverConn;
        keepForTheNextSubscriber(rx, 3);

        // request(1) inside onNext runs on the loop, where the messages are kept
        java.util.List<String> got = recordInAndOut(rx, s -> s.request(1));

        assertTrue(FaultRig.await(() -> got.size() == 6, T), got.toString());
        assertEquals(java.util.List.of("in 1", "out 1", "in 2", "out 2", "in 3", "out 3"), got,
                "Reactive Streams §1.3: one onNext at a time, in order");
    }

    @Test
    void receive_afterThePeerClosedInOrder_aSubscriberRequestingInOnNext_getsTheKeptMessagesThenCompletion_serially() {
        rig = new FaultRig();
        RdmaConnection rx = rig.serverConn;
        keepForTheNextSubscriber(rx, 3);
        rig.conn.dispose();
        rx.onDispose().block(T); // released: nothing more can arrive, the kept messages were copied out

        java.util.List<String> got = recordInAndOut(rx, s -> s.request(1));

        assertTrue(FaultRig.await(() -> got.size() == 7, T), got.toString());
        assertEquals(java.util.List.of("in 1", "out 1", "in 2", "out 2", "in 3", "out 3", "complete"), got,
                "Reactive Streams §1.3: the messages one at a time, then the completion");
    }

    @Test
    void build_withAConnectionsReceivePoolBeyond16GiB_isRefusedNamingBothSizesAndTheBound() {
        // 32,768 receives of 16 MiB: 512 GiB a connection, which the first receive() subscription
        // would ask of the loop that allocates it.
        Cqflux.Builder huge = FaultRig.fabric().receiveBufferSize(1 << 24)
                .connectionConfig(io.cqflux.core.ConnectionConfig.DEFAULT.withReceiveQueueSize(32_768));
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> huge.build().close());
        assertTrue(e.getMessage().contains("32768") && e.getMessage().contains("16777216")
                && e.getMessage().contains(Long.toString(1L << 34)), e.getMessage());
        // At the bound it builds (nothing is allocated before a connection receives).
        FaultRig.fabric().receiveBufferSize(1 << 24)
                .connectionConfig(io.cqflux.core.ConnectionConfig.DEFAULT.withReceiveQueueSize(1024)).build().close();
    }

    @Test
    void receive_decoderThatThrowsOrReturnsNull_failsOnlyItsSubscriber_theNextOneGetsTheNextMessage() {
        rig = new FaultRig();
        RdmaConnection rx = rig.serverConn;
        IllegalStateException boom = new IllegalStateException("boom");
        StepVerifier.create(rx.receive(in -> {
                    throw boom;
                }))
                .then(() -> rig.conn.send(new byte[] {1}).subscribe())
                .expectErrorMatches(e -> e == boom)
                .verify(T);
        StepVerifier.create(rx.receive(in -> null))
                .then(() -> rig.conn.send(new byte[] {2}).subscribe())
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(NullPointerException.class, e);
                    assertTrue(e.getMessage().contains("decoder returned null"), e.getMessage());
                })
                .verify(T);
        StepVerifier.create(rx.receive().map(m -> m.data()[0]).take(1))
                .then(() -> rig.conn.send(new byte[] {3}).subscribe())
                .expectNext((byte) 3)
                .verifyComplete();
        assertFalse(rx.isDisposed(), "the connection carries on");
    }

    @Test
    void eventsAndCompletions_ofAReleasedConnection_replayTheEventsAndComplete_forLateSubscribers() {
        rig = new FaultRig();
        rig.conn.disposeNow(T);
        rig.serverConn.onDispose().block(T);
        for (RdmaConnection c : new RdmaConnection[] {rig.conn, rig.serverConn}) {
            StepVerifier.create(c.events())
                    .expectNext(io.cqflux.core.ConnectionEvent.ESTABLISHED, io.cqflux.core.ConnectionEvent.CLOSED)
                    .expectComplete()
                    .verify(T);
            StepVerifier.create(c.completions()).expectComplete().verify(T);
        }
        // The peer closed the server's side in order: its receive() completes; this side's fails.
        StepVerifier.create(rig.serverConn.receive()).expectComplete().verify(T);
        StepVerifier.create(rig.conn.receive()).expectError(io.cqflux.core.ResourceClosedException.class).verify(T);
    }

    @Test
    void lease_refusedByItsOperationsCheck_orHeldPastItsInstancesDispose_goesBackToThePool() {
        rig = new FaultRig(b -> b, b -> b.bufferPool(4, 4096));
        BufferPool pool = rig.client.buffers();
        BufferLease outside = pool.acquire().block(T);
        StepVerifier.create(rig.conn.write(rig.remote(), FaultRig.SIZE, outside, 10))
                .expectError(IllegalArgumentException.class)
                .verify(T);
        assertFalse(outside.isHeld(), "the subscription took the lease over");
        assertEquals(0, pool.leased(), "a refused operation gives its lease back");

        BufferLease held = pool.acquire().block(T);
        held.segment().set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, (byte) 1);
        RdmaConnection c = rig.conn;
        PeerRegion remote = rig.remote();
        rig.client.dispose();
        rig.client.onDispose().block(T);
        // The pool's memory is freed with its instance: the lease's view of it is closed, not dangling.
        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                () -> held.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0));
        StepVerifier.create(c.write(remote, 0, held, 1))
                .expectError(io.cqflux.core.ResourceClosedException.class)
                .verify(T);
        assertFalse(held.isHeld());
        assertEquals(0, pool.leased());
        StepVerifier.create(pool.acquire()).expectError(io.cqflux.core.ResourceClosedException.class).verify(T);
    }

    @Test
    void writeAll_withNothingInFlight_whenThePeerClosesOrThisSideCloses_failsWithTheEnd_andCancelsUpstream() {
        rig = new FaultRig();
        RdmaConnection second = rig.connectOne();
        for (boolean peerCloses : new boolean[] {true, false}) {
            RdmaConnection c = peerCloses ? rig.conn : second;
            reactor.core.publisher.Sinks.Many<WriteRequest> requests =
                    reactor.core.publisher.Sinks.many().unicast().onBackpressureBuffer();
            java.util.concurrent.atomic.AtomicBoolean upstreamCancelled = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.List<Object> got = new java.util.concurrent.CopyOnWriteArrayList<>();
            c.writeAll(requests.asFlux().doOnCancel(() -> upstreamCancelled.set(true)))
                    .subscribe(got::add, got::add, () -> got.add("complete"));
            requests.tryEmitNext(new WriteRequest(c.remoteRegion(0), 0, rig.local, 0, 8, false));
            assertTrue(FaultRig.await(() -> got.size() == 1, T), got.toString());
            // Upstream is quiet now: nothing is in flight when the connection ends.
            if (peerCloses) {
                rig.serverConn.dispose();
            } else {
                c.dispose();
            }
            assertTrue(FaultRig.await(() -> got.size() == 2, T), "peer closes " + peerCloses + ": " + got);
            io.cqflux.core.ConnectionException end = assertInstanceOf(io.cqflux.core.ConnectionException.class,
                    got.get(1));
            assertEquals(io.cqflux.core.ConnectionEvent.CLOSED, end.event());
            assertTrue(upstreamCancelled.get(), "upstream is let go");
        }
    }

    /**
     * A writeAll subscribed once this side closed the connection, or while it closes, fails as
     * every operation started after this side's close does ({@code ResourceClosedException}).
     */
    @Test
    void writeAll_subscribedAfterThisSidesClose_orWhileItCloses_failsWithResourceClosed_andCancelsUpstream() {
        rig = new FaultRig();
        RdmaConnection closing = rig.connectOne();
        rig.conn.dispose();
        rig.conn.onDispose().block(T);
        for (RdmaConnection c : new RdmaConnection[] {rig.conn, closing}) {
            java.util.concurrent.atomic.AtomicBoolean upstreamCancelled = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.List<Object> got = new java.util.concurrent.CopyOnWriteArrayList<>();
            if (c == closing) {
                c.dispose(); // the stream subscribes while the close is under way
            }
            c.writeAll(reactor.core.publisher.Flux.<WriteRequest>never().doOnCancel(() -> upstreamCancelled.set(true)))
                    .subscribe(got::add, got::add, () -> got.add("complete"));
            assertTrue(FaultRig.await(() -> got.size() == 1, T), got.toString());
            assertInstanceOf(io.cqflux.core.ResourceClosedException.class, got.get(0), got.toString());
            assertTrue(upstreamCancelled.get(), "upstream is let go");
            FaultRig.await(() -> got.size() > 1, java.time.Duration.ofMillis(100));
            assertEquals(1, got.size(), "exactly one terminal signal: " + got);
        }
    }

    /** Reactive Streams §3.9 and §1.3: request(0) made in onNext fails the stream after that onNext returned. */
    @Test
    void receive_requestOfZeroInsideOnNext_failsTheStreamAfterThatOnNextReturned_neverInsideIt() {
        rig = new FaultRig();
        RdmaConnection rx = rig.serverConn;
        keepForTheNextSubscriber(rx, 2);
        // request(0) runs on the loop, inside the onNext that makes it
        java.util.List<String> got = recordInAndOut(rx, s -> s.request(0));
        assertTrue(FaultRig.await(() -> got.size() == 3, T), got.toString());
        assertEquals(java.util.List.of("in 1", "out 1", "error IllegalArgumentException"), got);
    }

    /**
     * Subscribes to {@code rx.receive()} asking for one message, and records every signal in
     * order: "in n" when an onNext starts, "out n" when it returns (after {@code insideOnNext}
     * ran on the subscription), "complete", and "error" with the exception's simple name. A
     * signal inside an onNext shows between its "in" and its "out".
     */
    private static java.util.List<String> recordInAndOut(RdmaConnection rx,
            java.util.function.Consumer<org.reactivestreams.Subscription> insideOnNext) {
        java.util.List<String> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        rx.receive().subscribe(new reactor.core.publisher.BaseSubscriber<Message>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                s.request(1);
            }

            @Override
            protected void hookOnNext(Message m) {
                got.add("in " + m.data()[0]);
                insideOnNext.accept(upstream());
                got.add("out " + m.data()[0]);
            }

            @Override
            protected void hookOnComplete() {
                got.add("complete");
            }

            @Override
            protected void hookOnError(Throwable t) {
                got.add("error " + t.getClass().getSimpleName());
            }
        });
        return got;
    }
}
