package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.testing.RdmaResources;
import io.cqflux.reactor.AcceptDecision;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.ConnectOptions;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.TransportChoice;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * {@link HostilePeerContract} on fabric/verbs (libfabric's verbs provider) over Soft-RoCE (rxe):
 * runs only in the lane (tag {@code fabric-verbs}), where {@code CQFLUX_RPMA_ADDRESS} names the
 * guest's rxe address; without it the fixture fails loudly. Server, trusted peer and attacker are
 * three instances of this JVM, so three protection domains on the one rxe device.
 *
 * <p>The private-data budget, the one thing that shaped the contract here (libfabric 1.17):
 * <ul>
 *   <li>55 bytes in a connect and 55 in an accept: RDMA CM's 56 less the provider's 1-byte header
 *       ({@code VERBS_CM_DATA_SIZE} in {@code prov/verbs/src/fi_verbs.h}; {@code fi_connect} and
 *       {@code fi_accept} refuse more with {@code -FI_EINVAL}, although RDMA CM carries 196 in an
 *       accept, {@code rdma_accept(3)}). {@code fi_getopt(FI_OPT_CM_DATA_SIZE)} reports 55, which
 *       the transport applies to both. {@link #privateDataBudgets_carryOneRegionPerAccept_andABindOfTwoIsRefusedNamingTheSizes}
 *       checks it through the public API; {@code core/fabric/src/test/c/verbs_cm_data_probe.c}
 *       measures it on the provider itself.</li>
 *   <li>A region's descriptor in a hello is 24 bytes (version 2 of the transport's descriptor: a
 *       4-byte key, rxe's rkey), its raw descriptor 20, the control words' too. An accept's hello
 *       with one region is 4 + 2 + 24 + 1 + 1 + 20 = 52 bytes before its trailer; with two it needs
 *       78, so the contract's public {@code bind()} of two regions is refused at the bind. Here each
 *       read-only region is exposed on a {@code bind()} of its own
 *       ({@link #acceptCarriesTwoRegions()}); every case of the contract runs.</li>
 *   <li>The provider delivers exactly the bytes sent (its header carries their length), so the
 *       truncated hellos that RDMA CM's padding hides from rpma run here as on fabric/tcp.</li>
 * </ul>
 *
 * <p>Left out, and why: the keys 0-15 of fabric/tcp's sequential case (rxe never issues them: its
 * pool starts at index 1 and a key is {@code index << 8 | random byte}); raw TCP sockets on the
 * listener (an RDMA CM listener has no TCP port). A reject carries the server's reason on verbs
 * as on tcp: the provider's {@code fi_reject} delivers its data to the client's error entry
 * ({@code verbs_cm_data_probe.c}), so the transport rejects with it
 * ({@code FabricTransport#maxRejectPrivateData}) and nothing is accepted for a refused client.
 *
 * <p>The attacker is given every address (verbs addresses a region by virtual address,
 * {@code FI_MR_VIRT_ADDR}): only the key stands between it and the memory. Bounded: one attacker
 * connection per forged key, 64 bytes each, on the guest's one rxe address; the key sweep is
 * {@link #OWN_INDEX_VARIANTS} + 2 x {@link #INDEX_SPAN} x {@link #PER_INDEX} connections, smaller
 * than rpma's (which tries every variant of the index) to keep the class within its share of the
 * lane; rpma's sweep covers what rxe does with a whole index.
 */
@Tag("fabric-verbs")
@Tag("hostile-peer")
class VerbsHostilePeerTest extends HostilePeerContract {

    /** rxe's key: the MR pool index above a byte drawn at registration (rxe_mr.c, rxe_mr_init). */
    static final int VARIANTS = 256;
    /** Variant bytes of the attacker's own region's pool index the sweep tries, the real key's among them. */
    static final int OWN_INDEX_VARIANTS = 32;
    /** How many pool indices on each side of an issued key the sweep tries. */
    static final int INDEX_SPAN = 4;
    /** Variant bytes tried at each of those indices. */
    static final int PER_INDEX = 2;
    /** Forging connections whose ends are awaited together (RpmaHostilePeerTest#GROUP says why). */
    static final int GROUP = 8;
    /** fabric/verbs' private data in a connect and in an accept (see the class comment). */
    static final int PRIVATE_DATA = 55;

    /**
     * The set-up timeout is raised from the default 5 s to just under the contract's {@link #T}:
     * the fixture's first connect, between fresh instances on verbs under TCG, was seen to take
     * longer than 5 s on a loaded host. Below
     * {@link #T}, a connect that does hang still fails as the connect's own timeout, naming it.
     */
    @Override
    Cqflux.Builder builder(String role) {
        return Cqflux.builder().transport(TransportChoice.FABRIC).fabricProvider("verbs")
                .localAddress(RpmaHostilePeerTest.address()).threadNamePrefix("cqflux-vhostile-" + role)
                .connectionConfig(ConnectionConfig.DEFAULT.withTimeout(T.minusSeconds(1)))
                .shutdownTimeout(Duration.ofSeconds(5));
    }

    /** The fabric transport reports the port it bound. */
    @Override
    InetSocketAddress listenAddress() {
        return new InetSocketAddress(RpmaHostilePeerTest.address(), 0);
    }

    /** One region's hello fills an accept's 55 bytes (see the class comment). */
    @Override
    boolean acceptCarriesTwoRegions() {
        return false;
    }

    @Override
    int cmIdsFrom(InetSocketAddress server) {
        return RdmaResources.cmIdsFrom(server);
    }

    /**
     * No: libfabric's verbs resolves the address and the route and sends the request as the
     * client's event queue is read; measured in the lane, nothing reaches the server until the
     * client's loop runs again.
     */
    @Override
    boolean stalledRequestReachesTheServer() {
        return false;
    }

    /** fabric/verbs gives a scoped connection a protection domain of its own. */
    @Override
    boolean offersScopedKeys() {
        return true;
    }

    @Override
    String receiverNotReadyCounters() {
        return RpmaHostilePeerTest.rxeReceiverNotReadyCounters();
    }

    /** The raw form with a 4-byte key (the provider's {@code mr_key_size} is 4): key, base, length. */
    @Override
    int rawDescriptorLength() {
        return 20;
    }

    /** Version 2 of the transport's descriptor: 24 bytes, the 4-byte key at offset 4. */
    @Override
    long keyOfHelloDescriptor(byte[] descriptor) {
        assertEquals(24, descriptor.length, "fabric/verbs' descriptor in a hello");
        return ByteBuffer.wrap(descriptor).getInt(4) & 0xffff_ffffL;
    }

    @Override
    long keyOfRaw(byte[] raw) {
        assertEquals(20, raw.length, "fabric/verbs' raw descriptor");
        return ByteBuffer.wrap(raw).getInt(0) & 0xffff_ffffL;
    }

    /**
     * The raw form, big-endian: the key, the target's virtual address, {@link #SIZE} bytes. It
     * carries no access bits: the attacker states what it claims, and only the target's NIC decides.
     */
    @Override
    byte[] forged(long key, Region target, RegionAccess claimed) {
        return ByteBuffer.allocate(20).putInt((int) key).putLong(target.segment().address()).putLong(SIZE).array();
    }

    @Override
    long randomKey(SecureRandom r) {
        return r.nextInt() & 0xffff_ffffL;
    }

    @Override
    long[] nearKeys(long known, long flushable) {
        return rxeNearKeys(known, flushable);
    }

    /**
     * fi_reject(3) carries it on verbs too ({@code FabricTransport#maxRejectPrivateData}), cut to
     * what verbs' 55 bytes hold beside the refusal's 3-byte frame ({@code PeerHello.encodeRefusal}).
     */
    @Override
    String rejectReasonPrefix(String reason) {
        byte[] b = reason.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        int room = PRIVATE_DATA - 3;
        return b.length <= room ? reason : new String(b, 0, room, java.nio.charset.StandardCharsets.UTF_8);
    }

    /** fabric/tcp's ten: the provider delivers exactly what was sent, so the truncated ones stay truncated. */
    @Override
    byte[][] malformedHellos() {
        return malformedHellosAsSent();
    }

    /** Soft-RoCE under TCG, as for rpma: half the fabric/tcp flood. */
    @Override
    int floodSize() {
        return 16;
    }

    /**
     * What the budget is and what it allows, through the public API: 55 bytes each way, delivered
     * byte for byte (a short one as short as it was sent), one more refused on the client naming
     * the bound; an accept's hello of one region fits, a bind of two is refused naming the sizes.
     */
    @Test
    void privateDataBudgets_carryOneRegionPerAccept_andABindOfTwoIsRefusedNamingTheSizes() {
        assertEquals(PRIVATE_DATA, server.maxConnectPrivateData(), "fabric/verbs' connect private data");
        assertEquals(PRIVATE_DATA, server.maxAcceptPrivateData(), "fabric/verbs' accept private data");
        assertEquals(20, readOnly.rawDescriptor().length, "fabric/verbs' raw descriptor");
        RdmaConnection c = attacker.connect(publicServer.address()).block(T);
        int helloBytes;
        try {
            assertEquals(24, exposedDescriptor(c, 0).length, "fabric/verbs' descriptor in a hello");
            helloBytes = c.peerPrivateData().length;
            assertTrue(helloBytes <= PRIVATE_DATA, helloBytes + " bytes");
        } finally {
            c.disposeNow(T);
        }
        StepVerifier.create(Mono.defer(() -> server.bind(listenAddress(), AcceptOptions.exposing(readOnly,
                        readOnlyFlushable))))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(IllegalArgumentException.class, e);
                    assertTrue(e.getMessage().contains("need 78 bytes of private data, above the transport's maximum "
                            + PRIVATE_DATA), e::getMessage);
                })
                .verify(T);
        List<byte[]> asked = new CopyOnWriteArrayList<>();
        byte[] full = filledBytes(PRIVATE_DATA, 0x5a);
        byte[] answer = filledBytes(PRIVATE_DATA, 0xa5);
        RdmaServer raw = server.bind(listenAddress(), AcceptOptions.rawPrivateData(d -> {
            asked.add(d);
            return AcceptDecision.accept(d.length == PRIVATE_DATA ? answer : new byte[] {1, 2, 3});
        })).block(T);
        List<RdmaConnection> served = new CopyOnWriteArrayList<>();
        Disposable sub = raw.connections().subscribe(served::add);
        try {
            for (byte[] ask : new byte[][] {full, {7, 7, 7, 7, 7}}) {
                RdmaConnection r = attacker.connect(raw.address(), ConnectOptions.rawPrivateData(ask)).block(T);
                try {
                    assertArrayEquals(ask, asked.getLast(), "what the server was asked");
                    assertArrayEquals(ask.length == PRIVATE_DATA ? answer : new byte[] {1, 2, 3}, r.peerPrivateData(),
                            "what the client was answered");
                } finally {
                    r.disposeNow(T);
                }
            }
            StepVerifier.create(Mono.defer(() -> attacker.connect(raw.address(),
                            ConnectOptions.rawPrivateData(new byte[PRIVATE_DATA + 1]))))
                    .expectErrorSatisfies(e -> {
                        assertInstanceOf(IllegalArgumentException.class, e);
                        assertTrue(e.getMessage().contains((PRIVATE_DATA + 1) + " bytes exceeds the transport's maximum "
                                + PRIVATE_DATA), e::getMessage);
                    })
                    .verify(T);
        } finally {
            sub.dispose();
            served.forEach(RdmaConnection::dispose);
            raw.disposeNow(T);
        }
        System.out.println("FACT verbs: connect and accept private data " + PRIVATE_DATA + " bytes each, delivered as"
                + " sent (55 and 5 bytes asked, 55 and 3 answered); a region's descriptor in a hello 24 bytes, its raw"
                + " descriptor 20; the public endpoint's accept hello of one region " + helloBytes + " bytes; two"
                + " regions need 78");
    }

    private static byte[] filledBytes(int n, int b) {
        byte[] a = new byte[n];
        java.util.Arrays.fill(a, (byte) b);
        return a;
    }

    /**
     * rxe's plausible range around a key the attacker holds: {@link #OWN_INDEX_VARIANTS} variant
     * bytes of its own region's pool index (the real key, which has no write right, first, the
     * rest drawn at random), aimed at that region, then {@link #PER_INDEX} random variants at each
     * of the {@link #INDEX_SPAN} indices on either side (where the server registers the next and
     * previous connections' control words and exposures), aimed at the trusted region. The
     * connection the keys were issued to stays open, so the registrations at and next to that
     * index are live. The forgers connect to an endpoint of the same server that exposes nothing:
     * an unscoped key is valid on every queue pair of its protection domain (rxe_resp.c,
     * check_rkey), so a forger costs no registrations but its own control words.
     */
    @Test
    void forgedKeys_variantsOfAnIssuedIndex_andNeighbouringIndices_changeNothing() {
        RdmaConnection mine = attacker.connect(publicServer.address()).block(T);
        RdmaServer bare = server.bind(listenAddress()).block(T);
        Disposable sub = bare.connections().subscribe();
        long tries = forgedTries.get();
        long issued = -1;
        for (AtomicLong a : forgeNanos) {
            a.set(0);
        }
        long t0 = System.nanoTime();
        try {
            issued = exposedKey(mine, 0);
            long index = issued >>> 8;
            SecureRandom r = new SecureRandom();
            long[] variants = new long[OWN_INDEX_VARIANTS];
            variants[0] = issued;
            java.util.Set<Long> drawn = new java.util.HashSet<>(List.of(issued));
            for (int v = 1; v < OWN_INDEX_VARIANTS; v++) {
                long k;
                do {
                    k = index << 8 | r.nextInt(VARIANTS);
                } while (!drawn.add(k));
                variants[v] = k;
            }
            forgeMany(variants, readOnly, bare.address(), GROUP);
            forgeMany(rxeKeysAround(index, INDEX_SPAN, PER_INDEX, r), trusted, bare.address(), GROUP);
        } finally {
            mine.dispose();
            sub.dispose();
            bare.disposeNow(T);
        }
        printSweepFact("verbs", tries, issued, GROUP, t0);
    }
}
