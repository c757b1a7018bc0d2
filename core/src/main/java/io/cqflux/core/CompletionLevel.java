package io.cqflux.core;

/**
 * When a write's success completion is generated ({@code fi_cq(3)} "completion levels"). librpma
 * (verbs RC) always completes a write once the peer's NIC acknowledged it, which is
 * {@link #DELIVERY}; libfabric lets the caller choose.
 */
public enum CompletionLevel {
    /** The data left the local buffers ({@code FI_TRANSMIT_COMPLETE}): faster, says nothing about the peer. */
    TRANSMIT,
    /** The peer has the data in its memory ({@code FI_DELIVERY_COMPLETE}); the default. */
    DELIVERY
}
