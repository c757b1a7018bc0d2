package io.cqflux.core;

/** The transport or provider lacks a capability the request needs; refused before anything is posted. */
public final class UnsupportedCapabilityException extends CqfluxException {
    private static final long serialVersionUID = 1L;

    private final String provider;
    private final Capability capability;

    /**
     * @param provider the transport and provider, e.g. {@code fabric/tcp}
     * @param capability what it lacks
     * @param hint what the caller can use instead
     */
    public UnsupportedCapabilityException(String provider, Capability capability, String hint) {
        super(provider + " does not support " + capability + (hint == null || hint.isEmpty() ? "" : ": " + hint), null);
        this.provider = provider;
        this.capability = capability;
    }

    /** {@return the transport/provider name} */
    public String provider() {
        return provider;
    }

    /** {@return the missing capability} */
    public Capability capability() {
        return capability;
    }
}
