package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionRecord;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.RegionAccess;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Both sides of one connection closed at the same moment (client and server side disposed
 * back to back): each side's close posts its goodbye write and waits for it, at most the
 * goodbye's bound (1 s here), before the native close. The side whose close runs after the
 * peer's close finished writes to a queue pair that answers nothing; the peer's disconnect, not
 * the bound, must end its wait. Records, for each side, how long the close took, the
 * completions seen after the close began (the goodbye write among them, with its status) and
 * the events. Runs only in the Soft-RoCE lane (tags {@code rpma}, {@code fabric-verbs}).
 *
 * <p>{@link Isolated}: it tells a close that waited out the 1 s bound from one that did not by
 * how long the close took, which holds only while no other class shares the guest's CPUs.
 */
@Tag("rpma")
@Isolated
class RpmaSimultaneousCloseTest {
    private static final Duration T = Duration.ofSeconds(60);
    /** The goodbye's bound (the shorter of 1 s and the connect timeout) plus slack for a slow lane VM. */
    private static final long BOUND_PLUS_SLACK_MS = 1000 + 2000;
    /** Well under the goodbye's bound: a close that did not wait it out. */
    private static final long QUICK_MS = 500;

    private static Cqflux rpma() {
        return Cqflux.builder().transport(TransportChoice.RPMA).localAddress(RpmaReactiveContractTest.address())
                .loops(1).build();
    }

    @Test
    void simultaneousClose_bothSidesEndClosed_withinTheGoodbyeBound() throws Exception {
        try (Cqflux server = rpma(); Cqflux client = rpma()) {
            closeBothSidesAtOnce(server, client, "two instances");
        }
    }

    @Test
    void simultaneousClose_onOneInstance_bothSidesEndClosed_withinTheGoodbyeBound() throws Exception {
        try (Cqflux both = rpma()) {
            closeBothSidesAtOnce(both, both, "one instance");
        }
    }

    /**
     * The race of a simultaneous close made certain: the client's loop is held until the server
     * side is released (its goodbye answered, its queue pair disconnected and destroyed), then
     * the client closes before its loop has read the peer's disconnect. Its goodbye write goes
     * to a queue pair that answers nothing; the peer's disconnect must end the wait, not the
     * goodbye's bound.
     */
    @Test
    void close_afterThePeerFinishedItsOwnClose_endsWithoutWaitingOutTheGoodbyeBound() throws Exception {
        try (Arena arena = Arena.ofShared(); Cqflux server = rpma(); Cqflux client = rpma()) {
            Bound s = bind(server, arena);
            for (int round = 0; round < 3; round++) {
                RdmaConnection[] pair = s.connectAndWrite(client);
                RdmaConnection c = pair[0];
                RdmaConnection sc = pair[1];
                CompletableFuture<Long> clientDone = new CompletableFuture<>();
                CompletableFuture<Void> held = new CompletableFuture<>();
                long[] start = new long[1];
                c.core().runOnLoop(() -> {
                    try {
                        sc.dispose();
                        sc.onDispose().toFuture().get(T.toMillis(), TimeUnit.MILLISECONDS);
                        start[0] = System.nanoTime();
                        c.dispose(); // inline: the close runs before the loop reads the peer's disconnect
                        held.complete(null);
                    } catch (Exception e) {
                        held.completeExceptionally(e);
                    }
                });
                held.get(T.toMillis(), TimeUnit.MILLISECONDS);
                c.onDispose().subscribe(null, clientDone::completeExceptionally,
                        () -> clientDone.complete((System.nanoTime() - start[0]) / 1_000_000));
                long clientMs = clientDone.get(T.toMillis(), TimeUnit.MILLISECONDS);
                System.out.println("[simclose] peer closed first, round " + round + ": client closed in " + clientMs
                        + " ms (" + c.core().terminal() + ")");
                // The first round may be slow (a cold JVM in the lane's emulated VM); later ones
                // must be well under the goodbye's bound.
                long limit = round == 0 ? BOUND_PLUS_SLACK_MS : QUICK_MS;
                assertTrue(clientMs < limit, "the client side closed in " + clientMs + " ms, after the peer's own"
                        + " close: it waited out the goodbye's bound");
                assertEquals(List.of(ConnectionEvent.CLOSED), terminal(c));
                assertEquals(List.of(ConnectionEvent.CLOSED), terminal(sc));
            }
        }
    }

    @Test
    void simultaneousClose_withWritesInFlight_bothSidesEndClosed_withinTheGoodbyeBound() throws Exception {
        try (Cqflux server = rpma(); Cqflux client = rpma()) {
            closeBothSidesAtOnce(server, client, "two instances, writes in flight", 32);
        }
    }

    @Test
    @Tag("fabric-verbs")
    void simultaneousClose_onFabricVerbs_bothSidesEndClosed_withinTheGoodbyeBound() throws Exception {
        try (Cqflux server = verbs(); Cqflux client = verbs()) {
            closeBothSidesAtOnce(server, client, "fabric/verbs, two instances", 0);
        }
    }

    private static Cqflux verbs() {
        return Cqflux.builder().transport(TransportChoice.FABRIC).fabricProvider("verbs")
                .localAddress(RpmaReactiveContractTest.address()).loops(1).build();
    }

    private static void closeBothSidesAtOnce(Cqflux server, Cqflux client, String how) throws Exception {
        closeBothSidesAtOnce(server, client, how, 0);
    }

