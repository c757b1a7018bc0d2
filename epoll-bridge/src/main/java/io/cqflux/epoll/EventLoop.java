package io.cqflux.epoll;

import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.CompletionSink;
import io.cqflux.core.spi.Pollable;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * STUB of the event loop API: implemented by the event loop work. Signatures are the contract.
 */
public final class EventLoop implements AutoCloseable {

    private EventLoop() {
    }

    /**
     * Starts a loop thread.
     *
     * @param config the configuration
     * @return the running loop
     */
    public static EventLoop start(LoopConfig config) {
        throw new UnsupportedOperationException("stub");
    }

    /** {@return the loop's name} */
    public String name() {
        throw new UnsupportedOperationException("stub");
    }

    /** {@return whether the caller is this loop's thread} */
    public boolean inLoop() {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Runs a task on the loop thread (after already queued tasks).
     *
     * @param task the task; if it throws, the loop logs and goes on
     * @throws io.cqflux.core.ResourceClosedException after shutdown started
     */
    public void execute(Runnable task) {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Registers a completion queue; on readiness the loop acknowledges it and drains it in
     * batches into {@code sink}. Loop thread only.
     *
     * @param cq the queue
     * @param sink receives each completion; an exception it throws is logged, the batch goes on
     * @return the registration
     */
    public Registration register(CompletionQueue cq, CompletionSink sink) {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Registers any pollable source (event channel, listener); {@code onReadable} runs on the
     * loop thread when its fd is readable. Loop thread only.
     *
     * @param source the source
     * @param onReadable the handler
     * @return the registration
     */
    public Registration register(Pollable source, Runnable onReadable) {
        throw new UnsupportedOperationException("stub");
    }

    /** {@return a snapshot of the counters; any thread} */
    public LoopStats stats() {
        throw new UnsupportedOperationException("stub");
    }

    /**
     * Graceful shutdown: stop taking tasks, run those queued, drain the queues, unregister every
     * source, free native memory, end the thread.
     *
     * @param timeout how long to let queued work finish before forcing
     * @return completes when the thread ended
     */
    public CompletableFuture<Void> shutdownGracefully(Duration timeout) {
        throw new UnsupportedOperationException("stub");
    }

    /** Forced shutdown: queued tasks are dropped (logged), the thread ends as soon as possible. */
    public void shutdownNow() {
        throw new UnsupportedOperationException("stub");
    }

    /** {@return completes when the loop thread has ended and its native memory is freed} */
    public CompletableFuture<Void> terminationFuture() {
        throw new UnsupportedOperationException("stub");
    }

    /** Graceful shutdown and wait for it; idempotent. */
    @Override
    public void close() {
        throw new UnsupportedOperationException("stub");
    }
}
