package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

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

    /**
     * Under TCG two instances cost more to build and close than most of the contract's tests take:
     * the class shares one server and one client (see {@link ReactiveContract#sharesInstances()}).
     */
    @Override
    boolean sharesInstances() {
        return true;
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
     * The shared contract's server declares no direct write to persistent memory, so it offers
     * VISIBILITY only (PERSISTENT is proven by its own test below).
     */
    @Override
    RegionAccess[] serverFlushAccess() {
        return new RegionAccess[] {RegionAccess.FLUSH_TYPE_VISIBILITY};
    }

    /**
     * PERSISTENT end to end through the reactive API: the server declares direct write to
     * persistent memory (librpma trusts the declaration, so the VM's DRAM serves) and registers
     * its region as persistent; the declaration travels in the accept's handshake, the client
     * applies it (rpma_conn_apply_remote_peer_cfg(3)), and its default durable write flushes at
     * PERSISTENT, exactly as strongestFlush() reports.
     */
    @Test
    void durableWrite_persistentRegion_completesAndIsReadBack() {
        try (Cqflux pmemServer = builder().directWriteToPersistentMemory(true).build()) {
            MemorySegment mem = arena.allocate(SIZE, 64);
            Region region = pmemServer.register(mem, RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                    RegionAccess.FLUSH_TYPE_PERSISTENT);
            RdmaServer bound = pmemServer.bind(listenAddress(), region).block(T);
            bound.connections().subscribe();
            RdmaConnection c = client.connect(bound.address()).block(T);
            PeerRegion remote = c.remoteRegion(0);
            assertEquals(FlushType.PERSISTENT, remote.strongestFlush());
            assertEquals(Set.of(FlushType.PERSISTENT), remote.flushTypes());
            fillRandom(localMem.asSlice(0, 4096), 7);
            StepVerifier.create(c.durableWrite(remote, 512, local, 0, 4096)).expectComplete().verify(T);
            assertEquals(-1, mem.asSlice(512, 4096).mismatch(localMem.asSlice(0, 4096)));
            localMem.asSlice(8192, 4096).fill((byte) 0);
            StepVerifier.create(c.read(local, 8192, remote, 512, 4096)).expectComplete().verify(T);
            assertEquals(-1, localMem.asSlice(8192, 4096).mismatch(localMem.asSlice(0, 4096)));
            // the region offers PERSISTENT only: an explicit VISIBILITY flush is refused, not weakened
            StepVerifier.create(c.durableWrite(remote, 0, local, 0, 8, FlushType.VISIBILITY))
                    .expectError(IllegalArgumentException.class).verify(T);
            c.close();
        }
    }

    /** Soft-RoCE under TCG: a fifth of the fabric iterations. */
    @Override
    int rounds(int n) {
        return Math.max(100, n / 5);
    }

    /** A verbs RDMA write with immediate consumes a posted receive at the target (ibv_post_send(3)). */
    @Override
    boolean notificationConsumesReceive() {
        return true;
    }

    /** Its work completion's byte_len is the length written (ibv_poll_cq(3)). */
    @Override
    long notificationLength(long written) {
        return written;
    }

    /** librpma has rpma_atomic_write (0.13+). */
    @Override
    boolean atomicWriteSupported() {
        return true;
    }
}
