package io.cqflux.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.cqflux.core.testing.CProbe;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link RdmaCmIds}' offsets against the installed {@code <rdma/rdma_cma.h>}, and the address reads. */
class RdmaCmIdsTest {

    @Test
    void offsets_matchTheInstalledHeader() {
        Map<String, Long> c = CProbe.run("rdma_cm_id_layout", """
                #include <stdio.h>
                #include <stddef.h>
                #include <sys/socket.h>
                #include <rdma/rdma_cma.h>
                #define P(n, v) printf("%s %lld\\n", n, (long long)(v))
                int main(void) {
                  P("verbs", offsetof(struct rdma_cm_id, verbs));
                  P("src", offsetof(struct rdma_cm_id, route.addr.src_addr));
                  P("dst", offsetof(struct rdma_cm_id, route.addr.dst_addr));
                  P("storage", sizeof(struct sockaddr_storage));
                  P("src_room", sizeof(((struct rdma_cm_id *)0)->route.addr.src_storage));
                  P("dst_room", sizeof(((struct rdma_cm_id *)0)->route.addr.dst_storage));
                  return 0;
                }
                """);
        assertEquals(c.get("verbs"), RdmaCmIds.VERBS);
        assertEquals(c.get("src"), RdmaCmIds.SOURCE);
        assertEquals(c.get("dst"), RdmaCmIds.DESTINATION);
        assertEquals(c.get("storage"), RdmaCmIds.ADDRESS_SIZE);
        assertEquals(c.get("src_room"), RdmaCmIds.ADDRESS_SIZE);
        assertEquals(c.get("dst_room"), RdmaCmIds.ADDRESS_SIZE);
    }

    @Test
    void sourceAndDestination_readIpv4AndIpv6_andAnotherFamilyIsUnknown() throws Exception {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment id = a.allocate(RdmaCmIds.READ_SIZE, 8);
            MemorySegment src = id.asSlice(RdmaCmIds.SOURCE, RdmaCmIds.ADDRESS_SIZE);
            src.set(ValueLayout.JAVA_SHORT, 0, (short) 2); // AF_INET
            src.set(ValueLayout.JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN), 2, (short) 7471);
            MemorySegment.copy(new byte[] {10, 0, 2, 15}, 0, src, ValueLayout.JAVA_BYTE, 4, 4);
            MemorySegment dst = id.asSlice(RdmaCmIds.DESTINATION, RdmaCmIds.ADDRESS_SIZE);
            dst.set(ValueLayout.JAVA_SHORT, 0, (short) 10); // AF_INET6
            dst.set(ValueLayout.JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN), 2, (short) 50_001);
            byte[] v6 = InetAddress.getByName("fe80::1").getAddress();
            MemorySegment.copy(v6, 0, dst, ValueLayout.JAVA_BYTE, 8, 16);
            assertEquals(new InetSocketAddress(InetAddress.getByName("10.0.2.15"), 7471), RdmaCmIds.source(id));
            InetSocketAddress peer = RdmaCmIds.destination(id);
            assertNotNull(peer);
            assertEquals(InetAddress.getByName("fe80::1"), peer.getAddress());
            assertEquals(50_001, peer.getPort(), "the port is read in network byte order, unsigned");
            dst.set(ValueLayout.JAVA_SHORT, 0, (short) 27); // AF_IB
            assertNull(RdmaCmIds.destination(id));
            assertNull(SocketAddresses.decode(id.asSlice(0, 7)), "shorter than a sockaddr");
        }
    }
}
