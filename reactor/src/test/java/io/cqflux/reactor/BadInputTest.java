package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.FlushType;
import io.cqflux.core.ResourceClosedException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Bad input gets a clear error naming the argument, before anything is posted; closed things stay
 * closed; demand follows the Reactive Streams rules (§3.9).
 */
class BadInputTest {
    FaultRig rig;

    @BeforeEach
    void setUp() {
        rig = new FaultRig();
    }

    @AfterEach
    void tearDown() {
        rig.close();
    }

    /** {@return what {@code call} threw, or its Mono signalled} */
    private static Throwable failureOf(Supplier<Mono<?>> call) {
        try {
            call.get().block(FaultRig.T);
        } catch (Throwable t) {
            return t;
        }
        throw new AssertionError("no error");
    }

    /**
     * @param names the parameter's name and the role the javadoc gives it (e.g. "dst",
     *     "destination"): the message must contain one of them
     */
    private static void assertNamesArgument(Throwable e, Class<? extends Throwable> type, String... names) {
        assertInstanceOf(type, e, "expected " + type.getSimpleName() + " naming '" + names[0] + "', got " + e);
        assertNotNull(e.getMessage(), "no message: " + e);
        boolean named = false;
        for (String n : names) {
            named |= e.getMessage().contains(n);
        }
        assertTrue(named, "the message does not name the argument " + List.of(names) + ": " + e.getMessage());
    }

    /** A null exposed region: an argument error naming {@code exposed} (today: a bare NPE from List.of). */
    @Test
    void connect_nullExposedRegion_failsNamingTheArgument() {
        Throwable e = failureOf(() -> rig.client.connect(rig.srv.address(), (Region) null));
        assertTrue(e instanceof IllegalArgumentException || e instanceof NullPointerException, e.toString());
        assertNamesArgument(e, RuntimeException.class, "exposed");
    }

    @Test
    void bind_nullExposedRegion_failsNamingTheArgument() {
        Throwable e = failureOf(() -> rig.server.bind(new InetSocketAddress(FaultRig.LO, 0), (Region) null));
        assertTrue(e instanceof IllegalArgumentException || e instanceof NullPointerException, e.toString());
        assertNamesArgument(e, RuntimeException.class, "exposed");
    }

    /** The guide promises IllegalArgumentException for bad arguments; a null peer region is one. */
    @Test
    void write_nullPeerRegion_signalsIllegalArgumentNamingDst() {
        Throwable e = failureOf(() -> rig.conn.write(null, 0, rig.local, 0, 8));
        assertNamesArgument(e, IllegalArgumentException.class, "dst", "destination");
    }

    @Test
    void durableWrite_nullPeerRegion_signalsIllegalArgumentNamingDst() {
        Throwable e = failureOf(() -> rig.conn.durableWrite(null, 0, rig.local, 0, 8));
        assertNamesArgument(e, IllegalArgumentException.class, "dst", "destination");
    }

    @Test
    void read_nullPeerRegion_signalsIllegalArgumentNamingSrc() {
        Throwable e = failureOf(() -> rig.conn.read(rig.local, 0, null, 0, 8));
        assertNamesArgument(e, IllegalArgumentException.class, "src", "source");
    }

    @Test
    void flush_nullPeerRegion_signalsIllegalArgumentNamingDst() {
        Throwable e = failureOf(() -> rig.conn.flush(null, 0, 8, FlushType.VISIBILITY));
        assertNamesArgument(e, IllegalArgumentException.class, "dst", "remote region");
    }

    /**
     * The public records refuse a null reference where they are made, with Java's convention: a
     * NullPointerException whose message is the argument's name (an operation's Mono signals
     * IllegalArgumentException for a null region instead, at subscription: it never throws at
     * assembly).
     */
    @Test
    void publicRecords_nullReferenceArgument_throwNullPointerNamingTheArgument() {
        PeerRegion remote = rig.remote();
        WriteRequest request = new WriteRequest(remote, 0, rig.local, 0, 8, false);
        assertNullNamed("remote", () -> new WriteRequest(null, 0, rig.local, 0, 8, false));
        assertNullNamed("local", () -> new WriteRequest(remote, 0, null, 0, 8, true));
        assertNullNamed("request", () -> new WriteResult(null, 0));
        assertEquals(request, new WriteResult(request, 3).request());
        assertNullNamed("opcode", () -> new Message(null, new byte[0], false, 0, 0));
        assertNullNamed("data", () -> new Message(io.cqflux.core.Opcode.RECEIVE, null, false, 0, 0));
    }

