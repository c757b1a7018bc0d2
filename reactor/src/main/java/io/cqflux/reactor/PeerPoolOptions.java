package io.cqflux.reactor;

import io.cqflux.core.internal.Checks;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * How a {@link PeerPool} connects, reconnects and hands out connections: how many connections to
 * the one peer ({@link Builder#size(int)}), what each connect sends ({@link ConnectOptions}), the
 * reconnect backoff (exponential from {@link #reconnectBackoffMin()} to
 * {@link #reconnectBackoffMax()}, with {@link #jitter()}; it starts again from the minimum only
 * after a connection stayed up {@link #backoffResetAfter()}), how long a reconnect attempt may run
 * ({@link #minAttemptTime()}), what an operation does while no
 * connection is live ({@link WhenUnavailable}: wait up to {@link #maxAcquireTime()}, or fail
 * fast), how many operations may wait so, and an optional validation of a connection before it is
 * handed out (one that fails it is evicted and replaced).
 *
 * <pre>{@code
 * PeerPoolOptions options = PeerPoolOptions.builder()
 *         .size(2)
 *         .reconnectBackoff(Duration.ofMillis(100), Duration.ofSeconds(10))
 *         .whenUnavailable(PeerPoolOptions.WhenUnavailable.WAIT)
 *         .maxAcquireTime(Duration.ofSeconds(2))
 *         .build();
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class PeerPoolOptions {
    /** The most connections one pool may keep to its peer. */
    public static final int MAX_SIZE = 1024;
    /** The default of {@link Builder#reconnectBackoff(Duration, Duration)}'s first delay: 100 ms. */
    public static final Duration DEFAULT_BACKOFF_MIN = Duration.ofMillis(100);
    /** The default of {@link Builder#reconnectBackoff(Duration, Duration)}'s longest delay: 10 s. */
    public static final Duration DEFAULT_BACKOFF_MAX = Duration.ofSeconds(10);
    /** The default of {@link Builder#jitter(double)}: 0.5 (each delay is 50 % to 150 % of its nominal value). */
    public static final double DEFAULT_JITTER = 0.5;
    /** The default of {@link Builder#maxAcquireTime(Duration)}: 5 s. */
    public static final Duration DEFAULT_MAX_ACQUIRE_TIME = Duration.ofSeconds(5);
    /** The default of {@link Builder#maxPendingAcquires(int)}: 4096 waiting operations. */
    public static final int DEFAULT_MAX_PENDING_ACQUIRES = 4096;
    /** The default of {@link Builder#backoffResetAfter(Duration)}: 5 s. */
    public static final Duration DEFAULT_BACKOFF_RESET_AFTER = Duration.ofSeconds(5);
    /** The default of {@link Builder#minAttemptTime(Duration)}: 1 s. */
    public static final Duration DEFAULT_MIN_ATTEMPT_TIME = Duration.ofSeconds(1);

    private static final PeerPoolOptions DEFAULTS = new Builder().build();

    /** What an operation does when the pool has no live connection (during the gap of a reconnect). */
    public enum WhenUnavailable {
        /**
         * Wait for a connection, at most {@link PeerPoolOptions#maxAcquireTime()}; then fail with a
         * {@link io.cqflux.core.ConnectionException} ({@code UNREACHABLE}) naming the address and
         * how long it waited. At most {@link PeerPoolOptions#maxPendingAcquires()} wait at once.
         */
        WAIT,
        /**
         * Fail at once with a {@link io.cqflux.core.ConnectionException} ({@code UNREACHABLE})
         * naming the address, the pool's state and the last failure. Only the pool's very first
         * connect, before any attempt failed, is waited for (as with {@link #WAIT}): an operation
         * right after the pool was made is not in a gap.
         */
        FAIL_FAST
    }

    private final int size;
    private final ConnectOptions connectOptions;
    private final Duration backoffMin;
    private final Duration backoffMax;
    private final double jitter;
    private final WhenUnavailable whenUnavailable;
    private final Duration maxAcquireTime;
    private final int maxPendingAcquires;
    private final Predicate<? super RdmaConnection> validation;
    private final Duration backoffResetAfter;
    private final Duration minAttemptTime;

    private PeerPoolOptions(Builder b) {
        this.size = b.size;
        this.connectOptions = b.connectOptions;
        this.backoffMin = b.backoffMin;
        this.backoffMax = b.backoffMax;
        this.jitter = b.jitter;
        this.whenUnavailable = b.whenUnavailable;
        this.maxAcquireTime = b.maxAcquireTime;
        this.maxPendingAcquires = b.maxPendingAcquires;
        this.validation = b.validation;
        this.backoffResetAfter = b.backoffResetAfter;
        this.minAttemptTime = b.minAttemptTime;
    }

    /**
     * {@return the defaults: one connection, a cqflux hello exposing nothing, backoff 100 ms to
     * 10 s with jitter 0.5 (reset after a connection stayed up 5 s), a reconnect attempt given at
     * least 1 s, WAIT up to 5 s}
     */
    public static PeerPoolOptions defaults() {
        return DEFAULTS;
    }

    /** {@return a builder holding the defaults} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return how many connections the pool keeps to its peer} */
    public int size() {
        return size;
    }

    /** {@return what each connect (and reconnect) sends} */
    public ConnectOptions connectOptions() {
        return connectOptions;
    }

    /** {@return the delay before the first reconnect attempt after the loss of a connection that stayed up {@link #backoffResetAfter()}} */
    public Duration reconnectBackoffMin() {
        return backoffMin;
    }

    /** {@return the longest delay between two reconnect attempts} */
    public Duration reconnectBackoffMax() {
        return backoffMax;
    }

    /**
     * {@return how long a connection must stay up before the backoff starts again from
     * {@link #reconnectBackoffMin()}; a connection that ends sooner continues the backoff where the
     * attempts before it left it}
     */
    public Duration backoffResetAfter() {
        return backoffResetAfter;
    }

    /**
     * {@return the least time a reconnect attempt runs before the pool abandons it for a fresh one}
     * A reconnect attempt (one after a loss or a failed attempt, not the pool's first) may run as
     * long as the backoff delay before it, at least this, and at most the connect timeout
     * ({@link io.cqflux.core.ConnectionConfig#timeout()}); see {@link Builder#minAttemptTime(Duration)}.
     */
    public Duration minAttemptTime() {
        return minAttemptTime;
    }

    /**
     * {@return the longest time between the starts of two attempts of a reconnect, given the
     * connect timeout}: the longest backoff, or the time an attempt may run when that is longer
     * (the least attempt time, capped by the connect timeout); the first attempt after the
     * pool's first connect, which runs out the full connect timeout, excepted
     *
     * @param connectTimeout the instance's connect timeout
     */
    Duration longestAttemptGap(Duration connectTimeout) {
        Duration run = minAttemptTime.compareTo(connectTimeout) < 0 ? minAttemptTime : connectTimeout;
        return run.compareTo(backoffMax) > 0 ? run : backoffMax;
    }

    /** {@return the jitter factor in [0, 1]: each delay is drawn from its nominal value times 1 ± jitter} */
    public double jitter() {
        return jitter;
    }

    /** {@return what an operation does while no connection is live} */
    public WhenUnavailable whenUnavailable() {
        return whenUnavailable;
    }

    /** {@return how long an operation waits for a connection under {@link WhenUnavailable#WAIT}} */
    public Duration maxAcquireTime() {
        return maxAcquireTime;
    }

    /** {@return how many operations may wait for a connection at once under {@link WhenUnavailable#WAIT}} */
    public int maxPendingAcquires() {
        return maxPendingAcquires;
    }

    /** {@return the check a connection passes before it is handed out (always true by default)} */
    public Predicate<? super RdmaConnection> validation() {
        return validation;
    }

    /**
     * {@return the nominal delay before reconnect attempt {@code attempt} (1 for the first after a
     * loss): the minimum doubled per attempt, capped at the maximum; without jitter}
     *
     * @param attempt the attempt, from 1
     */
    Duration nominalBackoff(int attempt) {
        int shift = Math.clamp(attempt - 1, 0, 40);
        long min = backoffMin.toNanos();
        long max = backoffMax.toNanos();
        long d = min > (max >> shift) ? max : min << shift;
        return Duration.ofNanos(Math.min(d, max));
    }

    @Override
    public String toString() {
        return "PeerPoolOptions[size " + size + ", " + connectOptions + ", backoff " + backoffMin + ".." + backoffMax
                + " jitter " + jitter + " reset after " + backoffResetAfter + ", attempts at least " + minAttemptTime
                + ", " + whenUnavailable
                + (whenUnavailable == WhenUnavailable.WAIT ? " up to " + maxAcquireTime + " (at most "
                        + maxPendingAcquires + " waiting)" : "") + "]";
    }

    /** Configures {@link PeerPoolOptions}. Not thread-safe. */
    public static final class Builder {
        private int size = 1;
        private ConnectOptions connectOptions = ConnectOptions.defaults();
        private Duration backoffMin = DEFAULT_BACKOFF_MIN;
        private Duration backoffMax = DEFAULT_BACKOFF_MAX;
        private double jitter = DEFAULT_JITTER;
        private WhenUnavailable whenUnavailable = WhenUnavailable.WAIT;
        private Duration maxAcquireTime = DEFAULT_MAX_ACQUIRE_TIME;
        private int maxPendingAcquires = DEFAULT_MAX_PENDING_ACQUIRES;
        private Predicate<? super RdmaConnection> validation = c -> true;
        private Duration backoffResetAfter = DEFAULT_BACKOFF_RESET_AFTER;
        private Duration minAttemptTime = DEFAULT_MIN_ATTEMPT_TIME;

        private Builder() {
        }

        /**
         * Sets how many connections the pool keeps to its peer; operations are spread over the live
         * ones (the one with the fewest operations in flight and waiting, ties in turn). Default 1.
         *
         * @param n connections, 1..{@value PeerPoolOptions#MAX_SIZE}
         * @return this
         * @throws IllegalArgumentException when {@code n} is outside that range
         */
        public Builder size(int n) {
            this.size = Checks.inRange("size", n, 1, MAX_SIZE);
            return this;
        }

        /**
         * Sets what each connect and reconnect sends: the regions exposed to the peer, or raw
         * private data ({@link ConnectOptions}). Default {@link ConnectOptions#defaults()}.
         *
         * @param options the connect options
         * @return this
         */
        public Builder connectOptions(ConnectOptions options) {
            this.connectOptions = Objects.requireNonNull(options, "connectOptions");
            return this;
        }

        /**
         * Sets the reconnect backoff: the first attempt after a loss waits {@code min}, each
         * further one twice as long as the one before, never more than {@code max} (before jitter).
         * Attempts count from the pool's start or the loss of a connection that stayed up
         * {@link #backoffResetAfter(Duration)}: one that ended sooner continues the doubling.
         *
         * @param min the first delay, positive
         * @param max the longest delay, at least {@code min} and at most one day
         * @return this
         * @throws IllegalArgumentException when {@code min} is not positive, {@code max} is below
         *     {@code min} or above one day
         */
        public Builder reconnectBackoff(Duration min, Duration max) {
            Objects.requireNonNull(min, "min");
            Objects.requireNonNull(max, "max");
            if (min.isNegative() || min.isZero()) {
                throw new IllegalArgumentException("reconnect backoff min " + min + " must be positive");
            }
            this.backoffMax = Checks.inRange("reconnect backoff max", max, min, Duration.ofDays(1));
            this.backoffMin = min;
            return this;
        }

        /**
         * Sets how long a connection must stay up before the reconnect backoff starts again from
         * its minimum. A connection that ends sooner (a peer that accepts and then drops every
         * connection, a validation that always fails) does not count as a success: the next
         * delay continues to double, so such a peer sees one connect per backoff maximum instead
         * of one per backoff minimum, and its repeated losses are logged at DEBUG after the first.
         * {@link Duration#ZERO} resets the backoff on every established connection. Default
         * {@link PeerPoolOptions#DEFAULT_BACKOFF_RESET_AFTER} (5 s).
         *
         * @param stable 0 to one day
         * @return this
         * @throws IllegalArgumentException when {@code stable} is negative or above one day
         */
        public Builder backoffResetAfter(Duration stable) {
            Objects.requireNonNull(stable, "backoffResetAfter");
            this.backoffResetAfter = Checks.inRange("backoffResetAfter", stable, Duration.ZERO, Duration.ofDays(1));
            return this;
        }

        /**
         * Sets the least time a reconnect attempt runs before the pool abandons it and starts the
         * next. A connect sent into a partition cannot see the network come back (its request was
         * dropped; TCP resends a SYN only after 1 s, 3 s, 7 s, the RDMA CM its request after
         * seconds), so an attempt that ran out the whole connect timeout would hold its connection
         * slot long after a heal. Instead, a reconnect attempt (after a loss or a failed attempt;
         * not the pool's very first connect, which keeps the full connect timeout) runs at most
         * the backoff delay that came before it, at least {@code floor}, and never longer than the
         * connect timeout; one not established by then is cancelled (its set-up released, as a
         * connect timeout releases it), reported by a {@code RETRYING} event with a zero delay
         * and a {@link io.cqflux.core.ConnectionException} ({@code UNREACHABLE}) saying it was
         * abandoned, and the next attempt starts at once. An attempt that fails sooner waits the
         * next backoff delay, never past the longest backoff (or this, when longer) after its
         * own start. So the attempts of a reconnect start at most
         * {@code max(reconnectBackoffMax, min(floor, connect timeout))} apart, and a pool is served
         * again within that and one connect of the network's return.
         *
         * <p>Set it above the slowest connect your network needs (a WAN, a loaded host, Soft-RoCE
         * under emulation): an honest connect slower than its attempt's time is abandoned like a
         * lost one, and succeeds only once the backoff has grown past it. A value at or above the
         * connect timeout lets every reconnect attempt run the full connect timeout. Default
         * {@link PeerPoolOptions#DEFAULT_MIN_ATTEMPT_TIME} (1 s).
         *
         * @param floor positive, at most one day
         * @return this
         * @throws IllegalArgumentException when {@code floor} is outside (0, PT24H]
         */
        public Builder minAttemptTime(Duration floor) {
            Objects.requireNonNull(floor, "minAttemptTime");
            Checks.timeout("minAttemptTime", floor);
            this.minAttemptTime = floor;
            return this;
        }

        /**
         * Sets the jitter: each delay is drawn uniformly from its nominal value times
         * {@code 1 - jitter .. 1 + jitter} (kept within the backoff's min and max), so that many
         * clients of one restarted peer do not reconnect in step. Default {@link PeerPoolOptions#DEFAULT_JITTER} (0.5).
         *
         * @param factor 0 (none) to 1
         * @return this
         * @throws IllegalArgumentException when {@code factor} is outside [0, 1]
         */
        public Builder jitter(double factor) {
            if (!(factor >= 0 && factor <= 1)) {
                throw new IllegalArgumentException("jitter " + factor + " is outside [0, 1]");
            }
            this.jitter = factor;
            return this;
        }

        /**
         * Sets what an operation does while no connection is live. Default {@link WhenUnavailable#WAIT}.
         *
         * @param mode wait (bounded) or fail fast
         * @return this
         */
        public Builder whenUnavailable(WhenUnavailable mode) {
            this.whenUnavailable = Objects.requireNonNull(mode, "whenUnavailable");
            return this;
        }

        /**
         * Sets how long an operation waits for a connection under {@link WhenUnavailable#WAIT}.
         * Default {@link #DEFAULT_MAX_ACQUIRE_TIME} (5 s).
         *
         * @param timeout positive, at most one day
         * @return this
         * @throws IllegalArgumentException when {@code timeout} is outside (0, PT24H]
         */
        public Builder maxAcquireTime(Duration timeout) {
            Objects.requireNonNull(timeout, "maxAcquireTime");
            Checks.timeout("maxAcquireTime", timeout);
            this.maxAcquireTime = timeout;
            return this;
        }

        /**
         * Sets how many operations may wait for a connection at once under
         * {@link WhenUnavailable#WAIT}; one more fails at once with a
         * {@link io.cqflux.core.QueueFullException} naming the limit. Default
         * {@link #DEFAULT_MAX_PENDING_ACQUIRES} (4096).
         *
         * @param n 0..1,048,576 (0: none waits, as with {@link WhenUnavailable#FAIL_FAST} but with
         *     the queue's error)
         * @return this
         * @throws IllegalArgumentException when {@code n} is outside that range
         */
        public Builder maxPendingAcquires(int n) {
            this.maxPendingAcquires = Checks.inRange("maxPendingAcquires", n, 0, 1 << 20);
            return this;
        }

        /**
         * Sets a check that a live connection passes before it is handed out, in the manner of
         * reactor-pool's eviction predicate; a connection that fails it is evicted (disposed) and
         * replaced through a reconnect. It runs on the acquiring thread, often an event loop: keep
         * it short and non-blocking. A connection that ended is never handed out, whatever it says.
         * A predicate that throws (any non-fatal throwable) fails the check: the connection is
         * evicted, with the throwable as the eviction's cause.
         *
         * @param predicate true to keep the connection
         * @return this
         */
        public Builder validation(Predicate<? super RdmaConnection> predicate) {
            this.validation = Objects.requireNonNull(predicate, "validation");
            return this;
        }

        /** {@return the options} */
        public PeerPoolOptions build() {
            return new PeerPoolOptions(this);
        }
    }
}
