package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.KeyScope;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * What keys scoped to their connection cost per connection on fabric/verbs over rxe, at the
 * transport: the first use of the instance's large internal regions (the buffer pool, a shared
 * receive pool chunk) on a scoped connection, and the pinned memory it adds; the registration of one of the transport's regions in a connection's domain (the
 * first post's extra {@code fi_mr_reg}), beside a registration in the transport's domain; and the
 * time from the client's connect to the server's first write from each of {@link #LOCAL_REGIONS}
 * regions of the transport's domain completing, with and without scoping, alternating. Prints
 * FACT lines for docs/security.md; asserts only that every operation succeeded and that nothing
 * is left registered. Tagged {@code fabric-verbs-bench}: not run by the lane unless asked,
 * {@code scripts/softroce/run-tests.sh --build -- --select-class=<this> --include-tag fabric-verbs-bench}.
 */
@Tag("fabric-verbs-bench")
@Isolated
class FabricVerbsScopedKeysCostTest extends ScopedKeysFixture {

    static final int LOCAL_REGIONS = 4;
    static final int CONNECTIONS = 40;

    FabricVerbsScopedKeysCostTest() {
        super("verbs", FabricVerbsContractTest::laneAddress);
    }

    @Test
    void scopedConnections_costOneRegistrationPerLocalRegionUsed_measured() {
        FabricTransport t = serverTransport();
        Listening in = listen();
        RemoteRegion dst = clientTarget();
        LocalRegion[] src = new LocalRegion[LOCAL_REGIONS];
        for (int i = 0; i < src.length; i++) {
            src[i] = region(server, 4096, RegionAccess.WRITE_SRC);
        }
        // Registration in the transport's domain, for comparison: 4 KiB, registered and closed. The
        // memory is allocated and written before the clock starts, so that only fi_mr_reg is timed
        // (not the zero-fill and the page faults), as in the scoped case, whose regions exist already.
        long[] plainReg = new long[CONNECTIONS];
        for (int i = 0; i < plainReg.length; i++) {
            java.lang.foreign.MemorySegment m = touched(4096);
            long t0 = System.nanoTime();
            LocalRegion r = server.register(m, EnumSet.of(RegionAccess.WRITE_SRC));
            plainReg[i] = System.nanoTime() - t0;
            r.close();
        }
        List<Long> scopedReg = new ArrayList<>();
        long[][] connect = new long[2][CONNECTIONS];
        for (int i = 0; i < CONNECTIONS; i++) {
            for (int mode = 0; mode < 2; mode++) {
                boolean scoped = mode == 1;
                long t0 = System.nanoTime();
                Accepted a = acceptWithoutRegion(in, scoped);
                Connection s = a.server().connection();
                KeyScope scope = a.scope();
                for (int k = 0; k < LOCAL_REGIONS; k++) {
                    LocalRegion from = src[k];
                    long ctx = k + 1;
                    long r0 = System.nanoTime();
                    if (scoped) {
                        ((FabricLocalRegion) from).descIn((ScopedDomain) scope); // the first post's registration
                        scopedReg.add(System.nanoTime() - r0);
                    }
                    post("write", () -> s.write(dst, 0, from, 0, 64, ctx, true));
                    assertTrue(await(a.server(), ctx).isSuccess());
                }
                connect[mode][i] = System.nanoTime() - t0;
                end(a);
                if (scope != null) {
                    assertTrue(((ScopedDomain) scope).nativeClosed());
                }
            }
        }
        assertEquals(0, t.scopedLocalRegistrations(), "registrations left in closed domains");
        long[] sr = scopedReg.stream().mapToLong(Long::longValue).toArray();
        System.out.println(String.format(Locale.ROOT, "FACT verbs scoped keys: fi_mr_reg of 4 KiB in the transport's"
                + " domain p50 %s us mean %s us; in a connection's domain (first post) p50 %s us mean %s us (%d)",
                us(p50(plainReg)), us(mean(plainReg)), us(p50(sr)), us(mean(sr)), sr.length));
        System.out.println(String.format(Locale.ROOT, "FACT verbs scoped keys: connect to the %d-th write from %d"
                + " local regions completed, %d connections each: unscoped p50 %s us mean %s us; scoped p50 %s us"
                + " mean %s us", LOCAL_REGIONS, LOCAL_REGIONS, CONNECTIONS, us(p50(connect[0])), us(mean(connect[0])),
                us(p50(connect[1])), us(mean(connect[1]))));
    }

    /** The buffer pool's default size: 64 buffers of 64 KiB (reactor's BufferPool). */
    static final long BUFFER_POOL_BYTES = 64L * 64 * 1024;
    /** A default shared receive pool chunk: 4 receive queue depths of 128 buffers of 4 KiB (AcceptOptions). */
    static final long SHARED_CHUNK_BYTES = 4L * 128 * 4096;
    static final int LARGE_CONNECTIONS = 10;

    /**
     * The first use on a scoped connection of the instance's large internal regions: the buffer
     * pool's (send(byte[]), write(byte[])) and a shared receive pool's chunk, each registered
     * whole in the connection's domain however little the post uses; beside the same sizes
     * registered in the transport's domain, and what each registration adds to the process's
     * pinned memory ({@code VmPin} of /proc/self/status: what RLIMIT_MEMLOCK bounds for rxe's
     * ib_umem_get).
     */
    @Test
    void firstUseOfTheBufferPoolAndASharedPoolChunk_onAScopedConnection_measured() throws Exception {
        FabricTransport t = serverTransport();
        Listening in = listen();
        long[] plainPool = new long[LARGE_CONNECTIONS];
        long[] plainChunk = new long[LARGE_CONNECTIONS];
        for (int i = 0; i < LARGE_CONNECTIONS; i++) {
            // Allocated and written before the clock starts: only fi_mr_reg is timed.
            java.lang.foreign.MemorySegment poolMemory = touched(BUFFER_POOL_BYTES);
            java.lang.foreign.MemorySegment chunkMemory = touched(SHARED_CHUNK_BYTES);
            long t0 = System.nanoTime();
            LocalRegion r = server.register(poolMemory, EnumSet.of(RegionAccess.SEND, RegionAccess.WRITE_SRC));
            plainPool[i] = System.nanoTime() - t0;
            r.close();
            t0 = System.nanoTime();
            r = server.register(chunkMemory, EnumSet.of(RegionAccess.RECV));
            plainChunk[i] = System.nanoTime() - t0;
            r.close();
        }
        FabricLocalRegion pool = (FabricLocalRegion) region(server, BUFFER_POOL_BYTES, RegionAccess.SEND,
                RegionAccess.WRITE_SRC);
        FabricLocalRegion chunk = (FabricLocalRegion) region(server, SHARED_CHUNK_BYTES, RegionAccess.RECV);
        long[] scopedPool = new long[LARGE_CONNECTIONS];
        long[] scopedChunk = new long[LARGE_CONNECTIONS];
        List<Connection> open = new ArrayList<>();
        long pinnedBefore = vmPinKiB();
        for (int i = 0; i < LARGE_CONNECTIONS; i++) {
            Accepted a = acceptWithoutRegion(in, true);
            open.add(a.client().connection());
            open.add(a.server().connection());
            KeyScope scope = a.scope();
            long t0 = System.nanoTime();
            pool.descIn((ScopedDomain) scope);
            scopedPool[i] = System.nanoTime() - t0;
            t0 = System.nanoTime();
            chunk.descIn((ScopedDomain) scope);
            scopedChunk[i] = System.nanoTime() - t0;
            pump.remove(a.server());
            pump.remove(a.client());
        }
        long pinnedWith = vmPinKiB();
        assertEquals(2L * LARGE_CONNECTIONS, t.scopedLocalRegistrations());
        for (Connection c : open) {
            c.close();
        }
        assertEquals(0, t.scopedLocalRegistrations(), "registrations left in closed domains");
        long pinnedAfter = vmPinKiB();
        System.out.println(String.format(Locale.ROOT, "FACT verbs scoped keys: first use on a scoped connection of"
                + " %d KiB (buffer pool) p50 %s us mean %s us, against fi_mr_reg in the transport's domain p50 %s us"
                + " mean %s us; of %d KiB (shared pool chunk) p50 %s us mean %s us, against p50 %s us mean %s us (%d"
                + " connections)", BUFFER_POOL_BYTES / 1024, us(p50(scopedPool)), us(mean(scopedPool)),
                us(p50(plainPool)), us(mean(plainPool)), SHARED_CHUNK_BYTES / 1024, us(p50(scopedChunk)),
                us(mean(scopedChunk)), us(p50(plainChunk)), us(mean(plainChunk)), LARGE_CONNECTIONS));
        System.out.println(String.format(Locale.ROOT, "FACT verbs scoped keys: VmPin %d KiB before, %d KiB with both"
                + " regions registered in %d connections' domains (%d KiB per connection), %d KiB after they closed",
                pinnedBefore, pinnedWith, LARGE_CONNECTIONS, (pinnedWith - pinnedBefore) / LARGE_CONNECTIONS,
                pinnedAfter));
    }

    /** {@return {@code bytes} of page-aligned memory, every page written once: faulted in before any clock starts} */
    private java.lang.foreign.MemorySegment touched(long bytes) {
        java.lang.foreign.MemorySegment m = arena.allocate(bytes, 4096);
        m.fill((byte) 1);
        return m;
    }

    /** {@return VmPin of /proc/self/status in KiB: pages pinned by the RDMA core (ib_umem), -1 when absent} */
    private static long vmPinKiB() throws java.io.IOException {
        for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/status"))) {
            if (line.startsWith("VmPin:")) {
                return Long.parseLong(line.substring(6).trim().split("\\s+")[0]);
            }
        }
        return -1;
    }

    private static long p50(long[] v) {
        long[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    private static long mean(long[] v) {
        return (long) Arrays.stream(v).average().orElse(0);
    }

    private static String us(long nanos) {
        return String.format(Locale.ROOT, "%.1f", nanos / 1000.0);
    }
}
