package io.cqflux.transport.rpma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionRecord;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.Opcode;
import io.cqflux.transport.rpma.ffm.ibv_wc;
import io.cqflux.transport.rpma.ffm.librpma_h;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** The flyweight over a batch of {@code struct ibv_wc} filled by hand (no device needed). */
class RpmaCompletionTest {

    @Test
    void view_readsEachEntryInPlace_withImmediateInHostOrder() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment batch = ibv_wc.allocateArray(3, a);
            MemorySegment e0 = ibv_wc.asSlice(batch, 0);
            ibv_wc.wr_id(e0, 0xfeedL);
            ibv_wc.status(e0, librpma_h.IBV_WC_SUCCESS());
            ibv_wc.opcode(e0, librpma_h.IBV_WC_RECV_RDMA_WITH_IMM());
            ibv_wc.byte_len(e0, 0);
            ibv_wc.imm_data(e0, Integer.reverseBytes(0x12345678)); // network order on little-endian x86-64
            ibv_wc.wc_flags(e0, librpma_h.IBV_WC_WITH_IMM());
            ibv_wc.qp_num(e0, 17);
            ibv_wc.src_qp(e0, 18);
            MemorySegment e1 = ibv_wc.asSlice(batch, 1);
            ibv_wc.wr_id(e1, -1L);
            ibv_wc.status(e1, librpma_h.IBV_WC_REM_ACCESS_ERR());
            ibv_wc.vendor_err(e1, 0x88);
            ibv_wc.opcode(e1, 0x7777); // undefined on error entries
            MemorySegment e2 = ibv_wc.asSlice(batch, 2);
            ibv_wc.wr_id(e2, 3);
            ibv_wc.opcode(e2, librpma_h.IBV_WC_RDMA_READ());
            ibv_wc.byte_len(e2, 4096);

            RpmaCompletion v = new RpmaCompletion();
            v.at(batch, 0);
            assertEquals(0xfeedL, v.context());
            assertTrue(v.isSuccess());
            assertEquals(Opcode.RECEIVE_WRITE_WITH_IMMEDIATE, v.opcode());
            assertTrue(v.hasImmediate());
            assertEquals(0x12345678, v.immediate());
            assertEquals(17, v.queuePair());
            assertEquals(18, v.sourceQueuePair());
            CompletionRecord kept = v.snapshot();

            v.at(batch, 1);
            assertEquals(-1L, v.context());
            assertEquals(CompletionStatus.REM_ACCESS_ERR, v.status());
            assertEquals(0x88, v.vendorError());
            assertThrows(IllegalStateException.class, v::opcode);
            assertFalse(v.errorText().isEmpty());

            v.at(batch, 2); // librpma's emulated flush completes as a read: reported as the device says
            assertEquals(Opcode.READ, v.opcode());
            assertEquals(4096, v.byteLength());
            assertFalse(v.hasImmediate());

            assertEquals(0x12345678, kept.immediate(), "a snapshot outlives the view's re-pointing");
        }
    }

    @Test
    void opcodeOf_mapsEveryPostedVerbsOpcode() {
        assertEquals(Opcode.SEND, RpmaCompletion.opcodeOf(librpma_h.IBV_WC_SEND(), 0));
        assertEquals(Opcode.WRITE, RpmaCompletion.opcodeOf(librpma_h.IBV_WC_RDMA_WRITE(), 0));
        assertEquals(Opcode.READ, RpmaCompletion.opcodeOf(librpma_h.IBV_WC_RDMA_READ(), 0));
        assertEquals(Opcode.ATOMIC_WRITE, RpmaCompletion.opcodeOf(librpma_h.IBV_WC_ATOMIC_WRITE(), 0));
        assertEquals(Opcode.RECEIVE, RpmaCompletion.opcodeOf(librpma_h.IBV_WC_RECV(), 0));
        assertEquals(Opcode.RECEIVE_WRITE_WITH_IMMEDIATE, RpmaCompletion.opcodeOf(librpma_h.IBV_WC_RECV_RDMA_WITH_IMM(), 0));
        assertThrows(IllegalStateException.class, () -> RpmaCompletion.opcodeOf(librpma_h.IBV_WC_COMP_SWAP(), 0));
    }
}
