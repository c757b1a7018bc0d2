package io.cqflux.spring.boot;

import io.cqflux.reactor.Cqflux;
import java.time.Duration;

/**
 * The keep-alive, {@code cqflux.keep-alive.*} (Cqflux.Builder.keepAlive): an idle connection to a
 * cqflux peer is probed every interval without a completion, and ends LOST after misses intervals
 * without a sign of life; never applied to a peer with raw private data.
 */
public class CqfluxKeepAliveProperties {
    /** How often an idle connection is checked, 10 ms to 1 day; 0 switches the keep-alive off. */
    private Duration interval = Cqflux.Builder.DEFAULT_KEEP_ALIVE_INTERVAL;

    /** Intervals in a row without a sign of life before the connection ends LOST (1..1000). */
    private int misses = Cqflux.Builder.DEFAULT_KEEP_ALIVE_MISSES;

    /** @return the interval; 0: off */
    public Duration getInterval() {
        return interval;
    }

    /** @param interval the interval; 0: off */
    public void setInterval(Duration interval) {
        this.interval = interval;
    }

    /** @return intervals without a sign of life before the end */
    public int getMisses() {
        return misses;
    }

    /** @param misses intervals without a sign of life before the end */
    public void setMisses(int misses) {
        this.misses = misses;
    }
}
