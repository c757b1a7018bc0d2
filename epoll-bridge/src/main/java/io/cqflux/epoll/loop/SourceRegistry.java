package io.cqflux.epoll.loop;

import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.internal.NativeErrors;
import io.cqflux.core.spi.SharedSource;
import java.util.concurrent.ExecutionException;

/**
 * Registration and unregistration of one {@link EventLoop}'s sources: the hand-over from other
 * threads, the id in the {@link SourceTable} and the fd in epoll ({@code epoll_ctl(2)} ADD and
 * DEL), the {@link io.cqflux.core.spi.Pollable#watchTouches} listener, and the owner's shutdown
 * hook. What the wait and the spinning rounds keep per source (to ask, polled, settled) is
 * {@link EpollIoHandler}'s, told here of each add and removal.
 *
 * <p>Thread safety and lifetime: loop thread only (but {@link #register} and
 * {@link #removeFromOtherThread}, which hand over from any thread); lives as long as its loop and
 * holds no native memory.
 */
final class SourceRegistry {

    private final EventLoop loop;
    private final EpollIoHandler io;
    /** Set by {@link #closeSources()}: no registration is accepted afterwards. */
    private boolean sourcesClosed;

    SourceRegistry(EpollIoHandler io) {
        this.io = io;
        this.loop = io.loop;
    }

    /**
     * Registers at once on the loop thread; from another thread, hands over through the task
     * queue (taking effect before any task submitted after it).
     *
     * @return the source, as its registration
     * @throws ResourceClosedException after shutdown started
     */
    Registration register(LoopSource s) {
        if (loop.inEventLoop()) {
            add(s);
        } else {
            loop.execute(new AddTask(s));
        }
        return s;
    }

