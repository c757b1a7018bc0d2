package io.cqflux.core;

/** A closed resource (connection, region, event loop, entry point) was used, or closed under a pending operation. */
public final class ResourceClosedException extends CqfluxException {
    private static final long serialVersionUID = 1L;

    /** @param message what was closed and what was attempted */
    public ResourceClosedException(String message) {
        super(message, null);
    }
}
