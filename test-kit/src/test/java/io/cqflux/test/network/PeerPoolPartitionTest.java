package io.cqflux.test.network;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerPool;
import io.cqflux.reactor.PeerPoolEvent;
import io.cqflux.reactor.PeerPoolOptions;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * A {@link PeerPool} across a partition on fabric/tcp: the operation deadline finds the loss of a
 * pool with writes in flight, the keep-alive that of an idle pool within 2 x interval x misses,
 * {@link PeerPool#state()} and {@link PeerPool#events()} report the outage, a
 * FAIL_FAST pool fails operations at once during it, a WAIT pool holds them and completes them
 * after the heal, and the pool serves again within the longest backoff and one connect of the heal
 * itself, although a connect attempt sent into the partition is in flight at the heal and the
 * connect timeout is far longer: a reconnect attempt runs at most its backoff slot
 * ({@link PeerPoolOptions#minAttemptTime()}), then the next starts ({@link PoolTimeline}).
 */
class PeerPoolPartitionTest {
    static final Duration T = Duration.ofSeconds(10);
    static final Duration SLACK = Duration.ofMillis(1500);
    static final Duration OP_TIMEOUT = Duration.ofMillis(500);
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(1);
    /**
     * The heal case's connect timeout: far longer than the longest backoff and than TCP's SYN
     * resends up to 7 s into an attempt, so that an attempt sent into the partition and left to
     * run would still hold its slot, waiting for the SYN at 15 s, long past the heal bound.
     */
    static final Duration HEAL_CONNECT_TIMEOUT = Duration.ofSeconds(20);
    /**
     * The heal case's partition: long enough that an attempt sent into it in its first second, had
     * it been left to run its whole connect timeout (the schedule before attempts were bounded by
     * their slot), would be past TCP's SYN resend at 7 s and waiting for the one at 15 s at the
     * heal; so the heal assertion fails unless the attempt in flight is abandoned at its slot.
     */
    static final Duration PARTITION = Duration.ofSeconds(9);
    /** The longest backoff, equal to the default least attempt time: attempts of an outage start at most 1 s apart. */
    static final Duration BACKOFF_MAX = Duration.ofSeconds(1);
    /** The goal for the heal: served within the longest backoff and one connect (1 s) of the heal. */
    static final Duration ONE_CONNECT = Duration.ofSeconds(1);
    /** Timers and loop hops late on this loaded 2-core host (others' builds beside): the heal bound's slack. */
    static final Duration SCHEDULING_SLACK = Duration.ofMillis(500);
    static final int CAPACITY = 256;
    static final int WAITING = 20;

    NetworkRig rig;
    NetPeer.Handle peer;
    Arena arena;
    Cqflux client;
    final List<Disposable> subscriptions = new ArrayList<>();

    @AfterEach
    void tearDown() {
        try {
            subscriptions.forEach(Disposable::dispose);
            if (client != null) {
                client.dispose();
                client.onDispose().toFuture().completeOnTimeout(null, 20, TimeUnit.SECONDS).join();
            }
            if (arena != null) {
                arena.close();
            }
        } finally {
            if (rig != null) {
                rig.close();
            }
        }
    }

    private PeerPool pool(PeerPoolOptions.WhenUnavailable mode) {
        return client.peerPool(peer.address(), PeerPoolOptions.builder()
                .reconnectBackoff(Duration.ofMillis(100), BACKOFF_MAX).jitter(0)
                .whenUnavailable(mode).maxAcquireTime(T.plus(T)).build());
    }

    private List<PeerPoolEvent> record(PeerPool pool) {
        List<PeerPoolEvent> seen = new CopyOnWriteArrayList<>();
        subscriptions.add(pool.events().subscribe(seen::add));
        return seen;
    }

    private static Mono<Void> write(PeerPool pool, Region local, int i) {
        return pool.withConnection(c -> c.durableWrite(c.remoteRegion(0), (long) i * Records.SIZE, local,
                (long) i * Records.SIZE, Records.SIZE));
    }

    /** {@return whether {@code kinds} occur in {@code seen} in this order (others may come between)} */
    static boolean inOrder(List<PeerPoolEvent> seen, PeerPoolEvent.Kind... kinds) {
        int k = 0;
        for (PeerPoolEvent e : seen) {
            if (k < kinds.length && e.kind() == kinds[k]) {
                k++;
            }
        }
        return k == kinds.length;
    }

    @Test
    void idlePool_partition_reportsTheOutageWithinTheKeepAliveBound_withoutAnyOperation() {
        Duration interval = Duration.ofMillis(200);
        int misses = 3;
        Duration bound = interval.multipliedBy(2L * misses);
        rig = NetworkRig.create();
        peer = rig.startPeer((long) CAPACITY * Records.SIZE);
        client = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(rig.rootAddress)
                .keepAlive(interval, misses).operationTimeout(OP_TIMEOUT)
                .connectionConfig(ConnectionConfig.DEFAULT.withTimeout(CONNECT_TIMEOUT))
                .shutdownTimeout(Duration.ofSeconds(2)).build();
        PeerPool pool = pool(PeerPoolOptions.WhenUnavailable.FAIL_FAST);
        List<PeerPoolEvent> events = record(pool);
        assertTrue(PartitionTest.await(() -> pool.state() == PeerPool.State.CONNECTED, T.plus(T)),
                "the pool did not connect: " + events);
        PartitionTest.sleep(interval.multipliedBy(3)); // idle and alive: probes answered
        assertEquals(PeerPool.State.CONNECTED, pool.state(), "the idle pool lost its connection with the link up: "
                + events);
        rig.partition();
        long t0 = System.nanoTime();
        assertTrue(PartitionTest.await(() -> pool.state() != PeerPool.State.CONNECTED, T),
                "the idle pool still says CONNECTED " + T + " into the partition: " + events);
        long reported = System.nanoTime() - t0;
        assertTrue(PartitionTest.await(() -> inOrder(events, PeerPoolEvent.Kind.CONNECTED, PeerPoolEvent.Kind.LOST),
                SLACK), "the events do not report the loss: " + events);
        System.out.printf("FACT idle PeerPool across a partition, keep-alive %d ms x %d: state left CONNECTED %.0f ms"
                + " into it; events %s%n", interval.toMillis(), misses, reported / 1e6, events);
        assertTrue(reported <= bound.toNanos(), "the idle pool reported the outage after " + reported / 1_000_000
                + " ms, beyond 2 x interval x misses = " + bound.toMillis() + " ms");
        rig.heal();
    }

    @Test
    void partition_poolReportsTheOutage_failFastFailsAtOnce_waitingWritesCompleteAfterTheHeal_andLanded() {
        rig = NetworkRig.create();
        peer = rig.startPeer((long) CAPACITY * Records.SIZE);
        client = Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(rig.rootAddress)
                .operationTimeout(OP_TIMEOUT).connectionConfig(ConnectionConfig.DEFAULT.withTimeout(HEAL_CONNECT_TIMEOUT))
                .shutdownTimeout(Duration.ofSeconds(2)).build();
        arena = Arena.ofShared();
        MemorySegment mem = arena.allocate((long) CAPACITY * Records.SIZE, 64);
        Records records = new Records(System.nanoTime(), CAPACITY);
        records.fill(mem);
        Region local = client.register(mem, RegionAccess.WRITE_SRC);

        PeerPool waiting = pool(PeerPoolOptions.WhenUnavailable.WAIT);
        PeerPool failFast = pool(PeerPoolOptions.WhenUnavailable.FAIL_FAST);
        List<PeerPoolEvent> waitingEvents = record(waiting);
        List<PeerPoolEvent> failFastEvents = record(failFast);
        PoolTimeline waitingLine = new PoolTimeline();
        PoolTimeline failFastLine = new PoolTimeline();
        subscriptions.add(waitingLine.record(waiting));
        subscriptions.add(failFastLine.record(failFast));
        // Both pools up and carrying (the first connects to a fresh peer may time out, here after
        // the long connect timeout, and retry).
        assertTrue(PartitionTest.await(() -> waiting.state() == PeerPool.State.CONNECTED
                && failFast.state() == PeerPool.State.CONNECTED, HEAL_CONNECT_TIMEOUT.plus(T)), "the pools did not connect: " + waitingEvents
                + " / " + failFastEvents);
        records.track(0, write(waiting, local, 0)).block(T.plus(T));
        records.track(1, write(failFast, local, 1)).block(T.plus(T));
        assertEquals(PeerPool.State.CONNECTED, waiting.state());
        assertEquals(PeerPool.State.CONNECTED, failFast.state());

        rig.partition();
        long t0 = System.nanoTime();
        // An idle connection is not probed: a write on each is what finds the loss, through its deadline.
        records.track(2, write(waiting, local, 2)).subscribe(v -> { }, e -> { });
        records.track(3, write(failFast, local, 3)).subscribe(v -> { }, e -> { });
        Duration lossBound = OP_TIMEOUT.plus(SLACK);
        assertTrue(PartitionTest.await(() -> waiting.state() == PeerPool.State.RECONNECTING
                        && failFast.state() == PeerPool.State.RECONNECTING, lossBound),
                "the pools did not report the outage within " + lossBound + ": " + waiting.state() + " / " + failFast.state()
                        + "; events " + waitingEvents);
        long reported = System.nanoTime() - t0;
        assertTrue(PartitionTest.await(() -> records.ended() == 4, SLACK), "the writes in flight did not end: " + records);
        assertNull(records.firstErrorOtherThan("ConnectionException(LOST)"), records.toString());
        assertTrue(records.failed(2) && records.failed(3), "a write across the partition completed: " + records);
        for (List<PeerPoolEvent> seen : List.of(waitingEvents, failFastEvents)) {
            assertTrue(inOrder(seen, PeerPoolEvent.Kind.CONNECTED, PeerPoolEvent.Kind.LOST, PeerPoolEvent.Kind.RETRYING),
                    "the events do not report the loss: " + seen);
        }

        // FAIL_FAST: at once, UNREACHABLE.
        long f0 = System.nanoTime();
        Throwable fastError = null;
        try {
            records.track(4, write(failFast, local, 4)).block(T);
        } catch (RuntimeException e) {
            fastError = e;
        }
        long fastTook = System.nanoTime() - f0;
        ConnectionException fe = assertInstanceOf(ConnectionException.class, fastError,
                "FAIL_FAST during the outage did not fail with a ConnectionException");
        assertEquals(ConnectionEvent.UNREACHABLE, fe.event(), fe.toString());
        assertTrue(fastTook < Duration.ofMillis(500).toNanos(), "FAIL_FAST took " + fastTook / 1_000_000 + " ms to fail");

        // WAIT: the writes queue for a connection and stay pending through the outage.
        for (int i = 5; i < 5 + WAITING; i++) {
            records.track(i, write(waiting, local, i)).subscribe(v -> { }, e -> { });
        }
        long left = PARTITION.toNanos() - (System.nanoTime() - t0);
        if (left > 0) {
            PartitionTest.sleep(Duration.ofNanos(left));
        }
        assertEquals(5, records.ended(), "an operation queued on the WAIT pool ended during the outage: " + records);
        assertTrue(inOrder(waitingEvents, PeerPoolEvent.Kind.RETRYING, PeerPoolEvent.Kind.CONNECTING),
                "the pool did not keep trying during the outage: " + waitingEvents);

        rig.heal();
        long h = System.nanoTime();
        Duration serveBound = BACKOFF_MAX.plus(ONE_CONNECT).plus(SCHEDULING_SLACK);
        assertTrue(PartitionTest.await(() -> waiting.state() == PeerPool.State.CONNECTED, serveBound),
                "the WAIT pool is not connected " + serveBound + " after the heal: " + waiting.state() + "; events "
                        + waitingEvents);
        long served = System.nanoTime() - h;
        assertTrue(PartitionTest.await(() -> records.ended() == 5 + WAITING, OP_TIMEOUT.plus(SLACK)),
                "the queued writes did not end after the reconnect: " + records);
        long queuedDone = records.lastEndNanos() - h;
        for (int i = 5; i < 5 + WAITING; i++) {
            assertTrue(records.succeeded(i), "queued write " + i + " failed: " + records.error(i));
        }
        assertTrue(PartitionTest.await(() -> failFast.state() == PeerPool.State.CONNECTED, serveBound),
                "the FAIL_FAST pool is not connected " + serveBound + " after the heal: " + failFastEvents);
        records.track(5 + WAITING, write(failFast, local, 5 + WAITING)).block(T);
        assertEquals(0, records.twice(), records.toString());
        assertTrue(inOrder(waitingEvents, PeerPoolEvent.Kind.CONNECTED, PeerPoolEvent.Kind.LOST,
                PeerPoolEvent.Kind.RETRYING, PeerPoolEvent.Kind.CONNECTING, PeerPoolEvent.Kind.CONNECTED), waitingEvents.toString());

        byte[] dump = peer.dump(0, (long) CAPACITY * Records.SIZE);
        assertEquals(-1, records.firstCompletedMissing(dump), "a completed write is not in the peer's memory: " + records);
        long retries = waitingEvents.stream().filter(e -> e.kind() == PeerPoolEvent.Kind.CONNECTING).count();
        long[] heal = healSeen(h, waitingLine, "WAIT");
        long[] fastHeal = healSeen(h, failFastLine, "FAIL_FAST");
        System.out.printf("FACT PeerPool across a %d ms partition (operationTimeout %d ms, connect timeout %d ms, backoff"
                        + " 100-%d ms): outage reported %.0f ms into it; FAIL_FAST failed in %.1f ms; after the heal the WAIT"
                        + " pool was connected in %.0f ms and its %d queued writes done %.0f ms after the heal;"
                        + " %d connect attempts; %s%n", PARTITION.toMillis(), OP_TIMEOUT.toMillis(), HEAL_CONNECT_TIMEOUT.toMillis(),
                BACKOFF_MAX.toMillis(), reported / 1e6, fastTook / 1e6, served / 1e6, WAITING, queuedDone / 1e6,
                retries, records);
        System.out.printf("FACT PeerPool heal (goal: backoff max + %d ms of the heal; connect timeout %d ms): WAIT pool"
                        + " connected %.0f ms after the heal, the attempt in flight at it ended %.0f ms after it, %.0f ms"
                        + " before the pool was connected; FAIL_FAST %.0f, %.0f, %.0f ms; WAIT events from the partition %s%n",
                ONE_CONNECT.toMillis(), HEAL_CONNECT_TIMEOUT.toMillis(), (heal[1] - h) / 1e6, (heal[0] - h) / 1e6,
                (heal[1] - heal[0]) / 1e6, (fastHeal[1] - h) / 1e6, (fastHeal[0] - h) / 1e6,
                (fastHeal[1] - fastHeal[0]) / 1e6, waitingLine.describe(t0));
        Duration goal = BACKOFF_MAX.plus(ONE_CONNECT).plus(SCHEDULING_SLACK);
        for (long[] x : List.of(heal, fastHeal)) {
            // The scenario this checks: an attempt sent into the partition is in flight at the heal.
            assertTrue(x[0] > h, "no connect attempt was in flight at the heal, so the heal bound was not put to"
                    + " the test: WAIT " + waitingLine.describe(h) + ", FAIL_FAST " + failFastLine.describe(h));
            assertTrue(x[1] - h <= goal.toNanos(), "a pool connected " + (x[1] - h) / 1_000_000 + " ms after the heal,"
                    + " beyond backoff max + one connect + scheduling slack = " + goal.toMillis() + " ms (the attempt in"
                    + " flight at the heal ended " + (x[0] - h) / 1_000_000 + " ms after it): WAIT "
                    + waitingLine.describe(h) + ", FAIL_FAST " + failFastLine.describe(h));
        }
    }

    /**
     * {@return when the connect attempt in flight at the heal {@code h} ended ({@code h} when none
     * was, see {@link PoolTimeline}) and when the pool was next connected}
     */
    static long[] healSeen(long h, PoolTimeline line, String which) {
        long seen = line.attemptInFlightEnds(h);
        long connected = line.first(PeerPoolEvent.Kind.CONNECTED, h);
        assertTrue(seen >= 0 && connected >= 0, "the " + which + " pool's events after the heal lack an outcome: "
                + line.describe(h));
        return new long[] {seen, connected};
    }
}
