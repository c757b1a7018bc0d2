package io.cqflux.test.network;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The rxe link rig of one test class ({@link RxeLinkRig}): made before the class's first test,
 * removed after its last, so that every class starts from a healed link of its own. JUnit runs a
 * superclass's {@code @BeforeAll} first: a subclass's own set-up finds the rig made.
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
