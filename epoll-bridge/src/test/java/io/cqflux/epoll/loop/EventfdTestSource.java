package io.cqflux.epoll.loop;

import io.cqflux.core.spi.Pollable;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;

/**
 * TEST-ONLY non-queue source (stands in for an event channel or a listener): an eventfd that any
 * thread may {@link #signal()}, and {@link #consume()} for the readiness handler (loop thread).
 */
final class EventfdTestSource implements Pollable, AutoCloseable {

    private final int fd;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment readBuf = arena.allocate(Long.BYTES, Long.BYTES);
    private final MemorySegment loopErrno = arena.allocate(Libc.CAPTURE_LAYOUT);
    private volatile boolean sleepAllowed = true;
    /** {@link #prepareToSleep()} resets the eventfd, as fi_trywait(3) resets a libfabric wait fd's signal. */
    private volatile boolean resetOnAsk;
    /** {@link #prepareToSleep()} calls. */
    final AtomicLong sleepAsks = new AtomicLong();
    /** {@link #signal()} came after the last reset by {@link #prepareToSleep()}. */
    private volatile boolean signalled;
    /** Events {@link #post}ed that the handler has not {@link #takeOne taken} yet. */
    private final AtomicLong pending = new AtomicLong();
    private boolean closed;

    EventfdTestSource() {
        this.fd = Libc.eventfd(Libc.threadErrno());
    }

    void signal() {
        signalled = true;
        Libc.signalEventfd(Libc.threadErrno(), fd);
    }

    /** {@return whether the fd was signalled since the last reset by {@link #prepareToSleep()} (with {@link #resetOnAsk()})} */
    boolean signalled() {
        return signalled;
    }

    /** {@return the counter, reset to 0; loop thread} */
    long consume() {
        return Libc.readEventfd(loopErrno, fd, readBuf);
    }

    /** Adds {@code k} events and signals once, like a libfabric EQ that got k events. Any thread. */
    void post(int k) {
        pending.addAndGet(k);
        signal();
    }

    /** {@return whether an event was there to take; takes one (a handler that does not drain)} */
    boolean takeOne() {
        return pending.getAndUpdate(v -> v > 0 ? v - 1 : 0) > 0;
    }

    void sleepAllowed(boolean allowed) {
        sleepAllowed = allowed;
    }

    /**
     * Makes {@link #prepareToSleep()} reset the eventfd, like a libfabric event queue: its wait fd
     * stays readable after the events were read, until fi_trywait(3) resets the signal. A handler
     * that does not {@link #consume()} then stands for fi_eq_read.
     */
    void resetOnAsk() {
        resetOnAsk = true;
    }

    @Override
    public int fd() {
        return fd;
    }

    @Override
    public boolean prepareToSleep() {
        sleepAsks.incrementAndGet();
        if (resetOnAsk) {
            signalled = false;
            consume();
        }
        return sleepAllowed && pending.get() == 0;
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            Libc.close(Libc.threadErrno(), fd);
            arena.close();
        }
    }
}
