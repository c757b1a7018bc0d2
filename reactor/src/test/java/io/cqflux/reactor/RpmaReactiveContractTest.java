package io.cqflux.reactor;

import io.cqflux.core.RegionAccess;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import org.junit.jupiter.api.Tag;

/**
 * The reactive contract on librpma: runs only in the Soft-RoCE lane (tag {@code rpma}), where
 * {@code CQFLUX_RPMA_ADDRESS} names an address of an RDMA-capable interface (rxe). Without it the
 * fixture fails loudly.
 */
@Tag("rpma")
class RpmaReactiveContractTest extends ReactiveContract {

    static InetAddress address() {
        String a = System.getenv("CQFLUX_RPMA_ADDRESS");
        if (a == null || a.isBlank()) {
            throw new IllegalStateException("CQFLUX_RPMA_ADDRESS is not set: the rpma tier runs in the Soft-RoCE lane"
                    + " (scripts/softroce), with the guest's rxe address");
        }
        try {
            return InetAddress.getByName(a);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("CQFLUX_RPMA_ADDRESS " + a + " does not resolve", e);
        }
    }

    @Override
    Cqflux.Builder builder() {
        return Cqflux.builder().transport(TransportChoice.RPMA).localAddress(address());
    }

    /** librpma binds exactly the port given and cannot report a chosen one ({@code rpma_ep_listen(3)}). */
    @Override
    InetSocketAddress listenAddress() {
        return new InetSocketAddress(address(), freePort());
    }

    /**
     * The lane's memory is DRAM: no persistence domain. (PERSISTENT would also need librpma's
     * peer configuration exchange, rpma_conn_apply_remote_peer_cfg(3), which the reactive layer
     * does not carry yet.)
     */
    @Override
    RegionAccess[] serverFlushAccess() {
        return new RegionAccess[] {RegionAccess.FLUSH_TYPE_VISIBILITY};
    }

    /** Soft-RoCE under TCG: a fifth of the fabric iterations. */
    @Override
    int rounds(int n) {
        return Math.max(100, n / 5);
    }

    /** librpma has rpma_atomic_write (0.13+). */
    @Override
    boolean atomicWriteSupported() {
        return true;
    }
}
