package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.cqflux.core.CompletionStatus;
import io.cqflux.core.OperationFailedException;
import io.cqflux.core.Opcode;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.PeerRegion;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * A peer region the caller makes from a raw descriptor ({@code RdmaConnection.remoteRegion(byte[],
 * RegionAccess...)}, the way to a peer not written with cqflux) is the caller's like any other:
 * the rules select its operations. Only the control words the library links in its handshake
 * (made through the same transport method) are never selected.
 */
class FaultsRawRegionTest {
    static final Duration T = Duration.ofSeconds(10);

    @Test
    void fail_ofAWriteToARegionMadeFromARawDescriptor_failsIt() {
        Faults faults = Faults.create();
        try (LoopbackPeer peer = CqfluxTest.loopback().faults(faults).start()) {
            PeerRegion raw = peer.connection().remoteRegion(peer.exposed().rawDescriptor(),
                    RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
            Fault f = faults.on(Opcode.WRITE).once().fail(CompletionStatus.REM_ACCESS_ERR);

            StepVerifier.create(peer.connection().write(raw, 0, peer.local(), 0, 64))
                    .expectErrorSatisfies(e -> assertEquals(CompletionStatus.REM_ACCESS_ERR,
                            assertInstanceOf(OperationFailedException.class, e).status()))
                    .verify(T);
            assertEquals(1, f.hits());
        }
    }

    @Test
    void controlWords_areNeverSelected_evenByARuleOnEveryWrite() {
        Faults faults = Faults.create();
        try (LoopbackPeer peer = CqfluxTest.loopback().faults(faults).start()) {
            Fault f = faults.on(Opcode.WRITE).fail(CompletionStatus.REM_ACCESS_ERR);
            // Receiving on the faulty client writes its credit word into the server (a WRITE):
            // the server's send goes out only once that write landed.
            StepVerifier.create(peer.connection().receive().next())
                    .then(() -> peer.serverConnection().send(peer.exposed(), 0, 16).subscribe())
                    .expectNextCount(1)
                    .expectComplete()
                    .verify(T);
            assertEquals(0, f.hits());
        }
    }
}
