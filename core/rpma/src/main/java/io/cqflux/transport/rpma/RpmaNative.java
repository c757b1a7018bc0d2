package io.cqflux.transport.rpma;

import io.cqflux.core.NativeCallException;
import io.cqflux.transport.rpma.ffm.librpma_h;
import io.cqflux.core.internal.NativeErrors;
import io.cqflux.core.internal.NativeLibraries;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;

/**
 * The hand-written layer above the bindings: library availability, errno capture for the calls
 * whose {@code RPMA_E_PROVIDER} needs the reason, the error mapping through
 * {@link NativeErrors}, and the two libc calls the transport needs ({@code fcntl}, {@code poll}).
 */
final class RpmaNative {

    /** The smallest API this transport needs: {@code rpma_atomic_write} appeared in librpma 0.13 and the old name went in 0.14. */
    static final String REQUIRED_SYMBOL = "rpma_atomic_write";

    /** librpma ≥ 1.0: the shared completion channel ({@code rpma_conn_get_compl_fd(3)}, {@code rpma_conn_wait(3)}). */
    static final String[] SHARED_CHANNEL_SYMBOLS = {
        "rpma_conn_get_compl_fd", "rpma_conn_wait", "rpma_conn_cfg_set_compl_channel"};

    private static final String CAUSE = computeCause();

    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private static final int F_GETFL = 3;
    private static final int F_SETFL = 4;
    private static final int O_NONBLOCK = 0x800;
    private static final short POLLIN = 1;

    private RpmaNative() {
    }

    /**
     * A view of {@code s} with the global scope, for a CQ's out-parameters: see
     * {@code FabricLibrary.unscoped} in the fabric transport for why and on what terms (one
     * thread at a time, after the owner's closed check, never after the arena is closed).
     *
     * @param s a segment of the owner's arena
     * @return the same memory, unscoped
     */
    @SuppressWarnings("restricted") // reinterpret: the size is the segment's own
    static MemorySegment unscoped(MemorySegment s) {
        return MemorySegment.ofAddress(s.address()).reinterpret(s.byteSize());
    }

    private static String computeCause() {
        try {
            String loaded = librpma_h.loadedLibrary();
            if (loaded == null) {
                return NativeLibraries.loadFailure(librpma_h.LIBRARY_NAMES, String.valueOf(librpma_h.loadFailure()),
                        "apt-get install librpma0 (or use the fabric transport)");
            }
            if (!librpma_h.isPresent(REQUIRED_SYMBOL) || !librpma_h.isPresent("rpma_cq_get_wc")) {
                return loaded + " is older than the librpma 0.14 API this transport needs (no "
                        + REQUIRED_SYMBOL + "); install librpma0 >= 0.14 (apt-get install librpma0)";
            }
            return "";
        } catch (Throwable t) { // never let a class-init failure escape availability checks
            return "librpma could not be initialised: " + t;
        }
    }

    /** {@return an empty string when librpma is usable, otherwise what to install} */
    static String unavailabilityCause() {
        return CAUSE;
    }

    /** {@return whether the shared completion channel symbols exist (librpma ≥ 1.0)} */
    static boolean hasSharedChannel() {
        for (String s : SHARED_CHANNEL_SYMBOLS) {
            if (!librpma_h.isPresent(s)) {
                return false;
            }
        }
        return true;
    }

    /** {@return {@code rpma_err_2str(rc)}} */
    static String errText(int rc) {
        try {
            MemorySegment s = librpma_h.rpma_err_2str(rc);
            return s.equals(MemorySegment.NULL) ? "" : s.reinterpret(256).getString(0, StandardCharsets.UTF_8);
        } catch (RuntimeException e) {
            return "";
        }
    }

    /**
     * The chokepoint for librpma's return codes, part 1: throws the mapped exception unless
     * {@code rc} is 0. For calls where "no completion", "no event" or "again" are ordinary
     * outcomes use {@link #result} instead.
     *
     * @param call the function
     * @param rc the librpma return code
     * @param detail context for the message
     */
    static void check(String call, int rc, String detail) {
        if (rc != 0) {
            throw failure(call, rc, 0, detail);
        }
    }

    /**
     * The chokepoint for paths that must not throw (closing, cleaning up after another failure):
     * a non-zero {@code rc} is mapped exactly as {@link #check} would and logged instead.
     *
     * @param log the logger of the caller
     * @param level the level for a failure
     * @param call the function
     * @param rc the librpma return code
     * @param detail context for the message
     * @return whether {@code rc} was 0
     */
    static boolean logged(System.Logger log, System.Logger.Level level, String call, int rc, String detail) {
        if (rc == 0) {
            return true;
        }
        log.log(level, () -> failure(call, rc, 0, detail).getMessage());
        return false;
    }

