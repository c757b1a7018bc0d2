package io.cqflux.reactor.internal.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;

/** {@link ClientNetwork}: the key of the bound per address, at every prefix length. */
class ClientNetworkTest {

    private static ClientNetwork net(String ip, int v4, int v6) throws Exception {
        return ClientNetwork.of(InetAddress.getByName(ip), v4, v6);
    }

    @Test
    void anAddressAlone_isItself_andDiffersFromItsNeighbour() throws Exception {
        assertEquals("10.1.2.3", net("10.1.2.3", 32, 128).toString());
        assertNotEquals(net("10.1.2.3", 32, 128), net("10.1.2.4", 32, 128));
        assertEquals(net("2001:db8::1", 32, 128), net("2001:db8:0:0:0:0:0:1", 32, 128));
        assertNotEquals(net("2001:db8::1", 32, 128), net("2001:db8::2", 32, 128));
    }

    @Test
    void everyPrefixLength_keepsExactlyItsBits() throws Exception {
        byte[] ones = new byte[16];
        java.util.Arrays.fill(ones, (byte) 0xff);
        InetAddress all6 = InetAddress.getByAddress(ones);
        InetAddress all4 = InetAddress.getByName("255.255.255.255");
        for (int p = 1; p <= 128; p++) {
            ClientNetwork n = ClientNetwork.of(all6, 32, p);
            assertEquals(p, Long.bitCount(n.high()) + Long.bitCount(n.low()), "IPv6 /" + p);
            // The bit just past the prefix decides nothing: flipping it keeps the network.
            if (p < 128) {
                byte[] b = ones.clone();
                b[p / 8] ^= (byte) (0x80 >>> (p % 8));
                assertEquals(n, ClientNetwork.of(InetAddress.getByAddress(b), 32, p), "IPv6 /" + p);
            }
        }
        for (int p = 1; p <= 32; p++) {
            ClientNetwork n = ClientNetwork.of(all4, p, 128);
            assertEquals(p, Long.bitCount(n.low()), "IPv4 /" + p);
            assertEquals(0, n.high());
            if (p < 32) {
                byte[] b = all4.getAddress();
                b[p / 8] ^= (byte) (0x80 >>> (p % 8));
                assertEquals(n, ClientNetwork.of(InetAddress.getByAddress(b), p, 128), "IPv4 /" + p);
            }
        }
    }

    @Test
    void aNetwork_isWrittenAsAnOperatorWritesIt() throws Exception {
        assertEquals("10.1.2.0/24", net("10.1.2.3", 24, 128).toString());
        assertEquals("2001:db8:1:2:0:0:0:0/64", net("2001:db8:1:2:aaaa:bbbb:cccc:dddd", 32, 64).toString());
        assertEquals("2001:db8:1:2:aaaa:bbbb:cccc:dd00/120", net("2001:db8:1:2:aaaa:bbbb:cccc:dddd", 32, 120).toString());
    }

    @Test
    void anIpv4MappedAddress_isItsIpv4Network_howeverTheAddressWasBuilt() throws Exception {
        assertEquals(net("10.1.2.3", 24, 64), net("::ffff:10.1.2.99", 24, 64));
        // An Inet6Address that keeps the mapped form (not what getByName or getByAddress give).
        byte[] mapped = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 10, 1, 2, 99};
        InetAddress kept = java.net.Inet6Address.getByAddress(null, mapped, -1);
        assertEquals(16, kept.getAddress().length);
        assertEquals(net("10.1.2.3", 24, 64), ClientNetwork.of(kept, 24, 64));
    }
}
