// Generated in the shape of jextract (JDK 22+) from /usr/include/librpma.h (librpma 1.2.0) and
// <infiniband/verbs.h> with the symbol list scripts/jextract/librpma.symbols; regenerate with
// scripts/jextract/librpma.sh where jextract is installed.

package io.cqflux.transport.rpma.ffm;

import java.lang.foreign.*;
import java.util.function.Consumer;

import static java.lang.foreign.ValueLayout.*;
import static java.lang.foreign.MemoryLayout.PathElement.*;

/**
 * {@snippet lang=c :
 * struct rpma_conn_private_data {
 *     void *ptr;
 *     uint8_t len;
 * }
 * }
 */
@SuppressWarnings({"unused", "checkstyle:all"})
public class rpma_conn_private_data {

    rpma_conn_private_data() {
        // Should not be called directly
    }

    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        librpma_h.C_POINTER.withName("ptr"),
        librpma_h.C_CHAR.withName("len"),
        MemoryLayout.paddingLayout(7)
    ).withName("rpma_conn_private_data");

    /** The layout of this struct. */
    public static final GroupLayout layout() {
        return $LAYOUT;
    }

    private static final AddressLayout ptr$LAYOUT = (AddressLayout)$LAYOUT.select(groupElement("ptr"));

    /** Layout for field ptr. */
    public static final AddressLayout ptr$layout() {
        return ptr$LAYOUT;
    }

    private static final long ptr$OFFSET = $LAYOUT.byteOffset(groupElement("ptr"));

    /** Offset for field ptr. */
    public static final long ptr$offset() {
        return ptr$OFFSET;
    }

    /** Getter for field ptr. */
    public static MemorySegment ptr(MemorySegment struct) {
        return struct.get(ptr$LAYOUT, ptr$OFFSET);
    }

    /** Setter for field ptr. */
    public static void ptr(MemorySegment struct, MemorySegment fieldValue) {
        struct.set(ptr$LAYOUT, ptr$OFFSET, fieldValue);
    }

    private static final OfByte len$LAYOUT = (OfByte)$LAYOUT.select(groupElement("len"));

    /** Layout for field len. */
    public static final OfByte len$layout() {
        return len$LAYOUT;
    }

    private static final long len$OFFSET = $LAYOUT.byteOffset(groupElement("len"));

    /** Offset for field len. */
    public static final long len$offset() {
        return len$OFFSET;
    }

    /** Getter for field len. */
    public static byte len(MemorySegment struct) {
        return struct.get(len$LAYOUT, len$OFFSET);
    }

    /** Setter for field len. */
    public static void len(MemorySegment struct, byte fieldValue) {
        struct.set(len$LAYOUT, len$OFFSET, fieldValue);
    }

    /**
     * Obtains a slice of {@code arrayParam} which selects the array element at {@code index}.
     * The returned segment has address {@code arrayParam.address() + index * layout().byteSize()}
     */
    public static MemorySegment asSlice(MemorySegment array, long index) {
        return array.asSlice(layout().byteSize() * index);
    }

    /** The size (in bytes) of this struct. */
    public static long sizeof() { return layout().byteSize(); }

    /** Allocate a segment of size {@code layout().byteSize()} using {@code allocator}. */
    public static MemorySegment allocate(SegmentAllocator allocator) {
        return allocator.allocate(layout());
    }

    /**
     * Allocate an array of size {@code elementCount} using {@code allocator}.
     * The returned segment has size {@code elementCount * layout().byteSize()}.
     */
    public static MemorySegment allocateArray(long elementCount, SegmentAllocator allocator) {
        return allocator.allocate(MemoryLayout.sequenceLayout(elementCount, layout()));
    }

    /**
     * Reinterprets {@code addr} using target {@code arena} and {@code cleanupAction} (if any).
     * The returned segment has size {@code layout().byteSize()}
     */
    public static MemorySegment reinterpret(MemorySegment addr, Arena arena, Consumer<MemorySegment> cleanup) {
        return reinterpret(addr, 1, arena, cleanup);
    }

    /**
     * Reinterprets {@code addr} using target {@code arena} and {@code cleanupAction} (if any).
     * The returned segment has size {@code elementCount * layout().byteSize()}
     */
    public static MemorySegment reinterpret(MemorySegment addr, long elementCount, Arena arena, Consumer<MemorySegment> cleanup) {
        return addr.reinterpret(layout().byteSize() * elementCount, arena, cleanup);
    }
}
