package io.cqflux.core.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/*
 * Design: why an event loop never closes a shared arena itself.
 *
 * Closing a shared arena (Arena.ofShared) is a handshake with every Java thread: the JVM must
 * know that no thread is inside an access to the arena's memory before it frees it, and a thread
 * that the host has preempted answers only once it runs again. On a loaded host that is a long
 * tail, where a confined arena's close is not (benchmarks/results, the arenas folder, has the
 * measurements). A connection's native objects
 * (endpoint, queues, control words) each keep their native scratch in a shared arena, because the
 * thread that makes them is not always the loop that uses and closes them; closing those arenas
 * on the loop made every close and every refused client a stall of the loop and of every other
 * connection on it.
 *
 * So the owner of native memory closes the native object that could still touch it first
 * (fi_close of the endpoint or queue, the deregistration of a region: from then on neither the NIC
 * nor the provider may write it), and only then closes this arena, which hands the shared arena's
 * close to one daemon thread of the process. What must hold: nothing is freed earlier than the
 * owner's close() (later, by the time the daemon thread takes it); the owner never touches the
 * memory after its close() (the segments stay valid until the real close, so a bug there reads
 * stale memory instead of failing: the owners are the project's own, each closing its native
 * object before its arena). The queue is unbounded; it is drained as fast as the handshakes go,
 * and each entry is one arena, so what it holds is the memory of connections closed in the last
 * moments.
 */

/**
 * An arena backed by a shared arena whose {@link #close()} returns at once and leaves the shared
 * arena's close (a handshake with every Java thread) to a daemon thread; see the design comment
 * at the top of this file. For native scratch that no native object can touch any more when the
 * owner closes it. Thread-safe.
 */
public final class DeferredArena implements Arena {

    private static final LinkedBlockingQueue<Arena> QUEUE = new LinkedBlockingQueue<>();
    private static final AtomicLong PENDING = new AtomicLong();
    private static final AtomicLong CLOSED = new AtomicLong();
    private static final Thread CLOSER;

    static {
        CLOSER = Thread.ofPlatform().daemon().name("cqflux-arena-closer")
                .inheritInheritableThreadLocals(false).unstarted(DeferredArena::closeLoop);
        // A process-wide thread started by whichever caller comes first: it must not pin that
        // caller's class loader (an application server's redeploy would leak it), neither as its
        // context class loader nor through an inherited thread-local.
        CLOSER.setContextClassLoader(null);
        CLOSER.start();
    }

    private final Arena shared = Arena.ofShared();
    private final AtomicBoolean closed = new AtomicBoolean();

    /** {@return a new arena; its memory lives until after its {@link #close()}} */
    public static DeferredArena ofShared() {
        return new DeferredArena();
    }

    private DeferredArena() {
    }

    @Override
    public MemorySegment allocate(long byteSize, long byteAlignment) {
        if (closed.get()) {
            throw new IllegalStateException("the arena is closed; nothing more is allocated from it");
        }
        return shared.allocate(byteSize, byteAlignment);
    }

    @Override
    public MemorySegment.Scope scope() {
        return shared.scope();
    }

    /**
     * Hands the shared arena's close to the closer thread; idempotent, returns at once. Call only
     * once nothing native can touch the memory any more.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            PENDING.incrementAndGet();
            QUEUE.add(shared);
        }
    }

    /**
     * Starts the closer thread, if no caller did yet, on the calling thread: a thread inherits
     * its creator's CPU priority (sched(7)), so a library that lowers some of its threads calls
     * this first from one that is not lowered. Any thread.
     */
    public static void ensureStarted() {
        // Nothing to do: calling a static method initialises the class, whose initialiser starts it.
    }

    /** {@return arenas handed to the closer thread and not closed yet} (tests, diagnostics) */
    public static long pending() {
        return PENDING.get();
    }

    /** {@return arenas the closer thread has closed since the process started} (tests, diagnostics) */
    public static long closedTotal() {
        return CLOSED.get();
    }

    private static void closeLoop() {
        while (true) {
            Arena a;
            try {
                a = QUEUE.take();
            } catch (InterruptedException e) {
                continue; // a daemon of the process: it lives as long as the process
            }
            try {
                a.close();
            } catch (RuntimeException e) {
                // Already closed, or an access still runs on another thread (IllegalStateException):
                // neither may kill the closer; the memory of the latter stays, which is safe.
                System.getLogger(DeferredArena.class.getName()).log(System.Logger.Level.WARNING,
                        "closing a native arena failed; its memory is left allocated", e);
            } finally {
                PENDING.decrementAndGet();
                CLOSED.incrementAndGet();
            }
        }
    }
}