    private static void assertNullNamed(String argument, Runnable construction) {
        NullPointerException e = org.junit.jupiter.api.Assertions.assertThrows(NullPointerException.class,
                construction::run, "a null " + argument);
        assertEquals(argument, e.getMessage(), "the message is the argument's name");
    }

    /** RdmaConnection#receive: "fails ... with a ResourceClosedException when this side closes it". */
    @Test
    void receive_onConnectionClosedByThisSide_signalsResourceClosed() {
        Mono.fromRunnable(rig.conn::dispose).then(rig.conn.onDispose()).block(FaultRig.T);
        StepVerifier.create(rig.conn.receive())
                .expectError(ResourceClosedException.class)
                .verify(FaultRig.T);
    }

    /** An operation subscribed after dispose() returned is one after the close: ResourceClosedException, every time. */
    @Test
    void operation_subscribedRightAfterDispose_signalsResourceClosed_notTheEndsVerdict() {
        for (int i = 0; i < 20; i++) {
            RdmaConnection c = rig.client.connect(rig.srv.address()).block(FaultRig.T);
            PeerRegion remote = c.remoteRegion(0);
            c.dispose();
            StepVerifier.create(c.write(remote, 0, rig.local, 0, 8)).expectError(ResourceClosedException.class)
                    .verify(FaultRig.T);
            c.onDispose().block(FaultRig.T);
        }
    }

    /** A message to a peer that can never post a receive fails at once; it does not wait forever. */
    @Test
    void send_toAPeerWithReceiveQueueSizeZero_failsNamingIt_andTheConnectionCarriesOn() {
        try (FaultRig zero = new FaultRig(b -> b.connectionConfig(
                io.cqflux.core.ConnectionConfig.DEFAULT.withReceiveQueueSize(0)), b -> b)) {
            for (Mono<Void> message : List.of(zero.conn.send(zero.local, 0, 8),
                    zero.conn.sendWithImmediate(zero.local, 0, 8, 7), zero.conn.send(new byte[] {1, 2, 3}))) {
                StepVerifier.create(message)
                        .expectErrorSatisfies(e -> {
                            assertInstanceOf(IllegalStateException.class, e);
                            assertTrue(e.getMessage().contains("receiveQueueSize is 0"), e.getMessage());
                        })
                        .verify(FaultRig.T);
            }
            assertEquals(0, zero.conn.waiting());
            StepVerifier.create(zero.conn.write(zero.remote(), 0, zero.local, 0, 8)).expectComplete().verify(FaultRig.T);
            assertTrue(zero.conn.core().isOpen());
        }
    }

