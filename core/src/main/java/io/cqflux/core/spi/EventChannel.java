package io.cqflux.core.spi;

import io.cqflux.core.ConnectionEvent;

/** A connection's event source (librpma: {@code rpma_conn_get_event_fd}; libfabric: the EQ's wait fd). Loop-confined. */
public interface EventChannel extends Pollable {

    /**
     * Reads the next pending event, without blocking.
     *
     * @return the event, or {@code null} when none is pending (an empty wake-up is normal)
     */
    ConnectionEvent nextEvent();
}
