package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.core.TransportUnavailableException;
import io.cqflux.epoll.WaitStrategy;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.test.CqfluxTest;
import io.cqflux.test.LoopbackPeer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class CqfluxAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class))
            .withPropertyValues("cqflux.transport=fabric");

    @Test
    void defaults_createCqfluxPeersLifecycleAndReadiness() {
        runner.run(ctx -> {
            assertThat(ctx).hasNotFailed().hasSingleBean(Cqflux.class).hasSingleBean(CqfluxPeers.class)
                    .hasSingleBean(CqfluxLifecycle.class).hasSingleBean(CqfluxReadiness.class);
            Cqflux cq = ctx.getBean(Cqflux.class);
            assertThat(cq.transportName()).startsWith("fabric");
            assertThat(cq.loopStats()).hasSize(1);
            assertThat(cq.shutdownTimeout()).isEqualTo(Duration.ofSeconds(30));
            assertThat(ctx.getBean(CqfluxPeers.class).all()).isEmpty();
        });
    }

    @Test
    void closingTheContext_disposesCqflux() {
        Cqflux[] seen = new Cqflux[1];
        runner.run(ctx -> seen[0] = ctx.getBean(Cqflux.class));
        assertThat(seen[0].isDisposed()).isTrue();
    }

    @Test
    void properties_reachTheBuilder() {
        runner.withPropertyValues("cqflux.loops=2", "cqflux.send-credits=16", "cqflux.thread-name-prefix=svc",
                        "cqflux.wait-strategy=adaptive", "cqflux.adaptive-spins=50", "cqflux.shutdown-timeout=3s",
                        "cqflux.connect-timeout=2s", "cqflux.pending-limit=10", "cqflux.batch-size=8")
                .run(ctx -> {
                    Cqflux cq = ctx.getBean(Cqflux.class);
                    assertThat(cq.loopStats()).hasSize(2);
                    assertThat(cq.connectionConfig().sendQueueSize()).isEqualTo(16);
                    assertThat(cq.connectionConfig().timeout()).isEqualTo(Duration.ofSeconds(2));
                    assertThat(cq.shutdownTimeout()).isEqualTo(Duration.ofSeconds(3));
                    assertThat(Thread.getAllStackTraces().keySet()).anyMatch(t -> t.getName().equals("svc-loop-1"));
                });
    }

    @Test
    void keepAlive_defaultsToTheLibrarys_propertiesReachTheBuilder_andAZeroIntervalSwitchesItOff() {
        runner.run(ctx -> {
            Cqflux cq = ctx.getBean(Cqflux.class);
            assertThat(cq.keepAliveInterval()).isEqualTo(Cqflux.Builder.DEFAULT_KEEP_ALIVE_INTERVAL);
            assertThat(cq.keepAliveMisses()).isEqualTo(Cqflux.Builder.DEFAULT_KEEP_ALIVE_MISSES);
        });
        runner.withPropertyValues("cqflux.keep-alive.interval=2s", "cqflux.keep-alive.misses=5").run(ctx -> {
            Cqflux cq = ctx.getBean(Cqflux.class);
            assertThat(cq.keepAliveInterval()).isEqualTo(Duration.ofSeconds(2));
            assertThat(cq.keepAliveMisses()).isEqualTo(5);
        });
        runner.withPropertyValues("cqflux.keep-alive.interval=0s")
                .run(ctx -> assertThat(ctx.getBean(Cqflux.class).keepAliveInterval()).isZero());
    }

    @Test
    void threadNamePrefixUnset_keepsTheLibrarysNumberedDefault() {
        runner.run(ctx -> assertThat(ctx.getBean(Cqflux.class).toString()).matches("Cqflux\\[cqflux-\\d+, .*"));
    }

    @Test
    void badValue_failsTheStartNamingTheBound() {
        runner.withPropertyValues("cqflux.batch-size=0").run(ctx -> assertThat(ctx).hasFailed()
                .getFailure().rootCause().hasMessageContaining("batchSize 0 is outside"));
    }

    @Test
    void disabled_createsNothing() {
        runner.withPropertyValues("cqflux.enabled=false")
                .run(ctx -> assertThat(ctx).doesNotHaveBean(Cqflux.class).doesNotHaveBean(CqfluxPeers.class));
    }

    @Test
    void readinessOff_noReadinessBean() {
        runner.withPropertyValues("cqflux.readiness=false")
                .run(ctx -> assertThat(ctx).hasSingleBean(Cqflux.class).doesNotHaveBean(CqfluxReadiness.class));
    }

    @Test
    void applicationsOwnCqflux_withoutInstanceProperties_autoConfiguredOneBacksOff() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class))
                .withPropertyValues("cqflux.readiness=false", "cqflux.enabled=true")
                .withUserConfiguration(OwnCqflux.class).run(ctx -> {
                    assertThat(ctx).hasNotFailed().hasSingleBean(Cqflux.class);
                    assertThat(ctx.getBean(Cqflux.class).loopStats()).hasSize(3);
                });
    }

    @Test
    void applicationsOwnCqflux_whileInstancePropertiesAreSet_failsNamingTheBeanAndEachIgnoredProperty() {
        runner.withPropertyValues("cqflux.loops=2", "cqflux.buffer-pool.buffers=8", "cqflux.readiness=false")
                .withUserConfiguration(OwnCqflux.class).run(ctx -> assertThat(ctx).hasFailed()
                        .getFailure().isInstanceOf(CqfluxInstanceGuard.CqfluxInstanceConflictException.class)
                        .hasMessageContaining("Cqflux bean [cqflux]")
                        // The ignored ones, exactly: cqflux.readiness applies, so it is not among them.
                        .hasMessageContaining("would be ignored: [cqflux.buffer-pool.buffers, cqflux.loops, cqflux.transport]")
                        .hasMessageContaining("CqfluxBuilderCustomizer"));
    }

    @Test
    void applicationsOwnCqflux_withTheStartersTimeoutsAndLocalAddress_startsAndTheLifecycleUsesThem() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class))
                .withPropertyValues("cqflux.readiness=false", "cqflux.shutdown-timeout=7s",
                        "cqflux.connect-timeout=3s", "cqflux.local-address=127.0.0.1")
                .withUserConfiguration(OwnCqflux.class).run(ctx -> {
                    assertThat(ctx).hasNotFailed().hasSingleBean(Cqflux.class);
                    assertThat(ctx.getBean(Cqflux.class).loopStats()).as("the application's instance").hasSize(3);
                    CqfluxLifecycle lifecycle = ctx.getBean(CqfluxLifecycle.class);
                    assertThat(lifecycle).extracting("shutdownTimeout").isEqualTo(Duration.ofSeconds(7));
                    assertThat(lifecycle).extracting("startWait").isEqualTo(Duration.ofSeconds(3));
                });
    }

    /**
     * The timeouts that apply beside an application's own instance are checked there too, with the
     * bound the starter's instance checks them against: the starter's builder, where that check
     * lives, does not run for an application's instance.
     */
    @Test
    void applicationsOwnCqflux_withABadConnectOrShutdownTimeout_failsTheStartNamingTheProperty() {
        for (String bad : List.of("cqflux.connect-timeout=-1s", "cqflux.connect-timeout=0s",
                "cqflux.shutdown-timeout=-1s")) {
            new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class))
                    .withPropertyValues("cqflux.readiness=false", bad)
                    .withUserConfiguration(OwnCqflux.class).run(ctx -> assertThat(ctx).as(bad).hasFailed()
                            .getFailure().rootCause().isInstanceOf(CqfluxPropertyException.class)
                            .hasMessageContaining(bad.substring(0, bad.indexOf('='))));
        }
    }

    @Test
    void applicationsOwnCqflux_whileInstancePropertiesAreSet_refusalNamesOnlyTheIgnoredOnes() {
        runner.withPropertyValues("cqflux.loops=2", "cqflux.shutdown-timeout=7s", "cqflux.readiness=false")
                .withUserConfiguration(OwnCqflux.class).run(ctx -> assertThat(ctx).hasFailed()
                        .getFailure().isInstanceOf(CqfluxInstanceGuard.CqfluxInstanceConflictException.class)
                        .hasMessageContaining("would be ignored: [cqflux.loops, cqflux.transport]")
                        .hasMessageContaining("cqflux.shutdown-timeout (the stop budget)"));
    }

    @Test
    void applicationsOwnCqfluxUnderAnotherName_whileInstancePropertiesAreSet_fails() {
        runner.withBean("mine", Cqflux.class, () -> Cqflux.builder().transport("fabric").build())
                .run(ctx -> assertThat(ctx).hasFailed().getFailure()
                        .hasMessageContaining("Cqflux bean [mine]").hasMessageContaining("[cqflux.transport]"));
    }

    @Test
    void customizer_runsAfterTheProperties() {
        runner.withPropertyValues("cqflux.loops=1")
                .withBean(CqfluxBuilderCustomizer.class, () -> b -> b.loops(2))
                .run(ctx -> assertThat(ctx.getBean(Cqflux.class).loopStats()).hasSize(2));
    }

    @Test
    void unknownTransport_failsWithTransportUnavailable() {
        runner.withPropertyValues("cqflux.transport=nosuch").run(ctx -> assertThat(ctx).hasFailed()
                .getFailure().rootCause().isInstanceOf(TransportUnavailableException.class)
                .hasMessageContaining("no transport provider named 'nosuch'"));
    }

    @Test
    void refusedValues_failTheStartNamingTheProperty_andTheAnalyzerSaysWhichAndWhy() {
        String[][] cases = {
                {"cqflux.loops=0", "cqflux.loops"},
                {"cqflux.connect-timeout=0s", "cqflux.connect-timeout"},
                {"cqflux.keep-alive.interval=1ms", "cqflux.keep-alive.interval"},
                {"cqflux.keep-alive.misses=0", "cqflux.keep-alive.misses"},
                // Checked even where the configuration does not use them (a keep-alive switched
                // off, a wait strategy other than adaptive): a later change would meet them.
                {"cqflux.keep-alive.interval=0s\ncqflux.keep-alive.misses=-4", "cqflux.keep-alive.misses"},
                {"cqflux.adaptive-spins=0", "cqflux.adaptive-spins"},
                {"cqflux.send-credits=1", "cqflux.send-credits"},
                {"cqflux.buffer-pool.buffers=0", "cqflux.buffer-pool.buffers"},
                {"cqflux.buffer-pool.max-waiters=-1", "cqflux.buffer-pool.max-waiters"},
                {"cqflux.direct-write-to-persistent-memory=true", "cqflux.direct-write-to-persistent-memory"},
                {"cqflux.local-address=192.0.2.123", "cqflux.local-address"},
                {"cqflux.local-address=", "cqflux.local-address"},
                {"cqflux.peers.store.address=127.0.0.1\ncqflux.peers.store.port=0", "cqflux.peers.store.port"},
                {"cqflux.peers.store.address=127.0.0.1\ncqflux.peers.store.port=7000\ncqflux.peers.store.connections=0",
                        "cqflux.peers.store.connections"},
                {"cqflux.peers.store.address=127.0.0.1\ncqflux.peers.store.port=7000\ncqflux.peers.store.max-backoff=-1s",
                        "cqflux.peers.store.max-backoff"},
                {"cqflux.peers.store.address=127.0.0.1\ncqflux.peers.store.port=7000\ncqflux.peers.store.min-attempt-time=0s",
                        "cqflux.peers.store.min-attempt-time"}};
        for (String[] c : cases) {
            runner.withPropertyValues(c[0].split("\n")).run(ctx -> {
                assertThat(ctx).as(c[0]).hasFailed();
                Throwable f = ctx.getStartupFailure();
                CqfluxPropertyException e = null;
                for (Throwable t = f; t != null && e == null; t = t.getCause()) {
                    if (t instanceof CqfluxPropertyException p) {
                        e = p;
                    }
                }
                assertThat(e).as(c[0] + ": " + f).isNotNull();
                assertThat(e.property()).isEqualTo(c[1]);
                // The most specific cause names the property; the library's refusal is kept.
                assertThat(org.springframework.core.NestedExceptionUtils.getMostSpecificCause(f)).isSameAs(e);
                assertThat(e.getSuppressed()).isNotEmpty();
                org.springframework.boot.diagnostics.FailureAnalysis a = new CqfluxPropertyFailureAnalyzer().analyze(f);
                assertThat(a).isNotNull();
                assertThat(a.getDescription()).contains(c[1]);
                assertThat(a.getAction()).contains(c[1]);
            });
        }
    }

    @Test
    void largeBuffers_withinTheTotalBound_areTaken_eachValueCheckedOnItsOwn() {
        // 4 x 512 MiB: each value within its bound, the total within 16 GiB (allocated on first use only).
        runner.withPropertyValues("cqflux.buffer-pool.buffers=4", "cqflux.buffer-pool.buffer-size=536870912")
                .run(ctx -> assertThat(ctx).hasNotFailed());
    }

    @Test
    void peerWithoutAddress_failsNamingTheProperty() {
        runner.withPropertyValues("cqflux.peers.store.port=7000").run(ctx -> assertThat(ctx).hasFailed()
                .getFailure().hasStackTraceContaining("cqflux.peers.store.address='' is refused: the peer's address is not set"));
    }

    @Test
    void peerPortOutOfRange_failsNamingTheBound() {
        runner.withPropertyValues("cqflux.peers.store.address=127.0.0.1", "cqflux.peers.store.port=70000")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure()
                        .hasStackTraceContaining("cqflux.peers.store.port=70000 is refused: port 70000 is outside [1, 65535]"));
    }

    @Test
    void peer_isConnectedAtStartAndLookedUpByName() {
        try (LoopbackPeer server = CqfluxTest.loopback().start()) {
            runner.withPropertyValues("cqflux.peers.store.address=127.0.0.1",
                            "cqflux.peers.store.port=" + server.address().getPort())
                    .run(ctx -> {
                        CqfluxPeers peers = ctx.getBean(CqfluxPeers.class);
                        CqfluxPeer store = peers.get("store");
                        assertThat(store.state()).isEqualTo(CqfluxPeer.State.UP);
                        assertThat(peers.requiredAvailable()).isTrue();
                        assertThat(store.withConnection(c -> reactor.core.publisher.Mono.just(c.remoteRegions().size()))
                                .block(Duration.ofSeconds(10))).isEqualTo(1);
                        org.assertj.core.api.Assertions.assertThatThrownBy(() -> peers.get("other"))
                                .isInstanceOf(NoSuchElementException.class).hasMessageContaining("configured: store");
                    });
        }
    }

    @Test
    void peerNotListening_startsDownWithoutFailingTheStart() throws Exception {
        runner.withPropertyValues("cqflux.peers.store.address=127.0.0.1", "cqflux.peers.store.port=" + CqfluxReadinessTest.unusedPort(),
                        "cqflux.connect-timeout=2s")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    CqfluxPeer store = ctx.getBean(CqfluxPeers.class).get("store");
                    assertThat(store.state()).isEqualTo(CqfluxPeer.State.DOWN);
                    assertThat(store.details()).containsKey("error");
                    reactor.test.StepVerifier.create(store.withConnection(c -> reactor.core.publisher.Mono.just(1)))
                            .expectError(io.cqflux.core.ConnectionException.class)
                            .verify(Duration.ofSeconds(10));
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnCqflux {
        @Bean(destroyMethod = "close")
        Cqflux cqflux() {
            return Cqflux.builder().transport("fabric").loops(3).build();
        }
    }

    @Test
    void aMisspeltTransportProperty_failsTheStartNamingIt_andALowerCaseKnownOneIsTaken() {
        runner.withPropertyValues("cqflux.transport=fabric", "cqflux.transport-properties[fabric.provder]=verbs")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                        .isInstanceOf(CqfluxPropertyException.class)
                        .hasMessageContaining("cqflux.transport-properties.fabric.provder=verbs is refused"));
        // As an environment variable binds it (CQFLUX_TRANSPORTPROPERTIES_FABRIC_COMPLETIONQUEUEGROUP).
        runner.withPropertyValues("cqflux.transport=fabric", "cqflux.transport-properties[fabric.completionqueuegroup]=0")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("fabric.completionQueueGroup=0 is outside"));
    }

    @Test
    void backgroundPriority_lowersTheSetupThreadNotTheLoop_isOffByDefault_andBesideBusyPollFailsTheStartNamingIt()
            throws IOException {
        // Relative to the test's own thread: a build may itself run under nice(1).
        int base = niceOfThread(null);
        runner.withPropertyValues("cqflux.background-priority=true", "cqflux.thread-name-prefix=bgprio")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    connectOnce(ctx.getBean(Cqflux.class));
                    assertThat(niceOfThread("bgprio-setup")).isEqualTo(Math.min(19, base + 19));
                    assertThat(niceOfThread("bgprio-loop-0")).isEqualTo(base);
                });
        runner.withPropertyValues("cqflux.thread-name-prefix=bgdflt").run(ctx -> {
            connectOnce(ctx.getBean(Cqflux.class));
            assertThat(niceOfThread("bgdflt-setup")).isEqualTo(base);
        });
        runner.withPropertyValues("cqflux.background-priority=true", "cqflux.wait-strategy=busy-poll")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                        .isInstanceOf(CqfluxPropertyException.class)
                        .hasMessageContaining("cqflux.background-priority=true with cqflux.wait-strategy=busy-poll")
                        .hasMessageContaining("backgroundPriority(true) beside BUSY_POLL loops"));
        // A customizer runs after the properties: one that chose blocking loops settles the pair.
        runner.withPropertyValues("cqflux.background-priority=true", "cqflux.wait-strategy=busy-poll")
                .withBean(CqfluxBuilderCustomizer.class, () -> b -> b.waitStrategy(WaitStrategy.BLOCKING))
                .run(ctx -> assertThat(ctx).hasNotFailed());
    }

    /** Binds a server on loopback and connects to it once: the instance's set-up thread starts. */
    private static void connectOnce(Cqflux cq) {
        RdmaServer server = cq.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .block(Duration.ofSeconds(10));
        cq.connect(server.address()).block(Duration.ofSeconds(10)).dispose();
    }

    /**
     * {@return the nice value of this process's thread named {@code name} (proc(5): stat field
     * 19), or of the calling thread for {@code null}}
     */
    private static int niceOfThread(String name) throws IOException {
        if (name == null) {
            String stat = Files.readString(Path.of("/proc/thread-self/stat"), StandardCharsets.UTF_8);
            return Integer.parseInt(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[19 - 3]);
        }
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path task : tasks) {
                try {
                    if (new String(Files.readAllBytes(task.resolve("comm")), StandardCharsets.ISO_8859_1).strip().equals(name)) {
                        String stat = Files.readString(task.resolve("stat"), StandardCharsets.UTF_8);
                        return Integer.parseInt(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[19 - 3]);
                    }
                } catch (IOException e) {
                    // The thread ended while we listed: its directory is gone (NoSuchFileException),
                    // or it was still there and its files answer ESRCH ("No such process").
                    if (!(e instanceof java.nio.file.NoSuchFileException) && !"No such process".equals(e.getMessage())) {
                        throw e;
                    }
                }
            }
        }
        throw new AssertionError("no thread named " + name);
    }
}