    /**
     * The chokepoint, part 2: {@code RPMA_E_NO_COMPLETION} ({@code rpma_cq_get_wc(3)},
     * {@code rpma_cq_wait(3)}), {@code RPMA_E_NO_EVENT} ({@code rpma_conn_next_event(3)},
     * {@code rpma_ep_next_conn_req(3)}) and {@code RPMA_E_AGAIN} are "no result", not errors.
     *
     * @param call the function
     * @param rc the librpma return code
     * @param detail context for the message
     * @return {@code true} for success, {@code false} for "no result"
     */
    static boolean result(String call, int rc, String detail) {
        if (rc == 0) {
            return true;
        }
        if (rc == librpma_h.RPMA_E_NO_COMPLETION() || rc == librpma_h.RPMA_E_NO_EVENT()
                || rc == librpma_h.RPMA_E_AGAIN()) {
            return false;
        }
        throw failure(call, rc, 0, detail);
    }

    /**
     * Builds the exception for a failed librpma call.
     *
     * @param call the function
     * @param rc its return code
     * @param errno errno captured after the call (meaningful for {@code RPMA_E_PROVIDER}), or 0
     * @param detail extra context, or empty
     * @return the exception to throw
     */
    static NativeCallException failure(String call, int rc, int errno, String detail) {
        String text = errText(rc);
        if (rc == librpma_h.RPMA_E_PROVIDER() && errno > 0) {
            text = text + " (errno " + NativeErrors.errnoName(errno) + ")";
        }
        return NativeErrors.failure(call, rc, errorName(rc), text, detail);
    }

    /**
     * @param rc a librpma return code
     * @return its {@code RPMA_E_*} name (from the bindings' constants), or {@code RPMA(rc)}
     */
    static String errorName(int rc) {
        for (int i = 0; i < ERROR_CODES.length; i++) {
            if (ERROR_CODES[i] == rc) {
                return ERROR_NAMES[i];
            }
        }
        return "RPMA(" + rc + ")";
    }

    private static final String[] ERROR_NAMES = {
        "RPMA_E_UNKNOWN", "RPMA_E_NOSUPP", "RPMA_E_PROVIDER", "RPMA_E_NOMEM", "RPMA_E_INVAL",
        "RPMA_E_NO_COMPLETION", "RPMA_E_NO_EVENT", "RPMA_E_AGAIN", "RPMA_E_SHARED_CHANNEL",
        "RPMA_E_NOT_SHARED_CHNL"};
    // librpma.h's values, through the bindings' constant accessors (no second definition).
    private static final int[] ERROR_CODES = {
        librpma_h.RPMA_E_UNKNOWN(), librpma_h.RPMA_E_NOSUPP(), librpma_h.RPMA_E_PROVIDER(), librpma_h.RPMA_E_NOMEM(),
        librpma_h.RPMA_E_INVAL(), librpma_h.RPMA_E_NO_COMPLETION(), librpma_h.RPMA_E_NO_EVENT(),
        librpma_h.RPMA_E_AGAIN(), librpma_h.RPMA_E_SHARED_CHANNEL(), librpma_h.RPMA_E_NOT_SHARED_CHNL()};

    /**
     * A librpma function called with errno captured right after it returns
     * ({@code Linker.Option.captureCallState}): {@code RPMA_E_PROVIDER} leaves the provider's
     * reason in errno for the calls that go through librdmacm/libibverbs setup paths.
     */
    static final class ErrnoCall {
        private final String name;
        private final MethodHandle handle;

        ErrnoCall(String name, MemorySegment address, FunctionDescriptor descriptor) {
            this.name = name;
            this.handle = LINKER.downcallHandle(address, descriptor, CAPTURE_ERRNO);
        }

        /**
         * @param arena where the capture segment lives
         * @param args the C arguments
         * @return the return code in the low 32 bits, the captured errno in the high 32 bits
         */
        long call(Arena arena, Object... args) {
            MemorySegment state = arena.allocate(CAPTURE);
            Object[] all = new Object[args.length + 1];
            all[0] = state;
            System.arraycopy(args, 0, all, 1, args.length);
            try {
                int rc = (int) handle.invokeWithArguments(all);
                int errno = (int) ERRNO.get(state, 0L);
                return ((long) errno << 32) | (rc & 0xffffffffL);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new AssertionError(name, t);
            }
        }

        String name() {
            return name;
        }
    }

    static int rc(long packed) {
        return (int) packed;
    }

    static int errno(long packed) {
        return (int) (packed >>> 32);
    }

