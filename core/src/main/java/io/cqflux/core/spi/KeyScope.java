package io.cqflux.core.spi;

/**
 * Where one accepted connection's registrations live so that their keys work on that connection
 * only ({@link io.cqflux.core.Capability#CONNECTION_SCOPED_KEYS}). Opened by
 * {@link ConnectionRequest#scopeKeys()} before the accept; the request's connection is then opened
 * in it too, and a peer that presents one of its keys on any other connection reaches nothing.
 *
 * <p>libfabric: a domain of its own per connection ({@code fi_domain(3)} with the request's
 * {@code fi_info}); an endpoint looks the keys of a remote access up in its own domain only.
 *
 * <p><b>Lifetime.</b> {@link #close()} gives up the caller's hold, at once after the accept (or
 * after the accept failed): the native scope is freed after the last object in it, the connection
 * and every registration of {@link #register}, is closed ({@code fi_domain(3)}: a domain's
 * children before it). Thread-safe.
 */
public interface KeyScope extends Registrar, AutoCloseable {

    /** Gives up the caller's hold; the scope ends with its last registration and connection. Idempotent. */
    @Override
    void close();
}
