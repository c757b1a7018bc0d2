package io.cqflux.epoll.loop;

/**
 * A source registered with an {@link EventLoop}. Closing it unregisters (idempotent); it does not
 * close the source.
 *
 * <p>Thread safety and lifetime: {@link #close()} may be called from any thread. On the loop thread
 * (also from within the source's own handler) it takes effect at once. From another thread it is
 * handed to the loop and waits until the loop has let go of the source, so that the owner may free
 * the source right after; to avoid that wait, close both from a loop task
 * ({@code loop.execute(() -> { registration.close(); queue.close(); })}). After the loop shut down
 * it returns at once: the shutdown already unregistered every source.
 */
public interface Registration extends AutoCloseable {

    /** Removes the source from the loop; idempotent; callable from any thread (see the class comment). */
    @Override
    void close();
}
