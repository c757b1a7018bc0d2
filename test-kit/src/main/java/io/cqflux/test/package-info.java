/**
 * The cqflux test kit, for tests of code that uses cqflux.
 *
 * <ul>
 *   <li>{@link io.cqflux.test.CqfluxTest#loopback()}: a server and a client over the loopback
 *       interface, connected, with registered regions, in one line ({@link io.cqflux.test.LoopbackPeer}).</li>
 *   <li>{@link io.cqflux.test.Faults}: rules for the {@code faulty} transport, a test double
 *       that wraps a real transport and fails, hangs, delays or drops chosen operations.</li>
 *   <li>{@link io.cqflux.test.VerifyTimeoutExtension} and
 *       {@link io.cqflux.test.CqfluxTest#verify(reactor.test.StepVerifier)}: a bound on every
 *       {@code StepVerifier} verification.</li>
 * </ul>
 *
 * <p>Tests that run on the class path grant native access with
 * {@code --enable-native-access=ALL-UNNAMED} (the transports call libfabric and librpma).
 */
package io.cqflux.test;
