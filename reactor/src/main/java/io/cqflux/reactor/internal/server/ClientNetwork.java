package io.cqflux.reactor.internal.server;

import java.net.Inet4Address;
import java.net.InetAddress;

/**
 * The network a client address belongs to, for the server's bound per address
 * ({@code AcceptOptions.withMaxConnectionsPerAddress}): the address's first {@code prefix} bits,
 * the rest zero, so that two addresses of one network are equal keys. A /32 (IPv4) or /128 (IPv6)
 * is the address itself. An IPv4-mapped IPv6 address ({@code ::ffff:a.b.c.d}, what a dual-stack
 * socket reports for an IPv4 client) counts with its IPv4 network, whichever way the transport
 * built the {@link InetAddress}. Immutable.
 *
 * @param ipv6 whether the address is IPv6
 * @param high the first 64 bits of an IPv6 network; 0 for IPv4
 * @param low the last 64 bits of an IPv6 network, or the 32 bits of an IPv4 one
 * @param prefix the bits that name the network
 */
record ClientNetwork(boolean ipv6, long high, long low, int prefix) {

    /**
     * {@return the network of {@code a}: its first {@code ipv4Prefix} bits when it is IPv4, else its
     * first {@code ipv6Prefix} bits}
     *
     * @param ipv4Prefix 1..32
     * @param ipv6Prefix 1..128
     */
    static ClientNetwork of(InetAddress a, int ipv4Prefix, int ipv6Prefix) {
        byte[] b = a.getAddress();
        if (b.length == 16 && isIpv4Mapped(b)) {
            b = java.util.Arrays.copyOfRange(b, 12, 16);
        }
        if (b.length == 4) {
            long v = Integer.toUnsignedLong(((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8)
                    | (b[3] & 0xff));
            long mask = (0xffff_ffffL << (32 - ipv4Prefix)) & 0xffff_ffffL;
            return new ClientNetwork(false, 0, v & mask, ipv4Prefix);
        }
        long high = 0;
        long low = 0;
        for (int i = 0; i < 8; i++) {
            high = (high << 8) | (b[i] & 0xff);
            low = (low << 8) | (b[i + 8] & 0xff);
        }
        // Shifts of 64 or more are taken modulo 64 in Java: the masks are built per half.
        long highMask = ipv6Prefix >= 64 ? -1L : -1L << (64 - ipv6Prefix);
        long lowMask = ipv6Prefix <= 64 ? 0L : ipv6Prefix == 128 ? -1L : -1L << (128 - ipv6Prefix);
        return new ClientNetwork(true, high & highMask, low & lowMask, ipv6Prefix);
    }

    /** {@return whether the 16 bytes are {@code ::ffff:a.b.c.d}} */
    private static boolean isIpv4Mapped(byte[] b) {
        for (int i = 0; i < 10; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return b[10] == (byte) 0xff && b[11] == (byte) 0xff;
    }

    /**
     * {@return the network as an operator reads it: {@code 10.1.2.0/24},
     * {@code 2001:db8:1:2:0:0:0:0/64} (Java's form of an IPv6 address), or the address alone}
     */
    @Override
    public String toString() {
        byte[] b;
        if (ipv6) {
            b = new byte[16];
            for (int i = 0; i < 8; i++) {
                b[i] = (byte) (high >>> (56 - 8 * i));
                b[i + 8] = (byte) (low >>> (56 - 8 * i));
            }
        } else {
            b = new byte[] {(byte) (low >>> 24), (byte) (low >>> 16), (byte) (low >>> 8), (byte) low};
        }
        String text;
        try {
            text = InetAddress.getByAddress(b).getHostAddress();
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError("4 or 16 bytes are always an address", e);
        }
        return prefix == (ipv6 ? 128 : 32) ? text : text + "/" + prefix;
    }
}
