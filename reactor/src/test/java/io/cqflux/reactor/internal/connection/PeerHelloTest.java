package io.cqflux.reactor.internal.connection;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.reactor.RpmaCommonData;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Set;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class PeerHelloTest {

    /** librpma 1.2: rpma_mr_get_descriptor_size is 21, plus the transport's 3-byte header. */
    private static final int RPMA_REGION_DESCRIPTOR = 24;
    /** rpma: its frame takes 1 byte of RDMA CM's 56 (connect) and 196 (accept). */
    private static final int RPMA_MAX_CONNECT = 56;
    private static final int RPMA_MAX_ACCEPT = 196;
    /** librpma 1.2: the raw descriptor of the control words (rpma_mr_get_descriptor_size). */
    private static final int RPMA_RAW_DESCRIPTOR = 21;
    private static final byte[] NONE = new byte[0];

    @Test
    void encodeDecode_roundTripsDescriptorsAndHandshake_andIgnoresTrailingPadding() {
        byte[] a = {1, 2, 3};
        byte[] b = new byte[40];
        new Random(1).nextBytes(b);
        byte[] hs = {0x11, 0x22};
        byte[] enc = new PeerHello(List.of(a, b), hs, NONE).encode(1000);
        assertEquals(PeerHello.V3, enc[2]);
        byte[] padded = Arrays.copyOf(enc, enc.length + 16);
        PeerHello dec = PeerHello.decode(padded);
        assertEquals(2, dec.regions().size());
        assertArrayEquals(a, dec.regions().get(0));
        assertArrayEquals(b, dec.regions().get(1));
        assertArrayEquals(hs, dec.handshake());
    }

    @Test
    void receiveBufferSize_trailsTheHello_exactly_andReadsZeroFromAHelloWithoutIt() {
        for (int size : new int[] {1, 4096, 32_767, 32_768, 40_000, 65_536, 1_000_001, 16 << 20}) {
            byte[] enc = new PeerHello(List.of(), new byte[] {7}, NONE, size).encode(1000);
            assertEquals(7 + (size <= 32_767 ? 2 : 4), enc.length, "trailer of " + size);
            assertEquals(size, PeerHello.decode(Arrays.copyOf(enc, enc.length + 8)).receiveBufferSize());
            assertEquals(size, PeerHello.decode(enc).receiveBufferSize());
        }
        // Room for a u16 but not for the u32 a large size needs: left out, not cut short.
        byte[] noRoom = new PeerHello(List.of(), new byte[] {7}, NONE, 65_536).encode(9);
        assertEquals(7, noRoom.length);
        assertEquals(0, PeerHello.decode(noRoom).receiveBufferSize());
        // An older peer's hello (no trailer), zero-padded by the transport: not told.
        byte[] old = new PeerHello(List.of(), new byte[] {7}, NONE).encode(1000);
        assertEquals(0, PeerHello.decode(Arrays.copyOf(old, old.length + 16)).receiveBufferSize());
        // No room for it: the hello goes without, and still fits.
        byte[] full = new PeerHello(List.of(), new byte[] {7}, NONE, 4096).encode(7);
        assertEquals(7, full.length);
        assertEquals(0, PeerHello.decode(full).receiveBufferSize());
    }

    @Test
    void encodeDecode_handshakeWithoutRegions_roundTrips() {
        byte[] enc = new PeerHello(List.of(), new byte[] {7}, NONE).encode(RPMA_MAX_CONNECT);
        assertEquals(7, enc.length);
        PeerHello dec = PeerHello.decode(enc);
        assertEquals(0, dec.regions().size());
        assertArrayEquals(new byte[] {7}, dec.handshake());
    }

    @Test
    void decode_version1_stillDecodes_withEmptyHandshake() {
        // 'C' 'Q' 1 count=1, u16 length 3, descriptor: what a peer of the previous version sends
        byte[] v1 = {'C', 'Q', 1, 1, 0, 3, 9, 8, 7, 0, 0, 0};
        PeerHello dec = PeerHello.decode(v1);
        assertEquals(1, dec.regions().size());
        assertArrayEquals(new byte[] {9, 8, 7}, dec.regions().get(0));
        assertEquals(0, dec.handshake().length);
    }

    @Test
    void rpmaLimits_oneRegionThePeerConfigurationAndControlWords_fitAConnect_sixRegionsAnAccept() {
        // The rpma peer configuration descriptor is 1 byte in librpma 1.2 (checked in the lane by
        // RpmaLaneTest); allow a few bytes more for future versions.
        byte[] peerCfg = new byte[4];
        byte[] one = new PeerHello(List.of(new byte[RPMA_REGION_DESCRIPTOR]), peerCfg, NONE).encode(RPMA_MAX_CONNECT);
        assertEquals(4 + 2 + RPMA_REGION_DESCRIPTOR + 1 + peerCfg.length + 1, one.length);
        assertTrue(one.length <= RPMA_MAX_CONNECT);
        // A connect with one region, librpma's 1-byte peer configuration and the control words
        // fills 54 of the 56 bytes: the receive buffer size still fits.
        byte[] oneTold = new PeerHello(List.of(new byte[RPMA_REGION_DESCRIPTOR]), new byte[1],
                new byte[RPMA_RAW_DESCRIPTOR], 4096).encode(RPMA_MAX_CONNECT);
        assertEquals(RPMA_MAX_CONNECT, oneTold.length);
        assertEquals(4096, PeerHello.decode(oneTold).receiveBufferSize());
        byte[] control = new byte[RPMA_RAW_DESCRIPTOR];
        List<byte[]> six = java.util.Collections.nCopies(6, new byte[RPMA_REGION_DESCRIPTOR]);
        assertTrue(new PeerHello(six, peerCfg, control).encode(RPMA_MAX_ACCEPT).length <= RPMA_MAX_ACCEPT);
        List<byte[]> seven = java.util.Collections.nCopies(7, new byte[RPMA_REGION_DESCRIPTOR]);
        assertThrows(IllegalArgumentException.class,
                () -> new PeerHello(seven, peerCfg, control).encode(RPMA_MAX_ACCEPT));
        IllegalArgumentException two = assertThrows(IllegalArgumentException.class, () -> new PeerHello(
                List.of(new byte[RPMA_REGION_DESCRIPTOR], new byte[RPMA_REGION_DESCRIPTOR]), peerCfg, NONE)
                .encode(RPMA_MAX_CONNECT));
        assertTrue(two.getMessage().contains("62") && two.getMessage().contains("56"), two.getMessage());
    }

    @Test
    void encode_aboveTransportLimit_failsNamingSizeAndLimit() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new PeerHello(List.of(new byte[100]), new byte[0], NONE).encode(56));
        assertTrue(e.getMessage().contains("108") && e.getMessage().contains("56"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new PeerHello(List.of(), new byte[256], NONE).encode(1000));
    }

    @Test
    void controlWords_roundTrip_andFitAnRpmaConnectBesideOneRegionAndThePeerConfiguration() {
        byte[] control = new byte[RPMA_RAW_DESCRIPTOR];
        new Random(3).nextBytes(control);
        byte[] peerCfg = new byte[1];
        byte[] enc = new PeerHello(List.of(new byte[RPMA_REGION_DESCRIPTOR]), peerCfg, control).encode(RPMA_MAX_CONNECT);
        assertEquals(4 + 2 + RPMA_REGION_DESCRIPTOR + 1 + 1 + 1 + RPMA_RAW_DESCRIPTOR, enc.length);
        assertTrue(enc.length <= RPMA_MAX_CONNECT, enc.length + " bytes");
        PeerHello dec = PeerHello.decode(Arrays.copyOf(enc, 56)); // RDMA CM pads a connect to 56
        assertArrayEquals(control, dec.control());
        assertArrayEquals(peerCfg, dec.handshake());
    }

    @Test
    void decode_version2_stillDecodes_withoutControlWords() {
        // 'C' 'Q' 2 count=0, handshake length 1: what a peer of the previous version sends
        byte[] v2 = {'C', 'Q', 2, 0, 1, 5, 0, 0};
        PeerHello dec = PeerHello.decode(v2);
        assertArrayEquals(new byte[] {5}, dec.handshake());
        assertEquals(0, dec.control().length);
    }

    @Test
    void decode_emptyOrZeroPadding_isNoHello_andFailsNamingRawPrivateData() {
        for (byte[] d : new byte[][] {new byte[0], new byte[56], null}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PeerHello.decode(d));
            assertTrue(e.getMessage().contains("no cqflux hello") && e.getMessage().contains("rawPrivateData"),
                    e.getMessage());
        }
        assertEquals(0, new PeerHello(List.of(), new byte[0], NONE).encode(0).length);
    }

    @Test
    void decode_librpmaCommonData_failsOnTheMagic_neverAsZeroRegions() {
        // librpma's examples: data_offset 0 (u16), mr_desc_size 21, pcfg_desc_size 1, descriptors
        byte[] common = RpmaCommonData.encode(new byte[21], new byte[] {1}, 0);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PeerHello.decode(Arrays.copyOf(common, 196)));
        assertTrue(e.getMessage().contains("bad magic 0x0000") && e.getMessage().contains("offset 0"), e.getMessage());
        // a greeting whose first byte could pass for the old length frame
        byte[] greeting = Arrays.copyOf("\u0005Hello".getBytes(java.nio.charset.StandardCharsets.US_ASCII), 56);
        assertThrows(IllegalArgumentException.class, () -> PeerHello.decode(greeting));
    }

    @Test
    void decode_helloBehindThePreviousRpmaLengthFrame_stillDecodes() {
        byte[] enc = new PeerHello(List.of(new byte[] {4, 5}), new byte[] {1}, new byte[] {2, 3}).encode(55);
        byte[] framed = new byte[56];
        framed[0] = (byte) enc.length;
        System.arraycopy(enc, 0, framed, 1, enc.length);
        PeerHello dec = PeerHello.decode(framed);
        assertArrayEquals(new byte[] {4, 5}, dec.regions().get(0));
        assertArrayEquals(new byte[] {2, 3}, dec.control());
    }

    @Test
    void decode_truncatedHandshake_isRejected() {
        byte[] enc = new PeerHello(List.of(new byte[10]), new byte[] {1, 2, 3}, NONE).encode(100);
        // the encoding ends: handshake length 3, its 3 bytes, control length 0
        IllegalArgumentException noControl = assertThrows(IllegalArgumentException.class,
                () -> PeerHello.decode(Arrays.copyOf(enc, enc.length - 1)));
        assertTrue(noControl.getMessage().contains("before the control descriptor"), noControl.getMessage());
        IllegalArgumentException cut = assertThrows(IllegalArgumentException.class,
                () -> PeerHello.decode(Arrays.copyOf(enc, enc.length - 2)));
        assertTrue(cut.getMessage().contains("handshake length 3"), cut.getMessage());
        IllegalArgumentException noLength = assertThrows(IllegalArgumentException.class,
                () -> PeerHello.decode(Arrays.copyOf(enc, enc.length - 5)));
        assertTrue(noLength.getMessage().contains("before the transport handshake"), noLength.getMessage());
    }

    @Test
    void decode_truncatedOrForeignBytes_failWithIllegalArgument() {
        byte[] enc = new PeerHello(List.of(new byte[10]), new byte[0], NONE).encode(100);
        byte[] cut = Arrays.copyOf(enc, enc.length - 3);
        assertThrows(IllegalArgumentException.class, () -> PeerHello.decode(cut));
        assertThrows(IllegalArgumentException.class, () -> PeerHello.decode(new byte[] {9, 9, 9, 9}));
        byte[] badVersion = enc.clone();
        badVersion[2] = 7;
        assertThrows(IllegalArgumentException.class, () -> PeerHello.decode(badVersion));
    }

    @Test
    void decode_randomBytes_neverThrowsAnythingButIllegalArgument() {
        Random r = new Random(42);
        for (int i = 0; i < 10_000; i++) {
            byte[] d = new byte[r.nextInt(64)];
            r.nextBytes(d);
            if (d.length > 1 && r.nextBoolean()) {
                d[0] = 'C';
                d[1] = 'Q';
                if (d.length > 2) {
                    d[2] = (byte) (1 + r.nextInt(3));
                }
            }
            try {
                PeerHello.decode(d);
            } catch (IllegalArgumentException expected) {
                // fine
            }
        }
    }

    @Test
    void credentials_travelInVersion4_withTheBufferSizeTrailerAfterThem() {
        byte[] cred = {9, 8, 7, 6, 5};
        byte[] enc = new PeerHello(List.of(new byte[] {1}), new byte[] {7}, new byte[] {3, 3}, 4096, cred).encode(1000);
        assertEquals(PeerHello.V4, enc[2]);
        PeerHello back = PeerHello.decode(Arrays.copyOf(enc, enc.length + 8));
        assertArrayEquals(cred, back.credentials());
        assertEquals(4096, back.receiveBufferSize());
        assertArrayEquals(new byte[] {3, 3}, back.control());
        // Without credentials it stays version 3, readable by a peer that knows no more.
        assertEquals(PeerHello.V3, new PeerHello(List.of(), new byte[] {7}, NONE).encode(1000)[2]);
        assertEquals(0, PeerHello.decode(new PeerHello(List.of(), new byte[] {7}, NONE).encode(1000))
                .credentials().length);
    }

    @Test
    void credentialsBeyondTheBytesSent_areRefusedWithTheBound() {
        byte[] bad = {'C', 'Q', PeerHello.V4, 0, 0, 0, 40, 1, 2};
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PeerHello.decode(bad));
        assertTrue(e.getMessage().contains("credentials length 40 exceeds the 2 bytes left"), e.getMessage());
        byte[] cut = {'C', 'Q', PeerHello.V4, 0, 0, 0};
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PeerHello.decode(cut)).getMessage()
                .contains("before the credentials' length"));
    }

    @Test
    void aRefusal_decodesToItsReason() {
        byte[] r = PeerHello.encodeRefusal("bad credentials", 196);
        PeerHello.Refused e = assertThrows(PeerHello.Refused.class, () -> PeerHello.decode(Arrays.copyOf(r, 56)));
        assertEquals("bad credentials", e.reason());
        assertTrue(e.getMessage().contains("refused by the server: bad credentials"), e.getMessage());
        // A long reason is cut to fit, never an error.
        assertTrue(PeerHello.encodeRefusal("x".repeat(1000), 56).length <= 56);
    }

    @Test
    void aLongReason_isCutAtACharactersStart_soThatItStillDecodes() {
        String reason = "é".repeat(150); // two bytes each: a byte cut at 200 ends on a whole one, at 53 not
        for (int max : new int[] {56, 57, 196, 256}) {
            byte[] r = PeerHello.encodeRefusal(reason, max);
            assertTrue(r.length <= max, () -> r.length + " > " + max);
            PeerHello.Refused e = assertThrows(PeerHello.Refused.class, () -> PeerHello.decode(r));
            assertTrue(reason.startsWith(e.reason()) && !e.reason().isEmpty(), e::reason);
        }
    }

    @Test
    void bytesThatOnlyStartLikeARefusal_areNoRefusal() {
        byte[] foreign = "CX: connection refused, quota exceeded".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PeerHello.decode(foreign));
        assertFalse(e instanceof PeerHello.Refused, e::getMessage);
        byte[] trailing = Arrays.copyOf(PeerHello.encodeRefusal("no", 56), 8);
        trailing[7] = 'x'; // something after the reason that is not padding
        assertFalse(assertThrows(IllegalArgumentException.class, () -> PeerHello.decode(trailing))
                instanceof PeerHello.Refused);
        byte[] notUtf8 = {'C', 'X', 2, (byte) 0xC3, (byte) 0x28};
        assertFalse(assertThrows(IllegalArgumentException.class, () -> PeerHello.decode(notUtf8))
                instanceof PeerHello.Refused);
        // Zero padding after a refusal (RDMA CM's) is still one.
        assertEquals("no", assertThrows(PeerHello.Refused.class,
                () -> PeerHello.decode(Arrays.copyOf(PeerHello.encodeRefusal("no", 56), 56))).reason());
    }

    @Test
    void controlReadableFlag_trailsTheBufferSize_andRoundTrips() {
        byte[] control = {3, 3};
        byte[] enc = new PeerHello(List.of(), new byte[] {7}, control, 4096).encode(1000);
        assertEquals(PeerHello.CONTROL_READABLE, enc[enc.length - 1], "the flags byte trails the hello");
        PeerHello d = PeerHello.decode(Arrays.copyOf(enc, enc.length + 10)); // RDMA CM's padding
        assertTrue(d.controlReadable());
        assertEquals(4096, d.receiveBufferSize());
        // A size that is not told is written as 0 so that the flags keep their place.
        PeerHello untold = PeerHello.decode(new PeerHello(List.of(), new byte[] {7}, control, 0).encode(1000));
        assertTrue(untold.controlReadable());
        assertEquals(0, untold.receiveBufferSize());
    }

    /**
     * The connection's parameters trail the flags (bit 1), after everything an older peer reads:
     * they round-trip, an older peer's bytes (no bit 1, zero padding) tell none, a hello with no
     * room for them leaves them out and says so, and a truncated length is malformed.
     */
    @Test
    void connectionParameters_trailTheFlags_roundTrip_andAreLeftOutWithoutRoom() {
        byte[] control = {3, 3};
        byte[] tag = {0x12, 0x34, 0x56, 0x78};
        PeerHello h = new PeerHello(List.of(), NONE, control, 4096, NONE, true, tag);
        byte[] enc = h.encode(1000);
        assertTrue(h.carriesParameters(1000));
        assertArrayEquals(tag, Arrays.copyOfRange(enc, enc.length - 4, enc.length), "they trail the hello");
        assertEquals(PeerHello.CONTROL_READABLE | PeerHello.CONNECTION_PARAMETERS, enc[enc.length - 6]);
        PeerHello d = PeerHello.decode(Arrays.copyOf(enc, enc.length + 10)); // RDMA CM's padding
        assertArrayEquals(tag, d.parameters());
        assertTrue(d.controlReadable());
        assertEquals(4096, d.receiveBufferSize());
        // What an older peer sends: no parameters, also behind zero padding.
        byte[] older = new PeerHello(List.of(), NONE, control, 4096).encode(1000);
        assertEquals(null, PeerHello.decode(Arrays.copyOf(older, 56)).parameters());
        // What an older peer reads of this hello is what it read before: the same bytes up to the
        // flags, whose bit 0 it alone checks.
        assertArrayEquals(Arrays.copyOf(older, older.length - 1), Arrays.copyOf(enc, older.length - 1),
                "the same hello before the flags");
        // No room: the hello goes without them (and the connection without a shared queue).
        int exact = enc.length;
        assertTrue(h.carriesParameters(exact));
        assertFalse(h.carriesParameters(exact - 1));
        byte[] without = h.encode(exact - 1);
        assertEquals(null, PeerHello.decode(without).parameters());
        assertTrue(PeerHello.decode(without).controlReadable(), "the flags still fit");
        // Malformed: bit 1 set and the length missing or past the end.
        byte[] cut = Arrays.copyOf(enc, enc.length - 5);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PeerHello.decode(cut)).getMessage()
                .contains("connection parameters' length"));
        byte[] shortened = Arrays.copyOf(enc, enc.length - 1);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> PeerHello.decode(shortened)).getMessage()
                .contains("connection parameters length 4 exceeds the 3 bytes left"));
    }

    @Test
    void oldFormatHello_withoutFlags_isNotReadable_evenWithPaddingOrASizeTrailer() {
        byte[] control = {3, 3};
        byte[] old = new PeerHello(List.of(), new byte[] {7}, control, 4096, NONE, false).encode(1000);
        assertFalse(PeerHello.decode(old).controlReadable());
        assertFalse(PeerHello.decode(Arrays.copyOf(old, 56)).controlReadable(), "zero padding read as a flag");
        byte[] oldNoSize = new PeerHello(List.of(), new byte[] {7}, control, 0, NONE, false).encode(1000);
        assertFalse(PeerHello.decode(Arrays.copyOf(oldNoSize, 56)).controlReadable());
        assertEquals(0, PeerHello.decode(Arrays.copyOf(oldNoSize, 56)).receiveBufferSize());
    }

    @Test
    void accept_oldFormatHelloWhoseWordsLackReadAccess_linksTheWordsForWritesOnly_andHasNoKeepAlive() {
        byte[] control = new byte[RPMA_RAW_DESCRIPTOR];
        byte[] old = Arrays.copyOf(new PeerHello(List.of(), new byte[] {7}, control, 4096, NONE, false)
                .encode(RPMA_MAX_ACCEPT), RPMA_MAX_ACCEPT);
        List<Set<RegionAccess>> asked = new ArrayList<>();
        RemoteRegion words = proxy(RemoteRegion.class, (m, a) -> null);
        Transport t = proxy(Transport.class, (m, a) -> {
            if (m.equals("remoteRegion") && a.length == 2) {
                @SuppressWarnings("unchecked")
                Set<RegionAccess> access = (Set<RegionAccess>) a[1];
                // As rpma does: the usage byte of an old peer's words allows no read.
                if (access.contains(RegionAccess.READ_SRC)) {
                    throw new IllegalArgumentException("access " + access + " beyond the descriptor's usage");
                }
                asked.add(access);
                return words;
            }
            throw new UnsupportedOperationException(m);
        });
        Connection c = proxy(Connection.class, (m, a) -> switch (m) {
            case "peerPrivateData" -> old;
            case "applyPeerHandshake", "applyPeerParameters" -> null;
            default -> throw new UnsupportedOperationException(m);
        });
        PeerControl pc = PeerControl.none();
        PeerHello.Accepted accepted = PeerHello.accept(t, c, pc);
        assertEquals(List.of(Set.of(RegionAccess.WRITE_DST)), asked);
        assertTrue(pc.enabled(), "the old peer's words are linked: credits and goodbye still work");
        assertFalse(pc.peerReadable(), "the keep-alive would probe words the old peer did not make readable");
        assertEquals(4096, accepted.receiveBufferSize());
        // A current peer's hello asks for read access too.
        byte[] current = new PeerHello(List.of(), new byte[] {7}, control, 4096).encode(RPMA_MAX_ACCEPT);
        List<Set<RegionAccess>> asked2 = new ArrayList<>();
        Transport t2 = proxy(Transport.class, (m, a) -> {
            asked2.add(castAccess(a[1]));
            return words;
        });
        Connection c2 = proxy(Connection.class, (m, a) -> m.equals("peerPrivateData") ? current : null);
        PeerControl pc2 = PeerControl.none();
        PeerHello.accept(t2, c2, pc2);
        assertEquals(List.of(PeerControl.PEER_ACCESS), asked2);
        assertTrue(pc2.peerReadable());
    }

    @SuppressWarnings("unchecked")
    private static Set<RegionAccess> castAccess(Object o) {
        return (Set<RegionAccess>) o;
    }

    private interface Answer {
        Object answer(String method, Object[] args);
    }

    private static <T> T proxy(Class<T> type, Answer a) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
                (p, m, args) -> m.getName().equals("toString") ? type.getSimpleName()
                        : a.answer(m.getName(), args == null ? new Object[0] : args)));
    }
}
