package io.cqflux.test.network;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
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
    void aTcThatExits_failsTheCallNamingIt_thenTheSessionRefusesMoreCalls() {
        try (RxeLinkRig.TcBatch tc = new RxeLinkRig.TcBatch()) {
            tc.run(List.of("qdisc show dev lo"));
            ProcessHandle p = ProcessHandle.of(tc.pid()).orElseThrow();
            p.destroyForcibly();
            p.onExit().join();
            Throwable e = assertThrows(Throwable.class, () -> tc.run(List.of("qdisc show dev lo")));
            assertTrue(e.getMessage().contains("exited while applying") || e.getMessage().contains("writing to tc failed"),
                    e.toString());
            IllegalStateException again = assertThrows(IllegalStateException.class,
                    () -> tc.run(List.of("qdisc show dev lo")));
            assertTrue(again.getMessage().contains("start a new one"), again.getMessage());
        }
    }

    @Test
    void aTcThatDoesNotAnswer_failsTheCallAtItsBound_andCloseKillsItWithoutWaitingTheBoundAgain() throws Exception {
        Duration bound = Duration.ofMillis(1500);
        RxeLinkRig.TcBatch tc = new RxeLinkRig.TcBatch(bound);
        long closeNanos;
        try {
            tc.run(List.of("qdisc show dev lo"));
            // A stopped tc reads nothing and answers nothing, as one stuck in the kernel would.
            assertEquals(0, new ProcessBuilder("kill", "-STOP", Long.toString(tc.pid())).start().waitFor());
            AssertionError e = assertThrows(AssertionError.class, () -> tc.run(List.of("qdisc show dev lo")));
            assertTrue(e.getMessage().contains("did not apply") && e.getMessage().contains(bound.toString()),
                    e.getMessage());
            assertThrows(IllegalStateException.class, () -> tc.run(List.of("qdisc show dev lo")));
        } finally {
            long t0 = System.nanoTime();
            tc.close();
            closeNanos = System.nanoTime() - t0;
        }
        // Waiting for a tc that reads nothing would have taken the bound again.
        assertTrue(closeNanos < bound.toNanos() / 2, "close() took " + closeNanos / 1_000_000 + " ms");
        assertFalse(ProcessHandle.of(tc.pid()).map(ProcessHandle::isAlive).orElse(false), "tc still runs");
    }
}
