package io.cqflux.transport.fabric;

import io.cqflux.transport.fabric.ffm.signal_h;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.Supplier;

/**
 * Keeps the JVM's handlers of the synchronous signals across calls into libfabric.
 *
 * <p>Why: Debian's libfabric links the psm libraries (libpsm_infinipath.so.1, libpsm2.so.2),
 * whose load-time constructors install their own SIGSEGV/SIGBUS/SIGILL/SIGFPE handlers (they
 * write {@code <exe>.<host>-<pid>,<host>.btr} backtrace files). The JVM uses SIGSEGV itself
 * (safepoint polls, implicit null checks, stack banging), so with such a handler in place the
 * JVM died with "terminated with signal 11" at the next trap -- at a random later moment,
 * typically at exit. Measured here: loading libfabric replaced 4 handlers; with
 * {@code IPATH_NO_BACKTRACE=1} set first (see {@code FabricLibrary#keepJvmSignalHandlers}) it
 * replaced none, so libinfinipath was the one. This guard stays as the general safety net: the
 * load and the provider-initialising calls ({@code fi_getinfo}) run inside {@link #preserve},
 * which puts back any handler that changed ({@code sigaction(2)}) -- the in-process equivalent
 * of running with the JDK's {@code libjsig}. (A trap in another thread during the call itself
 * would still meet the foreign handler; the window is the dlopen.)
 */
@SuppressWarnings("restricted") // FFM: this package is the native-access boundary of the fabric transport
final class SignalGuard {

    private static final int[] SIGNALS = {signal_h.SIGSEGV(), signal_h.SIGBUS(), signal_h.SIGILL(),
        signal_h.SIGFPE(), signal_h.SIGABRT()};
    /** Larger than glibc's {@code struct sigaction} (152 bytes on x86-64, checked by a test). */
    static final int SIGACTION_BYTES = 256;
    private static volatile int restored;

    private SignalGuard() {
    }

    /**
     * Runs {@code call}, then restores the signal handlers that were installed before it.
     *
     * @param <T> the result type
     * @param call the call into libfabric
     * @return its result
     */
    static synchronized <T> T preserve(Supplier<T> call) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment saved = a.allocate((long) SIGACTION_BYTES * SIGNALS.length, 16);
            MemorySegment now = a.allocate(SIGACTION_BYTES, 16);
            for (int i = 0; i < SIGNALS.length; i++) {
                signal_h.sigaction(SIGNALS[i], MemorySegment.NULL, saved.asSlice((long) i * SIGACTION_BYTES, SIGACTION_BYTES));
            }
            try {
                return call.get();
            } finally {
                for (int i = 0; i < SIGNALS.length; i++) {
                    MemorySegment old = saved.asSlice((long) i * SIGACTION_BYTES, SIGACTION_BYTES);
                    signal_h.sigaction(SIGNALS[i], MemorySegment.NULL, now);
                    // sa_handler/sa_sigaction is the first field
                    if (now.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0) != old.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0)) {
                        signal_h.sigaction(SIGNALS[i], old, MemorySegment.NULL);
                        restored++;
                    }
                }
            }
        }
    }

    /** {@return how many handlers were put back so far (a library had replaced them)} */
    static int restoredCount() {
        return restored;
    }

    /**
     * {@return the current handler address of a signal, for tests}
     *
     * @param sig the signal
     */
    static long handler(int sig) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment now = a.allocate(SIGACTION_BYTES, 16);
            signal_h.sigaction(sig, MemorySegment.NULL, now);
            return now.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0);
        }
    }
}
