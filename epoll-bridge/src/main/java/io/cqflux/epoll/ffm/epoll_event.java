// Generated in the shape of jextract (JDK 22+) from <sys/epoll.h> (glibc, x86-64) with the symbol
// list scripts/jextract/libc-epoll.symbols; regenerate with scripts/jextract/libc-epoll.sh where
// jextract is installed. DO NOT EDIT by hand.

package io.cqflux.epoll.ffm;

import java.lang.foreign.*;
import java.util.function.Consumer;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.*;

/**
 * {@snippet lang=c :
 * struct epoll_event {
 *     uint32_t events;
 *     epoll_data_t data;
 * } __attribute__ ((__packed__))
 * }
 *
 * <p>Packed on x86-64 ({@code __EPOLL_PACKED}): 12 bytes, {@code data} at offset 4. jextract
 * therefore aligns every member to 1; {@code data}'s own union layout (8-byte aligned) must not be
 * used on a slice of this struct.
 */
@SuppressWarnings({"unused", "checkstyle:all"})
public class epoll_event {

    epoll_event() {
        // Should not be called directly
    }

    private static final GroupLayout $LAYOUT = MemoryLayout.structLayout(
        libc_h.align(libc_h.C_INT, 1).withName("events"),
        libc_h.align(epoll_data.layout(), 1).withName("data")
    ).withName("epoll_event");

    /** The layout of this struct */
    public static final GroupLayout layout() {
        return $LAYOUT;
    }

    private static final OfInt events$LAYOUT = (OfInt)$LAYOUT.select(groupElement("events"));

    /** Layout for field: {@snippet lang=c : uint32_t events } */
    public static final OfInt events$layout() {
        return events$LAYOUT;
    }

    private static final long events$OFFSET = 0;

    /** Offset for field: {@snippet lang=c : uint32_t events } */
    public static final long events$offset() {
        return events$OFFSET;
    }

    /** Getter for field: {@snippet lang=c : uint32_t events } */
    public static int events(MemorySegment struct) {
        return struct.get(events$LAYOUT, events$OFFSET);
    }

    /** Setter for field: {@snippet lang=c : uint32_t events } */
    public static void events(MemorySegment struct, int fieldValue) {
        struct.set(events$LAYOUT, events$OFFSET, fieldValue);
    }

    private static final GroupLayout data$LAYOUT = (GroupLayout)$LAYOUT.select(groupElement("data"));

    /** Layout for field: {@snippet lang=c : epoll_data_t data } */
    public static final GroupLayout data$layout() {
        return data$LAYOUT;
    }

    private static final long data$OFFSET = 4;

    /** Offset for field: {@snippet lang=c : epoll_data_t data } */
    public static final long data$offset() {
        return data$OFFSET;
    }

    /** Getter for field: {@snippet lang=c : epoll_data_t data } */
    public static MemorySegment data(MemorySegment struct) {
        return struct.asSlice(data$OFFSET, data$LAYOUT.byteSize());
    }

    /** Setter for field: {@snippet lang=c : epoll_data_t data } */
    public static void data(MemorySegment struct, MemorySegment fieldValue) {
        MemorySegment.copy(fieldValue, 0L, struct, data$OFFSET, data$LAYOUT.byteSize());
    }

    /** Obtains a slice of {@code arrayParam} which selects the array element at {@code index}. */
    public static MemorySegment asSlice(MemorySegment array, long index) {
        return array.asSlice(layout().byteSize() * index);
    }

    /** The size (in bytes) of this struct */
    public static long sizeof() { return layout().byteSize(); }

    /** Allocate a segment of size {@code layout().byteSize()} using {@code allocator} */
    public static MemorySegment allocate(SegmentAllocator allocator) {
        return allocator.allocate(layout());
    }

    /** Allocate an array of size {@code elementCount} using {@code allocator}. */
    public static MemorySegment allocateArray(long elementCount, SegmentAllocator allocator) {
        return allocator.allocate(MemoryLayout.sequenceLayout(elementCount, layout()));
    }

    /** Reinterprets {@code addr} using target {@code arena} and {@code cleanupAction} (if any). */
    public static MemorySegment reinterpret(MemorySegment addr, Arena arena, Consumer<MemorySegment> cleanup) {
        return reinterpret(addr, 1, arena, cleanup);
    }

    /** Reinterprets {@code addr} using target {@code arena} and {@code cleanupAction} (if any). */
    public static MemorySegment reinterpret(MemorySegment addr, long elementCount, Arena arena, Consumer<MemorySegment> cleanup) {
        return addr.reinterpret(layout().byteSize() * elementCount, arena, cleanup);
    }
}
