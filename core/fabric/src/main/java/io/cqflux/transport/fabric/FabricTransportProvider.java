package io.cqflux.transport.fabric;

import io.cqflux.core.spi.Transport;
import io.cqflux.core.spi.TransportOptions;
import io.cqflux.core.spi.TransportProvider;

/**
 * The fabric transport's {@link TransportProvider} ({@code ServiceLoader} name {@code fabric}).
 * It ranks below rpma: its default {@code tcp} provider runs on any host, so it is the fallback.
 * The libfabric provider comes from the option {@link TransportOptions#FABRIC_PROVIDER}.
 */
public final class FabricTransportProvider implements TransportProvider {

    /** Its {@link #priority()}. */
    public static final int PRIORITY = 10;

    /** For {@link java.util.ServiceLoader}. */
    public FabricTransportProvider() {
    }

    @Override
    public String name() {
        return "fabric";
    }

    @Override
    public int priority() {
        return PRIORITY;
    }

    @Override
    public String unavailabilityCause() {
        return Fabric.unavailabilityCause();
    }

    @Override
    public Transport open(TransportOptions options) {
        options.checkNames(name(), java.util.Set.of(TransportOptions.FABRIC_PROVIDER,
                TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP));
        int group = completionQueueGroup(options.property(TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP, null));
        return FabricTransport.open(options.property(TransportOptions.FABRIC_PROVIDER, Fabric.DEFAULT_PROVIDER),
                options.localAddress(), group);
    }

    /**
     * Parses {@link TransportOptions#FABRIC_COMPLETION_QUEUE_GROUP}.
     *
     * @param value the property's value, or {@code null} when unset
     * @return the group size, or 0 when unset: the provider's default
     *     ({@link CompletionGroup#DEFAULT_SIZE} on tcp, 1 elsewhere: FabricTransport#open)
     * @throws IllegalArgumentException when it is no number or outside 1 to {@link CompletionGroup#MAX_MEMBERS}
     */
    static int completionQueueGroup(String value) {
        if (value == null) {
            return 0;
        }
        long k;
        try {
            k = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP + "='" + value
                    + "' is not a whole number from 1 to " + CompletionGroup.MAX_MEMBERS);
        }
        if (k < 1 || k > CompletionGroup.MAX_MEMBERS) {
            throw new IllegalArgumentException(TransportOptions.FABRIC_COMPLETION_QUEUE_GROUP + "=" + k
                    + " is outside 1 to " + CompletionGroup.MAX_MEMBERS + " connections per completion queue");
        }
        return (int) k;
    }

    @Override
    public String toString() {
        return "fabric (libfabric)";
    }
}
