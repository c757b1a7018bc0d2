package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.FI_VERSION;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.transport.fabric.ffm.fid;
import org.junit.jupiter.api.Test;

/**
 * Where the transport destroys the RDMA CM id a reject leaves (FabricListener#reject's fact):
 * verbs on the release measured only, never where the library destroys it itself or might.
 * The destroy itself is counted in the lane (VerbsHostilePeerTest's malformed hellos).
 */
class RejectedRequestIdTest {

    @Test
    void onlyVerbsOnLibfabric117_withRdmaDestroyIdReachable() {
        assertTrue(ProviderProfile.destroysRejectedCmId("verbs", FI_VERSION(1, 17), true));
        assertFalse(ProviderProfile.destroysRejectedCmId("verbs", FI_VERSION(1, 17), false), "no rdma_destroy_id");
        assertFalse(ProviderProfile.destroysRejectedCmId("verbs", FI_VERSION(1, 20), true), "maybe backported");
        assertFalse(ProviderProfile.destroysRejectedCmId("verbs", FI_VERSION(1, 21), true), "fixed upstream");
        assertFalse(ProviderProfile.destroysRejectedCmId("tcp", FI_VERSION(1, 17), true), "tcp has no RDMA CM");
        assertFalse(ProviderProfile.destroysRejectedCmId("verbs", 0, true), "no usable library");
    }

    @Test
    void theIdFollowsTheRequestsFid_andLibrdmacmIsReachableHere() {
        assertEquals(24, FabricListener.VRB_CONNREQ_ID, "struct vrb_connreq { struct fid handle; struct rdma_cm_id *id; }");
        assertEquals(fid.sizeof(), FabricListener.VRB_CONNREQ_ID);
        assertTrue(FabricLibrary.hasSymbol("rdma_destroy_id"), "Debian's libfabric links librdmacm (its verbs provider"
                + " is built in)");
        assertFalse(FabricLibrary.hasSymbol("no_such_function_in_libfabric"));
    }
}
