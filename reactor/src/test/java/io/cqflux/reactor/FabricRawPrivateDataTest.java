package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/** Raw private data on libfabric's tcp provider over loopback. */
class FabricRawPrivateDataTest extends RawPrivateDataContract {

    @Override
    Cqflux.Builder builder() {
        return Cqflux.builder().transport(TransportChoice.FABRIC).localAddress(InetAddress.getLoopbackAddress());
    }

    @Override
    InetSocketAddress listenAddress() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    }

    @Test
    void fabric_hasNoPeerConfiguration_andRefusesANonEmptyOne() {
        assertArrayEquals(new byte[0], client.peerConfigurationDescriptor());
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.rawPrivateData(r -> AcceptDecision.accept(r)))
                .block(T);
        s.connections().subscribe();
        RdmaConnection c = client.connect(s.address(), ConnectOptions.rawPrivateData(ascii("x"))).block(T);
        StepVerifier.create(c.applyPeerConfiguration(new byte[0])).expectComplete().verify(T);
        StepVerifier.create(c.applyPeerConfiguration(new byte[] {1}))
                .expectError(IllegalArgumentException.class).verify(T);
        assertEquals(24, server.register(arena.allocate(64, 8), io.cqflux.core.RegionAccess.READ_SRC)
                .rawDescriptor().length, "fabric: key, base and length");
    }
}