    private static void closeBothSidesAtOnce(Cqflux server, Cqflux client, String how, int inFlight)
            throws Exception {
        try (Arena arena = Arena.ofShared()) {
            Bound s = bind(server, arena);
            for (int round = 0; round < 5; round++) {
                RdmaConnection[] pair = s.connectAndWrite(client);
                RdmaConnection c = pair[0];
                RdmaConnection sc = pair[1];

                long t0 = System.nanoTime();
                List<String> seen = new CopyOnWriteArrayList<>();
                c.completions().subscribe(r -> seen.add(at(t0) + " client completion " + describe(r)));
                sc.completions().subscribe(r -> seen.add(at(t0) + " server completion " + describe(r)));
                c.events().subscribe(e -> seen.add(at(t0) + " client event " + e));
                sc.events().subscribe(e -> seen.add(at(t0) + " server event " + e));
                CompletableFuture<Long> clientDone = new CompletableFuture<>();
                CompletableFuture<Long> serverDone = new CompletableFuture<>();
                List<String> outcomes = new CopyOnWriteArrayList<>();
                for (int i = 0; i < inFlight; i++) {
                    c.write(c.remoteRegion(0), 8L * (i % 64), new byte[8]).thenReturn("ok")
                            .onErrorResume(e -> reactor.core.publisher.Mono.just(e.getClass().getSimpleName()))
                            .subscribe(outcomes::add);
                }
                // In flight at the close: each posted (holding its credit) or already done. A
                // byte[] write is staged through a pooled buffer first, and one still being staged
                // when this side closes is refused as closed by this side, not what this tests.
                int writes = inFlight;
                assertTrue(FaultRig.await(() -> outcomes.size() + c.inFlight() >= writes, T),
                        "the writes were never posted: " + outcomes);
                long start = System.nanoTime();
                c.dispose();
                sc.dispose();
                c.onDispose().subscribe(null, clientDone::completeExceptionally,
                        () -> clientDone.complete((System.nanoTime() - start) / 1_000_000));
                sc.onDispose().subscribe(null, serverDone::completeExceptionally,
                        () -> serverDone.complete((System.nanoTime() - start) / 1_000_000));
                long clientMs = clientDone.get(T.toMillis(), TimeUnit.MILLISECONDS);
                long serverMs = serverDone.get(T.toMillis(), TimeUnit.MILLISECONDS);
                System.out.println("[simclose] " + how + " round " + round + ": client closed in " + clientMs + " ms, server in "
                        + serverMs + " ms (" + c.core().terminal() + "); " + seen + (inFlight > 0 ? " writes: " + outcomes : ""));
                // Neither side waits out the goodbye's bound: the first round may be slow (a cold
                // JVM in the lane's emulated VM), later ones must be well under the bound.
                long limit = round == 0 ? BOUND_PLUS_SLACK_MS : QUICK_MS;
                assertTrue(clientMs < limit, "client side closed in " + clientMs + " ms: " + seen);
                assertTrue(serverMs < limit, "server side closed in " + serverMs + " ms: " + seen);
                assertEquals(List.of(ConnectionEvent.CLOSED), terminal(c), seen::toString);
                assertEquals(List.of(ConnectionEvent.CLOSED), terminal(sc), seen::toString);
                // Every write in flight ended, once, completed or with the connection's end.
                assertTrue(FaultRig.await(() -> outcomes.size() == inFlight, T), "writes ended: " + outcomes);
                Thread.sleep(50); // a second signal of any write would land here
                assertEquals(inFlight, outcomes.size(), "a write ended twice: " + outcomes);
                assertTrue(outcomes.stream().allMatch(o -> o.equals("ok") || o.equals("ConnectionException")),
                        "a write ended otherwise: " + outcomes);
            }
        }
    }

    /** A server exposing 4 KiB on a free port of the lane's address, and its accepted connections in order. */
    private record Bound(RdmaServer server, BlockingQueue<RdmaConnection> accepted) {

        /** {@return a new connection and the server's side of it, after one write through it: {client, server side}} */
        RdmaConnection[] connectAndWrite(Cqflux client) throws InterruptedException {
            RdmaConnection c = client.connect(server.address()).block(T);
            assertNotNull(c);
            RdmaConnection sc = accepted.poll(T.toMillis(), TimeUnit.MILLISECONDS);
            assertNotNull(sc);
            c.write(c.remoteRegion(0), 0, new byte[8]).block(T);
            return new RdmaConnection[] {c, sc};
        }
    }

    private static Bound bind(Cqflux server, Arena arena) {
        Region exposed = server.register(arena.allocate(4096, 4096), RegionAccess.WRITE_DST);
        RdmaServer s = server.bind(new InetSocketAddress(RpmaReactiveContractTest.address(),
                ReactiveContract.freePort()), exposed).block(T);
        assertNotNull(s);
        BlockingQueue<RdmaConnection> accepted = new LinkedBlockingQueue<>();
        s.connections().subscribe(accepted::add);
        return new Bound(s, accepted);
    }

    private static List<ConnectionEvent> terminal(RdmaConnection c) {
        return c.events().filter(ConnectionEvent::isTerminal).collectList().block(T);
    }

    private static String at(long t0) {
        return "+" + (System.nanoTime() - t0) / 1_000_000 + "ms";
    }

    private static String describe(CompletionRecord r) {
        return r.opcode() + " " + r.status() + (r.isSuccess() ? "" : " vendor=" + r.vendorError());
    }
}
