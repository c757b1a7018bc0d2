package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.reactor.Cqflux;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.availability.ApplicationAvailabilityAutoConfiguration;
import org.springframework.boot.availability.ApplicationAvailability;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.web.server.context.WebServerGracefulShutdownLifecycle;
import org.springframework.web.server.WebFilter;

class CqfluxRequestGateTest {

    @Test
    void phases_gateClosesBeforeTheServersGracefulShutdown_cqfluxDrainsAfterTheServersStop() {
        // Higher phases stop first: gate, graceful shutdown (MAX - 1024), server stop (MAX - 2048), drain.
        assertThat(CqfluxRequestGate.PHASE).isEqualTo(Integer.MAX_VALUE - 512)
                .isGreaterThan(WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE);
        assertThat(new CqfluxRequestGate().getPhase()).isEqualTo(CqfluxRequestGate.PHASE);
        assertThat(CqfluxLifecycle.PHASE).isLessThan(WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE - 1024);
    }

    @Test
    void enterExitClose_countTheAdmitted_andRefuseAfterTheClose() {
        CqfluxRequestGate gate = new CqfluxRequestGate();
        gate.start();
        assertThat(gate.isRunning()).isTrue();
        assertThat(gate.enter()).isTrue();
        assertThat(gate.enter()).isTrue();
        gate.exit();
        assertThat(gate.active()).isEqualTo(1);
        gate.stop();
        assertThat(gate.isClosed()).isTrue();
        assertThat(gate.isRunning()).isFalse();
        assertThat(gate.enter()).isFalse();
        assertThat(gate.active()).as("a refused request is not counted").isEqualTo(1);
        gate.exit();
        assertThat(gate.active()).isZero();
        gate.start();
        assertThat(gate.isClosed()).as("closing is final").isTrue();
        assertThat(gate.isRunning()).isFalse();
    }

    @Test
    void exitWithoutAnAdmittedRequest_isIgnored_soTheNextAdmittedOneIsStillCounted() {
        CqfluxRequestGate gate = new CqfluxRequestGate();
        gate.exit(); // unmatched (a caller's mistake): counted, it would hide the next request from the drain
        assertThat(gate.active()).isZero();
        assertThat(gate.enter()).isTrue();
        assertThat(gate.active()).isEqualTo(1);
    }

