package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.Resources;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The part of {@link ReactiveContract} that changes Reactor's global state: Reactor's
 * {@code Hooks.onErrorDropped}, and virtual time, which replaces every scheduler. Each test runs on
 * a fixture of the transport's own contract class ({@link #contract()}), set up and torn down around
 * it as JUnit does for that class's tests.
 *
 * <p>Why a class of its own: these tests hold JUnit's global lock, and JUnit takes that lock for
 * the whole top-level class of a test that holds it (its node tree walker lifts a descendant's
 * global read-write lock to the class). Inside {@link ReactiveContract} they made every transport's
 * contract run alone where classes run concurrently (the Soft-RoCE lane); here only these tests do.
 */
@ResourceLock(value = Resources.GLOBAL, mode = ResourceAccessMode.READ_WRITE)
@ResourceLock(ReactiveContract.SHARED_INSTANCES)
abstract class ReactiveGlobalStateContract {
    static final Duration T = ReactiveContract.T;

    /** The fixture of the test that runs: a connection, its peer's region and a local region. */
    ReactiveContract c;

    /** {@return a new instance of the transport's contract class, whose fixture the tests use} */
    abstract ReactiveContract contract();

    @BeforeEach
    void setUp() {
        c = contract();
        c.setUp();
    }

    @AfterEach
    void tearDown() {
        c.tearDown();
    }

    /** The instances a contract class that shares them made for these tests ({@link ReactiveContract#sharesInstances()}). */
    @AfterAll
    static void closeSharedInstances() {
        ReactiveContract.closeSharedInstances();
    }

    @Test
    void subscribeCancelComplete_race_repeated_keepsEveryCreditAndSlot() {
        AtomicReference<Throwable> dropped = new AtomicReference<>();
        Hooks.onErrorDropped(dropped::set);
        try {
            for (int i = 0; i < c.rounds(1000); i++) {
                Disposable d = c.conn.write(c.remote(), 8L * (i % 100), c.local, 0, 8).subscribeOn(Schedulers.parallel())
                        .subscribe();
                if ((i & 1) == 0) {
                    d.dispose();
                }
            }
            // Everything posted before this operation completed before it (queue order), and its
            // completion means the earlier slots were all retired again.
            for (int k = 0; k < c.conn.sendCredits() + 5; k++) {
                StepVerifier.create(c.conn.read(c.local, 0, c.remote(), 0, 8)).expectComplete().verify(T);
            }
            StepVerifier.create(Flux.range(0, c.conn.sendCredits() * 2)
                    .flatMap(k -> c.conn.write(c.remote(), 0, c.local, 0, 8), c.conn.sendCredits() * 2))
                    .expectComplete().verify(T);
            assertEquals(null, dropped.get(), "successful late completions are dropped quietly");
        } finally {
            Hooks.resetOnErrorDropped();
        }
    }

    @Test
    void throwingSubscriber_neverKillsTheLoop_errorGoesToOnErrorDropped() {
        AtomicReference<Throwable> dropped = new AtomicReference<>();
        Hooks.onErrorDropped(dropped::set);
        try {
            CountDownLatch thrown = new CountDownLatch(1);
            c.conn.write(c.remote(), 0, c.local, 0, 8).subscribe(null, null, () -> {
                thrown.countDown();
                throw new IllegalStateException("user bug");
            });
            assertTrue(ReactiveContract.awaitLatch(thrown));
            StepVerifier.create(c.conn.write(c.remote(), 0, c.local, 0, 8)).expectComplete().verify(T);
        } finally {
            Hooks.resetOnErrorDropped();
        }
    }

    @Test
    void timeout_usesReactorSchedulers_soVirtualTimeWorks() {
        StepVerifier.withVirtualTime(() -> c.serverConn.receive().next().timeout(Duration.ofHours(1)))
                .expectSubscription()
                .thenAwait(Duration.ofHours(1))
                .expectError(TimeoutException.class)
                .verify(T);
    }
}
