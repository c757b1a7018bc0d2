package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.SharedSource;
import io.cqflux.core.spi.TransportOptions;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The reactive contract on libfabric's tcp provider again, with the connections of each loop
 * sharing completion queues in groups ({@link TransportOptions#FABRIC_COMPLETION_QUEUE_GROUP}):
 * every completion comes through the group's dispatch, routed by the context's transport bits
 * (a peer's write-with-immediate by its tag), and the loop sleeps on the group's fd after
 * {@code fi_trywait} on the group's queue. Groups of 2 on one loop per side, so that the
 * contract's tests with several connections put neighbours in one queue and open more.
 */
class FabricCompletionQueueGroupReactiveContractTest extends FabricReactiveContractTest {

    @Override
    Cqflux.Builder builder() {
        return super.builder().loops(1).transportProperty(TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP, "2");
    }

    /** {@return the shared queue its one completion queue belongs to} */
    private static SharedSource group(RdmaConnection c) {
        List<CompletionQueue> qs = c.core().conn.completionQueues();
        assertEquals(1, qs.size(), "a group member has one queue for sends and receives: " + qs);
        SharedSource s = qs.get(0).sharedBy();
        assertNotNull(s, c + " has a completion queue of its own");
        return s;
    }

    @Test
    void aLoopsConnections_shareCompletionQueuesInGroupsOfTwo_andEachGetsItsOwnCompletions() {
        group(serverConn);
        List<RdmaConnection> all = new ArrayList<>(List.of(conn));
        List<RdmaConnection> more = Flux.range(0, 3).concatMap(i -> client.connect(srv.address())).collectList()
                .block(T);
        assertNotNull(more);
        all.addAll(more);
        try {
            Map<SharedSource, Integer> members = new IdentityHashMap<>();
            for (RdmaConnection c : all) {
                members.merge(group(c), 1, Integer::sum);
            }
            assertTrue(members.values().stream().allMatch(n -> n <= 2), "groups of at most 2: " + members.values());
            assertTrue(members.size() < all.size(), "four connections of one loop, none sharing: " + members.values());
            // Each writes its own 8 bytes and reads them back: every completion reaches its Mono.
            for (int i = 0; i < all.size(); i++) {
                localMem.set(ValueLayout.JAVA_LONG, 8L * i, 0x6000L + i);
            }
            StepVerifier.create(Flux.range(0, all.size()).flatMap(i -> {
                RdmaConnection c = all.get(i);
                long at = 8L * i;
                return c.write(c.remoteRegion(0), at, local, at, 8)
                        .then(Mono.fromRunnable(() -> localMem.set(ValueLayout.JAVA_LONG, at, 0L)))
                        .then(c.read(local, at, c.remoteRegion(0), at, 8));
            })).expectComplete().verify(T);
            for (int i = 0; i < all.size(); i++) {
                assertEquals(0x6000L + i, serverMem.get(ValueLayout.JAVA_LONG, 8L * i), "server slot " + i);
                assertEquals(0x6000L + i, localMem.get(ValueLayout.JAVA_LONG, 8L * i), "read-back " + i);
            }
        } finally {
            Flux.fromIterable(more).flatMap(c -> {
                c.dispose();
                return c.onDispose();
            }).then().block(T);
        }
    }

    /**
     * A client whose hello tells no connection parameters (a cqflux from before them; here its
     * hello, sent as raw private data) cannot learn a tag: the server gives its connection a queue
     * of its own, beside a current client's grouped one, and its accept tells no parameters
     * either, so the older client reads the hello it always read.
     */
    @Test
    void aClientWhoseHelloTellsNoParameters_getsAQueueOfItsOwn_andAHelloWithoutThem() {
        try (Cqflux s = builder().build(); Cqflux c = builder().build()) {
            RdmaServer listening = s.bind(listenAddress(), s.register(serverMem, io.cqflux.core.RegionAccess.WRITE_DST))
                    .block(T);
            assertNotNull(listening);
            java.util.concurrent.BlockingQueue<RdmaConnection> accepted = new java.util.concurrent.LinkedBlockingQueue<>();
            listening.connections().subscribe(accepted::add);
            RdmaConnection current = c.connect(listening.address()).block(T);
            assertNotNull(current);
            // Credentials the server, which has no authenticator, ignores: a hello of nothing else
            // would encode to no bytes at all.
            byte[] older = new io.cqflux.reactor.internal.connection.PeerHello(List.of(), new byte[0], new byte[0],
                    4096, new byte[] {1}).encode(c.maxConnectPrivateData());
            RdmaConnection old = c.connect(listening.address(), ConnectOptions.rawPrivateData(older)).block(T);
            assertNotNull(old);
            RdmaConnection first = poll(accepted);
            RdmaConnection second = poll(accepted);
            group(first);
            assertEquals(null, second.core().conn.completionQueues().get(0).sharedBy(),
                    "the older client's server end shares no queue");
            io.cqflux.reactor.internal.connection.PeerHello reply =
                    io.cqflux.reactor.internal.connection.PeerHello.decode(old.peerPrivateData());
            assertEquals(null, reply.parameters(), "the server told the older client no parameters");
            assertTrue(reply.controlReadable(), "and the rest of its hello as before");
            old.dispose();
            current.dispose();
            old.onDispose().block(T);
            current.onDispose().block(T);
        }
    }

    private static RdmaConnection poll(java.util.concurrent.BlockingQueue<RdmaConnection> q) {
        try {
            RdmaConnection r = q.poll(T.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            assertNotNull(r, "no accepted connection");
            return r;
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * An idle member keeps its group's queue open; a neighbour that connects and closes leaves a
     * slot that must serve the next connection, though nothing reads the queue for traffic: the
     * leave itself asks the loop for the read that frees the slot. Without it every reconnect
     * would open a new group (its queue's wait object, 3 fds per side) beside the idle one.
     */
    @Test
    void anIdleMembersGroup_takesTheNextConnectionIntoAClosedNeighboursSlot_soReconnectsKeepTheFdsFlat() {
        reconnectBesideAnIdleOne(client, srv, conn, serverConn);
    }

    /** The same with spinning loops, which do not ask the group whether they may sleep. */
    @Test
    void anIdleMembersGroup_reusesAClosedNeighboursSlot_alsoOnSpinningLoops() {
        try (Cqflux s = builder().waitStrategy(io.cqflux.epoll.WaitStrategy.BUSY_POLL).build();
             Cqflux c = builder().waitStrategy(io.cqflux.epoll.WaitStrategy.BUSY_POLL).build()) {
            RdmaServer listening = s.bind(listenAddress(), s.register(serverMem, io.cqflux.core.RegionAccess.WRITE_DST))
                    .block(T);
            assertNotNull(listening);
            java.util.concurrent.CompletableFuture<RdmaConnection> accepted = new java.util.concurrent.CompletableFuture<>();
            listening.connections().subscribe(accepted::complete);
            RdmaConnection idle = c.connect(listening.address()).block(T);
            assertNotNull(idle);
            RdmaConnection idleServerEnd = accepted.orTimeout(T.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)
                    .join();
            reconnectBesideAnIdleOne(c, listening, idle, idleServerEnd);
            idle.dispose();
            idle.onDispose().block(T);
        }
    }

    /**
     * Connects and closes a neighbour of an idle connection four times: each time the closed
     * neighbour's slot, on both sides, must be freed without any traffic, and the next neighbour
     * must take it.
     */
    private static void reconnectBesideAnIdleOne(Cqflux client, RdmaServer srv, RdmaConnection idle,
                                                 RdmaConnection idleServerEnd) {
        SharedSource home = group(idle);
        SharedSource serverHome = group(idleServerEnd);
        int firstAdded = -1;
        for (int round = 0; round < 4; round++) {
            int before = FaultRig.openFds();
            RdmaConnection b = client.connect(srv.address()).block(T);
            assertNotNull(b);
            int added = FaultRig.openFds() - before;
            try {
                assertTrue(home == group(b), "round " + round + ": the new connection joins the idle one's group");
            } finally {
                b.dispose();
                b.onDispose().block(T);
            }
            if (round == 0) {
                firstAdded = added;
            } else {
                assertEquals(firstAdded, added, "round " + round + ": fds a connected neighbour adds");
            }
            int baseline = before;
            assertTrue(FaultRig.await(() -> FaultRig.openFds() == baseline, T), "round " + round + ": "
                    + FaultRig.openFds() + " fds after the neighbour's close, against " + baseline + " before it");
            int r = round;
            for (SharedSource g : List.of(home, serverHome)) {
                assertTrue(FaultRig.await(() -> hasRoom(g), T), "round " + r + ": the closed neighbour's slot in " + g
                        + " was not freed, though nothing else happens on the group");
            }
        }
    }

    /** {@return whether the group (fabric's CompletionGroup, package-private) takes a new member now} */
    private static boolean hasRoom(SharedSource group) {
        try {
            java.lang.reflect.Method m = group.getClass().getDeclaredMethod("hasRoom");
            m.setAccessible(true);
            return (boolean) m.invoke(group);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("CompletionGroup.hasRoom()", e);
        }
    }

    /**
     * A member that ends with operations in flight: its own fail (or complete, if they were
     * done), its late entries reach no one, and its neighbour in the group goes on, every one of
     * its operations completing; its group's queue stays open for the neighbour.
     */
    @Test
    void aMemberThatEndsMidFlight_leavesItsGroupNeighbourWorking() {
        List<RdmaConnection> pair = new ArrayList<>();
        // Connect until two of this client's connections share a queue (a slot may be retiring).
        for (int i = 0; i < 4 && pair.size() < 2; i++) {
            RdmaConnection c = client.connect(srv.address()).block(T);
            assertNotNull(c);
            if (pair.isEmpty() || group(pair.get(0)) == group(c)) {
                pair.add(c);
            } else {
                pair.clear();
                pair.add(c);
            }
        }
        assertEquals(2, pair.size(), "two connections of the loop in one group");
        RdmaConnection leaving = pair.get(0);
        RdmaConnection staying = pair.get(1);
        SharedSource shared = group(staying);
        try {
            int n = 200;
            java.util.concurrent.atomic.AtomicInteger leavingDone = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.atomic.AtomicInteger leavingFailed = new java.util.concurrent.atomic.AtomicInteger();
            Flux.range(0, n).flatMap(i -> leaving.write(leaving.remoteRegion(0), 0, local, 0, 8)
                    .doOnSuccess(v -> leavingDone.incrementAndGet())
                    .onErrorResume(e -> {
                        leavingFailed.incrementAndGet();
                        return Mono.empty();
                    }), 16).subscribe();
            StepVerifier.create(Flux.range(0, n).flatMap(i -> {
                long at = 64 + 8L * (i % 16);
                if (i == n / 4) {
                    leaving.dispose(); // ends while both have writes in flight
                }
                return staying.write(staying.remoteRegion(0), at, local, at, 8);
            }, 16)).expectComplete().verify(T);
            leaving.onDispose().block(T);
            assertTrue(FaultRig.await(() -> leavingDone.get() + leavingFailed.get() == n, T),
                    "every write of the ended member settled: " + leavingDone + " done, " + leavingFailed + " failed");
            StepVerifier.create(staying.write(staying.remoteRegion(0), 0, local, 0, 8)).expectComplete().verify(T);
            assertTrue(shared == group(staying), "the neighbour keeps its group's queue");
        } finally {
            staying.dispose();
            staying.onDispose().block(T);
            leaving.dispose();
        }
    }
}
