package io.cqflux.epoll.loop;

import io.cqflux.core.Completion;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.CompletionSink;
import io.cqflux.core.spi.Pollable;
import java.util.concurrent.CompletableFuture;

/**
 * One registered source: the pollable, its handler, the owner's shutdown hook and the registration
 * state. The loop thread owns {@link #id} and the transitions to {@link #ACTIVE}/{@link #REMOVED};
 * {@link #close()} may come from any thread. Thread-safe.
 */
final class LoopSource implements Registration {

    static final int PENDING = 0;
    static final int ACTIVE = 1;
    static final int REMOVED = 2;

    final EventLoop loop;
    final Pollable pollable;
    /** The queue when {@link #pollable} is a completion queue, else {@code null}. */
    final CompletionQueue cq;
    /** {@link CompletionQueue#pollIsCheap()} of {@link #cq}, asked once; false for other sources. */
    final boolean cheapPoll;
    /** Exception-guarded sink for a queue, else {@code null}. */
    final CompletionSink sink;
    /** The readiness handler of a non-queue source, else {@code null}. */
    final Runnable onReadable;
    /** Runs when the loop drops the source without the owner asking; may be {@code null}. */
    final Runnable onShutdown;
    /** Completes once the loop will never touch the source again. */
    final CompletableFuture<Void> removed = new CompletableFuture<>();

    /** Slot index in the low 32 bits, slot generation in the high 32; loop thread only. */
    long id;
    /** The loop turn that {@link #pollsThisTurn} counts for; loop thread only. */
    long turn;
    /** Native polls of this queue in loop turn {@link #turn}, up to the loop's per-turn budget; loop thread only. */
    int pollsThisTurn;
    /** On the loop's cut-off list: the budget stopped its drain with a full last batch; loop thread only. */
    boolean cutOff;
    /**
     * Its last drain delivered and its poll is cheap ({@link CompletionQueue#pollIsCheap()}): the
     * loop polls it once more before it sleeps; loop thread only.
     */
    boolean pollBeforeSleep;
    /**
     * Busy polls in a row that found nothing, up to the loop's threshold, counted for a
     * {@link #quietCapable} queue while the loop skips quiet queues
     * ({@link CompletionQueue#quiet()}); loop thread only.
     */
    int emptyPolls;
    /**
     * A queue whose poll is not cheap and that {@link CompletionQueue#canBeQuiet()}, asked once,
     * and that does not {@linkplain Pollable#watchTouches watch its touches} (set on registration).
     */
    boolean quietCapable;
    /** The source accepted {@link Pollable#watchTouches}: its yes stands until it says; loop thread only. */
    boolean watched;
    /** A watched source whose last prepareToSleep said yes, untouched since: neither asked nor polled; loop thread only. */
    boolean settled;
    /** In the loop's list of sources to ask before a sleep; loop thread only. */
    boolean toAsk;
    /** In the loop's list of queues a spinning round polls; loop thread only. */
    boolean polled;
    /** In the loop's list of queues polled once more before a sleep; loop thread only. */
    boolean listedBeforeSleep;
    /**
     * A spinning round ran its handler while its prepareToSleep said "not yet": the next round
     * asks again, and runs the handler again while the answer stays so; loop thread only.
     */
    boolean askAgain;
    /** A member's shared source in the loop (Pollable.sharedBy()), else {@code null}; loop thread only. */
    SharedSources.Hub hub;
    /** A member listed as ready in its {@link #hub}; loop thread only. */
    boolean sharedReady;
    /** The loop turn in which a busy round left it unpolled as quiet; loop thread only. */
    long skippedTurn = -1;
    volatile int phase = PENDING;
    /** The owner asked for removal: its shutdown hook no longer runs. */
    volatile boolean closeRequested;

    LoopSource(EventLoop loop, CompletionQueue cq, CompletionSink sink, Runnable onShutdown) {
        this.loop = loop;
        this.pollable = cq;
        this.cq = cq;
        this.cheapPoll = cq.pollIsCheap();
        this.quietCapable = !cheapPoll && cq.canBeQuiet();
        this.sink = new GuardedSink(this, sink);
        this.onReadable = null;
        this.onShutdown = onShutdown;
    }

    LoopSource(EventLoop loop, Pollable source, Runnable onReadable, Runnable onShutdown) {
        this.loop = loop;
        this.pollable = source;
        this.cq = null;
        this.cheapPoll = false;
        this.quietCapable = false;
        this.sink = null;
        this.onReadable = onReadable;
        this.onShutdown = onShutdown;
    }

    /**
     * Unregisters. On the loop thread it takes effect at once (also from within a handler: an
     * event of this source still pending in the current batch is skipped). From another thread it
     * is handed over through the task queue and this call waits until the loop has let go of the
     * source, so that the owner may close it right after; it returns at once when the loop is
     * already shut down (the shutdown removed every source).
     */
    @Override
    public void close() {
        closeRequested = true;
        if (removed.isDone()) {
            return;
        }
        if (loop.inEventLoop()) {
            loop.unregister(this, false);
            return;
        }
        loop.removeFromOtherThread(this);
    }

    boolean isActive() {
        return phase == ACTIVE;
    }

    @Override
    public String toString() {
        return (cq != null ? "completion queue " : "source ") + pollable + " (fd " + safeFd() + ")";
    }

    private String safeFd() {
        try {
            return Integer.toString(pollable.fd());
        } catch (RuntimeException e) {
            return "?";
        }
    }

    /** Calls the owner's sink per entry; an exception it throws is logged and the batch goes on. */
    private record GuardedSink(LoopSource source, CompletionSink delegate) implements CompletionSink {
        @Override
        public void onCompletion(Completion completion) {
            try {
                delegate.onCompletion(completion);
            } catch (Throwable t) {
                LoopLifecycle.rethrowIfFatal(t);
                EventLoop.LOG.log(System.Logger.Level.WARNING, () -> "sink of " + source
                        + " threw on the completion with context 0x" + Long.toHexString(safeContext(completion))
                        + "; the batch goes on", t);
            }
        }

        private static long safeContext(Completion c) {
            try {
                return c.context();
            } catch (RuntimeException e) {
                return -1;
            }
        }
    }
}
