package io.cqflux.core;

/**
 * The kind of operation a completion reports, transport-neutral.
 *
 * <p>The names follow librpma's former {@code enum rpma_op} (removed in librpma 0.12, see
 * {@code rpma_cq_get_wc(3)}) and the {@code ibv_wc_opcode} values it maps to. A transport reports
 * what the device said: a flush that librpma emulates completes as {@link #READ}, librpma's atomic
 * write as {@link #WRITE}, libfabric's flush (a read-back, as librpma's) as {@link #READ}; the reactive
 * layer, which owns every posted context, reports what it posted ({@link #FLUSH},
 * {@link #ATOMIC_WRITE}) on its completion monitor and in its errors.
 */
public enum Opcode {
    /** One-sided read from a remote region into a local one ({@code IBV_WC_RDMA_READ}). */
    READ,
    /** One-sided write ({@code IBV_WC_RDMA_WRITE}). */
    WRITE,
    /** One-sided write that also consumes a receive at the peer carrying 32-bit immediate data. */
    WRITE_WITH_IMMEDIATE,
    /** Flush of previously written data to the persistence or visibility domain of the peer. */
    FLUSH,
    /** Atomic 8-byte write ({@code IBV_WC_ATOMIC_WRITE}). */
    ATOMIC_WRITE,
    /** Two-sided send ({@code IBV_WC_SEND}). */
    SEND,
    /** Two-sided send with 32-bit immediate data. */
    SEND_WITH_IMMEDIATE,
    /** A receive buffer was filled by a send ({@code IBV_WC_RECV}). */
    RECEIVE,
    /** A receive was consumed by the peer's write with immediate ({@code IBV_WC_RECV_RDMA_WITH_IMM}). */
    RECEIVE_WRITE_WITH_IMMEDIATE;

    /** {@return whether this opcode is reported on the receive side} */
    public boolean isReceive() {
        return this == RECEIVE || this == RECEIVE_WRITE_WITH_IMMEDIATE;
    }
}
