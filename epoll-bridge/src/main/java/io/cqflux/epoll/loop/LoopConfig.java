package io.cqflux.epoll.loop;

import io.cqflux.core.internal.Checks;
import io.cqflux.epoll.WaitStrategy;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadFactory;

/**
 * Configuration of one {@link EventLoop}.
 *
 * @param name thread name
 * @param waitStrategy how the loop waits
 * @param batchSize completions read per native call, 1..{@value #MAX_BATCH}
 * @param threadFactory creates the loop thread (the reactor module supplies non-blocking threads),
 *     or {@code null} for a plain daemon thread
 * @param blockedThreshold how long a task, a completion batch or a readiness handler may hold the
 *     loop thread before the loop reports it (WARN, at most once per
 *     {@link EventLoop#BLOCKED_LOG_INTERVAL}, and counted in {@link io.cqflux.epoll.LoopStats#blocked()});
 *     {@link Duration#ZERO} turns the detection off; at most one hour
 */
public record LoopConfig(String name, WaitStrategy waitStrategy, int batchSize, ThreadFactory threadFactory,
        Duration blockedThreshold) {

    /** Largest batch size. */
    public static final int MAX_BATCH = 4096;

    /** The default {@link #blockedThreshold()}: 100 ms. */
    public static final Duration DEFAULT_BLOCKED_THRESHOLD = Duration.ofMillis(100);

    /** The largest {@link #blockedThreshold()}: one hour. */
    public static final Duration MAX_BLOCKED_THRESHOLD = Duration.ofHours(1);

    /** Validates. */
    public LoopConfig {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(waitStrategy, "waitStrategy");
        Objects.requireNonNull(blockedThreshold, "blockedThreshold");
        Checks.inRange("batchSize", batchSize, 1, MAX_BATCH);
        checkBlockedThreshold(blockedThreshold);
    }

    /**
     * The configuration with the {@linkplain #DEFAULT_BLOCKED_THRESHOLD default blocked threshold}.
     *
     * @param name thread name
     * @param waitStrategy how the loop waits
     * @param batchSize completions read per native call
     * @param threadFactory the thread factory, or {@code null}
     */
    public LoopConfig(String name, WaitStrategy waitStrategy, int batchSize, ThreadFactory threadFactory) {
        this(name, waitStrategy, batchSize, threadFactory, DEFAULT_BLOCKED_THRESHOLD);
    }

    /**
     * Checks a blocked threshold.
     *
     * @param threshold the threshold
     * @return {@code threshold}
     * @throws IllegalArgumentException when it is negative or above {@link #MAX_BLOCKED_THRESHOLD}
     */
    public static Duration checkBlockedThreshold(Duration threshold) {
        Objects.requireNonNull(threshold, "blockedThreshold");
        if (threshold.isNegative() || threshold.compareTo(MAX_BLOCKED_THRESHOLD) > 0) {
            throw new IllegalArgumentException("blockedLoopThreshold " + threshold + " is outside [PT0S, "
                    + MAX_BLOCKED_THRESHOLD + "] (PT0S turns the detection off)");
        }
        return threshold;
    }

    /**
     * The defaults: blocking, batch 32, the default thread factory, the default blocked threshold.
     *
     * @param name thread name
     * @return the configuration
     */
    public static LoopConfig of(String name) {
        return new LoopConfig(name, WaitStrategy.BLOCKING, 32, null);
    }
}
