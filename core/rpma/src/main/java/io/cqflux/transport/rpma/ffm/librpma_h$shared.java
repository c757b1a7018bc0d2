// Generated in the shape of jextract (JDK 22+) from /usr/include/librpma.h (librpma 1.2.0),
// <infiniband/verbs.h> and <rdma/rdma_cma.h> with the symbol list
// scripts/jextract/librpma.symbols; regenerate with scripts/jextract/librpma.sh where jextract is
// installed.
//
// One documented deviation from jextract's output: jextract's SYMBOL_LOOKUP is
// SymbolLookup.libraryLookup(name, arena) for each --library, joined with or(), which throws at
// class initialisation when a library is missing. Here the loader probes the sonames in
// LIBRARY_NAMES (newest first), adds librdmacm's where it loads, and falls back to an empty
// lookup, so that the header class always initialises; every function holder still resolves its
// symbol lazily with findOrThrow, and isPresent(symbol) lets callers check an optional (newer)
// symbol before touching its holder.

package io.cqflux.transport.rpma.ffm;

import java.lang.foreign.*;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

import static java.lang.foreign.ValueLayout.*;

/** jextract-shaped shared layouts and helpers of the librpma bindings. */
@SuppressWarnings({"unused", "checkstyle:all"})
public class librpma_h$shared {

    librpma_h$shared() {
        // Should not be called directly
    }

    public static final ValueLayout.OfBoolean C_BOOL = (ValueLayout.OfBoolean) Linker.nativeLinker().canonicalLayouts().get("bool");
    public static final ValueLayout.OfByte C_CHAR = (ValueLayout.OfByte) Linker.nativeLinker().canonicalLayouts().get("char");
    public static final ValueLayout.OfShort C_SHORT = (ValueLayout.OfShort) Linker.nativeLinker().canonicalLayouts().get("short");
    public static final ValueLayout.OfInt C_INT = (ValueLayout.OfInt) Linker.nativeLinker().canonicalLayouts().get("int");
    public static final ValueLayout.OfLong C_LONG_LONG = (ValueLayout.OfLong) Linker.nativeLinker().canonicalLayouts().get("long long");
    public static final AddressLayout C_POINTER = ((AddressLayout) Linker.nativeLinker().canonicalLayouts().get("void*"))
            .withTargetLayout(MemoryLayout.sequenceLayout(java.lang.Long.MAX_VALUE, JAVA_BYTE));
    public static final ValueLayout.OfLong C_LONG = (ValueLayout.OfLong) Linker.nativeLinker().canonicalLayouts().get("long");

    static final boolean TRACE_DOWNCALLS = Boolean.getBoolean("jextract.trace.downcalls");

    static void traceDowncall(String name, Object... args) {
         String traceArgs = Arrays.stream(args)
                       .map(Object::toString)
                       .collect(Collectors.joining(", "));
         System.out.printf("%s(%s)\n", name, traceArgs);
    }

    /** The sonames probed, newest first: a later librpma would ship {@code librpma.so.1}. */
    public static final List<String> LIBRARY_NAMES = List.of("librpma.so.1", "librpma.so.0");

    /** librdmacm's soname (rdma-core's, unchanged since its first release). */
    static final String RDMACM_NAME = "librdmacm.so.1";

    static final Arena LIBRARY_ARENA = Arena.ofAuto();

    private static final String LOADED_NAME;
    private static final String LOAD_FAILURE;

    static final SymbolLookup SYMBOL_LOOKUP;

    static {
        SymbolLookup lookup = null;
        String loaded = null;
        StringBuilder failure = new StringBuilder();
        for (String name : LIBRARY_NAMES) {
            try {
                lookup = SymbolLookup.libraryLookup(name, LIBRARY_ARENA);
                loaded = name;
                break;
            } catch (IllegalArgumentException | IllegalCallerException e) {
                failure.append(failure.isEmpty() ? "" : "; ").append(name).append(": ").append(e.getMessage());
            }
        }
        LOADED_NAME = loaded;
        LOAD_FAILURE = loaded == null ? failure.toString() : "";
        // jextract's second --library (librdmacm, for rdma_destroy_id): a dependency of librpma,
        // so it is there wherever librpma is.
        SYMBOL_LOOKUP = lookup == null ? symbol -> Optional.empty() : lookup.or(rdmacm());
    }

    /** The librdmacm lookup, or an empty one when it cannot be loaded (its symbols then fail as unresolved). */
    private static SymbolLookup rdmacm() {
        try {
            return SymbolLookup.libraryLookup(RDMACM_NAME, LIBRARY_ARENA);
        } catch (IllegalArgumentException | IllegalCallerException e) {
            return symbol -> Optional.empty();
        }
    }

    /** {@return the soname that was loaded, or {@code null} when none could be} */
    public static String loadedLibrary() {
        return LOADED_NAME;
    }

    /** {@return why no soname could be loaded, or an empty string} */
    public static String loadFailure() {
        return LOAD_FAILURE;
    }

    /**
     * @param symbol a function name
     * @return whether the loaded library exports it (check before using an optional symbol)
     */
    public static boolean isPresent(String symbol) {
        return SYMBOL_LOOKUP.find(symbol).isPresent();
    }

    static MemorySegment findOrThrow(String symbol) {
        return SYMBOL_LOOKUP.find(symbol)
            .orElseThrow(() -> new UnsatisfiedLinkError("unresolved symbol: " + symbol));
    }

    static MethodHandle upcallHandle(Class<?> fi, String name, FunctionDescriptor fdesc) {
        try {
            return MethodHandles.lookup().findVirtual(fi, name, fdesc.toMethodType());
        } catch (ReflectiveOperationException ex) {
            throw new AssertionError(ex);
        }
    }

    static MemoryLayout align(MemoryLayout layout, long align) {
        return switch (layout) {
            case PaddingLayout p -> p;
            case ValueLayout v -> v.withByteAlignment(align);
            case GroupLayout g -> {
                MemoryLayout[] alignedMembers = g.memberLayouts().stream()
                        .map(m -> align(m, align)).toArray(MemoryLayout[]::new);
                yield g instanceof StructLayout ?
                        MemoryLayout.structLayout(alignedMembers) : MemoryLayout.unionLayout(alignedMembers);
            }
            case SequenceLayout s -> MemoryLayout.sequenceLayout(s.elementCount(), align(s.elementLayout(), align));
        };
    }
}
