package io.cqflux.test;

import io.cqflux.core.TransportUnavailableException;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.spi.TransportOptions;
import io.cqflux.core.spi.TransportProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * The {@link java.util.ServiceLoader} entry of the {@code faulty} transport, a test double that
 * wraps a real transport and applies {@link Faults} rules. Users choose it by name
 * ({@code Cqflux.builder().transport("faulty")} or {@link Faults#configure}); they never call this
 * class. It ranks below every real transport, so an automatic choice never picks it.
 */
public final class FaultyTransportProvider implements TransportProvider {

    /** For {@link java.util.ServiceLoader}. */
    public FaultyTransportProvider() {
    }

    @Override
    public String name() {
        return Faults.TRANSPORT;
    }

    @Override
    public int priority() {
        return Integer.MIN_VALUE;
    }

    @Override
    public String unavailabilityCause() {
        // The wrapped transport is named only in the options of open(), which says why it fails.
        return others().isEmpty() ? "the faulty test transport wraps a real one, and no other transport provider"
                + " is on the class path or module path; add cqflux-transport-fabric" : "";
    }

    @Override
    public Transport open(TransportOptions options) {
        options.checkNames("faulty", java.util.Set.of(Faults.WRAPS, Faults.ID));
        String wrapped = options.property(Faults.WRAPS, "fabric");
        Faults faults = Faults.lookup(options.properties().get(Faults.ID));
        List<TransportProvider> all = others();
        if (wrapped.equals("auto")) {
            // As an automatic choice does: the available provider of the highest priority.
            all.sort(java.util.Comparator.comparingInt(TransportProvider::priority).reversed());
            RuntimeException first = null;
            for (TransportProvider p : all) {
                if (p.unavailabilityCause().isEmpty()) {
                    try {
                        return new FaultyTransport(p.open(options), faults);
                    } catch (RuntimeException e) {
                        first = first == null ? e : first;
                    }
                }
            }
            throw new TransportUnavailableException(Faults.TRANSPORT, "no transport it could wrap opens here", first);
        }
        for (TransportProvider p : all) {
            if (p.name().equals(wrapped)) {
                String cause = p.unavailabilityCause();
                if (!cause.isEmpty()) {
                    throw new TransportUnavailableException(wrapped, cause, null);
                }
                return new FaultyTransport(p.open(options), faults);
            }
        }
        throw new TransportUnavailableException(Faults.TRANSPORT, "it wraps the transport '" + wrapped + "' ("
                + Faults.WRAPS + "), and no provider of that name is on the class path or module path (found: "
                + all.stream().map(TransportProvider::name).toList() + ")", null);
    }

    private static List<TransportProvider> others() {
        List<TransportProvider> out = new ArrayList<>();
        for (TransportProvider p : ServiceLoader.load(TransportProvider.class,
                FaultyTransportProvider.class.getClassLoader())) {
            if (!(p instanceof FaultyTransportProvider)) {
                out.add(p);
            }
        }
        return out;
    }
}
