package io.cqflux.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class CompletionTest {

    private static CompletionRecord success() {
        return CompletionRecord.builder(0x1234_5678_9abcL, CompletionStatus.SUCCESS)
                .opcode(Opcode.RECEIVE_WRITE_WITH_IMMEDIATE).byteLength(4096).flags(2).immediate(0xCAFEBABE)
                .queuePair(17).sourceQueuePair(18).pkeyIndex(1).slid(2).serviceLevel(3).dlidPathBits(4)
                .bufferAddress(0x7000).tag(9).build();
    }

    private static CompletionRecord failure() {
        return CompletionRecord.builder(42, CompletionStatus.REM_ACCESS_ERR).vendorError(0x88).queuePair(17)
                .error(13, 0, "Permission denied").build();
    }

    @Test
    void successEntry_exposesEveryField() {
        CompletionRecord c = success();
        assertTrue(c.isSuccess());
        assertEquals(0x1234_5678_9abcL, c.context());
        assertEquals(Opcode.RECEIVE_WRITE_WITH_IMMEDIATE, c.opcode());
        assertEquals(4096, c.byteLength());
        assertEquals(2, c.flags());
        assertTrue(c.hasImmediate());
        assertEquals(0xCAFEBABE, c.immediate());
        assertEquals(17, c.queuePair());
        assertEquals(18, c.sourceQueuePair());
        assertEquals(1, c.partitionKeyIndex());
        assertEquals(2, c.sourceLid());
        assertEquals(3, c.serviceLevel());
        assertEquals(4, c.destinationLidPathBits());
        assertEquals(0x7000, c.bufferAddress());
        assertEquals(9, c.tag());
        assertEquals("", c.errorText());
    }

    @Test
    void errorEntry_onlyContextStatusQueuePairAndVendorErrorAreReadable() {
        CompletionRecord c = failure();
        assertFalse(c.isSuccess());
        assertEquals(42, c.context());
        assertEquals(CompletionStatus.REM_ACCESS_ERR, c.status());
        assertEquals(0x88, c.vendorError());
        assertEquals(17, c.queuePair());
        assertEquals(13, c.errorNumber());
        assertEquals("Permission denied", c.errorText());
        List<Function<Completion, Object>> undefined = List.of(Completion::opcode, Completion::byteLength,
                Completion::flags, Completion::hasImmediate, Completion::immediate, Completion::sourceQueuePair,
                Completion::partitionKeyIndex, Completion::sourceLid, Completion::serviceLevel,
                Completion::destinationLidPathBits, Completion::bufferAddress, Completion::tag);
        for (Function<Completion, Object> f : undefined) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> f.apply(c));
            assertTrue(e.getMessage().contains("ibv_poll_cq(3)"), e.getMessage());
            assertTrue(e.getMessage().contains("REM_ACCESS_ERR"), e.getMessage());
        }
    }

    @Test
    void immediate_withoutImmediateData_isRefused() {
        CompletionRecord c = CompletionRecord.builder(1, CompletionStatus.SUCCESS).opcode(Opcode.WRITE).build();
        assertFalse(c.hasImmediate());
        assertThrows(IllegalStateException.class, c::immediate);
    }

    @Test
    void snapshot_ofFlyweight_copiesTheEntryAndSurvivesRepointing() {
        MutableView view = new MutableView();
        view.context = 7;
        view.status = CompletionStatus.SUCCESS;
        view.opcode = Opcode.READ;
        view.length = 64;
        CompletionRecord snap = view.snapshot();
        view.context = 8;
        view.status = CompletionStatus.WR_FLUSH_ERR;
        assertEquals(7, snap.context());
        assertEquals(Opcode.READ, snap.opcode());
        assertEquals(64, snap.byteLength());
        CompletionRecord err = view.snapshot();
        assertEquals(CompletionStatus.WR_FLUSH_ERR, err.status());
        assertThrows(IllegalStateException.class, err::opcode);
        assertSame(snap, snap.snapshot());
        assertEquals(snap, CompletionRecord.builder(7, CompletionStatus.SUCCESS).opcode(Opcode.READ).byteLength(64).build());
    }

    @Test
    void toString_namesStatusAndOnlyValidFields() {
        assertTrue(success().toString().contains("immediate=0xcafebabe"), success().toString());
        String s = failure().toString();
        assertTrue(s.contains("REM_ACCESS_ERR") && s.contains("vendorError=136") && !s.contains("opcode"), s);
    }

    @Test
    void successRecord_withoutOpcode_isRejected() {
        assertThrows(NullPointerException.class,
                () -> CompletionRecord.builder(1, CompletionStatus.SUCCESS).build());
    }

    /** A re-pointable view like the transports' flyweights. */
    private static final class MutableView extends Completion {
        long context;
        CompletionStatus status;
        Opcode opcode;
        long length;

        @Override public long context() { return context; }
        @Override public CompletionStatus status() { return status; }
        @Override public int vendorError() { return 0; }
        @Override public int queuePair() { return 0; }
        @Override public int errorNumber() { return 0; }
        @Override public long overflowLength() { return 0; }
        @Override public String errorText() { return ""; }
        @Override protected Opcode rawOpcode() { return opcode; }
        @Override protected long rawByteLength() { return length; }
        @Override protected long rawFlags() { return 0; }
        @Override protected boolean rawHasImmediate() { return false; }
        @Override protected int rawImmediate() { return 0; }
    }
}
