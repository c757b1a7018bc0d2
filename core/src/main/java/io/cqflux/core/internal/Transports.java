package io.cqflux.core.internal;

import io.cqflux.core.CqfluxException;
import io.cqflux.core.TransportUnavailableException;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.spi.TransportOptions;
import io.cqflux.core.spi.TransportProvider;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Finds transports through {@link ServiceLoader} and opens one by name, or the best available
 * one ("auto"). The only place that knows how a transport is chosen; the reactive layer calls it
 * and compiles against no transport.
 */
public final class Transports {

    /** The name that asks for the available provider of the highest priority. */
    public static final String AUTO = "auto";

    private Transports() {
    }

    /**
     * What {@link #open} chose, and why the providers it tried before were skipped.
     *
     * @param transport the open transport
     * @param provider the provider that opened it
     * @param skipped one line per provider skipped before it ("rpma: no RDMA device …"), in order
     */
    public record Opened(Transport transport, TransportProvider provider, List<String> skipped) {
    }

    /** {@return the providers on the class path or module path, highest priority first} */
    public static List<TransportProvider> providers() {
        List<TransportProvider> out = new ArrayList<>();
        ServiceLoader.load(TransportProvider.class, Transports.class.getClassLoader()).forEach(out::add);
        out.sort(Comparator.comparingInt(TransportProvider::priority).reversed()
                .thenComparing(TransportProvider::name));
        return out;
    }

    /**
     * Opens a transport.
     *
     * @param name a provider's name, or {@link #AUTO}
     * @param options what to open it with
     * @return the transport, its provider and what was skipped on the way
     * @throws TransportUnavailableException when the named provider is absent or cannot open, or
     *     (auto) when none can; the message names every provider tried and why it failed
     */
    public static Opened open(String name, TransportOptions options) {
        List<TransportProvider> all = providers();
        if (!AUTO.equals(name)) {
            for (TransportProvider p : all) {
                if (p.name().equals(name)) {
                    String cause = p.unavailabilityCause();
                    if (!cause.isEmpty()) {
                        throw new TransportUnavailableException(name, cause, null);
                    }
                    return new Opened(p.open(options), p, List.of());
                }
            }
            throw new TransportUnavailableException(name, "no transport provider named '" + name + "' is on the"
                    + " class path or module path (found: " + names(all) + "); add the artifact cqflux-transport-"
                    + name, null);
        }
        if (all.isEmpty()) {
            throw new TransportUnavailableException(AUTO, "no transport provider is on the class path or module"
                    + " path; add cqflux-transport-fabric (any host) and/or cqflux-transport-rpma (RDMA devices)", null);
        }
        List<String> skipped = new ArrayList<>();
        CqfluxException first = null;
        for (TransportProvider p : all) {
            String cause = p.unavailabilityCause();
            if (!cause.isEmpty()) {
                skipped.add(p.name() + ": " + cause);
                continue;
            }
            try {
                return new Opened(p.open(options), p, List.copyOf(skipped));
            } catch (CqfluxException e) {
                // Unavailable, or a native call of the probe failed (a device without memory-lock
                // limits, an odd driver): either way, the next provider is tried.
                skipped.add(p.name() + ": " + e.getMessage());
                if (first == null) {
                    first = e;
                }
            }
        }
        throw new TransportUnavailableException(AUTO, "no transport could be opened on "
                + options.localAddress().getHostAddress() + ": " + String.join("; ", skipped), first);
    }

    private static List<String> names(List<TransportProvider> ps) {
        List<String> n = new ArrayList<>();
        for (TransportProvider p : ps) {
            n.add(p.name());
        }
        return n;
    }
}
