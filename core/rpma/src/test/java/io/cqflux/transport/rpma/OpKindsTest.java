package io.cqflux.transport.rpma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.cqflux.core.Opcode;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class OpKindsTest {

    @Test
    void take_returnsWhatWasPutOnce() {
        OpKinds k = new OpKinds(4);
        k.put(7, Opcode.FLUSH);
        k.put(8, Opcode.ATOMIC_WRITE);
        assertEquals(Opcode.FLUSH, k.take(7));
        assertNull(k.take(7));
        assertEquals(Opcode.ATOMIC_WRITE, k.take(8));
        assertNull(k.take(9));
        assertEquals(0, k.size());
    }

    @Test
    void put_beyondTheSendQueue_failsBeforePosting() {
        OpKinds k = new OpKinds(2);
        int i = 0;
        IllegalStateException e = null;
        try {
            for (; i < 100; i++) {
                k.put(i, Opcode.FLUSH);
            }
        } catch (IllegalStateException ex) {
            e = ex;
        }
        assertEquals(true, e != null && i >= 2, "must accept at least the send queue size, then refuse");
    }

    @Test
    void randomPutTake_matchesAHashMap() {
        Random r = new Random(1);
        OpKinds k = new OpKinds(64);
        Map<Long, Opcode> ref = new HashMap<>();
        for (int step = 0; step < 100_000; step++) {
            long ctx = r.nextInt(200) * 0x1_0000_0000L + r.nextInt(3);
            if (r.nextBoolean() && ref.size() < 64) {
                Opcode op = Opcode.values()[r.nextInt(Opcode.values().length)];
                k.put(ctx, op);
                ref.put(ctx, op);
            } else {
                assertEquals(ref.remove(ctx), k.take(ctx), "context " + ctx + " at step " + step);
            }
            assertEquals(ref.size(), k.size());
        }
        assertThrows(IllegalStateException.class, () -> {
            for (long c = 1L << 40; ; c++) {
                k.put(c, Opcode.FLUSH);
            }
        });
    }
}
