package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.ConnectionException;
import io.cqflux.reactor.internal.pool.AttemptSchedule;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * The schedule of a {@link PeerPool}'s reconnect attempts against a peer that never answers a
 * connect: a TCP listener on 127.0.0.1 whose accept is never called. The kernel completes the TCP
 * handshake into its backlog, so fabric/tcp's connect sends its request and waits for a reply that
 * never comes, as a connect sent into a partition does. A reconnect attempt is abandoned at the
 * end of its window (the backoff delay before it, at least {@link PeerPoolOptions#minAttemptTime()},
 * capped by the connect timeout) and the next starts at once; the pool's first connect keeps the
 * full connect timeout; once a server answers at that address the pool is served within the
 * longest gap between attempts and one connect; nothing is left open.
 */
class PeerPoolAttemptWindowTest {
    static final Duration T = FaultRig.T;
    /** Far longer than any window here: an attempt that runs it out means the window did not apply. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    static final Duration BACKOFF_MIN = Duration.ofMillis(100);
    static final Duration BACKOFF_MAX = Duration.ofMillis(400);
    static final Duration MIN_ATTEMPT = Duration.ofMillis(300);
    /** A timer's task and the hop to a loop on this loaded 2-core host: how late "at once" and "at its window" may be. */
    static final Duration SCHEDULING_SLACK = Duration.ofMillis(500);
    /**
     * Events are stamped as they arrive, a little after the state change (the sink is fed after
     * the pool's lock is released): how much shorter an attempt may look than it ran.
     */
    static final long STAMP_SKEW_NANOS = Duration.ofMillis(20).toNanos();
    /** One connect over loopback, with the same allowance. */
    static final Duration ONE_CONNECT = Duration.ofSeconds(1);

    FaultRig rig;
    PeerPool pool;
    ServerSocket silent;
    final List<Disposable> subscriptions = new ArrayList<>();

    @AfterEach
    void tearDown() throws IOException {
        subscriptions.forEach(Disposable::dispose);
        if (pool != null) {
            pool.disposeNow(T);
        }
        if (silent != null) {
            silent.close();
        }
        if (rig != null) {
            rig.close();
        }
    }

    /** A pool event and when it arrived ({@code System.nanoTime()}). */
    record Stamped(long nanos, PeerPoolEvent event) {
        @Override
        public String toString() {
            PeerPoolEvent e = event;
            return e.kind() + "(" + e.attempt() + (e.kind() == PeerPoolEvent.Kind.RETRYING ? "," + e.delay().toMillis()
                    + "ms" : "") + ")@" + nanos / 1_000_000 % 100_000;
        }
    }

    private List<Stamped> stamp(PeerPool p) {
        List<Stamped> seen = new CopyOnWriteArrayList<>();
        subscriptions.add(p.events().subscribe(e -> seen.add(new Stamped(System.nanoTime(), e))));
        return seen;
    }

    private static PeerPoolOptions options() {
        return PeerPoolOptions.builder().reconnectBackoff(BACKOFF_MIN, BACKOFF_MAX).jitter(0)
                .minAttemptTime(MIN_ATTEMPT).build();
    }

    /** {@return a port on 127.0.0.1 where nothing listens now} */
    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, FaultRig.LO)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A listener whose accept is never called: connects to it get no answer. */
    private static ServerSocket silentListener(int port) {
        try {
            ServerSocket s = new ServerSocket();
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(FaultRig.LO, port), 64);
            return s;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Stamped find(List<Stamped> seen, PeerPoolEvent.Kind kind, int attempt) {
        return seen.stream().filter(s -> s.event().kind() == kind && s.event().attempt() == attempt).findFirst()
                .orElse(null);
    }

    private static long ms(long nanos) {
        return nanos / 1_000_000;
    }

    @Test
    void reconnectAttempts_toAPeerThatNeverAnswers_areAbandonedAtTheirWindow_theNextStartsAtOnce_andTheHealIsServedWithinTheGap() {
        rig = new FaultRig(b -> b, b -> b.connectionConfig(ConnectionConfig.DEFAULT.withTimeout(CONNECT_TIMEOUT)));
        int fdsBefore = FaultRig.openFds();
        int port = freePort();
        InetSocketAddress address = new InetSocketAddress(FaultRig.LO, port);
        pool = rig.client.peerPool(address, options());
        List<Stamped> seen = stamp(pool);
        PeerPoolEvents ev = new PeerPoolEvents(pool);
        subscriptions.add(ev::close);
        // The first attempt is refused (nothing listens): from then on the slot is reconnecting.
        ev.await(1, e -> e.kind() == PeerPoolEvent.Kind.RETRYING, T, "the refused first attempt");
        silent = silentListener(port);
        long opened = System.nanoTime();
        // Five attempts that started after the listener opened, all abandoned at their windows.
        assertTrue(FaultRig.await(() -> seen.stream().filter(s -> s.nanos() > opened
                && s.event().kind() == PeerPoolEvent.Kind.RETRYING && s.event().delay().isZero()).count() >= 5, T),
                "no five abandoned attempts within " + T + ": " + seen);
        List<String> windows = new ArrayList<>();
        int checked = 0;
        for (Stamped start : List.copyOf(seen)) {
            PeerPoolEvent e = start.event();
            if (e.kind() != PeerPoolEvent.Kind.CONNECTING || start.nanos() <= opened) {
                continue;
            }
            Stamped end = find(seen, PeerPoolEvent.Kind.RETRYING, e.attempt() + 1);
            Stamped next = find(seen, PeerPoolEvent.Kind.CONNECTING, e.attempt() + 1);
            if (end == null || next == null) {
                break; // the attempt in flight now
            }
            long window = Math.max(pool.options().nominalBackoff(e.attempt()).toNanos(), MIN_ATTEMPT.toNanos());
            long ran = end.nanos() - start.nanos();
            windows.add("attempt " + e.attempt() + " window " + ms(window) + " ms ran " + ms(ran) + " ms, next after "
                    + ms(next.nanos() - end.nanos()) + " ms");
            assertTrue(end.event().delay().isZero(), "attempt " + e.attempt() + " to a peer that never answers was"
                    + " not abandoned: " + end.event() + "; " + seen);
            ConnectionException why = assertInstanceOf(ConnectionException.class, end.event().cause());
            assertEquals(ConnectionEvent.UNREACHABLE, why.event(), why.toString());
            assertTrue(why.getMessage().contains("abandoned") && why.getMessage().contains(ms(window) + " ms"),
                    why.getMessage());
            assertTrue(ran >= window - STAMP_SKEW_NANOS, "attempt " + e.attempt() + " was abandoned after " + ms(ran)
                    + " ms, before its window of " + ms(window) + " ms; " + windows);
            assertTrue(ran <= window + SCHEDULING_SLACK.toNanos(), "attempt " + e.attempt() + " ran " + ms(ran)
                    + " ms, beyond its window of " + ms(window) + " ms + " + SCHEDULING_SLACK.toMillis() + " ms; "
                    + windows);
            assertTrue(next.nanos() - end.nanos() <= SCHEDULING_SLACK.toNanos(), "attempt " + (e.attempt() + 1)
                    + " started " + ms(next.nanos() - end.nanos()) + " ms after the one before was abandoned, not at"
                    + " once; " + windows);
            checked++;
        }
        assertTrue(checked >= 4, "too few complete attempts to check: " + windows + "; " + seen);
        System.out.printf("FACT PeerPool reconnect attempts to a peer that never answers (backoff %d-%d ms, minAttemptTime"
                + " %d ms, connect timeout %d ms): %s%n", BACKOFF_MIN.toMillis(), BACKOFF_MAX.toMillis(),
                MIN_ATTEMPT.toMillis(), CONNECT_TIMEOUT.toMillis(), windows);

        // The heal: a server answers at that address now. An attempt starts within the longest
        // gap (the longest window here), and one connect later the pool is served.
        Duration gap = pool.options().longestAttemptGap(CONNECT_TIMEOUT);
        assertEquals(BACKOFF_MAX, gap);
        try {
            silent.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        RdmaServer healed = rig.server.bind(address, rig.serverRegion).block(T);
        long h = System.nanoTime();
        Duration bound = gap.plus(ONE_CONNECT).plus(SCHEDULING_SLACK);
        boolean served = FaultRig.await(() -> pool.state() == PeerPool.State.CONNECTED, T);
        long took = System.nanoTime() - h;
        System.out.printf("FACT PeerPool served %d ms after a server answered at its address (bound %d ms)%n", ms(took),
                bound.toMillis());
        assertTrue(served && took <= bound.toNanos(), "the pool was served " + ms(took) + " ms after the heal, beyond"
                + " the longest gap " + gap.toMillis() + " ms + one connect + slack = " + bound.toMillis() + " ms: "
                + seen);
        ev.assertInOrder();

        // Every abandoned attempt's set-up was released.
        pool.disposeNow(T);
        healed.disposeNow(T);
        assertTrue(FaultRig.await(() -> FaultRig.openFds() <= fdsBefore + 2, T), "file descriptors: " + fdsBefore
                + " before the pool, " + FaultRig.openFds() + " after it made " + checked + "+ abandoned attempts and"
                + " was disposed");
    }

    @Test
    void firstConnect_toAPeerThatNeverAnswers_keepsTheFullConnectTimeout_thenReconnectAttemptsGetTheirWindows() {
        Duration connectTimeout = Duration.ofMillis(1500);
        rig = new FaultRig(b -> b, b -> b.connectionConfig(ConnectionConfig.DEFAULT.withTimeout(connectTimeout)));
        int port = freePort();
        silent = silentListener(port);
        pool = rig.client.peerPool(new InetSocketAddress(FaultRig.LO, port), options());
        List<Stamped> seen = stamp(pool);
        PeerPoolEvents ev = new PeerPoolEvents(pool);
        subscriptions.add(ev::close);
        assertTrue(FaultRig.await(() -> find(seen, PeerPoolEvent.Kind.RETRYING, 3) != null, T),
                "no second attempt ended within " + T + ": " + seen);
        Stamped first = find(seen, PeerPoolEvent.Kind.CONNECTING, 1);
        Stamped firstEnd = find(seen, PeerPoolEvent.Kind.RETRYING, 2);
        Stamped second = find(seen, PeerPoolEvent.Kind.CONNECTING, 2);
        Stamped secondEnd = find(seen, PeerPoolEvent.Kind.RETRYING, 3);
        assertTrue(first != null && second != null, seen.toString());
        long firstRan = firstEnd.nanos() - first.nanos();
        long secondRan = secondEnd.nanos() - second.nanos();
        System.out.printf("FACT PeerPool first connect to a peer that never answers ran %d ms (connect timeout %d ms),"
                + " the next attempt waited %d ms and was abandoned after %d ms (window %d ms)%n", ms(firstRan),
                connectTimeout.toMillis(), firstEnd.event().delay().toMillis(), ms(secondRan), MIN_ATTEMPT.toMillis());
        // The first connect ran out the connect timeout, not a window.
        assertTrue(firstRan >= connectTimeout.toNanos() - STAMP_SKEW_NANOS, "the first connect ended after " + ms(firstRan)
                + " ms, before the connect timeout " + connectTimeout.toMillis() + " ms: " + seen);
        assertInstanceOf(ConnectionException.class, firstEnd.event().cause());
        assertTrue(!firstEnd.event().cause().getMessage().contains("abandoned"), firstEnd.event().toString());
        // Its wait is cut: the next attempt starts within the longest gap (400 ms) of its start,
        // which the 1.5 s it ran has passed already.
        assertEquals(Duration.ZERO, firstEnd.event().delay(), firstEnd.event().toString());
        // The second is a reconnect attempt: abandoned at its window, max(200 ms, 300 ms).
        assertTrue(secondEnd.event().delay().isZero()
                && secondEnd.event().cause().getMessage().contains("abandoned"), secondEnd.event().toString());
        assertTrue(secondRan >= MIN_ATTEMPT.toNanos() - STAMP_SKEW_NANOS
                && secondRan <= MIN_ATTEMPT.plus(SCHEDULING_SLACK).toNanos(), "the second attempt ran " + ms(secondRan)
                + " ms, not its window of " + MIN_ATTEMPT.toMillis() + " ms: " + seen);
        ev.assertInOrder();
    }

    @Test
    void minAttemptTimeAtTheConnectTimeout_reconnectAttemptsRunTheWholeConnectTimeout() {
        Duration connectTimeout = Duration.ofMillis(600);
        rig = new FaultRig(b -> b, b -> b.connectionConfig(ConnectionConfig.DEFAULT.withTimeout(connectTimeout)));
        int port = freePort();
        silent = silentListener(port);
        pool = rig.client.peerPool(new InetSocketAddress(FaultRig.LO, port), PeerPoolOptions.builder()
                .reconnectBackoff(BACKOFF_MIN, BACKOFF_MAX).jitter(0).minAttemptTime(connectTimeout).build());
        List<Stamped> seen = stamp(pool);
        assertTrue(FaultRig.await(() -> find(seen, PeerPoolEvent.Kind.RETRYING, 4) != null, T),
                "no third attempt ended within " + T + ": " + seen);
        for (int a = 2; a <= 3; a++) {
            long ran = find(seen, PeerPoolEvent.Kind.RETRYING, a + 1).nanos() - find(seen, PeerPoolEvent.Kind.CONNECTING, a).nanos();
            PeerPoolEvent end = find(seen, PeerPoolEvent.Kind.RETRYING, a + 1).event();
            assertTrue(ran >= connectTimeout.toNanos() - STAMP_SKEW_NANOS, "reconnect attempt " + a + " ended after " + ms(ran)
                    + " ms, before the connect timeout " + connectTimeout.toMillis() + " ms: " + seen);
            assertTrue(!end.cause().getMessage().contains("abandoned"), end.toString());
            // The gap is the connect timeout here: the wait after a timed-out attempt is cut to nothing.
            assertEquals(Duration.ZERO, end.delay(), end.toString());
        }
    }

    @Test
    void waitAfterAFailure_isTheBackoffDelay_cutToTheLongestGapAfterTheAttemptsStart() {
        long ms = 1_000_000L;
        assertEquals(200 * ms, AttemptSchedule.waitAfter(200 * ms, 0, 1000 * ms), "after a loss: the whole delay");
        assertEquals(200 * ms, AttemptSchedule.waitAfter(200 * ms, 5 * ms, 1000 * ms), "a quick refusal: the whole delay");
        assertEquals(300 * ms, AttemptSchedule.waitAfter(800 * ms, 700 * ms, 1000 * ms), "a late failure: up to the gap");
        assertEquals(0, AttemptSchedule.waitAfter(800 * ms, 5000 * ms, 1000 * ms), "beyond the gap: at once");
        PeerPoolOptions o = PeerPoolOptions.builder().reconnectBackoff(BACKOFF_MIN, Duration.ofSeconds(10))
                .minAttemptTime(Duration.ofSeconds(1)).build();
        assertEquals(Duration.ofSeconds(10), o.longestAttemptGap(Duration.ofSeconds(5)), "the longest backoff");
        PeerPoolOptions slow = PeerPoolOptions.builder().reconnectBackoff(BACKOFF_MIN, Duration.ofSeconds(1))
                .minAttemptTime(Duration.ofSeconds(3)).build();
        assertEquals(Duration.ofSeconds(3), slow.longestAttemptGap(Duration.ofSeconds(5)), "the least attempt time");
        assertEquals(Duration.ofSeconds(2), slow.longestAttemptGap(Duration.ofSeconds(2)), "capped by the connect timeout");
    }

    @Test
    void minAttemptTime_outOfRange_isRefusedNamingTheValueAndTheBound() {
        IllegalArgumentException zero = assertThrows(IllegalArgumentException.class,
                () -> PeerPoolOptions.builder().minAttemptTime(Duration.ZERO));
        assertTrue(zero.getMessage().contains("minAttemptTime PT0S") && zero.getMessage().contains("PT24H"),
                zero.getMessage());
        IllegalArgumentException big = assertThrows(IllegalArgumentException.class,
                () -> PeerPoolOptions.builder().minAttemptTime(Duration.ofDays(2)));
        assertTrue(big.getMessage().contains("PT48H"), big.getMessage());
        assertEquals(PeerPoolOptions.DEFAULT_MIN_ATTEMPT_TIME, PeerPoolOptions.defaults().minAttemptTime());
        assertTrue(PeerPoolOptions.defaults().toString().contains("attempts at least PT1S"),
                PeerPoolOptions.defaults().toString());
    }
}