    /** Registration.close() from another thread: hand over and wait until the loop let go. */
    void removeFromOtherThread(LoopSource s) {
        try {
            loop.execute(new RemoveTask(s));
        } catch (ResourceClosedException e) {
            // Shutdown has begun: the loop removes every source itself before it ends.
        }
        boolean interrupted = false;
        while (true) {
            try {
                s.removed.get();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            } catch (ExecutionException e) {
                break;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A task that a shutdown drops: a registration's hand-over lets its source go with the hook.
     *
     * @return whether {@code r} was a hand-over of this registry
     */
    boolean dropped(Runnable r) {
        assert loop.inEventLoop();
        if (!(r instanceof AddTask a)) {
            return false;
        }
        a.source.phase = LoopSource.REMOVED;
        a.source.removed.complete(null);
        runHook(a.source);
        return true;
    }

    /** A queue or source that failed itself is dropped and its owner told. */
    void fail(LoopSource s, String call, Throwable t) {
        assert loop.inEventLoop();
        EventLoop.LOG.log(System.Logger.Level.ERROR, call + " of " + s + " failed; it is unregistered from event loop " + loop.name(), t);
        unregister(s, true);
    }

    /** Unregisters every source and runs its hook; no registration is accepted afterwards. */
    void closeSources() {
        assert loop.inEventLoop();
        sourcesClosed = true;
        for (LoopSource s : io.sources.all()) {
            try {
                unregister(s, true);
            } catch (Throwable t) {
                LoopLifecycle.rethrowIfFatal(t);
                EventLoop.LOG.log(System.Logger.Level.WARNING, "unregistering " + s + " failed", t);
            }
        }
    }

    /** Adds a source to epoll; loop thread. */
    void add(LoopSource s) {
        assert loop.inEventLoop();
        if (sourcesClosed || loop.isTerminated()) {
            throw new ResourceClosedException("event loop " + loop.name() + " is shut down: " + s + " not registered");
        }
        if (s.phase != LoopSource.PENDING) {
            return; // closed before the hand-over ran
        }
        // A completion queue may be a member too (a CQ that several connections share): the
        // hub then drains it when the shared source's dispatch routed entries to it.
        SharedSource shared = s.pollable.sharedBy();
        if (shared != null) {
            io.shared.add(s, shared); // no fd of its own in epoll: its shared source's
            return;
        }
        int fd = s.pollable.fd();
        if (fd < 0) {
            throw new IllegalArgumentException("source " + s.pollable + " has fd " + fd + " (must be >= 0)");
        }
        s.watched = watch(s);
        if (s.watched) {
            s.quietCapable = false; // settling replaces the quiet-queue rules for it
        }
        long id = io.sources.add(s);
        int e = io.poller.add(fd, id);
        if (e != 0) {
            io.sources.remove(s);
            unwatch(s);
            throw NativeErrors.errno("epoll_ctl", e, "EPOLL_CTL_ADD of fd " + fd + " (" + s.pollable + ")");
        }
        s.phase = LoopSource.ACTIVE;
        io.sourceAdded(s);
    }

    /**
     * Removes a source; loop thread; idempotent.
     *
     * @param runHook whether to run the owner's hook (not when the owner asked)
     */
    void unregister(LoopSource s, boolean runHook) {
        assert loop.inEventLoop();
        if (s.phase == LoopSource.PENDING) {
            s.phase = LoopSource.REMOVED;
            s.removed.complete(null);
            return;
        }
        if (s.phase != LoopSource.ACTIVE) {
            return;
        }
        s.phase = LoopSource.REMOVED;
        if (s.hub != null) {
            io.shared.remove(s);
            s.removed.complete(null);
            if (runHook) {
                runHook(s);
            }
            return;
        }
        io.sources.remove(s);
        io.settled.removed(s);
        if (s.watched) {
            unwatch(s);
        }
        int fd = -1;
        try {
            fd = s.pollable.fd();
        } catch (RuntimeException e) {
            EventLoop.LOG.log(System.Logger.Level.DEBUG, "fd of " + s.pollable + " unavailable at unregistration", e);
        }
        if (fd >= 0) {
            int e = io.poller.delete(fd);
            if (e != 0) {
                // EBADF/ENOENT: the owner closed the fd first; epoll(7) drops a file description
                // from every set when its last fd is closed, so there is nothing left to remove.
                EventLoop.LOG.log(System.Logger.Level.DEBUG, "EPOLL_CTL_DEL of fd {0}: {1}", fd, NativeErrors.errnoName(e));
            }
        }
        s.removed.complete(null);
        if (runHook) {
            runHook(s);
        }
    }

    /** {@return whether the source accepted {@link Pollable#watchTouches}; one that throws is asked every sleep} */
    private boolean watch(LoopSource s) {
        try {
            return s.pollable.watchTouches(() -> io.settled.touched(s));
        } catch (RuntimeException e) {
            EventLoop.LOG.log(System.Logger.Level.WARNING, "watchTouches of " + s + " threw; it is asked before every sleep", e);
            return false;
        }
    }

    private void unwatch(LoopSource s) {
        s.watched = false;
        try {
            s.pollable.watchTouches(null);
        } catch (RuntimeException e) {
            EventLoop.LOG.log(System.Logger.Level.DEBUG, "watchTouches(null) of " + s + " threw", e);
        }
    }

    /** Runs the owner's shutdown hook, unless the owner itself asked for the removal. */
    void runHook(LoopSource s) {
        assert loop.inEventLoop();
        if (s.onShutdown == null || s.closeRequested) {
            return;
        }
        try {
            s.onShutdown.run();
        } catch (Throwable t) {
            LoopLifecycle.rethrowIfFatal(t);
            EventLoop.LOG.log(System.Logger.Level.WARNING, "shutdown hook of " + s + " threw", t);
        }
    }

    /** Hand-over of a registration from another thread. */
    private final class AddTask implements Runnable {
        final LoopSource source;

        AddTask(LoopSource source) {
            this.source = source;
        }

        @Override
        public void run() {
            try {
                add(source);
            } catch (RuntimeException e) {
                EventLoop.LOG.log(System.Logger.Level.ERROR, "registering " + source + " on event loop " + loop.name() + " failed", e);
                source.phase = LoopSource.REMOVED;
                source.removed.complete(null);
                runHook(source);
            }
        }

        @Override
        public String toString() {
            return "register " + source;
        }
    }

    /** Hand-over of an unregistration from another thread. */
    private final class RemoveTask implements Runnable {
        final LoopSource source;

        RemoveTask(LoopSource source) {
            this.source = source;
        }

        @Override
        public void run() {
            unregister(source, false);
        }

        @Override
        public String toString() {
            return "unregister " + source;
        }
    }
}
