package io.cqflux.test.network;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.PeerPool;
import io.cqflux.reactor.PeerPoolEvent;
import io.cqflux.reactor.PeerPoolOptions;
import io.cqflux.reactor.Region;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * {@link PeerPoolPartitionTest}'s guarantee on librpma over Soft-RoCE: two idle pools (one
 * {@code WAIT}, one {@code FAIL_FAST}) to a server across a partition report the outage through
 * the keep-alive, without any operation, within 2 x interval x misses; {@link PeerPool#state()}
 * never says {@code CONNECTED} while the partition holds; the {@code FAIL_FAST} pool fails an
 * operation at once, the {@code WAIT} pool holds its writes; and after the heal the pools serve
 * again within the longest backoff and one connect of the heal itself, although a connect attempt
 * sent into the partition is in flight at it and the connect timeout is far longer (a reconnect
 * attempt runs at most its backoff slot, {@link PeerPoolOptions#minAttemptTime()};
 * {@link PoolTimeline}), the held writes complete and are in the server's memory. Runs only in the
 * Soft-RoCE lane (tag {@code rpma}).
 */
@Tag("rpma")
class RpmaPeerPoolPartitionTest extends RxeRigTest {
    static final Duration INTERVAL = RpmaKeepAliveTest.INTERVAL;
    static final int MISSES = RpmaKeepAliveTest.MISSES;
    /**
     * Far longer than the longest backoff: an attempt sent into the partition and left to run
     * would hold its slot past the heal bound (the RDMA CM resends its request only after its
     * response timeout, seconds).
     */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /**
     * The least attempt time: a slow network's setting. An honest connect under TCG beside the
     * host's builds can take longer than the default 1 s (docs/reliability.md has the lane's
     * figures), which would abandon it.
     */
    static final Duration MIN_ATTEMPT = Duration.ofSeconds(2);
    /** The longest backoff, equal to the least attempt time: attempts of an outage start at most 2 s apart. */
    static final Duration BACKOFF_MAX = MIN_ATTEMPT;
    /** One connect under TCG beside the host's builds (rdma_cm's resolution, the handshake): the heal's slack. */
    static final Duration ONE_CONNECT = Duration.ofSeconds(1);
    static final Duration PARTITION = Duration.ofSeconds(5);
    /** What a loaded host adds to the timers and loops involved (as PeerPoolPartitionTest allows). */
    static final Duration SCHEDULING_SLACK = Duration.ofMillis(500);
    static final int CAPACITY = 256;
    static final int WAITING = 20;

    RxePair pair;
    final List<Disposable> subscriptions = new ArrayList<>();

    @AfterEach
    void tearDown() {
        subscriptions.forEach(Disposable::dispose);
        if (pair != null) {
            pair.close();
        }
    }

    private PeerPool pool(PeerPoolOptions.WhenUnavailable mode) {
        return pair.client.peerPool(pair.serverAddress, PeerPoolOptions.builder()
                .reconnectBackoff(Duration.ofMillis(100), BACKOFF_MAX).jitter(0).minAttemptTime(MIN_ATTEMPT)
                .whenUnavailable(mode).maxAcquireTime(RxePair.T).build());
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

    @Test
    void idlePools_partition_reportTheOutageWithinTheKeepAliveBound_neverSayConnectedDuringIt_andServeAfterTheHeal() {
        pair = new RxePair(rig, (long) CAPACITY * Records.SIZE, b -> b,
                b -> b.keepAlive(INTERVAL, MISSES).operationTimeout(Duration.ofSeconds(5))
                        .connectionConfig(ConnectionConfig.DEFAULT.withTimeout(CONNECT_TIMEOUT)));
        MemorySegment mem = pair.arena.allocate((long) CAPACITY * Records.SIZE, 64);
        Records records = new Records(System.nanoTime(), CAPACITY);
        records.fill(mem);
        Region local = pair.client.register(mem, RegionAccess.WRITE_SRC);
        PeerPool waiting = pool(PeerPoolOptions.WhenUnavailable.WAIT);
        PeerPool failFast = pool(PeerPoolOptions.WhenUnavailable.FAIL_FAST);
        List<PeerPoolEvent> waitingEvents = record(waiting);
        List<PeerPoolEvent> failFastEvents = record(failFast);
        PoolTimeline waitingLine = new PoolTimeline();
        PoolTimeline failFastLine = new PoolTimeline();
        subscriptions.add(waitingLine.record(waiting));
        subscriptions.add(failFastLine.record(failFast));
        assertTrue(PartitionTest.await(() -> waiting.state() == PeerPool.State.CONNECTED
                && failFast.state() == PeerPool.State.CONNECTED, RxePair.T), "the pools did not connect: "
                + waitingEvents + " / " + failFastEvents);
        records.track(0, write(waiting, local, 0)).block(RxePair.T);
        records.track(1, write(failFast, local, 1)).block(RxePair.T);
        PartitionTest.sleep(INTERVAL.multipliedBy(3)); // idle and alive: probes answered
        assertEquals(PeerPool.State.CONNECTED, waiting.state(), "the idle pool lost its connection with the link up: "
                + waitingEvents);

        rig.partition();
        long t0 = System.nanoTime();
        Duration keepAliveBound = INTERVAL.multipliedBy(2L * MISSES);
        assertTrue(PartitionTest.await(() -> waiting.state() != PeerPool.State.CONNECTED
                && failFast.state() != PeerPool.State.CONNECTED, RxePair.T), "an idle pool still says CONNECTED "
                + RxePair.T + " into the partition: " + waiting.state() + " / " + failFast.state());
        long reported = System.nanoTime() - t0;

        long f0 = System.nanoTime();
        Throwable fastError = null;
        try {
            records.track(2, write(failFast, local, 2)).block(RxePair.T);
        } catch (RuntimeException e) {
            fastError = e;
        }
        long fastTook = System.nanoTime() - f0;
        for (int i = 3; i < 3 + WAITING; i++) {
            records.track(i, write(waiting, local, i)).subscribe(v -> { }, e -> { });
        }
        // The partition holds: state() must never say CONNECTED meanwhile.
        List<PeerPool.State> seenDuring = new ArrayList<>();
        while (System.nanoTime() - t0 < PARTITION.toNanos()) {
            PeerPool.State w = waiting.state();
            PeerPool.State f = failFast.state();
            if (!seenDuring.contains(w)) {
                seenDuring.add(w);
            }
            if (!seenDuring.contains(f)) {
                seenDuring.add(f);
            }
            PartitionTest.sleep(Duration.ofMillis(10));
        }
        int endedDuring = records.ended();

        rig.heal();
        long h = System.nanoTime();
        // The goal, counted from the heal itself: the attempt in flight at it runs at most its
        // backoff slot, then the next one reaches the peer.
        Duration serveBound = BACKOFF_MAX.plus(ONE_CONNECT).plus(SCHEDULING_SLACK);
        boolean served = PartitionTest.await(() -> waiting.state() == PeerPool.State.CONNECTED, RxePair.T);
        long servedTook = System.nanoTime() - h;
        boolean queuedDone = PartitionTest.await(() -> records.ended() == 3 + WAITING, RxePair.T);
        long queuedTook = records.lastEndNanos() - h;
        boolean fastServed = PartitionTest.await(() -> failFast.state() == PeerPool.State.CONNECTED, RxePair.T);
        long fastServedTook = System.nanoTime() - h;
        long attempts = waitingEvents.stream().filter(e -> e.kind() == PeerPoolEvent.Kind.CONNECTING).count();
        System.out.printf("FACT rpma idle PeerPools across a %d ms partition (keep-alive %d ms x %d, connect timeout"
                + " %d ms, backoff 100-%d ms): state left CONNECTED %.0f ms into it (bound %d ms); states seen"
                + " during it %s; FAIL_FAST failed in %.1f ms with %s; after the heal the WAIT pool was connected in"
                + " %.0f ms, its %d held writes done %.0f ms after the heal, the FAIL_FAST pool in %.0f ms (bound"
                + " %d ms); %d WAIT connect attempts; %s%n", PARTITION.toMillis(), INTERVAL.toMillis(), MISSES,
                CONNECT_TIMEOUT.toMillis(), BACKOFF_MAX.toMillis(), reported / 1e6, keepAliveBound.toMillis(),
                seenDuring, fastTook / 1e6, fastError, servedTook / 1e6, WAITING, queuedTook / 1e6,
                fastServedTook / 1e6, serveBound.toMillis(), attempts, records);

        assertTrue(reported <= keepAliveBound.toNanos(), "the idle pools reported the outage after "
                + reported / 1_000_000 + " ms, beyond 2 x interval x misses = " + keepAliveBound.toMillis() + " ms");
        assertTrue(!seenDuring.contains(PeerPool.State.CONNECTED), "a pool said CONNECTED during the partition: "
                + seenDuring + "; events " + waitingEvents);
        ConnectionException fe = assertInstanceOf(ConnectionException.class, fastError,
                "FAIL_FAST during the outage did not fail with a ConnectionException");
        assertEquals(ConnectionEvent.UNREACHABLE, fe.event(), fe.toString());
        assertTrue(fastTook < Duration.ofMillis(500).toNanos(), "FAIL_FAST took " + fastTook / 1_000_000
                + " ms to fail");
        assertEquals(3, endedDuring, "a write held by the WAIT pool ended during the outage: " + records);
        assertTrue(served, "the WAIT pool is not connected " + RxePair.T + " after the heal: " + waitingEvents);
        assertTrue(servedTook <= serveBound.toNanos(), "the WAIT pool served again " + servedTook / 1_000_000
                + " ms after the heal, beyond backoff max + one connect + scheduling slack = " + serveBound.toMillis()
                + " ms: " + waitingLine.describe(h));
        assertTrue(fastServed && fastServedTook <= serveBound.toNanos(), "the FAIL_FAST pool served again "
                + fastServedTook / 1_000_000 + " ms after the heal, beyond " + serveBound.toMillis() + " ms: "
                + failFastEvents);
        assertTrue(queuedDone, "the held writes did not end after the heal: " + records);
        for (int i = 3; i < 3 + WAITING; i++) {
            assertTrue(records.succeeded(i), "held write " + i + " failed: " + records.error(i));
        }
        assertEquals(0, records.twice(), records.toString());
        assertTrue(PeerPoolPartitionTest.inOrder(waitingEvents, PeerPoolEvent.Kind.CONNECTED,
                PeerPoolEvent.Kind.LOST, PeerPoolEvent.Kind.RETRYING, PeerPoolEvent.Kind.CONNECTING,
                PeerPoolEvent.Kind.CONNECTED), waitingEvents.toString());
        assertTrue(waitingEvents.stream().anyMatch(e -> e.kind() == PeerPoolEvent.Kind.LOST && e.cause() != null
                && String.valueOf(e.cause().getMessage()).contains("keep-alive")),
                "no LOST event names the keep-alive: " + waitingEvents);
        byte[] memory = pair.serverMem.toArray(ValueLayout.JAVA_BYTE);
        assertEquals(-1, records.firstCompletedMissing(memory), "a completed write is not in the server's memory: "
                + records);

        // The scenario: an attempt sent into the partition was in flight at the heal, and the
        // goal, backoff max + one connect, held from the heal itself (PoolTimeline).
        long[] heal = PeerPoolPartitionTest.healSeen(h, waitingLine, "WAIT");
        long[] fastHeal = PeerPoolPartitionTest.healSeen(h, failFastLine, "FAIL_FAST");
        System.out.printf("FACT rpma PeerPool heal (goal: backoff max + %d ms of the heal; connect timeout %d ms): WAIT"
                        + " pool connected %.0f ms after the heal, the attempt in flight at it ended %.0f ms after it, %.0f"
                        + " ms before the pool was connected; FAIL_FAST %.0f, %.0f, %.0f ms; WAIT events from the"
                        + " partition %s%n", ONE_CONNECT.toMillis(), CONNECT_TIMEOUT.toMillis(), (heal[1] - h) / 1e6,
                (heal[0] - h) / 1e6, (heal[1] - heal[0]) / 1e6, (fastHeal[1] - h) / 1e6, (fastHeal[0] - h) / 1e6,
                (fastHeal[1] - fastHeal[0]) / 1e6, waitingLine.describe(t0));
        for (long[] x : List.of(heal, fastHeal)) {
            assertTrue(x[0] > h, "no connect attempt was in flight at the heal, so the heal bound was not put to"
                    + " the test: WAIT " + waitingLine.describe(h) + ", FAIL_FAST " + failFastLine.describe(h));
            assertTrue(x[1] - h <= serveBound.toNanos(), "a pool connected " + (x[1] - h) / 1_000_000 + " ms after"
                    + " the heal, beyond backoff max + one connect + scheduling slack = " + serveBound.toMillis() + " ms (the attempt in"
                    + " flight at the heal ended " + (x[0] - h) / 1_000_000 + " ms after it): WAIT "
                    + waitingLine.describe(h) + ", FAIL_FAST " + failFastLine.describe(h));
        }
    }
}
