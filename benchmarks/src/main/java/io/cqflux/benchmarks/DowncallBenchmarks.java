package io.cqflux.benchmarks;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a downcall costs with its pointer argument in a shared arena, against the same memory
 * seen through an unscoped view (the transports' and the loop's per-operation buffers:
 * {@code FabricLibrary.unscoped}, {@code RpmaNative.unscoped}, {@code Libc.unscoped}). The call is
 * {@code strnlen(p, 0)}, which returns without reading: what is left is the call itself and, for
 * the shared arena, the acquire and release of the arena around it (two atomic updates). A store
 * into the buffer before each call stands for filling a posting struct.
 */
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
public class DowncallBenchmarks {

    private static final MethodHandle STRNLEN = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("strnlen").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));

    /** SHARED: a segment of {@code Arena.ofShared()}; UNSCOPED: a global-scope view of it. */
    @Param({"SHARED", "UNSCOPED"})
    public String scope;

    private Arena arena;
    private MemorySegment buffer;
    private long n;

    /** Allocates the buffer in a shared arena and picks the view. */
    @Setup(Level.Trial)
    @SuppressWarnings("restricted") // reinterpret: the size is the segment's own
    public void setUp() {
        arena = Arena.ofShared();
        MemorySegment s = arena.allocate(64, 64);
        buffer = scope.equals("SHARED") ? s : MemorySegment.ofAddress(s.address()).reinterpret(s.byteSize());
    }

    /** Frees the buffer. */
    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    /**
     * One store and one downcall.
     *
     * @return the call's result, so that it is not dropped
     * @throws Throwable never (strnlen does not fail)
     */
    @Benchmark
    public long storeAndCall() throws Throwable {
        buffer.set(ValueLayout.JAVA_LONG, 8, ++n);
        return (long) STRNLEN.invokeExact(buffer, 0L);
    }
}
