package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.cqflux.core.CompletionRecord;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.testing.RdmaResources;
import io.cqflux.core.testing.TransportContract;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The shared transport contract on libfabric's {@code verbs} provider over Soft-RoCE (rxe): runs
 * only in the lane (tag {@code fabric-verbs}, excluded on the host, included by
 * {@code scripts/softroce/run-tests.sh}; {@code CQFLUX_RPMA_ADDRESS} names the rxe address).
 *
 * <p>The defaults of the contract are verbs' behaviour, as on rpma: a bad key fails the one
 * operation with REM_ACCESS_ERR (the provider's prov_errno is the ibv_wc_status), a write with
 * immediate consumes a posted receive (FI_RX_CQ_DATA mode). The first lane runs crashed with
 * SIGSEGV at libfabric.so.1+0x7da50: the zero-length flush passed a descriptor array holding
 * NULL, which verbs dereferences even for iov_count 0 (see FabricPoster#rma).
 */
@Tag("fabric-verbs")
class FabricVerbsContractTest extends TransportContract {

    /**
     * verbs (1.17) drops every completion of a post made without FI_COMPLETION, errors included
     * (its "no completion" marker in vrb_poll_cq), against fi_cq(3); the failure shows as the
     * queue pair's error state: the next signaled operation is flushed.
     */
    @Test
    void unsignaledWriteToClosedRegion_reportsNothingItself_andTheNextSignaledWriteIsFlushed() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        target.close();
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        post("unsignaled write", () -> p.client().write(remote, 0, src, 0, 64, 70, false));
        pump.drainFor(Duration.ofMillis(500));
        post("signaled write", () -> p.client().write(remote, 0, src, 0, 64, 71, true));
        CompletionRecord c = await(p.clientSide(), 71);
        assertEquals(CompletionStatus.WR_FLUSH_ERR, c.status(), c::toString);
        pump.drainFor(Duration.ofMillis(100));
        assertEquals(List.of(), p.clientSide().completions, "nothing else completed (the unsignaled write's"
                + " failure is not reported)");
    }

    /**
     * verbs has FI_MR_LOCAL, and scoped keys are offered all the same: a scoped connection
     * registers the transport's regions it posts from in its own domain (FabricVerbsScopedKeysTest).
     */
    @Test
    void keysScopedToTheirConnection_areOffered_andARequestScopesItsKeys() {
        org.junit.jupiter.api.Assertions.assertTrue(server.capabilities().contains(
                io.cqflux.core.Capability.CONNECTION_SCOPED_KEYS), server.capabilities()::toString);
        org.junit.jupiter.api.Assertions.assertNull(server.connectionScopedKeysRefusal());
        io.cqflux.core.spi.Listener l = closeLater(server.listen(listenAddress(), config()));
        java.util.Deque<io.cqflux.core.spi.ConnectionRequest> reqs = pump.add(l);
        pump.add("client", closeLater(client.connect(l.address(), config(), new byte[0])));
        pump.until("a connection request", DEADLINE, () -> !reqs.isEmpty());
        io.cqflux.core.spi.ConnectionRequest r = reqs.poll();
        io.cqflux.core.spi.KeyScope scope = r.scopeKeys();
        r.reject();
        scope.close();
        org.junit.jupiter.api.Assertions.assertTrue(((ScopedDomain) scope).nativeClosed(),
                "a rejected request's scope closes with its hold");
    }

    /**
     * libfabric 1.17's verbs reject leaves the request's RDMA CM id (FabricListener#reject's fact):
     * the transport destroys it after a reject and after an accept that failed before its
     * endpoint took the request (a test hook throws there, as a failed queue would). Counted by
     * the kernel, {@code rdma resource show cm_id}: the listener's own id only, after each.
     */
    @Test
    void rejectedRequests_andAcceptsFailedBeforeTheirEndpoint_leaveNoCmIdBehind() {
        FabricListener l = (FabricListener) closeLater(server.listen(listenAddress(), config()));
        java.util.Deque<io.cqflux.core.spi.ConnectionRequest> reqs = pump.add(l);
        org.junit.jupiter.api.Assertions.assertEquals(1, RdmaResources.cmIdsFrom(l.address()), "the listener's own");
        for (int i = 0; i < 4; i++) {
            pump.add("client " + i, closeLater(client.connect(l.address(), config(), new byte[0])));
            pump.until("a connection request", DEADLINE, () -> !reqs.isEmpty());
            io.cqflux.core.spi.ConnectionRequest r = reqs.poll();
            if (i % 2 == 0) {
                r.reject();
            } else {
                l.duringAnswer = () -> {
                    throw new IllegalStateException("an accept that fails before its endpoint (test)");
                };
                try {
                    org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                            () -> r.accept(new byte[0]));
                } finally {
                    l.duringAnswer = null;
                }
            }
            org.junit.jupiter.api.Assertions.assertEquals(1, RdmaResources.cmIdsFrom(l.address()),
                    "ids from " + l.address() + " after request " + i + (i % 2 == 0 ? " (rejected)" : " (its accept failed)"));
        }
    }

    /**
     * Completion queues shared by groups of connections rest on tcp's queue (routing by context,
     * its trywait answers, the write-with-immediate tag): verbs, with FI_MR_LOCAL and CQ
     * semantics of its own, refuses the setting when the transport opens, naming both.
     */
    @Test
    void completionQueueGroups_areRefusedOnVerbs_namingTcpAndVerbs() {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> FabricTransport.open("verbs", laneAddress(), 32));
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("fabric.completionQueueGroup=32")
                && e.getMessage().contains("tcp provider only") && e.getMessage().contains("verbs"), e::getMessage);
    }

    static InetAddress laneAddress() {
        String a = System.getenv("CQFLUX_RPMA_ADDRESS");
        if (a == null || a.isBlank()) {
            throw new IllegalStateException("CQFLUX_RPMA_ADDRESS is not set: the verbs provider needs the Soft-RoCE"
                    + " lane (scripts/softroce)");
        }
        try {
            return InetAddress.getByName(a);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(a + " does not resolve", e);
        }
    }

    @Override
    protected Transport openTransport() {
        return Fabric.open("verbs", laneAddress());
    }

    @Override
    protected InetSocketAddress listenAddress() {
        return new InetSocketAddress(laneAddress(), 0);
    }
}
