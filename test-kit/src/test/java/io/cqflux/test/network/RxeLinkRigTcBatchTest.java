package io.cqflux.test.network;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link RxeLinkRig.TcBatch} on the host's own {@code tc}, with commands that only read or that
 * tc's parser rejects (no netem, no privilege needed): the rig relies on each {@code run} returning
 * once tc has worked through its lines, on a failing line failing the call, and on the session
 * going on afterwards.
 */
class RxeLinkRigTcBatchTest {
    @Test
    void run_returnsAfterEachBatch_failsNamingTheLineThatFailed_andTheSessionGoesOn() {
        try (RxeLinkRig.TcBatch tc = new RxeLinkRig.TcBatch()) {
            for (int i = 0; i < 5; i++) {
                tc.run(List.of("qdisc show dev lo")); // lines 1-10: a command and its fence each time
            }
            AssertionError e = assertThrows(AssertionError.class,
                    () -> tc.run(List.of("qdisc show dev lo", "qdisc show dev lo cqfx-no-such-option")));
            // lines 11 and 12, then the fence at 13: the report names line 12 and tc's own words
            assertTrue(e.getMessage().contains("Command failed -:12") && e.getMessage().contains("cqfx-no-such-option"),
                    e.getMessage());
            assertFalse(e.getMessage().contains("-:11") || e.getMessage().contains("-:13"), e.getMessage());
            tc.run(List.of()); // a fence alone: tc read on past the failure
            tc.run(List.of("qdisc show dev lo"));
        }
    }

    @Test
    void aTcThatExits_failsTheCallNamingIt_thenTheSessionRefusesMoreCalls_andClosesAtOnce() {
        RxeLinkRig.TcBatch tc = new RxeLinkRig.TcBatch();
        try {
            tc.run(List.of("qdisc show dev lo"));
            List<ProcessHandle> tcs = ProcessHandle.current().children()
                    .filter(p -> p.info().command().map(c -> c.endsWith("/tc")).orElse(false)).toList();
            assertEquals(1, tcs.size(), "this JVM's tc processes: " + tcs);
            tcs.get(0).destroyForcibly();
            tcs.get(0).onExit().join();
            Throwable e = assertThrows(Throwable.class, () -> tc.run(List.of("qdisc show dev lo")));
            assertTrue(e.getMessage().contains("exited while applying") || e.getMessage().contains("writing to tc failed"),
                    e.toString());
            // Its batch's reports may still come: they must not be taken for a later call's.
            IllegalStateException again = assertThrows(IllegalStateException.class,
                    () -> tc.run(List.of("qdisc show dev lo")));
            assertTrue(again.getMessage().contains("start a new one"), again.getMessage());
        } finally {
            long t0 = System.nanoTime();
            tc.close();
            assertTrue(System.nanoTime() - t0 < 5_000_000_000L, "close() of a broken session waited for tc");
        }
    }
}
