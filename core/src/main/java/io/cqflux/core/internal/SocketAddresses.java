package io.cqflux.core.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;

/** Decodes the C socket addresses the native libraries hand out ({@code sockaddr_in}, {@code sockaddr_in6}). */
public final class SocketAddresses {

    private static final int AF_INET = 2;
    private static final int AF_INET6 = 10;
    /**
     * A sockaddr's port, in network byte order. One instance: a layout made per call
     * ({@code withOrder}) would build its var handle again at every use, on a loop, per request.
     */
    private static final ValueLayout.OfShort NET_SHORT =
            ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private SocketAddresses() {
    }

    /**
     * Decodes a {@code sockaddr_in} or {@code sockaddr_in6}: family, big-endian port, address.
     *
     * @param sa at least 8 bytes (24 for AF_INET6)
     * @return the address, or {@code null} for another family or a too short segment
     */
    public static InetSocketAddress decode(MemorySegment sa) {
        if (sa.byteSize() < 8) {
            return null;
        }
        int family = Short.toUnsignedInt(sa.get(ValueLayout.JAVA_SHORT_UNALIGNED, 0));
        int port = port(sa);
        try {
            if (family == AF_INET) {
                return new InetSocketAddress(InetAddress.getByAddress(Segments.copyOut(sa, 4, 4)), port);
            }
            if (family == AF_INET6 && sa.byteSize() >= 24) {
                return new InetSocketAddress(InetAddress.getByAddress(Segments.copyOut(sa, 8, 16)), port);
            }
        } catch (UnknownHostException e) {
            // a 4- or 16-byte address always parses
        }
        return null;
    }

    /**
     * {@return a sockaddr's port, whatever its family} ({@code sin_port} and {@code sin6_port} both
     * follow the 2-byte family)
     *
     * @param sa at least 4 bytes
     */
    public static int port(MemorySegment sa) {
        return Short.toUnsignedInt(sa.get(NET_SHORT, 2));
    }
}
