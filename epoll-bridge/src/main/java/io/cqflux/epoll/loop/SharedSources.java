package io.cqflux.epoll.loop;

import io.cqflux.core.spi.Pollable;
import io.cqflux.core.spi.SharedSource;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/*
 * Design.
 *
 * A member source (Pollable.sharedBy() != null) has no fd of its own in epoll: its shared source
 * is registered once per loop, as a plain source whose handler is a Hub. The hub counts the
 * members registered with it and leaves epoll with the last one. On readiness (or when it says
 * it is not safe to sleep) the hub runs SharedSource.dispatch(), which routes each native entry
 * to its member; a member that got something calls the touched callback the hub gave it, which
 * lists the member as ready and touches the hub (so a settled hub is asked again). The hub then
 * runs the handlers of the ready members only: the work of a wake-up follows the members that got
 * something, not how many share the source. A member that is ready although the fd is not
 * readable (its own event, or an entry read before its registration) is found by a sleeping loop
 * through the hub's touch (asked before the sleep) and by a spinning one through its askAgain
 * list (a busy round asks only readable sources). The hub says it is safe to sleep only when no member
 * is listed and the shared source itself says so.
 *
 * A member may be a completion queue (libfabric endpoints sharing one CQ): it is never in the
 * loop's table of queues, so no spinning round polls it and no sleep asks it; the hub drains it
 * (QueueDrainer.drain, with its per-turn budget and cut-off list) when the dispatch routed
 * entries to it, and the hub's prepareToSleep is the shared queue's. The graceful shutdown's last
 * drain reads such a shared source and drains its queue members, again while the source says its
 * read did not empty it (a dispatch may read a bounded batch and leave the rest for the next
 * wake-up, which will not come; dispatchForLastDrain).
 */

/**
 * The shared sources of one {@link EpollIoHandler} and the members registered with each (see
 * {@link Pollable#sharedBy()}).
 *
 * <p>Thread safety and lifetime: loop thread only (but a member's touched callback, which hands
 * over from any thread); lives as long as its loop and holds no native memory.
 */
final class SharedSources {

    /**
     * Failed dispatches in a row after which a hub is dropped with its members. A failure that
     * passes (an error entry that one read consumes, a transient errno) does not repeat, so a
     * few retries cover it; one that stays makes the level-triggered fd readable at once again,
     * so the loop would spin on it forever, failing each time. Sixteen in a row with no success
     * in between leave no doubt, and end such a spin within a few loop turns.
     */
    static final int MAX_FAILURES = 16;
    /**
     * Dispatches of one shared source in the graceful shutdown's last drain at most: it repeats
     * while a dispatch did not read the source to empty, and this bounds it where a peer keeps
     * sending.
     */
    static final int MAX_LAST_DISPATCHES = 1024;
    /** The least time between two WARNINGs about one hub's failed dispatches. */
    static final long LOG_INTERVAL_NANOS = 10_000_000_000L;

    private final EpollIoHandler io;
    private final EventLoop loop;
    private final Map<SharedSource, Hub> hubs = new IdentityHashMap<>();

    SharedSources(EpollIoHandler io) {
        this.io = io;
        this.loop = io.loop;
    }

    /**
     * Adds a member: registers its shared source first if this is the loop's first member of it,
     * then lists the member as ready once (something may have been routed to it before it was
     * registered).
     *
     * @throws IllegalArgumentException when the member does not accept {@link Pollable#watchTouches},
     *     or when its shared source belongs to another loop ({@link SharedSource#claimLoop})
     */
    void add(LoopSource member, SharedSource shared) {
        assert loop.inEventLoop();
        Hub hub = hubs.get(shared);
        if (hub == null) {
            Object owner = shared.claimLoop(loop);
            if (owner != loop) {
                // Two loops would read one native source: its entry buffer and routing are
                // confined to one loop, so events would be misrouted or lost.
                throw new IllegalArgumentException("source " + member.pollable + " shares " + shared
                        + ", which is served by " + owner + ": it cannot be registered on " + loop);
            }
            hub = new Hub(shared);
            hub.source = new LoopSource(loop, hub, hub::run, hub::loopLetGo);
            io.registry.add(hub.source); // throws when epoll refuses: nothing was listed yet
            hubs.put(shared, hub);
        }
        Hub h = hub;
        member.hub = h;
        h.members.add(member);
        boolean accepted;
        try {
            accepted = member.pollable.watchTouches(() -> h.touched(member));
        } catch (RuntimeException e) {
            remove(member);
            throw e;
        }
        if (!accepted) {
            remove(member);
            throw new IllegalArgumentException("source " + member.pollable + " names a shared source but does not"
                    + " accept watchTouches: the loop could not tell when it has something");
        }
        member.phase = LoopSource.ACTIVE;
        h.ready(member);
    }

    /** Removes a member; the last one of its shared source takes the source out of epoll. */
    void remove(LoopSource member) {
        assert loop.inEventLoop();
        Hub h = member.hub;
        if (h == null || !h.members.remove(member)) {
            return;
        }
        try {
            member.pollable.watchTouches(null);
        } catch (RuntimeException e) {
            EventLoop.LOG.log(System.Logger.Level.DEBUG, "watchTouches(null) of " + member + " threw", e);
        }
        if (h.members.isEmpty() && hubs.get(h.shared) == h) {
            hubs.remove(h.shared);
            io.registry.unregister(h.source, false);
        }
    }

