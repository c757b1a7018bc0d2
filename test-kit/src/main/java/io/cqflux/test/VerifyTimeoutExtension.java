package io.cqflux.test;

import java.time.Duration;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import reactor.test.StepVerifier;

/**
 * A JUnit Jupiter extension that bounds every {@link StepVerifier#verify()} of a test class, so
 * that a verification written without a duration fails instead of hanging the build:
 *
 * <pre>{@code
 * @ExtendWith(VerifyTimeoutExtension.class)
 * class MyRdmaClientTest { ... StepVerifier.create(client.fetch()).expectNextCount(1).verifyComplete(); ... }
 * }</pre>
 *
 * <p>The bound is {@link CqfluxTest#DEFAULT_VERIFY_TIMEOUT}, or the system property
 * {@value #PROPERTY} (an ISO-8601 duration such as {@code PT30S}). It applies
 * {@link StepVerifier#setDefaultTimeout(Duration)} before the class's first test and
 * {@link StepVerifier#resetDefaultTimeout()} after its last: the setting is JVM-wide, so classes
 * that run in parallel share it.
 */
public final class VerifyTimeoutExtension implements BeforeAllCallback, AfterAllCallback {

    /** System property overriding the bound, an ISO-8601 duration ({@link Duration#parse}). */
    public static final String PROPERTY = "cqflux.test.verifyTimeout";

    /** For {@code @ExtendWith}. */
    public VerifyTimeoutExtension() {
    }

    /** {@return the bound it applies: {@value #PROPERTY} if set, else {@link CqfluxTest#DEFAULT_VERIFY_TIMEOUT}} */
    public static Duration timeout() {
        String v = System.getProperty(PROPERTY);
        if (v == null || v.isBlank()) {
            return CqfluxTest.DEFAULT_VERIFY_TIMEOUT;
        }
        Duration d;
        try {
            d = Duration.parse(v.trim());
        } catch (java.time.format.DateTimeParseException e) {
            throw new IllegalArgumentException("system property " + PROPERTY + "=" + v
                    + " is not an ISO-8601 duration such as PT30S", e);
        }
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException("system property " + PROPERTY + "=" + v + " is not positive");
        }
        return d;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        StepVerifier.setDefaultTimeout(timeout());
    }

    @Override
    public void afterAll(ExtensionContext context) {
        StepVerifier.resetDefaultTimeout();
    }
}
