package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.Region;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link HostilePeerContract} on fabric/tcp over 127.0.0.1, on the host; with the cases that
 * need what only tcp has: keys from the whole 64-bit space and raw TCP sockets on the listener.
 *
 * <p>Bounded: one attacker connection per forged key, 40 in all, 64 bytes each, loopback only.
 */
@Tag("hostile-peer")
class HostilePeerTest extends HostilePeerContract {

    @Override
    Cqflux.Builder builder(String role) {
        return Cqflux.builder().transport("fabric").fabricProvider("tcp").localAddress(InetAddress.getLoopbackAddress())
                .threadNamePrefix("cqflux-hostile-" + role);
    }

    @Override
    InetSocketAddress listenAddress() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    }

    /** The fabric raw form: key, base, length, 8 bytes each. */
    @Override
    int rawDescriptorLength() {
        return 24;
    }

    /** tcp's descriptor in a hello: 32 bytes, the key at offset 8. */
    @Override
    long keyOfHelloDescriptor(byte[] descriptor) {
        assertEquals(32, descriptor.length, "tcp's descriptor in a hello");
        return ByteBuffer.wrap(descriptor).getLong(8);
    }

    @Override
    long keyOfRaw(byte[] raw) {
        assertEquals(24, raw.length, "tcp's raw descriptor carries an 8-byte key");
        return ByteBuffer.wrap(raw).getLong();
    }

    /**
     * The fabric raw form: key, base, length, big-endian. The base is 0 whatever the target: tcp
     * addresses a region by offset (the domain's {@code mr_mode} has no {@code FI_MR_VIRT_ADDR}),
     * so on tcp the key alone selects the memory.
     */
    @Override
    byte[] forged(long key, Region target, RegionAccess claimed) {
        return ByteBuffer.allocate(24).putLong(key).putLong(0).putLong(SIZE).array();
    }

    @Override
    long randomKey(SecureRandom r) {
        return r.nextLong();
    }

    @Override
    long[] nearKeys(long known, long flushable) {
        return new long[] {known + 1, known - 1, known + 2, known - 2, known ^ 1L, known ^ (1L << 63),
            flushable + 1, flushable - 1};
    }

    @Override
    String rejectReasonPrefix(String reason) {
        return reason; // fi_reject(3) carries it
    }

    @Override
    byte[][] malformedHellos() {
        return new byte[][] {
            new byte[16],                                                   // no hello: all zero
            {'X', 'Q', 3, 0, 0, 0},                                         // wrong magic
            {'C', 'Q', 9, 0, 0, 0},                                         // unknown version
            {'C', 'Q', 3},                                                  // truncated header
            {'C', 'Q', 3, 1, 0},                                            // truncated region length
            {'C', 'Q', 3, 1, (byte) 0xff, (byte) 0xff, 1, 2, 3},            // region beyond the bytes sent
            {'C', 'Q', 3, (byte) 0xff, 0, 24},                              // 255 regions, 2 bytes
            {'C', 'Q', 3, 0, (byte) 0xff, 1, 2},                            // handshake beyond the bytes
            {'C', 'Q', 3, 0, 0, (byte) 0xff, 1, 2},                         // control words beyond the bytes
            {'C', 'Q', 3, 0, 0},                                            // truncated before the control length
        };
    }

    @Test
    void forgedSequentialSmallKeys_changeNothing_endTheForger_andSpareTheNeighbour() {
        // The keys a sequential allocator would have handed out first: every region and control
        // word of the domain sat among them.
        for (long key = 0; key < 16; key++) {
            forge(key, trusted);
        }
    }

    @Test
    void socketsThatNeverSendAConnectRequest_doNotHoldUpOthers() throws Exception {
        // A raw TCP client of the listener: it connects and then sends nothing, or garbage where
        // libfabric's tcp connect request belongs, and never finishes the handshake.
        List<Socket> silent = new ArrayList<>();
        try {
            for (int i = 0; i < 8; i++) {
                silent.add(new Socket(publicServer.address().getAddress(), publicServer.address().getPort()));
            }
            byte[] garbage = new byte[64];
            new java.util.Random(7).nextBytes(garbage);
            for (int i = 0; i < 4; i++) {
                Socket g = new Socket(publicServer.address().getAddress(), publicServer.address().getPort());
                silent.add(g);
                g.getOutputStream().write(garbage);
                g.getOutputStream().flush();
            }
            aProperClientIsStillServed();
            neighbourStillWorks();
        } finally {
            for (Socket s : silent) {
                s.close();
            }
        }
        aProperClientIsStillServed();
    }
}
