package io.cqflux.transport.rpma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Proves the Soft-RoCE lane itself, independent of the rpma transport: an rxe device is up, and
 * librpma, loaded through FFM, finds the device behind the lane's address. When these fail, every
 * other {@code rpma} test would fail for a reason that has nothing to do with cqflux.
 *
 * <p>Runs only in the lane ({@code scripts/softroce/run-tests.sh}); raw FFM on purpose, so that it
 * does not depend on the bindings under test.
 */
@Tag("rpma")
class SoftRoceLaneTest {

    /** librpma 1.2.0 ships only this soname (there is no librpma.so.1). */
    private static final String LIBRPMA = "librpma.so.0";

    /**
     * {@code RPMA_UTIL_IBV_CONTEXT_LOCAL}: the first enumerator of {@code enum
     * rpma_util_ibv_context_type} in librpma.h, see rpma_utils_get_ibv_context(3).
     */
    private static final int RPMA_UTIL_IBV_CONTEXT_LOCAL = 0;

    private static String laneAddress() {
        String address = System.getenv("CQFLUX_RPMA_ADDRESS");
        if (address == null || address.isBlank()) {
            fail("CQFLUX_RPMA_ADDRESS is not set: rpma tests run only inside the Soft-RoCE lane"
                    + " (scripts/softroce/run-tests.sh), which sets it to the guest's eth0 address");
        }
        return address;
    }

    @Test
    void lane_hasAnActiveRdmaDevice() throws IOException {
        Path root = Path.of("/sys/class/infiniband");
        assertTrue(Files.isDirectory(root), root + " is missing: the kernel has no RDMA support (not in the lane?)");
        List<Path> devices;
        try (Stream<Path> list = Files.list(root)) {
            devices = list.toList();
        }
        assertFalse(devices.isEmpty(), "no RDMA device under " + root + " (rdma link add rxe0 ... did not run?)");
        // sysfs port state reads "4: ACTIVE" once the link is up (ibv_port_state: IBV_PORT_ACTIVE = 4).
        boolean active = false;
        for (Path device : devices) {
            Path state = device.resolve("ports/1/state");
            if (Files.isReadable(state) && Files.readString(state).trim().equals("4: ACTIVE")) {
                active = true;
            }
        }
        assertTrue(active, "no RDMA device among " + devices + " has port 1 ACTIVE");
        assertTrue(Files.exists(Path.of("/dev/infiniband/rdma_cm")),
                "/dev/infiniband/rdma_cm is missing: rdma_ucm is not loaded");
    }

    @Test
    void librpma_loadedThroughFfm_findsTheDeviceOfTheLaneAddress() throws Throwable {
        String address = laneAddress();
        Linker linker = Linker.nativeLinker();
        try (Arena arena = Arena.ofConfined()) {
            SymbolLookup rpma = SymbolLookup.libraryLookup(LIBRPMA, arena);
            // int rpma_utils_get_ibv_context(const char *addr, enum rpma_util_ibv_context_type type,
            //         struct ibv_context **ibv_ctx_ptr);
            MethodHandle getIbvContext = linker.downcallHandle(
                    rpma.find("rpma_utils_get_ibv_context").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT,
                            ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
            // int rpma_utils_ibv_context_is_odp_capable(struct ibv_context *ibv_ctx, int *is_odp_capable);
            MethodHandle isOdpCapable = linker.downcallHandle(
                    rpma.find("rpma_utils_ibv_context_is_odp_capable").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS));

            MemorySegment ctxPtr = arena.allocate(ValueLayout.ADDRESS);
            int rc = (int) getIbvContext.invokeExact(
                    arena.allocateFrom(address), RPMA_UTIL_IBV_CONTEXT_LOCAL, ctxPtr);
            assertEquals(0, rc, "rpma_utils_get_ibv_context(\"" + address + "\", LOCAL) failed"
                    + " (RPMA_E_PROVIDER = -100002: no RDMA device serves that address)");
            MemorySegment ctx = ctxPtr.get(ValueLayout.ADDRESS, 0);
            assertNotNull(ctx);
            assertNotEquals(0L, ctx.address(), "rpma_utils_get_ibv_context returned 0 but a NULL context");

            // A second call on the context proves it is a live ibv_context, not just a non-NULL word.
            MemorySegment odp = arena.allocate(ValueLayout.JAVA_INT);
            odp.set(ValueLayout.JAVA_INT, 0, -1);
            rc = (int) isOdpCapable.invokeExact(ctx, odp);
            assertEquals(0, rc, "rpma_utils_ibv_context_is_odp_capable failed on the returned context");
            int capable = odp.get(ValueLayout.JAVA_INT, 0);
            assertTrue(capable == 0 || capable == 1, "is_odp_capable must be 0 or 1, was " + capable);
            // The context belongs to librdmacm's device list (rdma_get_devices): it is not ours to
            // close, see rpma_utils_get_ibv_context(3) and rpma_peer_new(3).
        }
    }
}
