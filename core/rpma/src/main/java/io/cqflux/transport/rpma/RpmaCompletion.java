package io.cqflux.transport.rpma;

import io.cqflux.core.Completion;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.Opcode;
import io.cqflux.transport.rpma.ffm.ibv_wc;
import io.cqflux.transport.rpma.ffm.librpma_h;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The flyweight view of one {@code struct ibv_wc} in the loop's scratch batch: one instance per
 * completion queue, re-pointed at each entry, reading the fields in place.
 */
final class RpmaCompletion extends Completion {

    static final long SIZE = ibv_wc.sizeof();
    private static final long WR_ID = ibv_wc.wr_id$offset();
    private static final long STATUS = ibv_wc.status$offset();
    private static final long OPCODE = ibv_wc.opcode$offset();
    private static final long VENDOR_ERR = ibv_wc.vendor_err$offset();
    private static final long BYTE_LEN = ibv_wc.byte_len$offset();
    private static final long IMM_DATA = ibv_wc.imm_data$offset();
    private static final long QP_NUM = ibv_wc.qp_num$offset();
    private static final long SRC_QP = ibv_wc.src_qp$offset();
    private static final long WC_FLAGS = ibv_wc.wc_flags$offset();
    private static final long PKEY_INDEX = ibv_wc.pkey_index$offset();
    private static final long SLID = ibv_wc.slid$offset();
    private static final long SL = ibv_wc.sl$offset();
    private static final long DLID_PATH_BITS = ibv_wc.dlid_path_bits$offset();

    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED;
    /** {@code imm_data} is in network byte order ({@code ibv_poll_cq(3)}): read it big-endian to get host order. */
    private static final ValueLayout.OfInt BE32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private static final int WITH_IMM = librpma_h.IBV_WC_WITH_IMM();

    private MemorySegment batch = MemorySegment.NULL;
    private long offset;

    /**
     * Points the view at entry {@code index} of {@code batch}. The opcode is what the device
     * reported: an emulated flush reads as {@link Opcode#READ} and librpma's atomic write as
     * {@link Opcode#WRITE} ({@code rpma_flush(3)}, {@code rpma_atomic_write(3)}); the layer that
     * posted the operation knows what it was.
     */
    RpmaCompletion at(MemorySegment batch, int index) {
        this.batch = batch;
        this.offset = index * SIZE;
        return this;
    }

    @Override
    public long context() {
        return batch.get(U64, offset + WR_ID);
    }

    @Override
    public CompletionStatus status() {
        return CompletionStatus.of(batch.get(U32, offset + STATUS));
    }

    int nativeOpcode() {
        return batch.get(U32, offset + OPCODE);
    }

    @Override
    public int vendorError() {
        return batch.get(U32, offset + VENDOR_ERR);
    }

    @Override
    public int queuePair() {
        return batch.get(U32, offset + QP_NUM);
    }

    @Override
    public int errorNumber() {
        return 0;
    }


    @Override
    public long overflowLength() {
        return 0;
    }

    @Override
    public String errorText() {
        return isSuccess() ? "" : RpmaNative.statusText(status());
    }

    @Override
    protected Opcode rawOpcode() {
        return opcodeOf(nativeOpcode(), rawFlags());
    }

    /**
     * Maps an {@code ibv_wc_opcode}.
     *
     * @param op the native opcode
     * @param flags {@code wc_flags}
     * @return the opcode
     */
    static Opcode opcodeOf(int op, long flags) {
        if (op == librpma_h.IBV_WC_SEND()) {
            return Opcode.SEND;
        } else if (op == librpma_h.IBV_WC_RDMA_WRITE()) {
            return Opcode.WRITE;
        } else if (op == librpma_h.IBV_WC_RDMA_READ()) {
            return Opcode.READ;
        } else if (op == librpma_h.IBV_WC_ATOMIC_WRITE()) {
            return Opcode.ATOMIC_WRITE;
        } else if (op == librpma_h.IBV_WC_RECV()) {
            return Opcode.RECEIVE;
        } else if (op == librpma_h.IBV_WC_RECV_RDMA_WITH_IMM()) {
            return Opcode.RECEIVE_WRITE_WITH_IMMEDIATE;
        }
        throw new IllegalStateException("ibv_wc opcode " + op + " is not one the rpma transport posts");
    }

    @Override
    protected long rawByteLength() {
        return Integer.toUnsignedLong(batch.get(U32, offset + BYTE_LEN));
    }

    @Override
    protected long rawFlags() {
        return Integer.toUnsignedLong(batch.get(U32, offset + WC_FLAGS));
    }

    @Override
    protected boolean rawHasImmediate() {
        return (rawFlags() & WITH_IMM) != 0;
    }

    @Override
    protected int rawImmediate() {
        return batch.get(BE32, offset + IMM_DATA);
    }

    @Override
    protected int rawSourceQueuePair() {
        return batch.get(U32, offset + SRC_QP);
    }

    @Override
    protected int rawPkeyIndex() {
        return Short.toUnsignedInt(batch.get(U16, offset + PKEY_INDEX));
    }

    @Override
    protected int rawSlid() {
        return Short.toUnsignedInt(batch.get(U16, offset + SLID));
    }

    @Override
    protected int rawServiceLevel() {
        return Byte.toUnsignedInt(batch.get(ValueLayout.JAVA_BYTE, offset + SL));
    }

    @Override
    protected int rawDlidPathBits() {
        return Byte.toUnsignedInt(batch.get(ValueLayout.JAVA_BYTE, offset + DLID_PATH_BITS));
    }
}
