package io.cqflux.reactor.internal.resources;

import io.cqflux.core.ResourceClosedException;
import io.cqflux.epoll.LoopStats;
import io.cqflux.epoll.loop.EventLoop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An instance's event loops: connections are spread over them round-robin ({@link #next()}),
 * and the first one also runs what belongs to no connection ({@link #first()}). Thread-safe; the
 * loops are started before and shut down through it.
 */
public final class LoopGroup {
    private final EventLoop[] loops;
    private final AtomicInteger next = new AtomicInteger();

    /** @param loops the started loops, at least one */
    public LoopGroup(EventLoop[] loops) {
        if (loops.length == 0) {
            throw new IllegalArgumentException("a loop group needs at least one loop");
        }
        this.loops = loops.clone();
    }

    /**
     * {@return the loop for the next connection: round-robin over the group's loops, less those
     * that ended on a fatal error} Such a loop (a JVM-fatal {@code Error} that subscriber code threw
     * on it: docs/architecture.md, "Failure") is passed over: a connection handed to it would wait
     * out its connect timeout for a thread that is gone.
     *
     * @throws ResourceClosedException when every loop of the group ended on a fatal error
     */
    public EventLoop next() {
        for (int tries = 0; tries < loops.length; tries++) {
            EventLoop l = loops[Math.floorMod(next.getAndIncrement(), loops.length)];
            if (!l.endedOnFatalError()) {
                return l;
            }
        }
        throw new ResourceClosedException("every event loop of this instance (" + names() + ") has ended, on a"
                + " fatal error that code running on it threw (the log names it): the instance can serve no new"
                + " connection; dispose it and build another");
    }

    /**
     * {@return the first loop: the one listeners run on, and the one a timer's task that belongs
     * to no connection (a peer pool's reconnect, an acquire's bound) is handed to; choosing it
     * leaves the round-robin of {@link #next()}, which spreads connections, where it is}
     */
    public EventLoop first() {
        return loops[0];
    }

    /** {@return the loops' thread names, in the order of {@link #stats()}} */
    public List<String> names() {
        List<String> out = new ArrayList<>();
        for (EventLoop l : loops) {
            out.add(l.name());
        }
        return out;
    }

    /** {@return a snapshot of each loop's counters} */
    public List<LoopStats> stats() {
        List<LoopStats> out = new ArrayList<>();
        for (EventLoop l : loops) {
            out.add(l.stats());
        }
        return out;
    }

    /**
     * Shuts every loop down gracefully within {@code budget}, then forcibly.
     *
     * @param budget what is left of the shutdown's budget
     * @return completes once every loop thread ended
     */
    public CompletableFuture<Void> shutdownGracefully(Duration budget) {
        List<CompletableFuture<Void>> ends = new ArrayList<>();
        for (EventLoop l : loops) {
            ends.add(l.shutdownGracefully(budget));
        }
        return CompletableFuture.allOf(ends.toArray(CompletableFuture[]::new));
    }

    /** {@return a line per loop whose thread has not ended yet, for a shutdown's report} */
    public List<String> stillRunning() {
        List<String> left = new ArrayList<>();
        for (EventLoop l : loops) {
            if (!l.endedOnFatalError()) {
                left.add("event loop " + l.name() + " still running (a handler may block its thread)");
            }
        }
        return left;
    }
}