    /**
     * The graceful shutdown's last drain: reads each shared source that serves completion queues
     * and drains its queue members (with {@code drain}) after each read, again while the source
     * says its last read did not empty it ({@link SharedSource#lastReadEmptied()}; up to
     * {@link #MAX_LAST_DISPATCHES} rounds). Draining between rounds keeps what the members buffer
     * to one dispatch's reading. A failure is logged and ends that source's rounds: nothing else
     * runs on the loop any more.
     *
     * @param drain drains one completion-queue member to empty
     */
    void dispatchForLastDrain(java.util.function.Consumer<LoopSource> drain) {
        assert loop.inEventLoop();
        for (Hub h : new ArrayList<>(hubs.values())) {
            java.util.List<LoopSource> mine = new ArrayList<>();
            for (LoopSource m : h.members) {
                if (m.cq != null) {
                    mine.add(m);
                }
            }
            if (mine.isEmpty()) {
                continue;
            }
            for (int round = 0; round < MAX_LAST_DISPATCHES; round++) {
                boolean emptied;
                try {
                    h.shared.dispatch();
                    emptied = h.shared.lastReadEmptied();
                } catch (RuntimeException e) {
                    EventLoop.LOG.log(System.Logger.Level.WARNING, "the last dispatch of " + h + " failed", e);
                    emptied = true;
                }
                for (LoopSource m : mine) {
                    drain.accept(m);
                }
                if (emptied) {
                    break;
                }
            }
        }
    }

    /** {@return how many shared sources are registered (tests)} */
    int size() {
        return hubs.size();
    }

    /** One shared source in epoll, with its members and the ones that have something. */
    final class Hub implements Pollable {
        final SharedSource shared;
        final Set<LoopSource> members = new LinkedHashSet<>();
        /** Members whose handler is due (each once; LoopSource.sharedReady). */
        final ArrayDeque<LoopSource> ready = new ArrayDeque<>();
        LoopSource source;
        /** Failed dispatches since the last one that succeeded. */
        int failures;
        /** When the last failure was logged at WARNING ({@link System#nanoTime()}), or 0. */
        long loggedAt;
        /** The loop's touched callback for {@link #source}, while it watches. */
        Runnable hubTouched;

        Hub(SharedSource shared) {
            this.shared = shared;
        }

        @Override
        public int fd() {
            return shared.fd();
        }

        @Override
        public boolean prepareToSleep() {
            return ready.isEmpty() && shared.prepareToSleep();
        }

        @Override
        public boolean watchTouches(Runnable touched) {
            hubTouched = touched;
            return shared.watchTouches(touched);
        }

        /** A member's touched callback: any thread. */
        void touched(LoopSource member) {
            if (loop.inEventLoop()) {
                ready(member);
                return;
            }
            try {
                loop.execute(() -> ready(member));
            } catch (RuntimeException e) {
                // shutting down: the loop lets go of every member
            }
        }

        void ready(LoopSource member) {
            if (!member.isActive() || member.sharedReady) {
                return;
            }
            member.sharedReady = true;
            ready.add(member);
            Runnable t = hubTouched;
            if (t != null) {
                t.run(); // a sleeping loop asks the hub again before it sleeps
            }
            if (source.isActive()) {
                io.spin.queueAskAgain(source); // a spinning one, whose fd may not be readable
            }
        }

        /**
         * The readiness handler: route what is pending, then run the members that got something
         * (also those routed before a dispatch that threw). A failed dispatch is retried on the
         * next wake-up; only {@link #MAX_FAILURES} in a row drop the hub (see there).
         */
        void run() {
            RuntimeException failure = null;
            try {
                shared.dispatch();
                failures = 0;
            } catch (RuntimeException e) {
                failure = e;
                failures++;
                logFailure(e);
            }
            for (int i = ready.size(); i > 0; i--) {
                LoopSource m = ready.poll();
                m.sharedReady = false;
                if (m.isActive()) {
                    if (m.cq != null) {
                        io.drainer.drain(m); // what the dispatch routed to it; a cut-off one goes on
                    } else {
                        io.handleReadable(m);
                    }
                }
            }
            if (failure != null && failures >= MAX_FAILURES && source.isActive()) {
                EventLoop.LOG.log(System.Logger.Level.ERROR, "dispatch of " + this + " failed " + failures
                        + " times in a row: the loop drops it and its members", failure);
                io.registry.unregister(source, true); // its hook (loopLetGo) tells every member
            }
        }

        /** At most one WARNING per {@link #LOG_INTERVAL_NANOS}; the others at DEBUG. */
        private void logFailure(RuntimeException e) {
            long now = System.nanoTime();
            if (loggedAt == 0 || now - loggedAt >= LOG_INTERVAL_NANOS) {
                loggedAt = now;
                EventLoop.LOG.log(System.Logger.Level.WARNING, "dispatch of " + this + " failed (" + failures
                        + " in a row); retried on the next wake-up", e);
            } else {
                EventLoop.LOG.log(System.Logger.Level.DEBUG, "dispatch of " + this + " failed again", e);
            }
        }

        /** The loop let go of the shared source on its own (shutdown, a failure): its members go too. */
        void loopLetGo() {
            hubs.remove(shared, this);
            for (LoopSource m : new ArrayList<>(members)) {
                io.registry.unregister(m, true);
            }
        }

        @Override
        public String toString() {
            return "shared " + shared + " (" + members.size() + " members)";
        }
    }
}
