package io.cqflux.epoll;

/** A source registered with an {@link EventLoop}. Closing it unregisters (idempotent); it does not close the source. */
public interface Registration extends AutoCloseable {

    /** Removes the source from the loop; idempotent; callable from any thread. */
    @Override
    void close();
}
