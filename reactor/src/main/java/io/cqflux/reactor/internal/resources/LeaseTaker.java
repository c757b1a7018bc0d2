package io.cqflux.reactor.internal.resources;

import io.cqflux.reactor.BufferLease;

/**
 * Something that takes a lease of the {@link io.cqflux.reactor.BufferPool}: a subscriber of
 * {@code acquire()} or a staged operation. The pool calls it on whatever thread gave a buffer
 * back, under no lock of its own.
 */
public interface LeaseTaker {
    /**
     * Offers a lease. Must not throw.
     *
     * @param lease a lease, held
     * @return false when the taker no longer wants it (the pool takes it back)
     */
    boolean take(BufferLease lease);

    /**
     * The taker gets no lease. Must not throw.
     *
     * @param error why
     */
    void refused(Throwable error);
}
