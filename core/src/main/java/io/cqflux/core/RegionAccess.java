package io.cqflux.core;

/**
 * How a registered memory region may be used; librpma's {@code RPMA_MR_USAGE_*} bits. A region
 * without the access an operation needs is refused before posting.
 */
public enum RegionAccess {
    /** Source of a remote read: the peer reads from it. */
    READ_SRC(1),
    /** Destination of a local read: data read from the peer lands in it. */
    READ_DST(2),
    /** Source of a local write: its data is written to the peer. */
    WRITE_SRC(4),
    /** Destination of a remote write: the peer writes into it. */
    WRITE_DST(8),
    /** Target of a flush to the visibility domain. */
    FLUSH_TYPE_VISIBILITY(16),
    /** Target of a flush to the persistence domain. */
    FLUSH_TYPE_PERSISTENT(32),
    /** Source of a send. */
    SEND(64),
    /** Destination of a receive. */
    RECV(128);

    private final int bit;

    RegionAccess(int bit) {
        this.bit = bit;
    }

    /** {@return the {@code RPMA_MR_USAGE_*} bit} */
    public int bit() {
        return bit;
    }

    /**
     * @param set the accesses
     * @return the OR of their bits
     */
    public static int bits(java.util.Set<RegionAccess> set) {
        int b = 0;
        for (RegionAccess a : set) {
            b |= a.bit;
        }
        return b;
    }
}
