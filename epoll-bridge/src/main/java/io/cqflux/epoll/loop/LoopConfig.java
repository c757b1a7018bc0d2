package io.cqflux.epoll.loop;

import io.cqflux.epoll.WaitStrategy;
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
 */
public record LoopConfig(String name, WaitStrategy waitStrategy, int batchSize, ThreadFactory threadFactory) {

    /** Largest batch size. */
    public static final int MAX_BATCH = 4096;

    /** Validates. */
    public LoopConfig {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(waitStrategy, "waitStrategy");
        if (batchSize < 1 || batchSize > MAX_BATCH) {
            throw new IllegalArgumentException("batchSize " + batchSize + " is outside [1, " + MAX_BATCH + "]");
        }
    }

    /**
     * The defaults: blocking, batch 32, the default thread factory.
     *
     * @param name thread name
     * @return the configuration
     */
    public static LoopConfig of(String name) {
        return new LoopConfig(name, WaitStrategy.BLOCKING, 32, null);
    }
}
