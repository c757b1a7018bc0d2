package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.PeerPoolOptions;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.test.CqfluxTest;
import io.cqflux.test.LoopbackPeer;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/** {@link PeerPoolLink} over a real pool on fabric/tcp. */
class PeerPoolLinkTest {
    private static final Duration T = Duration.ofSeconds(15);

    @Test
    void connectionsThatEnded_areForgottenAtTheNextReconnect_soTheDrainsSetStaysAtThePoolsSize() {
        Cqflux cq = Cqflux.builder().transport("fabric").build();
        try (LoopbackPeer server = CqfluxTest.loopback().start()) {
            PeerPoolLink link = new PeerPoolLink(cq, server.address(), PeerPoolOptions.defaults());
            link.start();
            Set<RdmaConnection> seen = new HashSet<>();
            for (int i = 0; i < 5; i++) {
                // Each round gets the pool's live connection and then ends it from this side: the
                // pool reconnects, and the next round is given the new connection.
                RdmaConnection c = link.withConnection(Mono::just).block(T);
                assertThat(seen.add(c)).as("round %d was given a connection of an earlier round", i).isTrue();
                c.disposeNow(T);
            }
            // The five connections were used; the four that ended with nothing in flight were
            // dropped when the next one came, whatever inFlight() (which also prunes) was asked.
            assertThat(link.usedConnections()).isEqualTo(1);
            assertThat(link.inFlight()).isZero();
            link.close().block(T);
        } finally {
            cq.disposeNow(T);
        }
    }
}
