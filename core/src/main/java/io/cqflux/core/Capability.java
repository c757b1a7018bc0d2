package io.cqflux.core;

/** What a transport (and, for libfabric, its provider) can do; unsupported requests are refused before posting. */
public enum Capability {
    /** One-sided read and write. */
    RMA,
    /** Write with 32-bit immediate (remote CQ data on libfabric). */
    WRITE_WITH_IMMEDIATE,
    /** Two-sided send and receive. */
    MESSAGES,
    /** Send with 32-bit immediate. */
    SEND_WITH_IMMEDIATE,
    /** 8-byte atomic write. */
    ATOMIC_WRITE,
    /** Flush to the visibility domain. */
    FLUSH_VISIBILITY,
    /** Flush to the persistence domain (durable writes to persistent memory). */
    FLUSH_PERSISTENT,
    /** One completion fd for both of a connection's CQs (librpma ≥ 1.0 shared completion channel). */
    SHARED_COMPLETION_CHANNEL,
    /** On-demand paging of registered memory. */
    ON_DEMAND_PAGING,
    /**
     * Keys that work on one accepted connection only: a server may register what a connection is
     * exposed to in a scope of that connection's own ({@link io.cqflux.core.spi.ConnectionRequest#scopeKeys()};
     * libfabric: a domain per connection), where no other endpoint looks its keys up.
     */
    CONNECTION_SCOPED_KEYS
}
