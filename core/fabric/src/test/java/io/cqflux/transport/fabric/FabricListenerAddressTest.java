package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.cqflux.transport.fabric.ffm.fi_info;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import org.junit.jupiter.api.Test;

/**
 * The requester's address that a listener reads from an {@code FI_CONNREQ}'s info
 * ({@code dest_addr}, {@code dest_addrlen}; fi_cm(3)) on the loop for every request: family,
 * network-order port and address, bounded by the length the provider wrote, without a native call.
 */
class FabricListenerAddressTest {

    private static MemorySegment sockaddrIn(Arena arena, byte[] ip, int port) {
        MemorySegment sa = arena.allocate(16, 8);
        sa.set(ValueLayout.JAVA_SHORT_UNALIGNED, 0, (short) 2); // AF_INET, host order
        sa.set(ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN), 2, (short) port);
        MemorySegment.copy(ip, 0, sa, ValueLayout.JAVA_BYTE, 4, ip.length);
        return sa;
    }

    @Test
    void requester_readsTheIpv4AddressAndNetworkOrderPortTheInfoPointsTo() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            byte[] ip = {127, 0, 0, 9};
            MemorySegment info = fi_info.allocate(arena);
            fi_info.dest_addr(info, sockaddrIn(arena, ip, 50_001));
            fi_info.dest_addrlen(info, 16);
            assertEquals(new InetSocketAddress(InetAddress.getByAddress(ip), 50_001), FabricListener.requester(info));
        }
    }

    @Test
    void requester_withAnAddressShorterThanASockaddr_isUnknown() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment info = fi_info.allocate(arena);
            fi_info.dest_addr(info, sockaddrIn(arena, new byte[] {10, 0, 0, 1}, 7));
            fi_info.dest_addrlen(info, 4);
            assertNull(FabricListener.requester(info));
            fi_info.dest_addr(info, MemorySegment.NULL);
            fi_info.dest_addrlen(info, 16);
            assertNull(FabricListener.requester(info));
        }
    }
}
