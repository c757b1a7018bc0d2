package io.cqflux.reactor;

/** Which native transport a {@link Cqflux} instance uses. */
public enum TransportChoice {
    /** librpma when an RDMA device serves the local address ({@code Rpma.open} succeeds), else libfabric. */
    AUTO,
    /** librpma only (RDMA NICs, Soft-RoCE, SoftiWARP). */
    RPMA,
    /** libfabric only ({@code tcp} provider by default: works on any Linux host). */
    FABRIC
}