    /** Cqflux.Builder.localAddress: one of this host's addresses, or refused naming it. */
    @Test
    void localAddress_ofThisHostOrAnyLocal_isTaken_anotherIsRefused() throws Exception {
        for (String ok : new String[] {"127.0.0.1", "0.0.0.0", "::1", "127.0.0.2"}) {
            Cqflux.builder().localAddress(java.net.InetAddress.getByName(ok)); // no exception
        }
        java.util.Optional<java.net.InetAddress> nic = java.net.NetworkInterface.networkInterfaces()
                .flatMap(java.net.NetworkInterface::inetAddresses).filter(a -> !a.isLoopbackAddress()).findFirst();
        nic.ifPresent(a -> Cqflux.builder().localAddress(a));
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> Cqflux.builder().localAddress(java.net.InetAddress.getByName("192.0.2.123")));
        assertTrue(e.getMessage().contains("192.0.2.123") && e.getMessage().contains("not an address of this host"),
                e.getMessage());
    }

    /** A closed (deregistered) region must not be handed to peers that connect afterwards. */
    @Test
    void server_afterExposedRegionClosed_stopsHandingItOut() {
        rig.serverRegion.close();
        rig.serverRegion.onClose().block(FaultRig.T);
        RdmaConnection late;
        try {
            late = rig.client.connect(rig.srv.address()).block(FaultRig.T);
        } catch (RuntimeException refused) {
            return; // refusing the connection is one way to stop handing the region out
        }
        assertNotNull(late);
        assertEquals(List.of(), late.remoteRegions(),
                "the server handed out a region that was closed (deregistered) before the peer connected");
    }

    /** Reactive Streams §3.6: after a cancel, request(n <= 0) is a no-op, not an onError. */
    @Test
    void receive_requestNonPositiveAfterCancel_signalsNothing() {
        List<Object> signals = new CopyOnWriteArrayList<>();
        rig.conn.receive().subscribe(recording(signals, s -> {
            s.cancel();
            s.request(-1);
        }));
        // The loop runs the hand-overs in order: after a round trip the error would have come.
        StepVerifier.create(rig.conn.write(rig.remote(), 0, rig.local, 0, 8)).expectComplete().verify(FaultRig.T);
        StepVerifier.create(Mono.delay(Duration.ofMillis(50))).expectNextCount(1).expectComplete().verify(FaultRig.T);
        assertEquals(List.of(), signals);
    }

    /** Reactive Streams §1.7: after the terminal signal, request(n <= 0) signals and drops nothing. */
    @Test
    void receive_requestNonPositiveAfterCompletion_signalsNothing_andDropsNothing() {
        List<Throwable> dropped = new CopyOnWriteArrayList<>();
        reactor.core.publisher.Hooks.onErrorDropped(dropped::add);
        try {
            java.util.concurrent.atomic.AtomicReference<Subscription> sub = new java.util.concurrent.atomic.AtomicReference<>();
            List<Object> signals = new CopyOnWriteArrayList<>();
            rig.conn.receive().subscribe(recording(signals, s -> {
                sub.set(s);
                s.request(1);
            }));
            rig.serverConn.dispose(); // an orderly close by the peer completes the receive side
            assertTrue(FaultRig.await(() -> signals.contains("complete"), FaultRig.T), signals.toString());
            sub.get().request(-1);
            StepVerifier.create(Mono.delay(Duration.ofMillis(100))).expectNextCount(1).expectComplete().verify(FaultRig.T);
            assertEquals(List.of("complete"), signals);
            assertEquals(List.of(), dropped);
        } finally {
            reactor.core.publisher.Hooks.resetOnErrorDropped();
        }
    }

    /** {@return a receive subscriber that records every signal into {@code signals} and runs {@code onSubscribe}} */
    private static CoreSubscriber<Message> recording(List<Object> signals, java.util.function.Consumer<Subscription> onSubscribe) {
        return new CoreSubscriber<>() {
            @Override
            public void onSubscribe(Subscription s) {
                onSubscribe.accept(s);
            }

            @Override
            public void onNext(Message m) {
                signals.add(m);
            }

            @Override
            public void onError(Throwable t) {
                signals.add(t);
            }

            @Override
            public void onComplete() {
                signals.add("complete");
            }
        };
    }

    /** Reactive Streams §3.9: request(n <= 0) must signal onError(IllegalArgumentException), once. */
    @ParameterizedTest
    @ValueSource(longs = {0, -1, Long.MIN_VALUE})
    void operation_requestNonPositive_signalsIllegalArgument(long n) {
        List<Object> signals = new CopyOnWriteArrayList<>();
        rig.conn.write(rig.remote(), 0, rig.local, 0, 8).subscribe(new CoreSubscriber<Void>() {
            @Override
            public void onSubscribe(Subscription s) {
                s.request(n);
            }

            @Override
            public void onNext(Void v) {
                signals.add("onNext");
            }

            @Override
            public void onError(Throwable t) {
                signals.add(t);
            }

            @Override
            public void onComplete() {
                signals.add("onComplete");
            }
        });
        FaultRig.await(() -> !signals.isEmpty(), FaultRig.T);
        FaultRig.await(() -> false, Duration.ofMillis(200)); // a second signal would show here
        assertEquals(1, signals.size(), "expected exactly one terminal signal, got " + signals);
        assertInstanceOf(IllegalArgumentException.class, signals.get(0),
                "request(" + n + ") must signal IllegalArgumentException (Reactive Streams §3.9), got " + signals);
        assertTrue(((Throwable) signals.get(0)).getMessage().contains("3.9")
                || ((Throwable) signals.get(0)).getMessage().contains(Long.toString(n)), signals.toString());
    }
}
