package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.test.CqfluxTest;
import io.cqflux.test.LoopbackPeer;
import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.Region;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.scheduler.Schedulers;
import org.springframework.context.event.ContextClosedEvent;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import reactor.core.publisher.Mono;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.availability.ApplicationAvailabilityAutoConfiguration;
import org.springframework.boot.availability.ApplicationAvailability;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class CqfluxReadinessTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ApplicationAvailabilityAutoConfiguration.class,
                    CqfluxAutoConfiguration.class))
            .withPropertyValues("cqflux.transport=fabric", "cqflux.connect-timeout=2s");

    @Test
    void requiredPeerLost_readinessRefusesTraffic() {
        LoopbackPeer server = CqfluxTest.loopback().start();
        try {
            runner.withUserConfiguration(Recorder.class).withPropertyValues("cqflux.peers.store.address=127.0.0.1",
                            "cqflux.peers.store.port=" + server.address().getPort())
                    .run(ctx -> {
                        ApplicationAvailability availability = ctx.getBean(ApplicationAvailability.class);
                        AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC); // as Boot does when ready
                        assertThat(availability.getReadinessState()).isEqualTo(ReadinessState.ACCEPTING_TRAFFIC);
                        CqfluxPeer store = ctx.getBean(CqfluxPeers.class).get("store");
                        server.close();
                        store.states().filter(s -> s == CqfluxPeer.State.DOWN).next().block(Duration.ofSeconds(10));
                        Awaitility.await().atMost(Duration.ofSeconds(10)).until(
                                () -> availability.getReadinessState() == ReadinessState.REFUSING_TRAFFIC);
                        // Never on the event loop that reported the peer down.
                        assertThat(ctx.getBean(Recorder.class).threads).isNotEmpty()
                                .noneMatch(t -> t.contains("-loop-"));
                    });
        } finally {
            server.close();
        }
    }

    @Test
    void requiredPeerBack_readinessAcceptsTrafficAgain_andOperationsGoThrough() throws Exception {
        int port;
        try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        runner.withPropertyValues("cqflux.peers.store.address=127.0.0.1", "cqflux.peers.store.port=" + port,
                        "cqflux.peers.store.min-backoff=50ms", "cqflux.peers.store.max-backoff=200ms")
                .run(ctx -> {
                    ApplicationAvailability availability = ctx.getBean(ApplicationAvailability.class);
                    CqfluxPeer store = ctx.getBean(CqfluxPeers.class).get("store");
                    AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC);
                    Awaitility.await().atMost(Duration.ofSeconds(10)).until(
                            () -> availability.getReadinessState() == ReadinessState.REFUSING_TRAFFIC);
                    try (Arena arena = Arena.ofShared();
                         Cqflux server = Cqflux.builder().transport("fabric").threadNamePrefix("late-server").build()) {
                        Region exposed = server.register(arena.allocate(4096), RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
                        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), c -> c.onDispose(), exposed)
                                .block(Duration.ofSeconds(10));
                        store.awaitAvailable(Duration.ofSeconds(10)).block(Duration.ofSeconds(15));
                        Awaitility.await().atMost(Duration.ofSeconds(10)).until(
                                () -> availability.getReadinessState() == ReadinessState.ACCEPTING_TRAFFIC);
                        assertThat(store.withConnection(c -> Mono.just(c.remoteRegion(0).size()))
                                .block(Duration.ofSeconds(10))).isEqualTo(4096L);
                    }
                });
    }

    @Test
    void requiredPeerDownWhenBootDeclaresReady_readinessRefusesTraffic() throws Exception {
        runner.withPropertyValues("cqflux.peers.store.address=127.0.0.1", "cqflux.peers.store.port=" + unusedPort())
                .run(ctx -> {
                    AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC);
                    ApplicationAvailability availability = ctx.getBean(ApplicationAvailability.class);
                    Awaitility.await().atMost(Duration.ofSeconds(10)).until(
                            () -> availability.getReadinessState() == ReadinessState.REFUSING_TRAFFIC);
                });
    }

    @Test
    void optionalPeerDown_readinessUnchanged() throws Exception {
        runner.withPropertyValues("cqflux.peers.cache.address=127.0.0.1", "cqflux.peers.cache.port=" + unusedPort(),
                        "cqflux.peers.cache.required=false")
                .run(ctx -> {
                    AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC);
                    // Optional peers are not watched at all; once the peer is known DOWN, its
                    // every state change so far has happened.
                    ctx.getBean(CqfluxPeers.class).get("cache").states()
                            .filter(s -> s == CqfluxPeer.State.DOWN).next().block(Duration.ofSeconds(10));
                    assertThat(ctx.getBean(ApplicationAvailability.class).getReadinessState())
                            .isEqualTo(ReadinessState.ACCEPTING_TRAFFIC);
                });
    }

    @Test
    void refusingFromOthers_isNeverOverriddenWhenRequiredPeerComesBack() {
        ScriptedLink link = new ScriptedLink(CqfluxPeer.State.UP);
        scripted(link).run(ctx -> {
            ApplicationAvailability availability = ctx.getBean(ApplicationAvailability.class);
            CqfluxReadiness readiness = ctx.getBean(CqfluxReadiness.class);
            AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC);
            link.set(CqfluxPeer.State.DOWN);
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(
                    () -> availability.getReadinessState() == ReadinessState.REFUSING_TRAFFIC);

            // The application refuses traffic itself while the peer is away: a peer coming back
            // must not undo that.
            AvailabilityChangeEvent.publish(ctx, ReadinessState.REFUSING_TRAFFIC);
            long handled = readiness.handled();
            link.set(CqfluxPeer.State.UP);
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> readiness.handled() > handled);
            assertThat(availability.getReadinessState()).isEqualTo(ReadinessState.REFUSING_TRAFFIC);

            // Same when everything was up when the application refused.
            AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC);
            AvailabilityChangeEvent.publish(ctx, ReadinessState.REFUSING_TRAFFIC);
            long before = readiness.handled();
            link.set(CqfluxPeer.State.DOWN);
            link.set(CqfluxPeer.State.UP);
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> readiness.handled() >= before + 2);
            assertThat(availability.getReadinessState()).isEqualTo(ReadinessState.REFUSING_TRAFFIC);

            // Once someone else accepts traffic again, the peer decides again.
            AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC);
            link.set(CqfluxPeer.State.DOWN);
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(
                    () -> availability.getReadinessState() == ReadinessState.REFUSING_TRAFFIC);
            link.set(CqfluxPeer.State.UP);
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(
                    () -> availability.getReadinessState() == ReadinessState.ACCEPTING_TRAFFIC);
        });
    }

    @Test
    void contextClosed_noPublishAfterwards_evenWhenRequiredPeerComesBack() {
        ScriptedLink link = new ScriptedLink(CqfluxPeer.State.UP);
        // Published on the thread that sets the peer's state: the checks below come after any
        // publish the peer coming back could cause, so they cannot pass by running before it.
        scripted(link).withUserConfiguration(ImmediateReadiness.class).run(ctx -> {
            ApplicationAvailability availability = ctx.getBean(ApplicationAvailability.class);
            Recorder recorder = ctx.getBean(Recorder.class);
            AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC);
            link.set(CqfluxPeer.State.DOWN);
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(
                    () -> availability.getReadinessState() == ReadinessState.REFUSING_TRAFFIC);
            assertThat(recorder.states).containsExactly(ReadinessState.REFUSING_TRAFFIC);

            // What AbstractApplicationContext.doClose() publishes before the lifecycle beans stop:
            // the peer reconnecting in that window (graceful shutdown) must not report ready.
            ctx.publishEvent(new ContextClosedEvent(ctx.getSourceApplicationContext()));
            link.set(CqfluxPeer.State.UP);
            assertThat(ctx.getBean(CqfluxReadiness.class).isRunning()).isTrue(); // the lifecycle has not stopped it
            assertThat(recorder.states).containsExactly(ReadinessState.REFUSING_TRAFFIC);
            assertThat(availability.getReadinessState()).isEqualTo(ReadinessState.REFUSING_TRAFFIC);
        });
    }

    @Test
    void listenerThrowsOnce_readinessStillFollowsThePeer() {
        ScriptedLink link = new ScriptedLink(CqfluxPeer.State.UP);
        scripted(link).withUserConfiguration(ImmediateReadiness.class, ThrowsOnce.class).run(ctx -> {
            ApplicationAvailability availability = ctx.getBean(ApplicationAvailability.class);
            AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC);
            ThrowsOnce thrower = ctx.getBean(ThrowsOnce.class);
            thrower.armed = true;
            // Spring stops the dispatch at the throwing listener and rethrows out of publish().
            link.set(CqfluxPeer.State.DOWN);
            assertThat(thrower.armed).isFalse();

            // The peer is still down (a retry reports it again): this time it is published.
            link.set(CqfluxPeer.State.DOWN);
            assertThat(availability.getReadinessState()).isEqualTo(ReadinessState.REFUSING_TRAFFIC);
            link.set(CqfluxPeer.State.UP);
            assertThat(availability.getReadinessState()).isEqualTo(ReadinessState.ACCEPTING_TRAFFIC);
            link.set(CqfluxPeer.State.DOWN);
            assertThat(availability.getReadinessState()).isEqualTo(ReadinessState.REFUSING_TRAFFIC);
        });
    }

    @Test
    void childContextClosed_readinessStillFollowsThePeer() {
        ScriptedLink link = new ScriptedLink(CqfluxPeer.State.UP);
        scripted(link).withUserConfiguration(ImmediateReadiness.class).run(ctx -> {
            ApplicationAvailability availability = ctx.getBean(ApplicationAvailability.class);
            AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC);
            // Spring forwards a child's events to the parent's listeners: its ContextClosedEvent too.
            try (GenericApplicationContext child = new GenericApplicationContext()) {
                child.setParent(ctx.getSourceApplicationContext());
                child.refresh();
            }
            link.set(CqfluxPeer.State.DOWN);
            assertThat(availability.getReadinessState()).isEqualTo(ReadinessState.REFUSING_TRAFFIC);
            link.set(CqfluxPeer.State.UP);
            assertThat(availability.getReadinessState()).isEqualTo(ReadinessState.ACCEPTING_TRAFFIC);

            // A child declaring its own readiness (as Boot does, with the child as the source) is
            // the child's, not this application's: the peer still decides here.
            try (GenericApplicationContext child = new GenericApplicationContext()) {
                child.setParent(ctx.getSourceApplicationContext());
                child.refresh();
                ctx.getBean(CqfluxReadiness.class).onApplicationEvent(
                        new AvailabilityChangeEvent<>(child, ReadinessState.REFUSING_TRAFFIC));
                link.set(CqfluxPeer.State.DOWN);
                assertThat(ctx.getBean(Recorder.class).states).last().isEqualTo(ReadinessState.REFUSING_TRAFFIC);
            }
        });
    }

    @Test
    void applicationListenerTakingALockAnotherPublisherHolds_noDeadlock() {
        ScriptedLink link = new ScriptedLink(CqfluxPeer.State.UP);
        scripted(link).withUserConfiguration(ImmediateReadiness.class, Gate.class).run(ctx -> {
            Gate gate = ctx.getBean(Gate.class);
            AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC);
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch reporterBlocked = new CountDownLatch(1);
            // The application publishes readiness while holding the lock its listener takes.
            Thread app = new Thread(() -> {
                gate.lock.lock();
                try {
                    held.countDown();
                    await(reporterBlocked);
                    AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC);
                } finally {
                    gate.lock.unlock();
                }
            }, "app-publisher");
            app.start();
            await(held);
            // The peer goes down: the starter's publish reaches the listener, which waits for the lock.
            Thread reporter = new Thread(() -> link.set(CqfluxPeer.State.DOWN), "peer-reporter");
            reporter.start();
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> gate.lock.hasQueuedThread(reporter));
            reporterBlocked.countDown();
            app.join(Duration.ofSeconds(30));
            reporter.join(Duration.ofSeconds(30));
            assertThat(app.isAlive()).isFalse();
            assertThat(reporter.isAlive()).isFalse();
            assertThat(gate.timedOut).isFalse();
        });
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    /** An application listener that throws once, when armed, on the starter's REFUSING_TRAFFIC. */
    static final class ThrowsOnce implements ApplicationListener<AvailabilityChangeEvent<?>> {
        volatile boolean armed;

        @Override
        public void onApplicationEvent(AvailabilityChangeEvent<?> event) {
            if (armed && event.getSource() instanceof CqfluxReadiness
                    && event.getState() == ReadinessState.REFUSING_TRAFFIC) {
                armed = false;
                throw new IllegalStateException("listener failed");
            }
        }
    }

    /**
     * An application listener that takes a lock for the starter's events; it gives up after a
     * generous wait (and says so) instead of hanging the build when the lock is never released.
     */
    static final class Gate implements ApplicationListener<AvailabilityChangeEvent<?>> {
        final ReentrantLock lock = new ReentrantLock();
        volatile boolean timedOut;

        @Override
        public void onApplicationEvent(AvailabilityChangeEvent<?> event) {
            if (!(event.getSource() instanceof CqfluxReadiness)) {
                return;
            }
            try {
                if (!lock.tryLock(15, TimeUnit.SECONDS)) {
                    timedOut = true;
                    return;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            lock.unlock();
        }
    }

    @Test
    void peerStateChange_publishedOffTheThreadThatReportedIt() {
        ScriptedLink link = new ScriptedLink(CqfluxPeer.State.UP);
        scripted(link).run(ctx -> {
            Recorder recorder = ctx.getBean(Recorder.class);
            AvailabilityChangeEvent.publish(ctx, ReadinessState.ACCEPTING_TRAFFIC);
            link.set(CqfluxPeer.State.DOWN); // on this thread, as a loop reports it on its own
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !recorder.threads.isEmpty());
            assertThat(recorder.threads.get(0)).isNotEqualTo(Thread.currentThread().getName());
        });
    }

    /** A context whose one required peer "store" is {@code link}. */
    private ApplicationContextRunner scripted(ScriptedLink link) {
        return runner.withUserConfiguration(Recorder.class)
                .withBean(CqfluxPeers.class, () -> new CqfluxPeers(Map.of("store", new CqfluxPeer("store",
                        new InetSocketAddress(InetAddress.getLoopbackAddress(), 1), true, link))));
    }

    /** The readiness bean deciding and publishing on the thread that reports the peer's state. */
    @Configuration(proxyBeanMethods = false)
    static class ImmediateReadiness {
        @Bean
        CqfluxReadiness cqfluxReadiness(CqfluxPeers peers, ApplicationEventPublisher publisher) {
            return new CqfluxReadiness(peers, publisher, Schedulers.immediate());
        }
    }

    /** The readiness events this starter published, and the threads that published them. */
    static final class Recorder implements ApplicationListener<AvailabilityChangeEvent<?>> {
        final List<Object> states = new CopyOnWriteArrayList<>();
        final List<String> threads = new CopyOnWriteArrayList<>();

        @Override
        public void onApplicationEvent(AvailabilityChangeEvent<?> event) {
            if (event.getSource() instanceof CqfluxReadiness) {
                states.add(event.getState());
                threads.add(Thread.currentThread().getName());
            }
        }
    }

    /** A loopback port nothing listens on: bound, then released. */
    static int unusedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
