package io.cqflux.transport.rpma;

import io.cqflux.transport.rpma.ffm.librpma_h;
import io.cqflux.transport.rpma.ffm.rpma_log_function;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

/**
 * Routes librpma's log into {@link System.Logger} (logger {@code io.cqflux.transport.rpma.librpma})
 * through {@code rpma_log_set_function(3)} and an FFM upcall.
 *
 * <p><b>What is lost, and why it is safe.</b> {@code rpma_log_function} is variadic: a
 * printf-like format followed by {@code ...}. FFM cannot create a variadic upcall. On the
 * x86-64 System V ABI (and AArch64 Linux) the fixed arguments of a variadic call travel exactly as
 * for a non-variadic function (registers, in order; {@code %al} only tells a variadic callee how
 * many vector registers to save, which a non-variadic callee ignores), so an upcall declared with
 * the five fixed parameters is ABI-safe — but it cannot see the format arguments. The Java record
 * therefore carries the level, the source file and line, the function name and the <i>unexpanded</i>
 * format string (e.g. {@code "rdma_getaddrinfo(%s:%s): %s"}), all in the message text because
 * {@code System.Logger} has no source-location parameters; the actual values (addresses, errno
 * text) are not available. The return code and captured errno of the failing call, which the
 * transport puts into its exceptions, carry that information instead. Logging every argument
 * would need librpma's default function ({@code RPMA_LOG_USE_DEFAULT_FUNCTION}: syslog and, above
 * the {@code RPMA_LOG_THRESHOLD_AUX} threshold, stderr), which is what
 * {@code -Dcqflux.rpma.log=native} keeps.
 *
 * <p><b>Robustness.</b> A Java exception escaping an upcall terminates the JVM, so the upcall
 * catches everything. It also saves and restores the C {@code errno} around the Java code, so
 * that logging inside a failing librpma call cannot change the errno the transport captures
 * right after that call returns. The upcall stub lives in the global arena: librpma keeps the
 * pointer for the life of the process.
 *
 * <p>The threshold ({@code RPMA_LOG_THRESHOLD}) follows the logger at install time, found by
 * asking {@link System.Logger#isLoggable} level by level (the facade has no "effective level"
 * getter, and whatever backs it — java.util.logging by default, or a {@code System.LoggerFinder}
 * such as SLF4J's — answers that question); {@link #syncThreshold()} asks again. Levels:
 * librpma FATAL/ERROR → {@code ERROR}, WARNING → {@code WARNING}, NOTICE → {@code INFO},
 * INFO → {@code DEBUG}, DEBUG → {@code TRACE}.
 */
final class RpmaLog {

    static final Logger LOGGER = System.getLogger("io.cqflux.transport.rpma.librpma");

    private static final AtomicBoolean INSTALLED = new AtomicBoolean();
    /** librpma logs through {@link #onLog}, not its default function (set once by {@link #install}). */
    private static volatile boolean replaced;
    /**
     * Bound while the transport probes for an RDMA device: a failing probe is the expected outcome
     * on hosts without one, and its exception carries the reason (return code and errno), so
     * librpma's own ERROR lines about it are demoted to DEBUG. The upcall runs synchronously on the
     * calling thread, inside the librpma call, so a scoped value reaches it.
     */
    static final ScopedValue<Boolean> PROBING = ScopedValue.newInstance();
    private static final MethodHandle ERRNO_LOCATION = errnoLocation();

    private RpmaLog() {
    }

    private static MethodHandle errnoLocation() {
        Linker linker = Linker.nativeLinker();
        return linker.defaultLookup().find("__errno_location")
                .map(a -> linker.downcallHandle(a, FunctionDescriptor.of(ValueLayout.ADDRESS.withTargetLayout(ValueLayout.JAVA_INT))))
                .orElse(null);
    }

    /** Installs the upcall once per process (librpma's log function is global); idempotent and thread-safe. */
    static void install() {
        if (!INSTALLED.compareAndSet(false, true)) {
            return;
        }
        if ("native".equals(System.getProperty("cqflux.rpma.log"))) {
            return;
        }
        MemorySegment stub = rpma_log_function.allocate(RpmaLog::onLog, Arena.global());
        if (!RpmaNative.logged(LOGGER, Level.WARNING, "rpma_log_set_function", librpma_h.rpma_log_set_function(stub),
                "librpma keeps its default log")) {
            return;
        }
        replaced = true;
        syncThreshold();
    }

