package io.cqflux.reactor.internal.resources;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.reactor.Region;
import java.time.Duration;
import java.util.List;

/**
 * The public entry points' argument checks that have one wording wherever they are reached from:
 * the exposed regions of the entry point's connect and bind and of the connect and accept options,
 * and the builder's checks that are more than a range (its ranges go through
 * {@link io.cqflux.core.internal.Checks#inRange}, every module's one wording for them).
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

    /**
     * Refuses a blank string.
     *
     * @param name the setting, as the message names it
     * @param value the string given, not null
     * @return {@code value}
     * @throws IllegalArgumentException {@code "<name> \"<value>\" is blank"}
     */
    public static String notBlank(String name, String value) {
        if (value.isBlank()) {
            throw new IllegalArgumentException(name + " \"" + value + "\" is blank");
        }
        return value;
    }

    /**
     * Checks the memory of one connection's receive pool, allocated and registered at once on
     * its first subscription (or at establishment with a receive prefetch): a size no memory
     * can give is refused at {@code build()}, naming it, rather than failing on the loop that
     * allocates it.
     *
     * @param receiveQueueSize the receive queue's depth
     * @param receiveBufferSize bytes per receive buffer
     * @param max the most bytes allowed, a whole number of GiB
     * @throws IllegalArgumentException naming both sizes and the bound
     */
    public static void receivePool(int receiveQueueSize, int receiveBufferSize, long max) {
        long bytes = (long) receiveQueueSize * receiveBufferSize;
        if (bytes > max) {
            throw new IllegalArgumentException("a connection's receive pool of receiveQueueSize " + receiveQueueSize
                    + " x receiveBufferSize " + receiveBufferSize + " bytes is " + bytes + " bytes, above the bound "
                    + max + " (" + (max >> 30) + " GiB); lower either");
        }
    }

    /**
     * Checks the keep-alive's interval; one of zero or below is refused with the way to switch
     * the keep-alive off, since that is what such a value usually means.
     *
     * @param interval the interval given, not null
     * @param min the shortest interval allowed
     * @param max the longest interval allowed
     * @return {@code interval}
     * @throws IllegalArgumentException when it is outside [{@code min}, {@code max}]
     */
    public static Duration keepAliveInterval(Duration interval, Duration min, Duration max) {
        if (interval.compareTo(min) < 0 || interval.compareTo(max) > 0) {
            throw new IllegalArgumentException("keepAlive interval " + interval + " is outside [" + min + ", "
                    + max + "]" + (interval.isZero() || interval.isNegative() ? "; noKeepAlive() switches it off" : ""));
        }
        return interval;
    }

    /**
     * Checks the connection configuration: a durable write holds two send-queue slots, so a
     * send queue of fewer could never post one.
     *
     * @param c the configuration, not null
     * @return {@code c}
     * @throws IllegalArgumentException when its send queue has fewer than 2 entries
     */
    public static ConnectionConfig connectionConfig(ConnectionConfig c) {
        if (c.sendQueueSize() < 2) {
            throw new IllegalArgumentException("sendQueueSize " + c.sendQueueSize()
                    + " is below 2: a durable write holds two send-queue slots");
        }
        return c;
    }
}
