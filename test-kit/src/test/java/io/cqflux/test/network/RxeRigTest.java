package io.cqflux.test.network;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The rxe link rig for one test class ({@link RxeLinkRig}): taken before the class's first test
 * (adopted from the lane, which makes it before the JVM starts, or made when none stands) and
 * healed after its last, so that every class starts from a healed link; the rig itself stands
 * until the guest powers off. JUnit runs a superclass's {@code @BeforeAll} first: a subclass's own
 * set-up finds the rig standing.
 */
abstract class RxeRigTest {
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
