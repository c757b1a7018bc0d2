package io.cqflux.transport.fabric;

import io.cqflux.core.NativeCallException;
import io.cqflux.core.TransportUnavailableException;
import io.cqflux.transport.fabric.ffm.fabric_h;
import io.cqflux.transport.fabric.ffm.fi_ops;
import io.cqflux.transport.fabric.ffm.fid;
import io.cqflux.core.internal.NativeErrors;
import io.cqflux.core.internal.NativeLibraries;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Loads libfabric once and holds what every fabric object needs: the availability verdict, the
 * API version to request, error texts, and the generic {@code fi_close}/{@code fi_control} over
 * the fid ops table ({@code fi_endpoint(3)}: both are {@code static inline} over
 * {@code fid->ops}).
 */
@SuppressWarnings("restricted") // FFM: this package is the native-access boundary of the fabric transport
final class FabricLibrary {

    static final String LIBRARY = "libfabric.so.1";
    static final String INSTALL_HINT = "apt-get install libfabric1";
    /** The oldest API this transport accepts (the floor): 1.11, with {@code max_err_data} in the CQ/EQ attributes. */
    static final int MIN_API = (1 << 16) | 11;

    private static final String CAUSE = probe(LIBRARY);
    private static final int API;
    /** The loaded library's own version ({@code fi_version()}), 0 when it is not usable. */
    private static final int LIBRARY_VERSION;

    static {
        int api = 0;
        int lib0 = 0;
        if (CAUSE.isEmpty()) {
            // Ask for the newer of what the library and our headers know; fi_getinfo(3) refuses a
            // version newer than the library with -FI_ENOSYS.
            int lib = fabric_h.fi_version();
            int hdr = fabric_h.FI_VERSION(fabric_h.FI_MAJOR_VERSION(), fabric_h.FI_MINOR_VERSION());
            api = Math.min(lib, hdr);
            lib0 = lib;
        }
        API = api;
        LIBRARY_VERSION = lib0;
    }

    private FabricLibrary() {
    }

    /**
     * A view of {@code s} with the global scope, for an object's per-operation buffers (a
     * connection's posting structs, a CQ's trywait array): a downcall then acquires and releases
     * no arena around the call (two atomic updates), and an access checks no arena state
     * (DowncallBenchmarks; benchmarks/results/README.md, "Two costs at the native boundary"). The owner uses the view on
     * one thread at a time (its loop's; after the loop ended, the thread that ends the
     * connection, in order), only after its own {@code closed} check, and closes the arena in
     * {@code close()}: the view must never reach code that could run after that, where it would
     * touch freed memory instead of throwing. (The same helper exists in each native module:
     * {@code Libc} in the loop, {@code RpmaNative}.)
     *
     * @param s a segment of the owner's arena
     * @return the same memory, unscoped
     */
    static MemorySegment unscoped(MemorySegment s) {
        return MemorySegment.ofAddress(s.address()).reinterpret(s.byteSize());
    }

    /**
     * Checks whether a libfabric library can be loaded and is new enough, without touching the
     * binding classes when it cannot (their static initialisers would fail).
     *
     * @param library the file name to load
     * @return an empty string when usable; otherwise what is wrong and what to install
     */
    static String probe(String library) {
        keepJvmSignalHandlers();
        // Loading libfabric runs the psm libraries' constructors (see SignalGuard).
        return SignalGuard.preserve(() -> probeUnguarded(library));
    }

