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
 * the bytes in use in chunks, plus {@code hblkhd}, those in mmap'd chunks). glibc sums every
 * arena into it ({@code __libc_mallinfo2} walks the arena list), although the man page's BUGS
 * section still says the main arena only: a C probe of 2,000 allocations of 4,000 bytes on a
 * second thread moves {@code uordblks} by their size.
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

    /** {@return the bytes in use from malloc, over every arena} */
    static long allocatedBytes() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment m = (MemorySegment) MALLINFO2_CALL.invokeExact((SegmentAllocator) a);
            return m.get(ValueLayout.JAVA_LONG, UORDBLKS) + m.get(ValueLayout.JAVA_LONG, HBLKHD);
        } catch (Throwable t) {
            throw new IllegalStateException("mallinfo2 failed", t);
        }
    }
}
