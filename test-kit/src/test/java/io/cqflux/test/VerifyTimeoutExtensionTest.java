package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class VerifyTimeoutExtensionTest {

    @Test
    void beforeAll_boundsVerifyWithoutDuration_afterAllResetsIt() {
        System.setProperty(VerifyTimeoutExtension.PROPERTY, "PT0.2S");
        VerifyTimeoutExtension ext = new VerifyTimeoutExtension();
        try {
            ext.beforeAll(null);
            AssertionError e = assertThrows(AssertionError.class,
                    () -> StepVerifier.create(Mono.never()).expectComplete().verify());
            assertTrue(e.getMessage().contains("timed out"), e.getMessage());
        } finally {
            ext.afterAll(null);
            System.clearProperty(VerifyTimeoutExtension.PROPERTY);
        }
        assertEquals(CqfluxTest.DEFAULT_VERIFY_TIMEOUT, VerifyTimeoutExtension.timeout());
    }

    @Test
    void property_notADuration_isRejectedNamingIt() {
        System.setProperty(VerifyTimeoutExtension.PROPERTY, "ten seconds");
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, VerifyTimeoutExtension::timeout);
            assertTrue(e.getMessage().contains("ten seconds"), e.getMessage());
        } finally {
            System.clearProperty(VerifyTimeoutExtension.PROPERTY);
        }
    }

    @Test
    void cqfluxTestVerify_takesTheBoundOfTheProperty_asTheReadmeSays() {
        System.setProperty(VerifyTimeoutExtension.PROPERTY, "PT0.3S");
        try {
            long t0 = System.nanoTime();
            AssertionError e = org.junit.jupiter.api.Assertions.assertThrows(AssertionError.class,
                    () -> CqfluxTest.verify(StepVerifier.create(Mono.never()).expectComplete()));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms < 5_000, "verify ran " + ms + " ms under a 300 ms bound: " + e.getMessage());
        } finally {
            System.clearProperty(VerifyTimeoutExtension.PROPERTY);
        }
    }

    @Test
    void cqfluxTestVerify_appliesTheDefaultBound() {
        Duration took = CqfluxTest.verify(StepVerifier.create(Mono.just(1)).expectNext(1).expectComplete());
        assertTrue(took.compareTo(CqfluxTest.DEFAULT_VERIFY_TIMEOUT) < 0, took.toString());
    }
}
