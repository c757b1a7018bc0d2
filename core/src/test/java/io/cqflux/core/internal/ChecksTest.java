package io.cqflux.core.internal;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.Capability;
import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.UnsupportedCapabilityException;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ChecksTest {

    /** A transport that has every capability and whose flush reads {@code reads} bytes at its offset. */
    private static Transport flushReading(int reads) {
        return (Transport) Proxy.newProxyInstance(Transport.class.getClassLoader(), new Class<?>[] {Transport.class},
                (proxy, m, args) -> switch (m.getName()) {
                    case "name" -> "test";
                    case "capabilities" -> EnumSet.allOf(Capability.class);
                    case "maxMessageSize" -> Long.MAX_VALUE;
                    case "flushReadBytes" -> reads;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
    }

    private static RemoteRegion peerRegion(long size) {
        return new RemoteRegion() {
            @Override
            public long size() {
                return size;
            }

            @Override
            public Set<FlushType> flushTypes() {
                return Set.of(FlushType.VISIBILITY);
            }

            @Override
            public Set<RegionAccess> access() {
                return Set.of(RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
            }

            @Override
            public void close() {
            }
        };
    }

    /**
     * librpma's emulated flush reads 8 bytes inside the region (the transport moves it there from
     * the region's last bytes): every range of a region of at least 8 bytes passes, a durable
     * write's too, and a smaller region is refused before anything is posted, naming its size and
     * the read.
     */
    @Test
    void flush_ofARegionSmallerThanTheTransportsFixedRead_isRefusedNamingTheReadAndTheSize_andEveryRangeOfALargerOnePasses() {
        Transport rpmaLike = flushReading(8);
        RemoteRegion r = peerRegion(64);
        for (long[] offLen : new long[][] {{60, 4}, {57, 0}, {64, 0}, {63, 1}, {56, 8}, {0, 64}, {0, 0}}) {
            assertDoesNotThrow(() -> Checks.flush(rpmaLike, r, offLen[0], offLen[1], FlushType.VISIBILITY));
        }
        RemoteRegion tiny = peerRegion(4);
        for (long[] offLen : new long[][] {{0, 4}, {4, 0}, {0, 0}}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Checks.flush(rpmaLike, tiny, offLen[0], offLen[1], FlushType.VISIBILITY));
            assertTrue(e.getMessage().contains("reads 8 bytes") && e.getMessage().contains("size 4"), e.getMessage());
        }
        try (Arena arena = Arena.ofConfined()) {
            LocalRegion src = new UnregisteredTestRegion(arena.allocate(64), EnumSet.of(RegionAccess.WRITE_SRC));
            assertDoesNotThrow(() -> Checks.durableWrite(rpmaLike, r, 60, src, 0, 4, FlushType.VISIBILITY));
            assertDoesNotThrow(() -> Checks.write(rpmaLike, tiny, 0, src, 0, 4));
            assertTrue(assertThrows(IllegalArgumentException.class,
                    () -> Checks.durableWrite(rpmaLike, tiny, 0, src, 0, 4, FlushType.VISIBILITY))
                    .getMessage().contains("reads 8 bytes"));
        }
        // a flush that reads only inside its range (fabric's) needs no room beyond it
        assertDoesNotThrow(() -> Checks.flush(flushReading(0), tiny, 0, 4, FlushType.VISIBILITY));
        // the range itself is still checked first
        assertThrows(IllegalArgumentException.class, () -> Checks.flush(rpmaLike, r, 60, 8, FlushType.VISIBILITY));
    }

    @Test
    void timeout_outsideZeroToOneDay_namesTheSettingTheValueAndTheBound() {
        for (Duration d : List.of(Duration.ZERO, Duration.ofNanos(-1), Duration.ofDays(1).plusNanos(1))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Checks.timeout("operationTimeout", d));
            assertEquals("operationTimeout " + d + " is outside (0, PT24H]", e.getMessage());
        }
        assertDoesNotThrow(() -> Checks.timeout("operationTimeout", Duration.ofNanos(1)));
        assertDoesNotThrow(() -> Checks.timeout("operationTimeout", Duration.ofDays(1)));
    }

    @Test
    void inRange_justOutsideEitherEnd_namesTheSettingTheValueAndBothBounds_andBothEndsPass() {
        for (long v : new long[] {-1, 11}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Checks.inRange("sendQueueSize", v, 0, 10));
            assertEquals("sendQueueSize " + v + " is outside [0, 10]", e.getMessage());
        }
        IllegalArgumentException wide = assertThrows(IllegalArgumentException.class,
                () -> Checks.inRange("batchSize", Integer.MIN_VALUE, 1, 1024));
        assertEquals("batchSize -2147483648 is outside [1, 1024]", wide.getMessage());
        for (Duration d : List.of(Duration.ofNanos(-1), Duration.ofHours(1).plusNanos(1))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Checks.inRange("timer delay", d, Duration.ZERO, Duration.ofHours(1)));
            assertEquals("timer delay " + d + " is outside [PT0S, PT1H]", e.getMessage());
        }
        assertEquals(0, Checks.inRange("sendQueueSize", 0L, 0, 10));
        assertEquals(10, Checks.inRange("sendQueueSize", 10, 0, 10));
        assertEquals(Duration.ofHours(1), Checks.inRange("timer delay", Duration.ofHours(1), Duration.ZERO,
                Duration.ofHours(1)));
    }

    @Test
    void range_outsideRegion_namesValueAndBound() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Checks.range("remote destination", 4000, 200, 4096, 1));
        assertEquals("remote destination range [4000, 4000 + 200) exceeds the region size 4096", e.getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Checks.range("local source", -1, 1, 10, 1))
                .getMessage().contains("offset -1 is negative"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Checks.range("local source", 0, 0, 10, 1))
                .getMessage().contains("length 0 is below 1"));
        // overflow of offset + length must not wrap around into "inside"
        assertThrows(IllegalArgumentException.class, () -> Checks.range("x", 8, Long.MAX_VALUE, 16, 1));
        assertDoesNotThrow(() -> Checks.range("x", 0, 4096, 4096, 1));
        assertDoesNotThrow(() -> Checks.range("x", 4096, 0, 4096, 0));
    }

    @Test
    void registration_refusesWhatTheNicMustNotTouch_namingIt() {
        java.lang.foreign.Arena gone = java.lang.foreign.Arena.ofConfined();
        java.lang.foreign.MemorySegment freed = gone.allocate(64);
        gone.close();
        java.util.Set<io.cqflux.core.RegionAccess> src = java.util.EnumSet.of(io.cqflux.core.RegionAccess.WRITE_SRC);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Checks.registration(freed, src))
                .getMessage().contains("freed"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> Checks.registration(java.lang.foreign.MemorySegment.ofArray(new byte[8]), src))
                .getMessage().contains("Java heap"));
        try (java.lang.foreign.Arena a = java.lang.foreign.Arena.ofConfined()) {
            java.lang.foreign.MemorySegment ro = a.allocate(64).asReadOnly();
            for (io.cqflux.core.RegionAccess w : new io.cqflux.core.RegionAccess[] {io.cqflux.core.RegionAccess.READ_DST,
                    io.cqflux.core.RegionAccess.WRITE_DST, io.cqflux.core.RegionAccess.RECV}) {
                assertTrue(assertThrows(IllegalArgumentException.class,
                        () -> Checks.registration(ro, java.util.EnumSet.of(w))).getMessage().contains("read-only"));
            }
            assertDoesNotThrow(() -> Checks.registration(ro, java.util.EnumSet.of(io.cqflux.core.RegionAccess.READ_SRC,
                    io.cqflux.core.RegionAccess.WRITE_SRC, io.cqflux.core.RegionAccess.SEND)));
            assertTrue(assertThrows(IllegalArgumentException.class,
                    () -> Checks.registration(a.allocate(64), java.util.EnumSet.noneOf(io.cqflux.core.RegionAccess.class)))
                    .getMessage().contains("empty"));
        }
        assertEquals("access 1 of 2 is null", assertThrows(IllegalArgumentException.class,
                () -> Checks.accesses("access", io.cqflux.core.RegionAccess.SEND, null)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> Checks.accesses("access"));
    }

    @Test
    void atomicWrite_misalignedOrOutside_isRefused() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Checks.atomicWrite(12, 64))
                .getMessage().contains("offset 12 is not a multiple of 8"));
        assertThrows(IllegalArgumentException.class, () -> Checks.atomicWrite(64, 64));
        assertDoesNotThrow(() -> Checks.atomicWrite(56, 64));
    }

    @Test
    void flushType_unsupportedByRemote_isRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Checks.flushType(FlushType.PERSISTENT, EnumSet.of(FlushType.VISIBILITY)));
        assertTrue(e.getMessage().contains("PERSISTENT") && e.getMessage().contains("[VISIBILITY]"), e.getMessage());
    }

    @Test
    void registerFlushAccess_persistentWhereOnlyVisibilityIsDelivered_namesTransportAndDeliverableTypes() {
        UnsupportedCapabilityException e = assertThrows(UnsupportedCapabilityException.class,
                () -> Checks.registerFlushAccess("fabric/tcp", EnumSet.of(RegionAccess.WRITE_DST,
                        RegionAccess.FLUSH_TYPE_PERSISTENT), EnumSet.of(FlushType.VISIBILITY), "tcp commits no earlier writes"));
        assertEquals("fabric/tcp does not support FLUSH_PERSISTENT: cannot deliver FLUSH_TYPE_PERSISTENT to registered"
                + " memory, it delivers [VISIBILITY]; tcp commits no earlier writes", e.getMessage());
        assertEquals(Capability.FLUSH_PERSISTENT, e.capability());
        assertDoesNotThrow(() -> Checks.registerFlushAccess("rpma", EnumSet.of(RegionAccess.FLUSH_TYPE_PERSISTENT,
                RegionAccess.FLUSH_TYPE_VISIBILITY), EnumSet.allOf(FlushType.class), ""));
        assertDoesNotThrow(() -> Checks.registerFlushAccess("fabric/tcp", EnumSet.of(RegionAccess.WRITE_DST,
                RegionAccess.FLUSH_TYPE_VISIBILITY), EnumSet.of(FlushType.VISIBILITY), ""));
    }

    @Test
    void capability_missing_namesProviderAndCapability() {
        UnsupportedCapabilityException e = assertThrows(UnsupportedCapabilityException.class,
                () -> Checks.capability("fabric/tcp", EnumSet.of(Capability.RMA), Capability.ATOMIC_WRITE, "use write"));
        assertEquals("fabric/tcp does not support ATOMIC_WRITE: use write", e.getMessage());
        assertEquals(Capability.ATOMIC_WRITE, e.capability());
    }

    @Test
    void localRegion_closedOrWithoutAccess_isRefused() {
        try (Arena arena = Arena.ofConfined()) {
            UnregisteredTestRegion r = new UnregisteredTestRegion(arena.allocate(64), EnumSet.of(RegionAccess.WRITE_SRC));
            assertDoesNotThrow(() -> Checks.local("local source", r, RegionAccess.WRITE_SRC));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Checks.local("local destination", r, RegionAccess.READ_DST));
            assertTrue(e.getMessage().contains("READ_DST") && e.getMessage().contains("[WRITE_SRC]"), e.getMessage());
            r.open = false;
            assertThrows(ResourceClosedException.class, () -> Checks.local("local source", r, RegionAccess.WRITE_SRC));
        }
    }

    @Test
    void privateData_overLimit_isRefused() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Checks.privateData(new byte[57], 56, "connect"))
                .getMessage().contains("57 bytes exceeds the transport's maximum 56"));
        assertDoesNotThrow(() -> Checks.privateData(null, 0, "accept"));
    }

    /** A plain-memory LocalRegion for argument checks only (no transport involved). */
    private static final class UnregisteredTestRegion implements LocalRegion {
        private final MemorySegment segment;
        private final Set<RegionAccess> access;
        boolean open = true;

        UnregisteredTestRegion(MemorySegment segment, Set<RegionAccess> access) {
            this.segment = segment;
            this.access = access;
        }

        @Override public MemorySegment segment() { return segment; }
        @Override public Set<RegionAccess> access() { return access; }
        @Override public byte[] descriptor() { return new byte[0]; }
        @Override public byte[] rawDescriptor() { return new byte[0]; }
        @Override public boolean isOpen() { return open; }
        @Override public void close() { open = false; }
    }
}
