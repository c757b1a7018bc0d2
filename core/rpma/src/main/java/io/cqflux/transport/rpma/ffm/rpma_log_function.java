// Generated in the shape of jextract (JDK 22+) from /usr/include/librpma.h (librpma 1.2.0) with
// the symbol list scripts/jextract/librpma.symbols; regenerate with scripts/jextract/librpma.sh.
//
// rpma_log_function is VARIADIC in C (a printf-like format plus "..."). FFM cannot create
// variadic upcalls, and jextract, like this class, keeps only the five fixed parameters: an upcall
// built from it receives the level, file, line, function and the format string, never the format
// arguments (see io.cqflux.transport.rpma.RpmaLog for what that means and why it is ABI-safe).

package io.cqflux.transport.rpma.ffm;

import java.lang.foreign.*;
import java.lang.invoke.MethodHandle;

/**
 * {@snippet lang=c :
 * typedef void rpma_log_function(enum rpma_log_level level, const char *file_name, const int line_no,
 *         const char *function_name, const char *message_format, ...)
 * }
 */
@SuppressWarnings({"unused", "checkstyle:all"})
public class rpma_log_function {

    rpma_log_function() {
        // Should not be called directly
    }

    /** The function pointer signature, expressed as a functional interface. */
    public interface Function {
        void apply(int level, MemorySegment file_name, int line_no, MemorySegment function_name,
                   MemorySegment message_format);
    }

    private static final FunctionDescriptor $DESC = FunctionDescriptor.ofVoid(
        librpma_h.C_INT,
        librpma_h.C_POINTER,
        librpma_h.C_INT,
        librpma_h.C_POINTER,
        librpma_h.C_POINTER
    );

    /** The descriptor of this function pointer. */
    public static FunctionDescriptor descriptor() {
        return $DESC;
    }

    private static final MethodHandle UP$MH = librpma_h.upcallHandle(rpma_log_function.Function.class, "apply", $DESC);

    /**
     * Allocates a new upcall stub, whose implementation is defined by {@code fi}.
     * The lifetime of the returned segment is managed by {@code arena}
     */
    public static MemorySegment allocate(rpma_log_function.Function fi, Arena arena) {
        return Linker.nativeLinker().upcallStub(UP$MH.bindTo(fi), $DESC, arena);
    }

    private static final MethodHandle DOWN$MH = Linker.nativeLinker().downcallHandle($DESC);

    /** Invoke the upcall stub {@code funcPtr}, with given parameters. */
    public static void invoke(MemorySegment funcPtr, int level, MemorySegment file_name, int line_no,
                              MemorySegment function_name, MemorySegment message_format) {
        try {
             DOWN$MH.invokeExact(funcPtr, level, file_name, line_no, function_name, message_format);
        } catch (Error | RuntimeException ex) {
            throw ex;
        } catch (Throwable ex$) {
            throw new AssertionError("should not reach here", ex$);
        }
    }
}
