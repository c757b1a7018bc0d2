package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.cqflux.core.Opcode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The per-connection posted-operation table against a plain map model. */
class PostedOpsTest {

    @Test
    void randomAddTake_matchesAMultimapModel() {
        PostedOps t = new PostedOps(4);
        Map<Long, List<Opcode>> model = new HashMap<>();
        Random rnd = new Random(3);
        Opcode[] ops = Opcode.values();
        for (int i = 0; i < 50_000; i++) {
            long ctx = rnd.nextInt(64) * 0x100000001L;
            if (rnd.nextBoolean()) {
                Opcode op = ops[rnd.nextInt(ops.length)];
                t.add(ctx, op, false);
                model.computeIfAbsent(ctx, k -> new ArrayList<>()).add(op);
            } else {
                Opcode got = t.take(ctx, false);
                List<Opcode> l = model.get(ctx);
                if (l == null || l.isEmpty()) {
                    assertNull(got);
                } else {
                    assertEquals(true, l.remove(got), "took one of the recorded opcodes");
                }
            }
        }
        int total = model.values().stream().mapToInt(List::size).sum();
        assertEquals(total, t.pending(false));
    }

    @Test
    void queuesAreSeparate_andTakeAnyDrainsOneQueue() {
        PostedOps t = new PostedOps(2);
        t.add(1, Opcode.RECEIVE, true);
        t.add(1, Opcode.WRITE, false);
        t.add(2, Opcode.FLUSH, false);
        assertNull(t.take(2, true));
        assertEquals(1, t.pending(true));
        assertEquals(2, t.pending(false));
        Opcode[] out = new Opcode[1];
        assertEquals(1, t.takeAny(true, out));
        assertEquals(Opcode.RECEIVE, out[0]);
        assertEquals(0, t.pending(true));
        assertEquals(Opcode.FLUSH, t.take(2, false));
        assertEquals(Opcode.WRITE, t.take(1, false));
        assertEquals(0, t.pending(false));
    }
}
