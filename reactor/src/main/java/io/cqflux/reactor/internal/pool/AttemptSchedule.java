package io.cqflux.reactor.internal.pool;

import io.cqflux.reactor.PeerPool;
import io.cqflux.reactor.PeerPoolOptions;
import io.cqflux.reactor.internal.resources.ApiAccess;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/*
 * Design: when a PeerPool's slot attempts a connect, and for how long.
 *
 * The attempts of a reconnect start at most `gap` = max(backoff max, min(minAttemptTime, connect
 * timeout)) apart (PeerPoolOptions.longestAttemptGap), so that a pool sees a heal with an attempt
 * that starts within `gap` of it and is served within that and one connect. A connect sent into a
 * partition cannot see the link come back (its request was dropped, and the transport resends it
 * only on its own timer: TCP's SYN after 1 s, 3 s, 7 s, the RDMA CM's request after its response
 * timeout), so the attempt in flight at a heal must not hold the slot for the whole connect
 * timeout. Hence:
 *  - a reconnect attempt has a window: the backoff delay that came before it, at least
 *    minAttemptTime, capped by the connect timeout (ConnectionConfig#timeout; at the cap the
 *    window is 0: no timer of the pool's own, the connect's timeout ends the attempt);
 *  - an attempt that fails waits the next backoff delay, cut so that the next starts no later
 *    than `gap` after this one started: a late failure (the connect timeout at the cap, a network
 *    error reported after seconds) does not add a whole delay on top;
 *  - an abandoned attempt (its window ended) is followed at once: its wait was spent inside the
 *    window.
 *
 * The delay before attempt n is the minimum doubled n - 1 times, capped at the maximum
 * (PeerPoolOptions.nominalBackoff), drawn from that times 1 ± jitter and kept within the bounds.
 * The attempt count is reset only when a connection that stayed up backoffResetAfter ends, not
 * when one is established: a peer that accepts and drops at once (or a validation that always
 * fails) sees the delays double up to the maximum like a peer that refuses.
 */

/**
 * The reconnect schedule of a {@link PeerPool}'s slots: the backoff delay before each attempt,
 * how long an attempt may run, the wait after a failed one and when the attempt count starts
 * again. Pure arithmetic over the options and the clock readings it is given (the jitter's draw
 * aside, which a test may supply); immutable, so shared by the slots with no lock.
 */
public final class AttemptSchedule {
    private static final ApiAccess API = ApiAccess.get();

    /**
     * The next attempt of a slot, as a failure or an abandoned attempt schedules it.
     *
     * @param attempt the attempt's number (1 for the first after a loss)
     * @param delay the backoff delay before it (its window follows from this)
     * @param pause how long to wait before starting it: the delay, or less (see {@link #waitAfter})
     * @param windowNanos how long it may run before it is abandoned, or 0 when only the connect
     *     timeout ends it
     */
    record Next(int attempt, Duration delay, Duration pause, long windowNanos) {
    }

    private final PeerPoolOptions options;
    /** The instance's connect timeout: the longest an attempt runs. */
    private final long connectTimeoutNanos;
    /** The longest time between the starts of two attempts of a reconnect (the design's `gap`). */
    private final long gapNanos;
    /** Draws a uniform value in [0, 1) for the jitter. */
    private final DoubleSupplier random;

    /**
     * @param options the pool's options
     * @param connectTimeout the instance's connect timeout ({@link io.cqflux.core.ConnectionConfig#timeout()})
     */
    AttemptSchedule(PeerPoolOptions options, Duration connectTimeout) {
        this(options, connectTimeout, () -> ThreadLocalRandom.current().nextDouble());
    }

    /** As {@link #AttemptSchedule(PeerPoolOptions, Duration)}, with the jitter drawn from {@code random} ([0, 1)). */
    AttemptSchedule(PeerPoolOptions options, Duration connectTimeout, DoubleSupplier random) {
        this.options = options;
        this.connectTimeoutNanos = connectTimeout.toNanos();
        this.gapNanos = API.longestAttemptGap(options, connectTimeout).toNanos();
        this.random = random;
    }

    /** {@return the longest time between the starts of two attempts of a reconnect, in nanoseconds} */
    long gapNanos() {
        return gapNanos;
    }

    /**
     * {@return the backoff delay before attempt {@code attempt}}: its nominal value
     * ({@link PeerPoolOptions#nominalBackoff}) times 1 ± jitter, within the backoff's bounds
     */
    Duration delay(int attempt) {
        Duration nominal = API.nominalBackoff(options, attempt);
        double j = options.jitter();
        if (j == 0) {
            return nominal;
        }
        double f = 1 + j * (2 * random.getAsDouble() - 1);
        long d = (long) (nominal.toNanos() * f);
        d = Math.clamp(d, options.reconnectBackoffMin().toNanos(), options.reconnectBackoffMax().toNanos());
        return Duration.ofNanos(d);
    }

    /**
     * {@return how long a reconnect attempt after the backoff delay {@code delay} may run}: the
     * delay, at least {@link PeerPoolOptions#minAttemptTime()}; 0 (no window of the pool's own) when
     * that reaches the connect timeout, which then ends the attempt
     */
    long window(Duration delay) {
        long w = Math.max(delay.toNanos(), options.minAttemptTime().toNanos());
        return w >= connectTimeoutNanos ? 0 : w;
    }

    /**
     * {@return the attempt after attempt {@code ended} failed or its connection was lost}
     *
     * @param ended the number of the attempt that failed, or of the last one before a loss
     * @param spentNanos how long the failed attempt ran (0 after a loss): the wait is cut so that
     *     the next attempt starts at most the longest gap after it started
     */
    Next afterFailure(int ended, long spentNanos) {
        int next = ended + 1;
        Duration delay = delay(next);
        long waitNanos = waitAfter(delay.toNanos(), spentNanos, gapNanos);
        Duration wait = waitNanos == delay.toNanos() ? delay : Duration.ofNanos(waitNanos);
        return new Next(next, delay, wait, window(delay));
    }

    /** {@return the attempt after attempt {@code abandoned} ran out its window: at once, its wait spent in the window} */
    Next afterAbandon(int abandoned) {
        int next = abandoned + 1;
        Duration delay = delay(next);
        return new Next(next, delay, Duration.ZERO, window(delay));
    }

    /**
     * {@return whether a connection that ended after {@code livedNanos} stayed up long enough
     * ({@link PeerPoolOptions#backoffResetAfter()}) for the attempt count to start again}
     */
    boolean provedStable(long livedNanos) {
        return livedNanos >= options.backoffResetAfter().toNanos();
    }

    /**
     * {@return the wait before the next attempt}: the backoff delay {@code delayNanos}, cut so that
     * the next attempt starts no later than {@code gapNanos} after the failed one started
     * ({@code spentNanos} ago), never negative
     */
    public static long waitAfter(long delayNanos, long spentNanos, long gapNanos) {
        return Math.clamp(gapNanos - spentNanos, 0, delayNanos);
    }
}
