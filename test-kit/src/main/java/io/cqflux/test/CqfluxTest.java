package io.cqflux.test;

import java.time.Duration;
import java.util.Objects;
import reactor.test.StepVerifier;

/**
 * Entry point of the cqflux test kit: a loopback peer in one line, and a bound on every
 * {@link StepVerifier#verify()}.
 *
 * <pre>{@code
 * try (LoopbackPeer peer = CqfluxTest.loopback().regionSize(1 << 20).start()) {
 *     CqfluxTest.verify(StepVerifier.create(
 *             peer.connection().write(peer.remote(), 0, peer.local(), 0, 4096)).expectComplete());
 * }
 * }</pre>
 */
public final class CqfluxTest {

    /**
     * The default bound of {@link #verify(StepVerifier)} and {@link VerifyTimeoutExtension}, where
     * the system property {@value VerifyTimeoutExtension#PROPERTY} does not set another: long
     * enough for any loopback operation on a loaded build machine, short enough that a forgotten
     * completion fails the build instead of hanging it.
     */
    public static final Duration DEFAULT_VERIFY_TIMEOUT = Duration.ofSeconds(10);

    private CqfluxTest() {
    }

    /**
     * {@return a builder of a {@link LoopbackPeer}: libfabric's tcp provider over 127.0.0.1 by
     * default; {@link LoopbackPeer.Builder#start()} starts it}
     */
    public static LoopbackPeer.Builder loopback() {
        return new LoopbackPeer.Builder();
    }

    /**
     * Verifies with the kit's bound: {@link #DEFAULT_VERIFY_TIMEOUT}, or the system property
     * {@value VerifyTimeoutExtension#PROPERTY} when set ({@link VerifyTimeoutExtension#timeout()}).
     *
     * @param verifier the scenario, e.g. {@code StepVerifier.create(mono).expectComplete()}
     * @return how long the verification took
     * @throws AssertionError when the scenario fails or does not end within the bound
     */
    public static Duration verify(StepVerifier verifier) {
        return Objects.requireNonNull(verifier, "verifier").verify(VerifyTimeoutExtension.timeout());
    }

    /**
     * Makes the kit's bound ({@link #DEFAULT_VERIFY_TIMEOUT}, or the system property
     * {@value VerifyTimeoutExtension#PROPERTY} when set) the bound of every
     * {@link StepVerifier#verify()} called without a duration
     * ({@link StepVerifier#setDefaultTimeout(Duration)}, JVM-wide). {@link VerifyTimeoutExtension}
     * does this for a test class and undoes it after.
     */
    public static void setDefaultVerifyTimeout() {
        StepVerifier.setDefaultTimeout(VerifyTimeoutExtension.timeout());
    }
}