    private static final class Libc {
        static final MethodHandle FCNTL = LINKER.downcallHandle(
                LINKER.defaultLookup().find("fcntl").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
                Linker.Option.firstVariadicArg(2), CAPTURE_ERRNO);
        static final MethodHandle POLL = LINKER.downcallHandle(
                LINKER.defaultLookup().find("poll").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
    }

    /**
     * Puts an fd into non-blocking mode ({@code rpma_cq_get_fd(3)}: "The default mode of the file
     * descriptor is blocking but it can be changed to non-blocking mode using fcntl(2)"), so that
     * {@code rpma_cq_wait} returns {@code RPMA_E_NO_COMPLETION} instead of blocking the loop.
     */
    static void setNonBlocking(int fd, Arena arena) {
        MemorySegment state = arena.allocate(CAPTURE);
        try {
            int flags = (int) Libc.FCNTL.invokeExact(state, fd, F_GETFL, 0);
            if (flags < 0) {
                throw NativeErrors.errno("fcntl(F_GETFL)", (int) ERRNO.get(state, 0L), "fd " + fd);
            }
            int rc = (int) Libc.FCNTL.invokeExact(state, fd, F_SETFL, flags | O_NONBLOCK);
            if (rc < 0) {
                throw NativeErrors.errno("fcntl(F_SETFL, O_NONBLOCK)", (int) ERRNO.get(state, 0L), "fd " + fd);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("fcntl", t);
        }
    }

    /**
     * Whether an fd is readable now: {@code poll(2)} with a zero timeout on a caller-owned
     * 8-byte {@code struct pollfd}.
     *
     * <p>Why: librpma's {@code rpma_conn_next_event} and {@code rpma_ep_next_conn_req} report
     * "no event" ({@code RPMA_E_NO_EVENT}) only when {@code rdma_get_cm_event} fails with
     * {@code ENODATA}; on a non-blocking CM channel an empty read fails with {@code EAGAIN}, which
     * librpma turns into {@code RPMA_E_PROVIDER} plus an ERROR log line. So the CM fds stay
     * blocking and are read only when poll says they are readable.
     */
    static boolean readable(int fd, MemorySegment pollfd) {
        pollfd.set(ValueLayout.JAVA_INT, 0, fd);
        pollfd.set(ValueLayout.JAVA_SHORT, 4, POLLIN);
        pollfd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
        try {
            int n = (int) Libc.POLL.invokeExact(pollfd, 1L, 0);
            return n > 0 && (pollfd.get(ValueLayout.JAVA_SHORT, 6) & POLLIN) != 0;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("poll", t);
        }
    }

    private static final class StatusTexts {
        static final String[] TEXTS = load();

        private static String[] load() {
            io.cqflux.core.CompletionStatus[] all = io.cqflux.core.CompletionStatus.values();
            String[] t = new String[all.length];
            MethodHandle str = null;
            try {
                // libibverbs is loaded already (librpma links it); ibv_wc_status_str(3) gives the
                // library's own text. Read once into Java strings: no allocation per completion.
                MemorySegment fn = java.lang.foreign.SymbolLookup.libraryLookup("libibverbs.so.1", Arena.global())
                        .find("ibv_wc_status_str").orElse(null);
                if (fn != null) {
                    str = LINKER.downcallHandle(fn, FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
                }
            } catch (RuntimeException e) {
                str = null;
            }
            for (int i = 0; i < all.length; i++) {
                String text = all[i].name();
                if (str != null) {
                    try {
                        MemorySegment s = (MemorySegment) str.invokeExact(i);
                        if (!s.equals(MemorySegment.NULL)) {
                            text = s.reinterpret(256).getString(0, StandardCharsets.UTF_8);
                        }
                    } catch (Throwable e) {
                        text = all[i].name();
                    }
                }
                t[i] = text;
            }
            return t;
        }
    }

    /** {@return libibverbs' text for a completion status ({@code ibv_wc_status_str(3)}), cached} */
    static String statusText(io.cqflux.core.CompletionStatus status) {
        return StatusTexts.TEXTS[status.ordinal()];
    }

    /** {@return a NUL-terminated copy of {@code s} in {@code arena}} */
    static MemorySegment cString(Arena arena, String s) {
        return arena.allocateFrom(s, StandardCharsets.UTF_8);
    }

    /** {@return a copy of {@code len} bytes at {@code ptr}, or an empty array for NULL/0} */
    static byte[] copyBytes(MemorySegment ptr, int len) {
        if (ptr.equals(MemorySegment.NULL) || len <= 0) {
            return new byte[0];
        }
        return io.cqflux.core.internal.Segments.copyOut(ptr.reinterpret(len), 0, len);
    }
}
