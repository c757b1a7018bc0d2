package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cqflux.core.RegionAccess;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.Region;
import io.cqflux.spring.boot.actuate.CqfluxHealthContributorAutoConfiguration;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.CompositeReactiveHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code cqflux.server.*}: the application as the peer others write into, over fabric/tcp on loopback. */
class CqfluxServerTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class,
                    CqfluxHealthContributorAutoConfiguration.class))
            .withPropertyValues("cqflux.transport=fabric");

    @Test
    void serverProperties_exposeAnonymousAndMappedRegionsInOrder_durableWritesLand_andTheFileKeepsThem(
            @TempDir Path dir) throws Exception {
        int port = freePort();
        Path file = dir.resolve("log.bin");
        runner.withPropertyValues("cqflux.server.port=" + port,
                        "cqflux.server.regions.data.size=64KB",
                        "cqflux.server.regions.log.file=" + file, "cqflux.server.regions.log.size=8KB",
                        // The application is its own peer: the server listens before the peers connect.
                        "cqflux.peers.self.address=127.0.0.1", "cqflux.peers.self.port=" + port)
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    CqfluxServer server = ctx.getBean(CqfluxServer.class);
                    assertThat(server.address().getPort()).isEqualTo(port);
                    assertThat(server.regions().keySet()).containsExactly("data", "log");
                    assertThat(server.regions().get("data").access()).containsExactlyInAnyOrder(
                            RegionAccess.READ_SRC, RegionAccess.WRITE_DST, RegionAccess.FLUSH_TYPE_VISIBILITY);

                    Cqflux cq = ctx.getBean(Cqflux.class);
                    try (Arena arena = Arena.ofShared()) {
                        MemorySegment src = arena.allocate(128);
                        for (int i = 0; i < 128; i++) {
                            src.set(ValueLayout.JAVA_BYTE, i, (byte) (i + 1));
                        }
                        Region local = cq.register(src, RegionAccess.WRITE_SRC);
                        CqfluxPeer self = ctx.getBean(CqfluxPeers.class).get("self");
                        self.withConnection(c -> c.durableWrite(c.remoteRegion(0), 4096, local, 0, 128)
                                        .then(c.durableWrite(c.remoteRegion(1), 256, local, 0, 128)))
                                .block(Duration.ofSeconds(10));
                        assertThat(server.regions().get("data").segment().asSlice(4096, 128).mismatch(src)).isEqualTo(-1);
                        assertThat(server.regions().get("log").segment().asSlice(256, 128).mismatch(src)).isEqualTo(-1);
                        local.close();
                    }

                    CompositeReactiveHealthContributor health =
                            (CompositeReactiveHealthContributor) ctx.getBean("cqfluxHealthContributor");
                    Health h = ((ReactiveHealthIndicator) health.getContributor("server")).health()
                            .block(Duration.ofSeconds(5));
                    assertThat(h.getStatus()).isEqualTo(Status.UP);
                    assertThat(h.getDetails()).containsEntry("listening", true);
                    @SuppressWarnings("unchecked")
                    Map<String, Map<String, Object>> regions = (Map<String, Map<String, Object>>) h.getDetails().get("regions");
                    assertThat(regions.get("data")).containsEntry("index", 0).containsEntry("size", 65536L);
                    assertThat(regions.get("log")).containsEntry("index", 1).containsEntry("size", 8192L);
                });
        byte[] kept = Files.readAllBytes(file);
        assertThat(kept).hasSize(8192);
        for (int i = 0; i < 128; i++) {
            assertThat(kept[256 + i]).as("byte %d of the record in the file", i).isEqualTo((byte) (i + 1));
        }
    }

    @Test
    void persistentFlushOnATransportThatCannotPersist_failsTheStartNamingTheAccessProperty() {
        runner.withPropertyValues("cqflux.server.port=0", "cqflux.server.regions.data.size=4KB",
                        "cqflux.server.regions.data.access=write-dst,read-src,flush-type-persistent")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                        .isInstanceOf(CqfluxPropertyException.class)
                        .hasMessageContaining("cqflux.server.regions.data.access="));
    }

    @Test
    void serverWithoutRegions_failsTheStartNamingTheProperty() {
        runner.withPropertyValues("cqflux.server.port=0").run(ctx -> assertThat(ctx).hasFailed().getFailure()
                .rootCause().isInstanceOf(CqfluxPropertyException.class)
                .hasMessageContaining("cqflux.server.regions={} is refused: a server exposes at least one region"));
    }

    @Test
    void anonymousRegionWithoutASize_failsTheStartNamingTheProperty() {
        runner.withPropertyValues("cqflux.server.port=0", "cqflux.server.regions.data.access=write-dst")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                        .isInstanceOf(CqfluxPropertyException.class)
                        .hasMessageContaining("cqflux.server.regions.data.size=0 bytes is refused"));
    }

    @Test
    void sharedSecret_servesPeersThatKnowIt_refusesOthersWithTheReason_andLimitsApply() throws Exception {
        int port = freePort();
        String secret = "a secret the server and its peers share";
        runner.withPropertyValues("cqflux.server.port=" + port, "cqflux.server.regions.data.size=4KB",
                        "cqflux.server.auth.shared-secret=" + secret, "cqflux.server.max-connections=4",
                        "cqflux.server.handshake-timeout=2s",
                        "cqflux.peers.self.address=127.0.0.1", "cqflux.peers.self.port=" + port,
                        "cqflux.peers.self.shared-secret=" + secret)
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    CqfluxServer server = ctx.getBean(CqfluxServer.class);
                    CqfluxPeer self = ctx.getBean(CqfluxPeers.class).get("self");
                    byte[] read = self.withConnection(c -> c.read(c.remoteRegion(0), 0, 8)).block(Duration.ofSeconds(10));
                    assertThat(read).hasSize(8);
                    Cqflux cq = ctx.getBean(Cqflux.class);
                    assertThatThrownBy(() -> cq.connect(server.address()).block(Duration.ofSeconds(10)))
                            .isInstanceOf(io.cqflux.core.ConnectionException.class)
                            .hasMessageContaining("no credentials");
                    assertThat(server.stats().refusedByAuthenticator()).isEqualTo(1);
                    assertThat(server.stats().exposures()).isEqualTo(1); // the peer's connection only
                });
    }

    @Test
    void maxConnectionsPerAddress_refusesTheClientsHostPastIt_andZeroFailsTheStart() {
        runner.withPropertyValues("cqflux.server.port=0", "cqflux.server.regions.data.size=4KB",
                        "cqflux.server.max-connections-per-address=1")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    CqfluxServer server = ctx.getBean(CqfluxServer.class);
                    Cqflux cq = ctx.getBean(Cqflux.class);
                    io.cqflux.reactor.RdmaConnection first = cq.connect(server.address()).block(Duration.ofSeconds(10));
                    try {
                        assertThatThrownBy(() -> cq.connect(server.address()).block(Duration.ofSeconds(10)))
                                .isInstanceOf(io.cqflux.core.ConnectionException.class)
                                .hasMessageContaining("too many connections from your address");
                        assertThat(server.stats().refusedOverMaxPerAddress()).isEqualTo(1);
                    } finally {
                        first.dispose();
                    }
                });
        runner.withPropertyValues("cqflux.server.port=0", "cqflux.server.regions.data.size=4KB",
                        "cqflux.server.max-connections-per-address=0")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                        .isInstanceOf(CqfluxPropertyException.class)
                        .hasMessageContaining("cqflux.server.max-connections-per-address=0 is refused"));
    }

    @Test
    void perAddressPrefixLengths_reachTheServersOptions_andOneOutOfRangeFailsTheStart() {
        CqfluxServerProperties props = new CqfluxServerProperties();
        props.setMaxConnectionsPerAddress(3);
        props.setPerAddressIpv4PrefixLength(24);
        props.setPerAddressIpv6PrefixLength(64);
        io.cqflux.reactor.AcceptOptions o = CqfluxAutoConfiguration.acceptOptions(props)
                .apply(io.cqflux.reactor.AcceptOptions.exposing());
        assertThat(o.maxConnectionsPerAddress()).isEqualTo(3);
        assertThat(o.ipv4PrefixLength()).isEqualTo(24);
        assertThat(o.ipv6PrefixLength()).isEqualTo(64);
        runner.withPropertyValues("cqflux.server.port=0", "cqflux.server.regions.data.size=4KB",
                        "cqflux.server.max-connections-per-address=2", "cqflux.server.per-address-ipv6-prefix-length=0")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                        .isInstanceOf(CqfluxPropertyException.class)
                        .hasMessageContaining("cqflux.server.per-address-ipv6-prefix-length=0 is refused")
                        .hasMessageContaining("ipv6PrefixLength 0 is outside [1, 128]"));
    }

    @Test
    void aShortSharedSecret_failsTheStartNamingThePropertyButNotTheSecret() {
        runner.withPropertyValues("cqflux.server.port=0", "cqflux.server.regions.data.size=4KB",
                        "cqflux.server.auth.shared-secret=short")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                        .isInstanceOf(CqfluxPropertyException.class)
                        .hasMessageContaining("cqflux.server.auth.shared-secret=(5 characters, not shown) is refused:"
                                + " shared secret of 5 bytes is below the minimum 16")
                        .hasMessageNotContaining("=short"));
        runner.withPropertyValues("cqflux.server.port=0", "cqflux.server.regions.data.size=4KB",
                        "cqflux.server.max-pending-handshakes=0")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                        .isInstanceOf(CqfluxPropertyException.class)
                        .hasMessageContaining("cqflux.server.max-pending-handshakes=0 is refused"));
    }

    @Test
    void aMaxSkewOutOfRange_failsTheStart_withOrWithoutASharedSecret() {
        // Without a secret the skew is not used, but a later secret would meet it: refused alike.
        for (String other : new String[] {"cqflux.server.auth.shared-secret=a secret of twenty-odd bytes",
                "cqflux.server.max-connections=4"}) {
            runner.withPropertyValues("cqflux.server.port=0", "cqflux.server.regions.data.size=4KB",
                            "cqflux.server.auth.max-skew=2h", other)
                    .run(ctx -> assertThat(ctx).as(other).hasFailed().getFailure().rootCause()
                            .isInstanceOf(CqfluxPropertyException.class)
                            .hasMessageContaining("cqflux.server.auth.max-skew=PT2H is refused: max skew PT2H is outside"
                                    + " (0, 1 h]"));
        }
    }

    @Test
    void keysScopedToConnection_areOnByDefaultOnFabricTcp_requiredByTrue_andTurnedOffByFalse() {
        runner.withPropertyValues("cqflux.server.port=0", "cqflux.server.regions.data.size=4KB")
                .run(ctx -> assertThat(ctx.getBean(CqfluxServer.class).keysScopedToConnection()).isTrue());
        runner.withPropertyValues("cqflux.server.port=0", "cqflux.server.regions.data.size=4KB",
                        "cqflux.server.keys-scoped-to-connection=true")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx.getBean(CqfluxServer.class).keysScopedToConnection()).isTrue();
                });
        runner.withPropertyValues("cqflux.server.port=0", "cqflux.server.regions.data.size=4KB",
                        "cqflux.server.keys-scoped-to-connection=false")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx.getBean(CqfluxServer.class).keysScopedToConnection()).isFalse();
                });
    }

    @Test
    void anEmptyServerPort_failsTheStartNamingTheProperty_notWithANullPointer() {
        // Present but empty, the property still turns the server on (@ConditionalOnProperty).
        runner.withPropertyValues("cqflux.server.port=", "cqflux.server.regions.data.size=4KB")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                        .isInstanceOf(CqfluxPropertyException.class)
                        .hasMessageContaining("cqflux.server.port='' is refused"));
    }

    /** {@return whether this host refuses to listen on addresses it does not have (ip_nonlocal_bind off)} */
    static boolean nonlocalBindOff() {
        try {
            return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/sys/net/ipv4/ip_nonlocal_bind")).trim()
                    .equals("0");
        } catch (java.io.IOException e) {
            return true;
        }
    }

    @Test
    void aServerAddressThisHostDoesNotHave_failsTheStartNamingTheProperty() {
        org.junit.jupiter.api.Assumptions.assumeTrue(nonlocalBindOff(),
                "this host lets a process listen on addresses it does not have (ip_nonlocal_bind=1)");
        // Not checked before the listen (a virtual address with ip_nonlocal_bind may be listened
        // on): the listen's refusal names the property.
        runner.withPropertyValues("cqflux.server.port=0", "cqflux.server.regions.data.size=4KB",
                        "cqflux.server.address=192.0.2.123")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                        .isInstanceOf(CqfluxPropertyException.class)
                        .hasMessageContaining("cqflux.server.address=192.0.2.123 is refused"));
    }

    @Test
    void keysScopedToConnection_onATransportWithoutThem_failsTheStartNamingTheProperty() {
        // The test kit's faulty transport over fabric/tcp, told to report no scoped keys, as rpma
        // and fabric/verbs do not.
        io.cqflux.test.Faults faults = io.cqflux.test.Faults.create()
                .withoutCapabilities(io.cqflux.core.Capability.CONNECTION_SCOPED_KEYS);
        runner.withPropertyValues("cqflux.transport=faulty", "cqflux.transport-properties[faulty.id]=" + faults.id(),
                        "cqflux.server.port=0", "cqflux.server.regions.data.size=4KB",
                        "cqflux.server.keys-scoped-to-connection=true")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                        .isInstanceOf(CqfluxPropertyException.class)
                        .hasMessageContaining("cqflux.server.keys-scoped-to-connection=true is refused"));
    }

    @Test
    void aServerPortInUse_failsTheStartNamingThePort() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            runner.withPropertyValues("cqflux.server.port=" + taken.getLocalPort(), "cqflux.server.regions.data.size=4KB")
                    .run(ctx -> {
                        assertThat(ctx).hasFailed().getFailure().rootCause()
                                .isInstanceOf(CqfluxPropertyException.class)
                                .hasMessageContaining("cqflux.server.port=" + taken.getLocalPort())
                                .hasMessageContaining("EADDRINUSE");
                        org.springframework.boot.diagnostics.FailureAnalysis a =
                                new CqfluxPropertyFailureAnalyzer().analyze(ctx.getStartupFailure());
                        assertThat(a).isNotNull();
                        assertThat(a.getAction()).contains("cqflux.server.port");
                    });
        }
    }

    @Test
    void moreRegionsThanTheHelloCarries_failTheStartNamingTheRegionsProperty() {
        // fabric/tcp's 256-byte accept carries six regions' descriptors (getting-started guide).
        String[] props = new String[8];
        props[0] = "cqflux.server.port=0";
        for (int i = 1; i <= 7; i++) {
            props[i] = "cqflux.server.regions.r" + i + ".size=4KB";
        }
        runner.withPropertyValues(props).run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                .isInstanceOf(CqfluxPropertyException.class)
                .hasMessageContaining("cqflux.server.regions=[r1, r2, r3, r4, r5, r6, r7] is refused")
                .hasMessageContaining("7 exposed regions"));
        props[7] = "cqflux.server.regions.r6.access=write-dst";
        runner.withPropertyValues(props).run(ctx -> assertThat(ctx).hasNotFailed());
    }

    @Test
    void anAnonymousRegionTooLargeToAllocate_failsTheStartNamingItsSize_notWithAnOutOfMemoryError() {
        // About 2^60 bytes: beyond any machine's address space, so the allocation always fails.
        runner.withPropertyValues("cqflux.server.port=0", "cqflux.server.regions.data.size=1048576TB")
                .run(ctx -> assertThat(ctx).hasFailed().getFailure().rootCause()
                        .isInstanceOf(CqfluxPropertyException.class)
                        .hasMessageContaining("cqflux.server.regions.data.size=1152921504606846976 bytes is refused"));
    }

    @Test
    void noServerPort_noServer() {
        runner.run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(CqfluxServer.class));
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
