package io.cqflux.reactor.internal.resources;

import io.cqflux.reactor.Region;
import java.util.List;

/**
 * Argument checks that several public entry points share (the entry point's connect and bind,
 * the connect and accept options), so that each has one wording wherever it is reached from.
 * Stateless; any thread.
 */
public final class Arguments {
    private Arguments() {
    }

    /**
     * Copies the exposed regions, refusing a null array or element with the position named.
     *
     * @param exposed the regions as given
     * @return an immutable copy
     * @throws IllegalArgumentException when the array or one of its elements is null
     */
    public static List<Region> exposedRegions(Region[] exposed) {
        if (exposed == null) {
            throw new IllegalArgumentException("exposed regions array is null (pass none for no regions)");
        }
        for (int i = 0; i < exposed.length; i++) {
            if (exposed[i] == null) {
                throw new IllegalArgumentException("exposed region " + i + " of " + exposed.length + " is null");
            }
        }
        return List.of(exposed);
    }
}
