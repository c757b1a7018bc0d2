package io.cqflux.test.network;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The rxe link rig for one test class ({@link RxeLinkRig}): taken before the class's first test
 * (adopted from the lane, which makes it before the JVM starts, or made when none stands) and
 * healed after its last, so that every class starts from a healed link; the rig itself stands
 * until the guest powers off. JUnit runs a superclass's {@code @BeforeAll} first: a subclass's own
 * set-up finds the rig standing.
 *
 * <p>Where the lane runs classes concurrently, these are the ones it runs beside the others
 * ({@link Execution}: their time is mostly partitions and timeouts, waiting, while the others
 * keep the guest's CPU busy). The rig is one link that every class shapes (netem, link down,
 * routes): {@link #RIG} keeps two classes of the rig from running at once. Both are inherited.
 */
@Execution(ExecutionMode.CONCURRENT)
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
