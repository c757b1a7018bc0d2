package io.cqflux.test.network;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The rxe link rig for one test class ({@link RxeLinkRig}): taken before the class's first test
 * (adopted from the lane, which makes it before the JVM starts, or made when none stands) and
 * healed after its last, so that every class starts from a healed link; the rig itself stands
 * until the guest powers off. JUnit runs a superclass's {@code @BeforeAll} first: a subclass's own
 * set-up finds the rig standing.
 *
 * <p>The rig is one link that every class shapes (netem, link down, routes): the lane runs its
 * classes concurrently, and {@link #RIG} keeps two classes of the rig from running at once. It is
 * inherited, so every subclass holds it; other lane classes run beside it.
 */
@ResourceLock(RxeRigTest.RIG)
abstract class RxeRigTest {
    /** The lock every class on the rig holds for its whole run. */
    static final String RIG = "io.cqflux.test.network.RxeLinkRig";

    static RxeLinkRig rig;

    @BeforeAll
    static void makeRig() {
        rig = RxeLinkRig.create();
    }

    @AfterAll
    static void removeRig() {
        if (rig != null) {
            rig.close();
            rig = null;
        }
    }
}
