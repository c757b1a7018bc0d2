package io.cqflux.core;

/** Where a flush makes previously written data safe; librpma's {@code RPMA_FLUSH_TYPE_*}. */
public enum FlushType {
    /** Durable: in the persistence domain of the peer (persistent memory). */
    PERSISTENT,
    /** Visible: in the peer's memory, visible to its CPU, not necessarily durable. */
    VISIBILITY
}