    /**
     * Debian's libfabric.so.1 links libinfinipath.so.4 (psm provider), whose load-time constructor
     * installs its own SIGSEGV backtrace handler unless {@code IPATH_NO_BACKTRACE} is set. That
     * replaces HotSpot's handler, which the JVM needs for safepoint polls and implicit null checks:
     * the JVM then dies ("terminated with signal 11 at PC=...") at the first such trap, typically
     * under load. So set the variable ({@code setenv(3)}, keeping a user's own value) before the
     * first dlopen of libfabric. Added by the reactor work (it crashed every reactive test run).
     * The fabric work found the same crash independently; {@link SignalGuard} additionally puts
     * back whatever handler any library still replaces.
     */
    private static void keepJvmSignalHandlers() {
        try (Arena a = Arena.ofConfined()) {
            java.lang.foreign.Linker linker = java.lang.foreign.Linker.nativeLinker();
            java.lang.invoke.MethodHandle setenv = linker.downcallHandle(
                    linker.defaultLookup().find("setenv").orElseThrow(),
                    java.lang.foreign.FunctionDescriptor.of(java.lang.foreign.ValueLayout.JAVA_INT,
                            java.lang.foreign.ValueLayout.ADDRESS, java.lang.foreign.ValueLayout.ADDRESS,
                            java.lang.foreign.ValueLayout.JAVA_INT));
            int rc = (int) setenv.invokeExact(a.allocateFrom("IPATH_NO_BACKTRACE"), a.allocateFrom("1"), 0);
            assert rc == 0;
            // See MR_CACHE_MONITOR: read by libfabric once, at its initialisation (the first
            // fi_getinfo), so it must be in the environment before that.
            rc = (int) setenv.invokeExact(a.allocateFrom(MR_CACHE_MONITOR), a.allocateFrom(MR_CACHE_OFF), 0);
            assert rc == 0;
        } catch (Throwable t) {
            // Best effort: without it only the psm provider's handler problem remains.
        }
    }

    /**
     * The libfabric variable that chooses the memory-registration cache's monitor
     * ({@code fi_mr(3)} "Memory Registration Cache"; values userfaultfd, memhooks, ..., disabled).
     * With a monitor, libfabric 1.17's verbs provider registers every region through its cache:
     * the registration gets ALL access rights (local write, remote read, remote write, remote
     * atomic) whatever {@code fi_mr_reg} asked for, and {@code fi_close} of the MR only drops a
     * cache reference, so the key stays valid for the peer after the region is closed (measured
     * over rxe: a write to a closed region completed with success). cqflux's regions promise the
     * access they were registered with and that close revokes it, so the cache is turned off
     * ({@code setenv} without overwriting a user's value; a provider that would use the cache is
     * refused when it is on, see FabricTransport#open). tcp has no MR cache.
     */
    static final String MR_CACHE_MONITOR = "FI_MR_CACHE_MONITOR";

    /** The {@link #MR_CACHE_MONITOR} value that turns libfabric's MR cache off. */
    static final String MR_CACHE_OFF = "disabled";

    /**
     * Refuses a provider that would register regions through libfabric's MR cache (see
     * {@link #MR_CACHE_MONITOR}): every provider but tcp, unless the cache is off.
     * cqflux turns it off itself; this fires only when the user's environment turned it on.
     */
    static void refuseMrCache(String provider) {
        String why = mrCacheRefusal(provider, nativeEnv(MR_CACHE_MONITOR));
        if (why != null) {
            throw new TransportUnavailableException("fabric", why, null);
        }
    }

    /**
     * @param provider the provider's name
     * @param monitor the value of {@link #MR_CACHE_MONITOR}, null when unset
     * @return why the provider is refused with that MR cache setting, or null when it is not
     */
    static String mrCacheRefusal(String provider, String monitor) {
        if ("tcp".equals(provider)) {
            return null; // tcp registers through no cache (util MR map): access and close are exact
        }
        if (monitor == null || MR_CACHE_OFF.equals(monitor)) {
            return null;
        }
        return "provider '" + provider + "' with " + MR_CACHE_MONITOR + "=" + monitor
                + ": libfabric's MR cache would register every region with all remote access rights and keep it"
                + " registered after close; unset " + MR_CACHE_MONITOR + " or set it to "
                + MR_CACHE_OFF;
    }

    /**
     * {@code getenv(3)} of the process environment (not {@link System#getenv}, which is a copy
     * taken at JVM start and misses what {@code setenv} added since).
     *
     * @param name the variable
     * @return its value, or null when unset
     */
    static String nativeEnv(String name) {
        try (Arena a = Arena.ofConfined()) {
            java.lang.foreign.Linker linker = java.lang.foreign.Linker.nativeLinker();
            java.lang.invoke.MethodHandle getenv = linker.downcallHandle(
                    linker.defaultLookup().find("getenv").orElseThrow(),
                    java.lang.foreign.FunctionDescriptor.of(java.lang.foreign.ValueLayout.ADDRESS,
                            java.lang.foreign.ValueLayout.ADDRESS));
            MemorySegment v = (MemorySegment) getenv.invokeExact(a.allocateFrom(name));
            return v.equals(MemorySegment.NULL) ? null : v.reinterpret(4096).getString(0);
        } catch (Throwable t) {
            return System.getenv(name);
        }
    }

