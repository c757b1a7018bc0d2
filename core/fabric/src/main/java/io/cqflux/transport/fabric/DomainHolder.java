package io.cqflux.transport.fabric;

/**
 * A libfabric domain that endpoints, completion queues and memory regions are opened in: the
 * transport's own (every connection of it by default), or one accepted connection's
 * ({@link ScopedDomain}). {@code fi_domain(3)} calls a domain the boundary for associating
 * resources, so an endpoint is bound to CQs of its own domain, except where binding one of a
 * scoped domain to a CQ of the transport's was measured to work
 * ({@link ProviderProfile#sharesQueuesAcrossDomains}); the target of a remote access looks the key
 * up in its endpoint's domain; every object opened in a domain must be closed before it, so each child holds the domain
 * ({@link #retain()}) until it closed ({@link #release()}).
 */
interface DomainHolder {

    /** {@return the domain and its ops} */
    DomainOps ops();

    /**
     * Holds the domain open for a child being created.
     *
     * @throws io.cqflux.core.ResourceClosedException when the domain (or its transport) is closed
     */
    void retain();

    /** A child closed; the last one closes a domain whose close was asked for meanwhile. */
    void release();

    /** {@return the domain's flush sink: where a flush of a connection opened in it reads back into} */
    FabricLocalRegion flushSink();
}