    /**
     * {@return whether librpma's log function is this class's upcall, not
     * {@code rpma_log_default_function} (which {@code -Dcqflux.rpma.log=native} keeps, as does a
     * failed {@code rpma_log_set_function}); false before {@link #install}}
     */
    static boolean replacesDefault() {
        return replaced;
    }

    /** Sets {@code RPMA_LOG_THRESHOLD} from what the logger currently lets through. */
    static void syncThreshold() {
        librpma_h.rpma_log_set_threshold(librpma_h.RPMA_LOG_THRESHOLD(), thresholdFor(LOGGER::isLoggable));
    }

    /**
     * @param loggable whether the logger publishes a level ({@link System.Logger#isLoggable})
     * @return the librpma threshold that lets through exactly the messages the logger would
     *     publish under {@link #levelOf}: the most verbose librpma level whose mapped level is
     *     loggable, or {@code RPMA_LOG_DISABLED} when not even {@code ERROR} is
     */
    static int thresholdFor(Predicate<Level> loggable) {
        if (loggable.test(Level.TRACE)) {
            return librpma_h.RPMA_LOG_LEVEL_DEBUG();
        }
        if (loggable.test(Level.DEBUG)) {
            return librpma_h.RPMA_LOG_LEVEL_INFO();
        }
        if (loggable.test(Level.INFO)) {
            return librpma_h.RPMA_LOG_LEVEL_NOTICE();
        }
        if (loggable.test(Level.WARNING)) {
            return librpma_h.RPMA_LOG_LEVEL_WARNING();
        }
        if (loggable.test(Level.ERROR)) {
            return librpma_h.RPMA_LOG_LEVEL_ERROR();
        }
        return librpma_h.RPMA_LOG_DISABLED();
    }

    /**
     * @param rpmaLevel an {@code enum rpma_log_level} value
     * @return its level: FATAL/ERROR → ERROR, WARNING → WARNING, NOTICE → INFO, INFO → DEBUG,
     *     DEBUG (and anything more verbose) → TRACE
     */
    static Level levelOf(int rpmaLevel) {
        if (rpmaLevel <= librpma_h.RPMA_LOG_LEVEL_ERROR()) {
            return Level.ERROR;
        }
        if (rpmaLevel == librpma_h.RPMA_LOG_LEVEL_WARNING()) {
            return Level.WARNING;
        }
        if (rpmaLevel == librpma_h.RPMA_LOG_LEVEL_NOTICE()) {
            return Level.INFO;
        }
        if (rpmaLevel == librpma_h.RPMA_LOG_LEVEL_INFO()) {
            return Level.DEBUG;
        }
        return Level.TRACE;
    }

    /**
     * The text of one librpma record: the unexpanded format, then where it came from.
     *
     * @param format the format string as librpma passed it
     * @param function the C function that logged
     * @param file the C source file
     * @param line the line in it
     * @return {@code "librpma: <format> [<function> at <file>:<line>; format arguments not available: variadic upcall]"}
     */
    static String message(String format, String function, String file, int line) {
        return "librpma: " + format.strip() + " [" + function + " at " + file + ":" + line
                + "; format arguments not available: variadic upcall]";
    }

    /** The upcall. Must never throw (an exception escaping an upcall kills the JVM). */
    static void onLog(int level, MemorySegment file, int line, MemorySegment function, MemorySegment format) {
        int savedErrno = 0;
        MemorySegment errnoPtr = MemorySegment.NULL;
        try {
            if (ERRNO_LOCATION != null) {
                errnoPtr = ((MemorySegment) ERRNO_LOCATION.invokeExact()).reinterpret(4);
                savedErrno = errnoPtr.get(ValueLayout.JAVA_INT, 0);
            }
            Level l = PROBING.isBound() ? Level.DEBUG : levelOf(level);
            if (LOGGER.isLoggable(l)) {
                LOGGER.log(l, message(str(format), str(function), str(file), line));
            }
        } catch (Throwable t) {
            try {
                LOGGER.log(Level.DEBUG, "dropping a librpma log record", t);
            } catch (Throwable ignored) {
                // nothing more we can safely do inside an upcall
            }
        } finally {
            if (!errnoPtr.equals(MemorySegment.NULL)) {
                try {
                    errnoPtr.set(ValueLayout.JAVA_INT, 0, savedErrno);
                } catch (Throwable ignored) {
                    // the segment is valid; never propagate out of an upcall
                }
            }
        }
    }

    private static String str(MemorySegment s) {
        if (s == null || s.equals(MemorySegment.NULL)) {
            return "?";
        }
        return s.reinterpret(4096).getString(0, StandardCharsets.UTF_8);
    }
}