    /** Admissions racing the close: every admitted request is counted by the time close() returns. */
    @Test
    void enterRacingClose_noAdmittedRequestIsMissedByTheCount() throws Exception {
        for (int round = 0; round < 50; round++) {
            CqfluxRequestGate gate = new CqfluxRequestGate();
            AtomicInteger admitted = new AtomicInteger();
            CountDownLatch go = new CountDownLatch(1);
            List<CompletableFuture<Void>> threads = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                threads.add(CompletableFuture.runAsync(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    // Until well after the close (bounded, should the close never come).
                    for (int i = 0, after = 0; after < 1_000 && i < 50_000_000; i++) {
                        if (gate.enter()) {
                            admitted.incrementAndGet(); // never exits: all must stay counted
                        } else {
                            after++;
                        }
                    }
                }));
            }
            go.countDown();
            while (admitted.get() < 1_000) { // close while the admissions are going on
                Thread.onSpinWait();
            }
            gate.close();
            // What the drain reads right after the close: every request admitted (before the close,
            // necessarily) must be in it. A check of the flag before the count would miss one that
            // checked, then was overtaken by the close and its read, then counted.
            int atClose = gate.active();
            CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
            assertThat(atClose).as("admitted requests the count read at the close missed").isGreaterThanOrEqualTo(admitted.get());
            assertThat(gate.active()).isEqualTo(admitted.get());
        }
    }

    @Test
    void close_publishesRefusingTraffic_oncePerGate_asItsSource() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ApplicationAvailabilityAutoConfiguration.class))
                .run(ctx -> {
                    ApplicationAvailability availability = ctx.getBean(ApplicationAvailability.class);
                    AtomicLong published = new AtomicLong();
                    ctx.addApplicationListener(e -> {
                        if (e instanceof AvailabilityChangeEvent<?> a && a.getState() == ReadinessState.REFUSING_TRAFFIC) {
                            published.incrementAndGet();
                        }
                    });
                    AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC);
                    CqfluxRequestGate gate = new CqfluxRequestGate(ctx);
                    gate.close();
                    assertThat(availability.getReadinessState()).isEqualTo(ReadinessState.REFUSING_TRAFFIC);
                    assertThat(published.get()).isEqualTo(1);
                    gate.close(); // closing is idempotent
                    assertThat(published.get()).isEqualTo(1);
                    // Already refusing (a closing context, a required peer down): published all the
                    // same, with the gate as the source, so that CqfluxReadiness, which raises the
                    // readiness it lowered itself when its peers come back, leaves it alone.
                    new CqfluxRequestGate(ctx).close();
                    assertThat(published.get()).isEqualTo(2);
                });
    }

    @Test
    void autoConfigured_inAReactiveWebApplication_gateFilterAndLifecycleShareIt() {
        new ReactiveWebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ApplicationAvailabilityAutoConfiguration.class,
                        CqfluxAutoConfiguration.class))
                .withPropertyValues("cqflux.transport=fabric")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed().hasSingleBean(CqfluxRequestGate.class)
                            .hasSingleBean(CqfluxRequestGateFilter.class);
                    CqfluxRequestGate gate = ctx.getBean(CqfluxRequestGate.class);
                    assertThat(ctx.getBean(CqfluxRequestGateFilter.class).gate()).isSameAs(gate);
                    assertThat(gate.isRunning()).isTrue();
                    // The lifecycle's stop closes the gate (when called alone) and waits for it.
                    ctx.getBean(CqfluxLifecycle.class).stop();
                    assertThat(gate.isClosed()).isTrue();
                    assertThat(ctx.getBean(Cqflux.class).isDisposed()).isTrue();
                });
    }

    @Test
    void notAutoConfigured_outsideAReactiveWebApplication_orWithoutWebFlux() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class))
                .withPropertyValues("cqflux.transport=fabric")
                .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(CqfluxLifecycle.class)
                        .doesNotHaveBean(CqfluxRequestGate.class).doesNotHaveBean(CqfluxRequestGateFilter.class));
        new ReactiveWebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class))
                .withClassLoader(new FilteredClassLoader(WebFilter.class))
                .withPropertyValues("cqflux.transport=fabric")
                .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(CqfluxLifecycle.class)
                        .doesNotHaveBean(CqfluxRequestGate.class).doesNotHaveBean(CqfluxRequestGateFilter.class));
    }

    @Test
    void theApplicationsOwnGateAndFilter_replaceTheStarters() {
        CqfluxRequestGate own = new CqfluxRequestGate();
        new ReactiveWebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class))
                .withPropertyValues("cqflux.transport=fabric")
                .withBean("ownGate", CqfluxRequestGate.class, () -> own)
                .withBean("ownFilter", CqfluxRequestGateFilter.class,
                        () -> new CqfluxRequestGateFilter(own, List.of("/manage")))
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed().hasSingleBean(CqfluxRequestGate.class)
                            .hasSingleBean(CqfluxRequestGateFilter.class);
                    assertThat(ctx.getBean(CqfluxRequestGateFilter.class).gate()).isSameAs(own);
                    ctx.getBean(CqfluxLifecycle.class).stop();
                    assertThat(own.isClosed()).as("the lifecycle waits for the application's gate").isTrue();
                });
    }

    @Test
    void lifecycleStop_waitsForTheAdmittedRequests_beforeDisposing() throws Exception {
        new ReactiveWebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class))
                .withPropertyValues("cqflux.transport=fabric", "cqflux.shutdown-timeout=10s")
                .run(ctx -> {
                    CqfluxRequestGate gate = ctx.getBean(CqfluxRequestGate.class);
                    Cqflux cq = ctx.getBean(Cqflux.class);
                    assertThat(gate.enter()).isTrue(); // a request in progress
                    CompletableFuture<Void> stop = CompletableFuture.runAsync(ctx.getBean(CqfluxLifecycle.class)::stop);
                    Thread.sleep(300);
                    assertThat(stop).as("the stop waits for the request").isNotDone();
                    assertThat(cq.isDisposed()).isFalse();
                    assertThat(gate.enter()).as("and new ones are refused meanwhile").isFalse();
                    long t0 = System.nanoTime();
                    gate.exit();
                    stop.get(10, TimeUnit.SECONDS);
                    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(2));
                    assertThat(cq.isDisposed()).isTrue();
                });
    }

    @Test
    void lifecycleStop_aRequestThatOutlastsTheBudget_doesNotHoldTheStopPastIt() {
        new ReactiveWebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class))
                .withPropertyValues("cqflux.transport=fabric", "cqflux.shutdown-timeout=500ms")
                .run(ctx -> {
                    CqfluxRequestGate gate = ctx.getBean(CqfluxRequestGate.class);
                    assertThat(gate.enter()).isTrue(); // never ends (a stream)
                    long t0 = System.nanoTime();
                    ctx.getBean(CqfluxLifecycle.class).stop();
                    Duration took = Duration.ofNanos(System.nanoTime() - t0);
                    // The request is waited for half of this short budget; the drain and the close keep the rest.
                    assertThat(took).isGreaterThanOrEqualTo(Duration.ofMillis(240)).isLessThan(Duration.ofSeconds(3));
                    assertThat(ctx.getBean(Cqflux.class).isDisposed()).isTrue();
                });
    }
}
