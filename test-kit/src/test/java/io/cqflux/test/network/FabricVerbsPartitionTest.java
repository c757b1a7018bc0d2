package io.cqflux.test.network;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionException;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.TransportUnavailableException;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.TransportChoice;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/*
 * Facts (the Soft-RoCE lane's guest: Debian 12's libfabric 1.17, rxe on the rig's veth ends,
 * QEMU/TCG; figures in docs/reliability.md):
 *
 * - The provider is plain `verbs`, FI_EP_MSG over the RDMA CM (fi_info: protocol
 *   FI_PROTO_RDMA_CM_IB_RC), not `verbs;ofi_rxm` (that is FI_EP_RDM, which the fabric transport
 *   never asks for); a connection describes itself as "fabric/verbs client to ADDRESS:PORT". Both
 *   ends use the same RC queue pairs of the same rxe devices as rpma, so loss, reordering and
 *   duplication are rxe's to repair for both transports alike (its counters show it).
 * - It works over the rig's policy-routed addresses as they are: fi_getinfo with the rig address
 *   as its source (FI_SOURCE) finds that end's rxe device, a listener takes port 0, and the
 *   packets cross the veth (netem counts the drops, the server's rxe counts the duplicates).
 * - libfabric's verbs provider lists the RDMA devices and their addresses once per process, when
 *   libfabric is first used (libfabric 1.17's prov/verbs: VERBS_INI -> vrb_init_info; no hint,
 *   environment variable or fi_freeinfo refreshes it, see RxeLinkRig's facts): in a JVM that used
 *   libfabric before the rig's rxe devices existed (the full lane, where FabricVerbsContractTest
 *   and FabricVerbsReactiveContractTest run first), fi_getinfo offered no FI_EP_MSG endpoint on
 *   the rig's addresses ("provider 'verbs' offers no FI_EP_MSG endpoint with FI_MSG|FI_RMA on
 *   198.18.200.2"), although the rig stood and rpma (librdmacm, which finds devices added later)
 *   used it. So the lane makes the rig before its JVM starts (scripts/softroce/rxe-link-rig.sh,
 *   run by run-tests.sh), and this class runs in the lane's one JVM, in its default run, wherever
 *   it falls among the verbs classes; run alone outside run-tests.sh, its rig is made by its own
 *   JVM before that JVM's first libfabric call (RxeRigTest's set-up runs before the one below).
 * - The JVM's first verbs transport is slow to come up under TCG (tens of seconds), its first
 *   listener takes seconds, and its first connect may time out once (as it did in most runs)
 *   before the next attempt succeeds; later ones take well under a second. Without the warm-up below the first case ran
 *   into its bound on bind.
 * - A partition reaches the provider as nothing at all within these bounds: no error completion
 *   and no CM event while it holds (rxe's retry_exceeded_err stays 0: the queue pair does not
 *   report IBV_WC_RETRY_EXC_ERR within the longest partition here), as on rpma. The writes in
 *   flight end by cqflux's operation deadline (LOST: "an operation posted ... ms ago has no
 *   completion"), and a connect into it ends at its own timeout (UNREACHABLE: "connect to ...
 *   timed out after ... ms"). A 2 s partition under a 5 s timeout goes either way, as on rpma:
 *   ridden out, or ended LOST at the deadline, by where rxe's fixed retransmission timer stands at
 *   the heal.
 * - Under heavy host load the end of a verbs connection can hold its loop for seconds (the loop's
 *   blocked-thread warning names cqflux.connectionEnd), and the writes it fails are signalled
 *   after it, later than on rpma by up to that much. Hence END_SLACK.
 */

/**
 * The {@link RxePartitionContract} on libfabric's {@code verbs} provider over Soft-RoCE: the same
 * partitions, loss, reordering and duplication as on rpma, over the same {@link RxeLinkRig}. Runs
 * in the lane's default run (tag {@code fabric-verbs}), which makes the rig before the JVM's first
 * libfabric call (see the facts); alone:
 * {@code scripts/softroce/run-tests.sh --build -- --select-class=io.cqflux.test.network.FabricVerbsPartitionTest}.
 */
@Tag("fabric-verbs")
class FabricVerbsPartitionTest extends RxePartitionContract {
    /**
     * What the end of a verbs connection, which can hold its loop for seconds under load, adds to
     * the deadline's slack (see the facts).
     */
    static final Duration END_SLACK = Duration.ofSeconds(3);

    /**
     * The first verbs transport of a JVM, its first listener and its first connect take far longer
     * than the next ones (see the facts): made and closed once here, with generous bounds, so that
     * no case's bound pays them.
     */
    @BeforeAll
    static void loadTheProvider() {
        long t0 = System.nanoTime();
        Cqflux server;
        try {
            server = Cqflux.builder().transport(TransportChoice.FABRIC).fabricProvider("verbs")
                    .localAddress(rig.serverAddress).shutdownTimeout(Duration.ofSeconds(2)).build();
        } catch (TransportUnavailableException e) {
            throw new AssertionError("libfabric's verbs provider does not see the rig's address " + rig.serverAddress
                    + ": it lists the RDMA devices once per process, so this JVM used libfabric before the rig's rxe"
                    + " devices existed; start the JVM after " + RxeLinkRig.RIG_SCRIPT
                    + " (scripts/softroce/run-tests.sh does), or run this class first in its JVM", e);
        }
        Cqflux client = null;
        try (Arena arena = Arena.ofShared()) {
            long built = System.nanoTime();
            RdmaServer s = server.bind(new InetSocketAddress(rig.serverAddress, 0),
                    server.register(arena.allocate(4096, 64), RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                            RegionAccess.FLUSH_TYPE_VISIBILITY)).block(Duration.ofMinutes(5));
            s.connections().subscribe();
            long bound = System.nanoTime();
            client = Cqflux.builder().transport(TransportChoice.FABRIC).fabricProvider("verbs")
                    .localAddress(rig.clientAddress).shutdownTimeout(Duration.ofSeconds(2)).build();
            int attempts = 0;
            RdmaConnection c = null;
            while (c == null) {
                attempts++;
                try {
                    c = client.connect(s.address()).block(Duration.ofMinutes(1));
                } catch (ConnectionException e) {
                    if (attempts == 5) {
                        throw e;
                    }
                }
            }
            long connected = System.nanoTime();
            System.out.printf("FACT fabric-verbs first transport of the JVM: built in %.0f ms, first listener bound in"
                    + " %.0f ms, first connect (default timeout %d ms) took %d attempt(s), %.0f ms: %s%n",
                    (built - t0) / 1e6, (bound - built) / 1e6, ConnectionConfig.DEFAULT.timeout().toMillis(), attempts,
                    (connected - bound) / 1e6, c.description());
            c.dispose();
        } finally {
            for (Cqflux x : new Cqflux[] {client, server}) {
                if (x != null) {
                    x.dispose();
                    x.onDispose().toFuture().completeOnTimeout(null, 20, TimeUnit.SECONDS).join();
                }
            }
        }
    }

    @Override
    Cqflux.Builder transport(Cqflux.Builder b) {
        return b.transport(TransportChoice.FABRIC).fabricProvider("verbs");
    }

    @Override
    String name() {
        return "fabric-verbs";
    }

    @Override
    Duration slack() {
        return SLACK.plus(END_SLACK);
    }
}
