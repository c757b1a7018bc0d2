package io.cqflux.reactor.internal.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.reactor.RefusalKind;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/**
 * {@link ServerAdmission}'s bound per address ({@code AcceptOptions.withMaxConnectionsPerAddress})
 * with test doubles for the requests: what it counts per address and that each way a handshake
 * can end gives the slot back. Through a real transport: {@code HostilePeerContract}.
 */
class ServerAdmissionPerAddressTest {

    /** A test double: a request that only tells where it came from. */
    private record RequestFrom(InetSocketAddress peerAddress) implements ConnectionRequest {
        @Override
        public byte[] privateData() {
            return new byte[0];
        }

        @Override
        public Connection accept(byte[] privateData) {
            throw new UnsupportedOperationException("a test double");
        }

        @Override
        public void reject() {
        }
    }

    private static RequestFrom from(String ip, int port) throws Exception {
        return new RequestFrom(new InetSocketAddress(InetAddress.getByName(ip), port));
    }

    private static ServerAdmission admission(int perAddress) throws Exception {
        return admission(perAddress, 32, 128);
    }

    private static ServerAdmission admission(int perAddress, int ipv4Prefix, int ipv6Prefix) throws Exception {
        return new ServerAdmission(new InetSocketAddress(InetAddress.getLoopbackAddress(), 7000), Integer.MAX_VALUE,
                1000, perAddress, ipv4Prefix, ipv6Prefix, new ServerAdmission.Counts());
    }

    /** Admits {@code req} as the server does: the check, then the handshake that holds its slot. */
    private static ServerAdmission.Handshake admitted(ServerAdmission a, ConnectionRequest req) {
        assertNull(a.admit(req), "refused");
        return a.handshake(req);
    }

    @Test
    void oneAddressPastItsBound_isRefused_whatever_itsPort_andAnotherAddressIsNot() throws Exception {
        ServerAdmission a = admission(2);
        admitted(a, from("10.0.0.1", 40001));
        admitted(a, from("10.0.0.1", 40002));
        assertEquals("too many connections from your address; try again later", a.admit(from("10.0.0.1", 40003)));
        assertEquals(1, a.stats().count(RefusalKind.MAX_PER_ADDRESS));
        admitted(a, from("10.0.0.2", 40001));
        admitted(a, from("::1", 40001));
        assertEquals(2, a.fromAddress(InetAddress.getByName("10.0.0.1")));
        assertEquals(1, a.fromAddress(InetAddress.getByName("10.0.0.2")));
    }

    @Test
    void eachWayAHandshakeEnds_givesItsSlotBackOnce() throws Exception {
        ServerAdmission a = admission(1);
        InetAddress ip = InetAddress.getByName("10.0.0.1");
        // Ended without a connection (refused, failed), twice: one slot back.
        ServerAdmission.Handshake h = admitted(a, from("10.0.0.1", 1));
        h.done();
        h.done();
        assertEquals(0, a.fromAddress(ip));
        // Timed out, then its connection's end: one slot back.
        h = admitted(a, from("10.0.0.1", 2));
        assertTrue(h.timeOut());
        assertEquals(0, a.fromAddress(ip));
        assertEquals(ServerAdmission.Handshake.TIMED_OUT, h.end());
        assertEquals(0, a.fromAddress(ip));
        // Established: held while the connection lives, back at its release.
        h = admitted(a, from("10.0.0.1", 3));
        assertTrue(h.establish());
        a.established();
        assertNotNull(a.admit(from("10.0.0.1", 4)), "a second from the address while the first lives");
        assertEquals(ServerAdmission.Handshake.ESTABLISHED, h.end());
        a.released();
        assertEquals(0, a.fromAddress(ip));
        assertNull(a.admit(from("10.0.0.1", 5)));
    }

    @Test
    void requestsWhoseAddressIsUnknown_areNotCounted() throws Exception {
        ServerAdmission a = admission(1);
        for (int i = 0; i < 3; i++) {
            admitted(a, new RequestFrom(null)); // one bucket for them all would make it a bound on the server
        }
        admitted(a, from("10.0.0.1", 1));
        assertEquals("too many connections from your address; try again later", a.admit(from("10.0.0.1", 2)));
    }

    @Test
    void anIpv4MappedIpv6Address_countsAsItsIpv4Address() throws Exception {
        ServerAdmission a = admission(1);
        admitted(a, from("10.0.0.1", 1));
        assertEquals("too many connections from your address; try again later",
                a.admit(from("::ffff:10.0.0.1", 2)));
    }

    @Test
    void withoutTheBound_nothingIsCountedPerAddress() throws Exception {
        ServerAdmission a = admission(Integer.MAX_VALUE);
        for (int i = 0; i < 10; i++) {
            admitted(a, from("10.0.0.1", i + 1));
        }
        assertEquals(0, a.fromAddress(InetAddress.getByName("10.0.0.1")));
    }

    @Test
    void withPrefixes_theAddressesOfOneNetworkShareTheBound_andOtherNetworksDoNot() throws Exception {
        ServerAdmission a = admission(2, 24, 64);
        // One IPv6 host picking fresh addresses in its /64: the third is refused.
        admitted(a, from("2001:db8:1:2::1", 1));
        admitted(a, from("2001:db8:1:2:ffff:ffff:ffff:ffff", 1));
        assertEquals("too many connections from your address; try again later",
                a.admit(from("2001:db8:1:2:1234::7", 1)));
        // The next /64 and another IPv4 /24 are other networks.
        admitted(a, from("2001:db8:1:3::1", 1));
        admitted(a, from("10.0.0.1", 1));
        ServerAdmission.Handshake last = admitted(a, from("10.0.0.254", 1));
        assertNotNull(a.admit(from("10.0.0.77", 1)), "a third from 10.0.0.0/24");
        assertNull(a.admit(from("10.0.1.1", 1)), "10.0.1.0/24 is another network");
        assertEquals(2, a.fromAddress(InetAddress.getByName("10.0.0.9")));
        assertEquals(2, a.stats().count(RefusalKind.MAX_PER_ADDRESS));
        // A slot given back is the network's again.
        last.done();
        assertNull(a.admit(from("10.0.0.77", 1)));
    }
}
