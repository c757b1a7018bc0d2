package io.cqflux.reactor;

import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * What a server answers connection requests with: a cqflux hello (the default: exposed regions,
 * the transport's handshake, the control words) or, per request, raw private data for clients not
 * written with cqflux. Used with {@link Cqflux#bind(java.net.InetSocketAddress, AcceptOptions)}.
 *
 * <pre>{@code
 * // a C client built on librpma that speaks its examples' common_data
 * byte[] mine = RpmaCommonData.encode(region.rawDescriptor(), cq.peerConfigurationDescriptor(), 0);
 * RdmaServer s = cq.bind(address, AcceptOptions.rawPrivateData(request -> AcceptDecision.accept(mine))).block();
 * }</pre>
 *
 * <p><b>Raw private data.</b> The accept function sees each request's private data exactly as the
 * transport delivered it (padded by RDMA CM to 56 bytes on rpma) and answers with its own bytes,
 * verbatim, or rejects. It runs on the server's event-loop thread: keep it short and never block.
 * If it throws, returns {@code null} or answers more than {@link Cqflux#maxAcceptPrivateData()}
 * bytes, the request is rejected and the reason logged at WARN. The connection has no cqflux
 * hello (see {@link ConnectOptions#rawPrivateData(byte[])} for what that means).
 *
 * <p>Immutable and thread-safe.
 */
public final class AcceptOptions {
    private final List<Region> exposed;
    private final Function<byte[], AcceptDecision> accept;

    private AcceptOptions(List<Region> exposed, Function<byte[], AcceptDecision> accept) {
        this.exposed = exposed;
        this.accept = accept;
    }

    /**
     * A cqflux hello that exposes regions to every client, as {@link Cqflux#bind(java.net.InetSocketAddress, Region...)}.
     *
     * @param regions the regions, in the order the clients' {@link RdmaConnection#remoteRegions()} lists them
     * @return the options
     */
    public static AcceptOptions exposing(Region... regions) {
        List<Region> checked = Cqflux.exposedRegions(regions); // one check, one wording, for every entry point
        return new AcceptOptions(checked, null);
    }

    /**
     * Raw private data: {@code accept} decides on each request from its raw private data.
     *
     * @param accept called on the event loop with a copy of each request's private data, as delivered
     * @return the options
     */
    public static AcceptOptions rawPrivateData(Function<byte[], AcceptDecision> accept) {
        return new AcceptOptions(List.of(), Objects.requireNonNull(accept, "accept"));
    }

    /** {@return whether requests are answered with raw private data instead of a cqflux hello} */
    public boolean isRaw() {
        return accept != null;
    }

    /** {@return the regions a cqflux hello exposes (empty with raw private data)} */
    public List<Region> exposed() {
        return exposed;
    }

    Function<byte[], AcceptDecision> acceptFunction() {
        return accept;
    }

    @Override
    public String toString() {
        return accept != null ? "AcceptOptions[raw]" : "AcceptOptions[hello, " + exposed.size() + " exposed regions]";
    }
}
