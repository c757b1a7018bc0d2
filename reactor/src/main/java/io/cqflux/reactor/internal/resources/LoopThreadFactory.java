package io.cqflux.reactor.internal.resources;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.scheduler.NonBlocking;

/**
 * Creates the event-loop threads as {@link NonBlocking} threads, so that Reactor's blocking
 * operators ({@code block()}, {@code blockFirst()}, ...) called on a loop thread fail fast instead
 * of deadlocking the loop that would have to complete them.
 */
public final class LoopThreadFactory implements ThreadFactory {
    private final String prefix;
    private final AtomicInteger counter = new AtomicInteger();

    public LoopThreadFactory(String prefix) {
        this.prefix = prefix;
    }

    @Override
    public Thread newThread(Runnable r) {
        Thread t = new LoopThread(r, prefix + "-" + counter.getAndIncrement());
        t.setDaemon(true);
        return t;
    }

    /** A loop thread (or the library's timer thread): marked non-blocking for Reactor. */
    public static final class LoopThread extends Thread implements NonBlocking {
        public LoopThread(Runnable r, String name) {
            super(r, name);
        }

        /**
         * @param inheritThreadLocals whether to take the creating thread's inheritable thread
         *     locals, as {@link Thread#Thread(ThreadGroup, Runnable, String, long, boolean)} says
         */
        public LoopThread(Runnable r, String name, boolean inheritThreadLocals) {
            super(null, r, name, 0, inheritThreadLocals);
        }
    }
}