    private static String probeUnguarded(String library) {
        try {
            // Arena.global(): never dlclose libfabric. Loading it with a short-lived arena and
            // closing that arena unloads libfabric and the libraries it pulled in (rdma-core,
            // provider dependencies) while they have registered atexit/thread-key destructors:
            // the JVM then died with SIGSEGV at a later thread exit or at shutdown.
            SymbolLookup lookup = SymbolLookup.libraryLookup(library, Arena.global());
            if (lookup.find("fi_getinfo").isEmpty() || lookup.find("fi_version").isEmpty()) {
                return library + " has no fi_getinfo/fi_version: not a libfabric; install it with " + INSTALL_HINT;
            }
        } catch (IllegalArgumentException | IllegalCallerException e) {
            return NativeLibraries.loadFailure(java.util.List.of(library), e.getMessage(), INSTALL_HINT);
        }
        if (!LIBRARY.equals(library)) {
            return "";
        }
        try {
            int v = fabric_h.fi_version();
            if (Integer.compareUnsigned(v, MIN_API) < 0) {
                return "libfabric " + (v >>> 16) + "." + (v & 0xffff) + " is older than the required 1.11;"
                        + " upgrade it (" + INSTALL_HINT + " from a newer release)";
            }
            return "";
        } catch (Throwable t) {
            return LIBRARY + " failed to initialise (" + t + "); reinstall it with " + INSTALL_HINT;
        }
    }

    /** {@return an empty string when libfabric is usable, otherwise why not} */
    static String cause() {
        return CAUSE;
    }

    /**
     * {@return whether {@code symbol} resolves through the bindings' lookup (libfabric and what it
     * links)}
     *
     * @param symbol a function name
     */
    static boolean hasSymbol(String symbol) {
        return SYMBOLS.computeIfAbsent(symbol, FabricLibrary::findSymbol);
    }

    /** {@link #hasSymbol}'s answers: a lookup is a dlopen(3), needed once per name. */
    private static final java.util.concurrent.ConcurrentHashMap<String, Boolean> SYMBOLS =
            new java.util.concurrent.ConcurrentHashMap<>();

    private static boolean findSymbol(String symbol) {
        try {
            // What fabric_h's lookup searches first: libfabric's handle, which dlsym(3) searches with
            // the libraries it links; then the process's default libraries.
            return SymbolLookup.libraryLookup(LIBRARY, Arena.global()).or(java.lang.foreign.Linker.nativeLinker()
                    .defaultLookup()).find(symbol).isPresent();
        } catch (IllegalArgumentException | IllegalCallerException e) {
            return false;
        }
    }

    /** {@return the loaded library's own version, {@code FI_VERSION(major, minor)}; 0 when unusable} */
    static int libraryVersion() {
        return LIBRARY_VERSION;
    }

    /** {@return the API version passed to fi_getinfo} */
    static int apiVersion() {
        return API;
    }

    /**
     * @param rc a negative libfabric return code
     * @return {@code fi_strerror(-rc)}
     */
    static String strerror(long rc) {
        MemorySegment s = fabric_h.fi_strerror((int) Math.abs(rc));
        return s.equals(MemorySegment.NULL) ? "" : s.reinterpret(4096).getString(0);
    }

    /**
     * Throws for a negative return code, "again" included: use {@link #result} where "again" is
     * an ordinary outcome.
     *
     * @param call the native function
     * @param rc its return code
     * @param detail extra context
     * @return {@code rc} when not negative
     */
    static long check(String call, long rc, String detail) {
        if (rc < 0) {
            throw failure(call, rc, detail);
        }
        return rc;
    }

    /**
     * @param call the native function
     * @param rc its negative return code
     * @param detail extra context
     * @return the exception to throw
     */
    static NativeCallException failure(String call, long rc, String detail) {
        return NativeErrors.failure(call, rc, FabricErrno.nameOf(rc), strerror(rc), detail);
    }

    /** What {@link #result} returns for {@code -FI_EAGAIN}: "no result now, try again". */
    static final long AGAIN = -FabricErrno.EAGAIN.code();

