package io.cqflux.test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.testing.FreePorts;
import io.cqflux.core.testing.RdmaResources;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.ConnectOptions;
import io.cqflux.reactor.Cqflux;
import io.cqflux.reactor.RdmaConnection;
import io.cqflux.reactor.RdmaServer;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.SharedSecretAuthenticator;
import io.cqflux.reactor.TransportChoice;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.SecureRandom;
import java.time.Duration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * {@link HostilePeerContract} on librpma over Soft-RoCE (rxe): runs only in the lane (tag
 * {@code rpma}), where {@code CQFLUX_RPMA_ADDRESS} names the guest's rxe address; without it the
 * fixture fails loudly. Server, trusted peer and attacker are three instances of this JVM, so
 * three protection domains on the one rxe device.
 *
 * <p>What the contract's fabric subclass has and this one leaves out, and why:
 * <ul>
 *   <li>keys 0-15 (a sequential allocator's first keys): rxe never issues them (its MR pool
 *       starts at index 1, and the key is {@code index << 8 | random byte}); the sweep below
 *       covers what rxe does issue;</li>
 *   <li>raw TCP sockets on the listener: an RDMA CM listener has no TCP port (the connect
 *       request is a CM MAD), so there is no socket that half-opens it;</li>
 *   <li>the truncated hellos: RDMA CM pads the private data it delivers to its fixed size
 *       ({@code rdma_get_cm_event(3)}), so a hello cut short arrives as a well-formed one with
 *       zero regions.</li>
 * </ul>
 *
 * <p>The shared secret's credentials run here as on fabric (22 bytes: they fit rpma's 56 of connect
 * private data beside the hello of a client that exposes no region); a client that exposes a
 * region has no room for them, which {@link
 * #aClientThatExposesARegion_hasNoRoomForSharedSecretCredentials_andItsConnectFailsBeforeSending}
 * checks.
 *
 * <p>The attacker is given every address (librpma's descriptor addresses by virtual address, so
 * it needs one; a server's regions are guessable neighbours in its heap): only the key stands
 * between it and the memory. Bounded: one attacker connection per forged key, 64 bytes each, on
 * the guest's one rxe address; the key sweep is {@link #VARIANTS} + 2 x {@link #INDEX_SPAN} x
 * {@link #PER_INDEX} connections.
 */
@Tag("rpma")
@Tag("hostile-peer")
class RpmaHostilePeerTest extends HostilePeerContract {

    /** rxe's key: the MR pool index above a byte drawn at registration (rxe_mr.c, rxe_mr_init). */
    static final int VARIANTS = 256;
    /** How many pool indices on each side of an issued key the sweep tries. */
    static final int INDEX_SPAN = 4;
    /** Variant bytes tried at each of those indices. */
    static final int PER_INDEX = 2;
    /**
     * Forging connections whose ends are awaited together: a forger ends after its failed write
     * only once the connection manager's disconnect has gone both ways, a wait that overlaps with
     * the next forgers' connects.
     */
    static final int GROUP = 8;

    static InetAddress address() {
        String a = System.getenv("CQFLUX_RPMA_ADDRESS");
        if (a == null || a.isBlank()) {
            throw new IllegalStateException("CQFLUX_RPMA_ADDRESS is not set: the rpma tier runs in the Soft-RoCE lane"
                    + " (scripts/softroce), with the guest's rxe address");
        }
        try {
            return InetAddress.getByName(a);
        } catch (UnknownHostException e) {
            throw new IllegalStateException("CQFLUX_RPMA_ADDRESS " + a + " does not resolve", e);
        }
    }

    @Override
    Cqflux.Builder builder(String role) {
        return Cqflux.builder().transport(TransportChoice.RPMA).localAddress(address())
                .threadNamePrefix("cqflux-hostile-" + role).shutdownTimeout(Duration.ofSeconds(5));
    }

    /**
     * rxe's counters of "receiver not ready" ({@code rxe_hw_counters.c}): {@code send_rnr_err}
     * moves when a responder finds no posted receive and answers with an RNR NAK,
     * {@code rcvd_rnr_err} when a requester gets one and waits to retry; server and attacker
     * share the guest's one device, so both move for one such send.
     */
    @Override
    String receiverNotReadyCounters() {
        return rxeReceiverNotReadyCounters();
    }

    @Override
    int cmIdsFrom(InetSocketAddress server) {
        return RdmaResources.cmIdsFrom(server);
    }

    /** Yes: librpma sends the request on the client's set-up thread (see the contract's method). */
    @Override
    boolean stalledRequestReachesTheServer() {
        return true;
    }

    /** {@return rxe's counters of "receiver not ready", as {@link #receiverNotReadyCounters()} reads them} */
    static String rxeReceiverNotReadyCounters() {
        StringBuilder s = new StringBuilder();
        java.io.File[] devices = new java.io.File("/sys/class/infiniband").listFiles();
        for (java.io.File d : devices == null ? new java.io.File[0] : devices) {
            for (String name : new String[] {"send_rnr_err", "rcvd_rnr_err", "retry_rnr_exceeded_err"}) {
                java.nio.file.Path p = d.toPath().resolve("ports/1/hw_counters/" + name);
                try {
                    s.append(d.getName()).append('.').append(name).append('=')
                            .append(java.nio.file.Files.readString(p).trim()).append(' ');
                } catch (IOException e) {
                    s.append(d.getName()).append('.').append(name).append("=unreadable ");
                }
            }
        }
        return s.isEmpty() ? "none found under /sys/class/infiniband" : s.toString().trim();
    }

    /** librpma 1.2's descriptor: 21 bytes ({@code rpma_mr_get_descriptor(3)}). */
    @Override
    int rawDescriptorLength() {
        return 21;
    }

    /**
     * librpma listens on exactly the port given and cannot report a chosen one
     * ({@code rpma_ep_listen(3)}): one {@link FreePorts} never handed out before in this JVM.
     */
    @Override
    InetSocketAddress listenAddress() {
        return new InetSocketAddress(address(), FreePorts.next());
    }

    /**
     * The rpma descriptor in a hello: a 3-byte header (magic, access, length) before librpma's own
     * 21 bytes ({@code rpma_mr_get_descriptor(3)}: address, length, rkey, usage, little-endian).
     */
    @Override
    long keyOfHelloDescriptor(byte[] descriptor) {
        assertEquals(24, descriptor.length, "rpma's descriptor in a hello");
        return keyOfRaw(java.util.Arrays.copyOfRange(descriptor, 3, 24));
    }

    @Override
    long keyOfRaw(byte[] raw) {
        assertEquals(21, raw.length, "librpma 1.2's descriptor");
        return ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN).getInt(16) & 0xffff_ffffL;
    }

    /**
     * librpma's descriptor forged: the target's virtual address, {@link #SIZE} bytes, the key, and
     * the usage byte claiming {@code claimed} (the attacker writes it, so the client side's check
     * against it passes: only the target's NIC decides).
     */
    @Override
    byte[] forged(long key, Region target, RegionAccess claimed) {
        return ByteBuffer.allocate(21).order(ByteOrder.LITTLE_ENDIAN).putLong(target.segment().address())
                .putLong(SIZE).putInt((int) key).put((byte) claimed.bit()).array();
    }

    @Override
    long randomKey(SecureRandom r) {
        return r.nextInt() & 0xffff_ffffL;
    }

    @Override
    long[] nearKeys(long known, long flushable) {
        return rxeNearKeys(known, flushable);
    }

    @Override
    String rejectReasonPrefix(String reason) {
        return null; // rpma_conn_req_delete(3) rejects with no private data
    }

    @Override
    byte[][] malformedHellos() {
        return new byte[][] {
            new byte[16],                                                   // no hello: all zero
            {'X', 'Q', 3, 0, 0, 0},                                         // wrong magic
            {'C', 'Q', 9, 0, 0, 0},                                         // unknown version
            {'C', 'Q', 3, 1, (byte) 0xff, (byte) 0xff, 1, 2, 3},            // region beyond the 56 bytes
            {'C', 'Q', 3, (byte) 0xff, 0, 24},                              // 255 regions in 56 bytes
            {'C', 'Q', 3, 0, (byte) 0xff, 1, 2},                            // handshake beyond the 56 bytes
            {'C', 'Q', 3, 0, 0, (byte) 0xff, 1, 2},                         // control words beyond the 56 bytes
        };
    }

    /**
     * Soft-RoCE under TCG sets up connections far slower than tcp on loopback: half the fabric
     * flood keeps the class within its share of the lane.
     */
    @Override
    int floodSize() {
        return 16;
    }

    /**
     * rxe's plausible range around a key the attacker holds: all 256 variant bytes of its own
     * region's pool index (one of them the real key, which has no write right), then
     * {@link #PER_INDEX} random variants at each of the {@link #INDEX_SPAN} indices on either side
     * (where the server registers the next and previous connections' exposures and control words),
     * aimed at the trusted region. The connection the keys were issued to stays open, so the
     * registrations at and next to that index are live.
     */
    @Test
    void forgedKeys_everyVariantOfAnIssuedIndex_andNeighbouringIndices_changeNothing() {
        RdmaConnection mine = attacker.connect(publicServer.address()).block(T);
        // An rxe key is valid on every queue pair of its protection domain (rxe_resp.c, check_rkey:
        // the MR's PD against the QP's), which is the server instance's: the forgers connect to an
        // endpoint of the same server that exposes nothing, so that a forging connection costs no
        // registrations but its own control words.
        RdmaServer bare = server.bind(listenAddress()).block(T);
        bare.connections().subscribe();
        long tries = forgedTries.get();
        long issued = -1;
        for (java.util.concurrent.atomic.AtomicLong a : forgeNanos) {
            a.set(0);
        }
        long t0 = System.nanoTime();
        try {
            issued = exposedKey(mine, 0);
            long index = issued >>> 8;
            long[] variants = new long[VARIANTS];
            for (int v = 0; v < VARIANTS; v++) {
                variants[v] = index << 8 | v;
            }
            forgeMany(variants, readOnly, bare.address(), GROUP);
            SecureRandom r = new SecureRandom();
            forgeMany(rxeKeysAround(index, INDEX_SPAN, PER_INDEX, r), trusted, bare.address(), GROUP);
        } finally {
            mine.dispose();
            bare.disposeNow(T);
        }
        printSweepFact("rpma", tries, issued, GROUP, t0);
    }

    /**
     * On rpma a client's hello with one exposed region takes 54 of the connect's 56 bytes, so the
     * shared secret's credentials do not fit beside it: the connect fails on the client, before a
     * request is sent, naming the sizes and what to do; the server sees nothing of it.
     */
    @Test
    void aClientThatExposesARegion_hasNoRoomForSharedSecretCredentials_andItsConnectFailsBeforeSending() {
        byte[] secret = "rpma hostile-peer shared secret!".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        RdmaServer s = server.bind(listenAddress(), AcceptOptions.exposing(readOnly)
                .authenticatedBy(SharedSecretAuthenticator.of(secret))).block(T);
        Region mine = attacker.register(filled(0x66), RegionAccess.READ_SRC);
        try {
            StepVerifier.create(attacker.connect(s.address(), ConnectOptions.exposing(mine)
                            .credentials(SharedSecretAuthenticator.credentials(secret))))
                    .expectErrorSatisfies(e -> {
                        assertInstanceOf(IllegalArgumentException.class, e);
                        assertTrue(e.getMessage().contains("above the transport's maximum 56")
                                && e.getMessage().contains("22 bytes of credentials")
                                && e.getMessage().contains("expose fewer regions or send shorter credentials"),
                                e.getMessage());
                    })
                    .verify(T);
            RdmaServer.Stats st = s.stats();
            assertEquals(0, st.connections() + st.pendingHandshakes() + st.refusedByAuthenticator()
                    + st.malformedHellos(), () -> "the server saw a request: " + st);
            // Without the region, the same client is served.
            RdmaConnection ok = attacker.connect(s.address(), ConnectOptions.defaults()
                    .credentials(SharedSecretAuthenticator.credentials(secret))).block(T);
            StepVerifier.create(ok.read(ok.remoteRegion(0), 0, 8)).assertNext(b -> assertEquals(0x22, b[0] & 0xff))
                    .expectComplete().verify(T);
            ok.disposeNow(T);
        } finally {
            s.disposeNow(T);
            mine.close();
        }
        neighbourStillWorks();
    }
}
