package io.cqflux.core.fabric;

import io.cqflux.core.fabric.ffm.signal_h;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.Supplier;

/**
 * Keeps the JVM's handlers of the synchronous signals across calls into libfabric.
 *
 * <p>Why: Debian's libfabric links libpsm2 (and libpsm_infinipath) for its psm2 provider, and
 * libpsm2 installs its own SIGSEGV/SIGBUS/SIGILL/SIGFPE/SIGABRT handlers (they write
 * {@code <exe>.<host>-<pid>,<host>.btr} backtrace files; {@code HFI_BACKTRACE}) when it is loaded
 * and initialised. The JVM uses SIGSEGV itself (safepoint polls, implicit null checks, stack
 * banging), so with libpsm2's handler in place the JVM died with "terminated with signal 11" at
 * the next such trap -- at a random later moment, typically at exit. Loading the library and
 * the provider-initialising calls ({@code fi_getinfo}) are therefore wrapped: the handlers in
 * force before are put back afterwards ({@code sigaction(2)}). This is the in-process
 * equivalent of running with the JDK's {@code libjsig}.
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

    /** {@return how many handlers were put back so far (libpsm2 replaced them)} */
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