    /**
     * The chokepoint for libfabric's "again": {@code -FI_EAGAIN} is an ordinary outcome
     * ({@code fi_cq_read(3)}: queue empty; {@code fi_eq_read(3)}: no event; {@code fi_msg(3)},
     * {@code fi_rma(3)}: transmit queue momentarily full; {@code fi_trywait(3)}: read first),
     * every other negative code is the exception.
     *
     * @param call the native function
     * @param rc its return code
     * @param detail extra context
     * @return {@code rc} when not negative, or {@link #AGAIN}
     */
    static long result(String call, long rc, String detail) {
        if (rc >= 0 || rc == AGAIN) {
            return rc;
        }
        throw failure(call, rc, detail);
    }

    private static final System.Logger LOG = System.getLogger(FabricLibrary.class.getName());
    /** How many {@code fi_close} calls failed in this JVM (tests read it; see {@link #close}). */
    private static final AtomicLong CLOSE_FAILURES = new AtomicLong();

    /**
     * {@code fi_close(fid)} ({@code fid->ops->close(fid)}), checked. A failure cannot be thrown
     * from the {@code close()} that called it, and it is not harmless either: {@code fi_close(3)}
     * fails with {@code -FI_EBUSY} when something is still bound to the object (an endpoint to a
     * CQ or EQ, an MR or endpoint to its domain, a domain to its fabric), and the object then
     * stays allocated. So it is logged at WARNING with the kind of fid and
     * {@code fi_strerror}, and counted ({@link #closeFailures()}). The callers close in the
     * order {@code fi_endpoint(3)} and {@code fi_domain(3)} require (endpoint before its CQs and
     * EQ, every MR and endpoint before the domain, the domain before the fabric), so that
     * {@code -FI_EBUSY} does not happen in normal operation.
     *
     * @param f a fid (any fid_* object starts with {@code struct fid})
     * @param kind what it is, for the log line: {@code "endpoint"}, {@code "cq"}, {@code "domain"}, ...
     * @param detail which one
     * @return whether it was closed
     */
    static boolean close(MemorySegment f, String kind, Object detail) {
        return close(f, kind, detail, null);
    }

    /**
     * {@link #close(MemorySegment, String, Object)}, whose one WARNING on failure also says what
     * the caller keeps because of it.
     *
     * @param kept what stays allocated when the close fails (e.g. the objects bound to an
     *     endpoint that could not be closed), or {@code null}
     * @return whether it was closed
     */
    static boolean close(MemorySegment f, String kind, Object detail, String kept) {
        MemorySegment ops = fid.ops(f);
        int rc = fi_ops.close.invoke(fi_ops.close(ops), f);
        if (rc == 0) {
            return true;
        }
        CLOSE_FAILURES.incrementAndGet();
        LOG.log(System.Logger.Level.WARNING, () -> "fi_close(" + kind + ") of " + detail + " failed: "
                + FabricErrno.nameOf(rc) + " " + strerror(rc)
                + (rc == -FabricErrno.EBUSY.code() ? "; still in use by an object bound to it: it stays allocated" : "")
                + (kept == null ? "" : "; kept (leaked): " + kept));
        return false;
    }

    /** {@return how many {@code fi_close} calls failed in this JVM so far} */
    static long closeFailures() {
        return CLOSE_FAILURES.get();
    }

    /**
     * {@code fi_control(fid, command, arg)}: {@code fid->ops->control}.
     *
     * @param f the fid
     * @param command e.g. {@code FI_GETWAIT}
     * @param arg the argument
     * @return the return code
     */
    static int control(MemorySegment f, int command, MemorySegment arg) {
        return fi_ops.control.invoke(fi_ops.control(fid.ops(f)), f, command, arg);
    }

    /**
     * {@code fi_ep_bind}/{@code fi_pep_bind}: {@code fid->ops->bind(fid, bfid, flags)}.
     *
     * @param f the endpoint fid
     * @param bound the fid to bind (EQ, CQ)
     * @param flags bind flags
     * @return the return code
     */
    static int bind(MemorySegment f, MemorySegment bound, long flags) {
        return fi_ops.bind.invoke(fi_ops.bind(fid.ops(f)), f, bound, flags);
    }

    /**
     * Reads a C string that the library owns.
     *
     * @param p the pointer
     * @return the string, or an empty one for NULL
     */
    static String string(MemorySegment p) {
        return p.equals(MemorySegment.NULL) ? "" : p.reinterpret(65536).getString(0);
    }
}
