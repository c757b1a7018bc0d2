package io.cqflux.core.spi;

import java.net.InetAddress;
import java.util.Map;
import java.util.Objects;

/**
 * What a {@link TransportProvider} needs to open a transport.
 *
 * @param localAddress the local interface the transport binds to (rpma: the RDMA device that
 *     serves it; fabric: the source address of its endpoints)
 * @param directWriteToPersistentMemory whether this side's registered memory is persistent and
 *     the platform writes incoming RDMA data straight to it (no write-back cache in between).
 *     Only then can a peer make writes to this side persistent ({@code FlushType.PERSISTENT}):
 *     librpma sends it to the peer as its peer configuration
 *     ({@code rpma_peer_cfg_set_direct_write_to_pmem(3)}), and librpma trusts the declaration.
 * @param properties transport-specific options by name, e.g. {@code fabric.provider=tcp}; a
 *     name is {@code <transport>.<option>}: a transport ignores the names of other transports
 *     (an automatic choice may open either) and refuses a name of its own it does not know
 *     ({@link #checkNames}), so a misspelt option fails the open instead of leaving a default
 */
public record TransportOptions(InetAddress localAddress, boolean directWriteToPersistentMemory,
                               Map<String, String> properties) {

    /** The libfabric provider to use ({@code tcp} by default). */
    public static final String FABRIC_PROVIDER = "fabric.provider";

    /**
     * How many connections of one event loop share a completion queue on libfabric's tcp
     * provider, from 1 to 65536 ({@code 2^}{@link Connection#TRANSPORT_CONTEXT_BITS}): a group
     * fills up, then the next one opens; it closes after its last connection. Unset: up to 16
     * connections of each loop at a time keep queues of their own and the rest share in groups of
     * 32 (a
     * member's completions take a way round its group that costs a lone connection about 1.5 µs
     * per round trip, which a loop's first connections are spared: on a client usually its busiest,
     * on a server the first to arrive). 1: a
     * completion queue per connection. Fewer descriptors and less provider memory per
     * connection, for a read that costs O(group size) (docs/performance.md, "Many
     * connections"). A member has one queue for sends and receives: a separate receive queue
     * ({@code ConnectionConfig.withReceiveCompletionQueueSize}) only adds to the entries its group
     * reserves for it. A group holds at most {@code 2^20 / (CQ size + receive CQ size)}
     * connections (its queue's entries are capped at {@code 2^20}), fewer than asked when the
     * queues are large. Other than 1, refused on other providers (unset, they keep a queue per
     * connection).
     *
     * <p>Only connections whose private data is a cqflux hello share a queue: a connection with
     * raw private data and one without an event loop keep queues of their own. One with keys
     * scoped to it (a domain of its own) shares its loop's on libfabric 1.17, the release
     * measured, and keeps queues of its own on others. A peer's write with immediate reaches a grouped
     * connection by a tag in the high 32 bits of its 64-bit CQ data, which the receiving
     * connection draws at random and tells its peer in its hello (its connection parameters);
     * the peer puts it there, whatever its own setting, and a peer that was told no tag sends
     * none. An accepted connection shares a queue only when its client's hello told the client's
     * own parameters (a cqflux from before them gets a queue of its own); an older server does not
     * read a connecting one's tag, so a grouped client connection of this version loses that
     * server's writes with immediate, and warns when established (upgrade servers first, or set 1
     * on such clients). A
     * notification with no tag, or a tag its group does not hold, is dropped and logged
     * (docs/security.md says what a forged tag can and cannot do).
     */
    public static final String FABRIC_COMPLETION_QUEUE_GROUP = "fabric.completionQueueGroup";

    /** Validates and copies. */
    public TransportOptions {
        Objects.requireNonNull(localAddress, "localAddress");
        properties = Map.copyOf(Objects.requireNonNull(properties, "properties"));
    }

    /**
     * Refuses a property in a transport's own namespace that the transport does not know, in any
     * case ({@link #property} matches names ignoring case): a
     * misspelt {@code fabric.provder} would otherwise leave the default provider in place without
     * a word. Names of other namespaces are left alone.
     *
     * @param transport the transport's name, the namespace of its properties ({@code fabric})
     * @param known every property name of that transport
     * @throws IllegalArgumentException naming the property and the names the transport knows
     */
    public void checkNames(String transport, java.util.Set<String> known) {
        String prefix = transport + ".";
        for (String name : new java.util.TreeSet<>(properties.keySet())) {
            if (name.startsWith(prefix) && known.stream().noneMatch(name::equalsIgnoreCase)) {
                throw new IllegalArgumentException("unknown " + transport + " transport property '" + name + "'"
                        + (known.isEmpty() ? ": the " + transport + " transport has none"
                                : "; the " + transport + " transport knows " + new java.util.TreeSet<>(known)));
            }
        }
    }

    /**
     * @param name a property name
     * @param fallback the value when it is not set
     * @return the property's value, or {@code fallback}
     */
    public String property(String name, String fallback) {
        String exact = properties.get(name);
        if (exact != null) {
            return exact;
        }
        // Names are matched ignoring case too: Spring Boot binds an environment variable's map
        // keys in lower case (CQFLUX_TRANSPORTPROPERTIES_FABRIC_COMPLETIONQUEUEGROUP).
        for (Map.Entry<String, String> e : properties.entrySet()) {
            if (e.getKey().equalsIgnoreCase(name)) {
                return e.getValue();
            }
        }
        return fallback;
    }
}
