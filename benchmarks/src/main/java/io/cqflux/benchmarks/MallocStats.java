package io.cqflux.benchmarks;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The bytes this process holds from glibc's {@code malloc}: what libfabric and librpma allocate,
 * and the JVM's own native memory, FFM arenas included ({@code mallinfo2(3)}: {@code uordblks},
 * the bytes in use in chunks, plus {@code hblkhd}, those in mmap'd chunks).
 *
 * <p>{@code mallinfo2(3)} (BUGS): "Information is returned for only the main memory allocation
 * area. Allocations in other arenas are excluded." A thread other than the first one allocates in
 * an arena of its own unless {@code MALLOC_ARENA_MAX=1} ({@code mallopt(3)}, {@code M_ARENA_MAX})
 * keeps every thread in the main one; {@link #complete()} says whether it does, and the figure is
 * only given when it does.
 */
final class MallocStats {
    /** {@code struct mallinfo2}: ten {@code size_t} fields, in the order of {@code malloc.h}. */
    private static final StructLayout MALLINFO2 = MemoryLayout.structLayout(
            ValueLayout.JAVA_LONG.withName("arena"), ValueLayout.JAVA_LONG.withName("ordblks"),
            ValueLayout.JAVA_LONG.withName("smblks"), ValueLayout.JAVA_LONG.withName("hblks"),
            ValueLayout.JAVA_LONG.withName("hblkhd"), ValueLayout.JAVA_LONG.withName("usmblks"),
            ValueLayout.JAVA_LONG.withName("fsmblks"), ValueLayout.JAVA_LONG.withName("uordblks"),
            ValueLayout.JAVA_LONG.withName("fordblks"), ValueLayout.JAVA_LONG.withName("keepcost"));
    private static final long HBLKHD = MALLINFO2.byteOffset(MemoryLayout.PathElement.groupElement("hblkhd"));
    private static final long UORDBLKS = MALLINFO2.byteOffset(MemoryLayout.PathElement.groupElement("uordblks"));
    private static final MethodHandle MALLINFO2_CALL = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("mallinfo2").orElseThrow(), FunctionDescriptor.of(MALLINFO2));

    private MallocStats() {
    }

    /** {@return whether every thread allocates in the main arena, so that the figure is whole} */
    static boolean complete() {
        return "1".equals(System.getenv("MALLOC_ARENA_MAX"));
    }

    /** {@return the bytes in use from malloc in the main arena} */
    static long allocatedBytes() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment m = (MemorySegment) MALLINFO2_CALL.invokeExact((SegmentAllocator) a);
            return m.get(ValueLayout.JAVA_LONG, UORDBLKS) + m.get(ValueLayout.JAVA_LONG, HBLKHD);
        } catch (Throwable t) {
            throw new IllegalStateException("mallinfo2 failed", t);
        }
    }
}
