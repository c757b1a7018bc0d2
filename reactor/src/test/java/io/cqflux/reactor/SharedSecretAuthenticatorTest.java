package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.reactor.internal.connection.PeerHello;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

class SharedSecretAuthenticatorTest {

    private static final byte[] SECRET = "a shared secret of 32 bytes.....".getBytes(StandardCharsets.US_ASCII);

    @Test
    void freshCredentials_areAllowed_andTheirReplayIsRefused() {
        SharedSecretAuthenticator a = SharedSecretAuthenticator.of(SECRET);
        byte[] c = SharedSecretAuthenticator.credentials(SECRET).get();
        assertEquals(SharedSecretAuthenticator.CREDENTIALS_LENGTH, c.length);
        assertTrue(a.check(c).allowed());
        Authenticator.Decision again = a.check(c);
        assertFalse(again.allowed());
        assertEquals("replayed credentials", again.reason());
        assertTrue(a.check(SharedSecretAuthenticator.credentials(SECRET).get()).allowed(), "a new nonce is fine");
    }

    @Test
    void anotherSecret_aFlippedBit_orNothing_areRefused() {
        SharedSecretAuthenticator a = SharedSecretAuthenticator.of(SECRET);
        byte[] other = SharedSecretAuthenticator.credentials("another secret of 32 bytes......".getBytes()).get();
        assertEquals("bad credentials", a.check(other).reason());
        byte[] c = SharedSecretAuthenticator.credentials(SECRET).get();
        c[5] ^= 1; // inside the nonce: the MAC no longer matches
        assertEquals("bad credentials", a.check(c).reason());
        assertTrue(a.check(new byte[0]).reason().startsWith("no credentials"));
        assertTrue(a.check(new byte[10]).reason().startsWith("malformed credentials (10 bytes; expected 57"));
    }

    @Test
    void aTimestampOutsideTheSkew_isRefused() {
        Instant now = Instant.parse("2030-01-01T00:00:00Z");
        SharedSecretAuthenticator a = SharedSecretAuthenticator.of(SECRET).withMaxSkew(Duration.ofSeconds(5))
                .withClock(Clock.fixed(now, ZoneOffset.UTC));
        var k = SharedSecretAuthenticator.key(SECRET);
        assertTrue(a.check(SharedSecretAuthenticator.credentials(k, now.toEpochMilli() - 4_000)).allowed());
        Authenticator.Decision old = a.check(SharedSecretAuthenticator.credentials(k, now.toEpochMilli() - 6_000));
        assertTrue(old.reason().contains("outside the allowed skew of 5000 ms"), old.reason());
        assertFalse(a.check(SharedSecretAuthenticator.credentials(k, now.toEpochMilli() + 6_000)).allowed());
    }

    @Test
    void aFullReplayCache_failsClosed_untilItsNoncesExpire() {
        long[] t = {Instant.parse("2030-01-01T00:00:00Z").toEpochMilli()};
        Clock clock = settable(t);
        SharedSecretAuthenticator a = SharedSecretAuthenticator.of(SECRET).withMaxSkew(Duration.ofSeconds(1))
                .withReplayCacheSize(2).withClock(clock);
        var k = SharedSecretAuthenticator.key(SECRET);
        assertTrue(a.check(SharedSecretAuthenticator.credentials(k, t[0])).allowed());
        assertTrue(a.check(SharedSecretAuthenticator.credentials(k, t[0])).allowed());
        assertTrue(a.check(SharedSecretAuthenticator.credentials(k, t[0])).reason().startsWith("replay cache full"));
        t[0] += 2_001; // twice the skew later: the remembered nonces can no longer be replayed
        assertTrue(a.check(SharedSecretAuthenticator.credentials(k, t[0])).allowed());
    }

    @Test
    void badParameters_areRefusedNamingTheValueAndTheBound() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> SharedSecretAuthenticator.of(new byte[8]))
                .getMessage().contains("8 bytes is below the minimum 16"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> SharedSecretAuthenticator.of(SECRET).withReplayCacheSize(0)).getMessage().contains("0 is below 1"));
        assertThrows(IllegalArgumentException.class,
                () -> SharedSecretAuthenticator.of(SECRET).withMaxSkew(Duration.ofHours(2)));
        Supplier<byte[]> s = SharedSecretAuthenticator.credentials(SECRET);
        assertFalse(java.util.Arrays.equals(s.get(), s.get()), "each call has its own nonce");
    }

    @Test
    void aReplay_isRefused_evenAfterItsEntryWasEvictedAndTheClockSteppedBack() {
        long[] t = {NOW.toEpochMilli()};
        SharedSecretAuthenticator a = SharedSecretAuthenticator.of(SECRET).withMaxSkew(Duration.ofSeconds(30))
                .withClock(settable(t));
        var k = SharedSecretAuthenticator.key(SECRET);
        byte[] c = SharedSecretAuthenticator.credentials(k, t[0]);
        assertTrue(a.check(c).allowed());
        assertFalse(a.check(c).allowed(), "the replay at once");
        t[0] += 40_000; // past c's window: another client's check evicts c's entry
        assertTrue(a.check(SharedSecretAuthenticator.credentials(k, t[0])).allowed());
        t[0] -= 20_000; // the clock steps back (NTP, a resumed VM): c's timestamp is within the skew again
        Authenticator.Decision d = a.check(c);
        assertFalse(d.allowed(), "a replay after its entry was evicted and the clock stepped back");
        assertTrue(d.reason().contains("outside the allowed skew"), d.reason());
        // A fresh client is still served at the stepped-back time.
        assertTrue(a.check(SharedSecretAuthenticator.credentials(k, t[0])).allowed());
    }

    /** A clock that reads {@code t[0]} milliseconds since the epoch. */
    private static Clock settable(long[] t) {
        return new Clock() {
            @Override
            public ZoneOffset getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return Instant.ofEpochMilli(t[0]);
            }
        };
    }

    private static final Instant NOW = Instant.parse("2030-01-01T00:00:00.500Z");

    private static SharedSecretAuthenticator at(Instant now, Duration skew) {
        return SharedSecretAuthenticator.of(SECRET).withMaxSkew(skew).withClock(Clock.fixed(now, ZoneOffset.UTC));
    }

    /** HMAC-SHA256 computed here, apart from the class under test, to pin the wire format. */
    private static byte[] hmac(String label, int version, long time, byte[] nonce) throws Exception {
        Mac m = Mac.getInstance("HmacSHA256");
        m.init(new SecretKeySpec(SECRET, "HmacSHA256"));
        m.update(label.getBytes(StandardCharsets.US_ASCII));
        m.update((byte) version);
        m.update(ByteBuffer.allocate(8).putLong(time).array());
        m.update(nonce);
        return m.doFinal();
    }

    @Test
    void credentials_areVersion2_22Bytes_theLow16BitsOfTheSeconds_aSixByteNonce_andTheMacCutTo104Bits()
            throws Exception {
        long millis = NOW.toEpochMilli();
        byte[] nonce = {1, 2, 3, 4, 5, 6};
        byte[] c = SharedSecretAuthenticator.credentials(SharedSecretAuthenticator.key(SECRET), millis, nonce);
        assertEquals(22, c.length);
        assertEquals(22, SharedSecretAuthenticator.CREDENTIALS_LENGTH);
        ByteBuffer b = ByteBuffer.wrap(c);
        assertEquals(2, b.get(), "the version");
        long seconds = millis / 1000;
        assertEquals(seconds & 0xFFFF, b.getShort() & 0xFFFF, "the clock's low 16 bits of seconds");
        byte[] n = new byte[6];
        b.get(n);
        assertArrayEquals(nonce, n);
        byte[] tag = new byte[13];
        b.get(tag);
        assertArrayEquals(Arrays.copyOf(hmac("cqflux-auth-2", 2, seconds, nonce), 13), tag,
                "the first 13 bytes of HMAC-SHA256 over the label, the version, the whole seconds and the nonce");
        assertTrue(at(NOW, Duration.ofSeconds(30)).check(c).allowed());
        byte[] d = SharedSecretAuthenticator.credentials(SECRET).get();
        assertEquals(2, d[0]);
        assertEquals(22, d.length);
    }

    @Test
    void version1Credentials_ofOlderClients_areStillAccepted_theirReplayAndAFlippedBitRefused() throws Exception {
        long millis = NOW.toEpochMilli() - 1_234;
        byte[] nonce = new byte[16];
        new java.util.Random(5).nextBytes(nonce);
        // As a client before version 2 made them: 0x01, u64 ms, 16-byte nonce, the whole MAC.
        byte[] c = ByteBuffer.allocate(57).put((byte) 1).putLong(millis).put(nonce)
                .put(hmac("cqflux-auth-1", 1, millis, nonce)).array();
        SharedSecretAuthenticator a = at(NOW, Duration.ofSeconds(5));
        assertTrue(a.check(c).allowed());
        assertEquals("replayed credentials", a.check(c).reason());
        assertTrue(a.check(SharedSecretAuthenticator.credentialsV1(SharedSecretAuthenticator.key(SECRET), millis))
                .allowed(), "another nonce");
        byte[] flipped = c.clone();
        flipped[30] ^= 0x10; // inside the MAC
        assertEquals("bad credentials", at(NOW, Duration.ofSeconds(5)).check(flipped).reason());
        byte[] late = ByteBuffer.allocate(57).put((byte) 1).putLong(NOW.toEpochMilli() - 5_001).put(nonce)
                .put(hmac("cqflux-auth-1", 1, NOW.toEpochMilli() - 5_001, nonce)).array();
        assertTrue(a.check(late).reason().contains("outside the allowed skew of 5000 ms"), a.check(late).reason());
    }

    @Test
    void aFlippedBitInEachField_isRefused_namingWhatWasWrong() {
        var k = SharedSecretAuthenticator.key(SECRET);
        byte[] c = SharedSecretAuthenticator.credentials(k, NOW.toEpochMilli());
        assertTrue(at(NOW, Duration.ofSeconds(30)).check(c).allowed());
        for (int bit = 0; bit < 8 * c.length; bit++) {
            byte[] f = c.clone();
            f[bit / 8] ^= (byte) (0x80 >>> (bit % 8));
            Authenticator.Decision d = at(NOW, Duration.ofSeconds(30)).check(f);
            assertFalse(d.allowed(), "bit " + bit + " flipped was accepted");
            String field = bit < 8 ? "version" : bit < 24 ? "clock" : bit < 72 ? "nonce" : "tag";
            String reason = d.reason();
            switch (field) {
                case "version" -> assertTrue(reason.startsWith("malformed credentials (22 bytes; expected 57 for"
                        + " version 1 or 22 for version 2"), bit + ": " + reason);
                // A low bit of the clock moves it within the skew (the MAC refuses), a high one out of it.
                case "clock" -> assertTrue(reason.equals("bad credentials")
                        || reason.contains("outside the allowed skew"), bit + ": " + reason);
                default -> assertEquals("bad credentials", reason, field + " bit " + bit);
            }
        }
        byte[] clockOut = c.clone();
        clockOut[1] ^= 0x40; // 16,384 s away
        assertTrue(at(NOW, Duration.ofSeconds(30)).check(clockOut).reason().contains("outside the allowed skew"));
        byte[] clockIn = c.clone();
        clockIn[2] ^= 0x01; // 1 s away
        assertEquals("bad credentials", at(NOW, Duration.ofSeconds(30)).check(clockIn).reason());
        assertTrue(at(NOW, Duration.ofSeconds(30)).check(Arrays.copyOf(c, 21)).reason()
                .startsWith("malformed credentials (21 bytes;"));
    }

    @Test
    void theSkew_isCheckedInWholeSeconds_eachTimestampStandingForItsSecond() {
        // The server reads 2030-01-01T00:00:00.500; skew 5 s: a client second passes when some
        // instant in it lies within 5 s of that.
        var k = SharedSecretAuthenticator.key(SECRET);
        long now = NOW.toEpochMilli();
        SharedSecretAuthenticator a = at(NOW, Duration.ofSeconds(5));
        assertTrue(a.check(SharedSecretAuthenticator.credentials(k, now - 5_500)).allowed(), "second -5 ends 4.501 s before the server's clock");
        assertTrue(a.check(SharedSecretAuthenticator.credentials(k, now + 4_500)).allowed(), "second +5 starts 4.5 s after it");
        Authenticator.Decision early = a.check(SharedSecretAuthenticator.credentials(k, now - 5_501));
        assertTrue(early.reason().contains("outside the allowed skew of 5000 ms"), early.reason());
        Authenticator.Decision late = a.check(SharedSecretAuthenticator.credentials(k, now + 5_500));
        assertTrue(late.reason().contains("outside the allowed skew of 5000 ms"), late.reason());
        // Clocks hours apart: the low 16 bits resolve to a time far outside the skew.
        for (long hours : new long[] {-9, -2, 2, 9, 10, -10}) {
            Authenticator.Decision d = a.check(SharedSecretAuthenticator.credentials(k, now + hours * 3_600_000));
            assertTrue(d.reason().contains("outside the allowed skew"), hours + " h: " + d.reason());
        }
    }

    @Test
    void credentialsReplayedOneClockWrapLater_areRefusedByTheirMac() {
        var k = SharedSecretAuthenticator.key(SECRET);
        byte[] c = SharedSecretAuthenticator.credentials(k, NOW.toEpochMilli());
        assertTrue(at(NOW, Duration.ofSeconds(30)).check(c).allowed());
        // 65,536 s later the same low 16 bits read as that later second: the MAC covers the whole count.
        Instant wrapped = NOW.plusSeconds(65_536);
        assertEquals("bad credentials", at(wrapped, Duration.ofSeconds(30)).check(c).reason());
        assertEquals("bad credentials", at(NOW.minusSeconds(65_536), Duration.ofSeconds(30)).check(c).reason());
    }

    @Test
    void aReplay_isRefusedForAsLongAsItCouldPassTheSkewCheck() {
        long[] t = {NOW.toEpochMilli()};
        Clock clock = settable(t);
        var k = SharedSecretAuthenticator.key(SECRET);
        SharedSecretAuthenticator a = SharedSecretAuthenticator.of(SECRET).withMaxSkew(Duration.ofSeconds(2))
                .withClock(clock);
        // A client 2 s ahead (second 00:00:02, standing for .000 to .999), accepted at once.
        byte[] ahead = SharedSecretAuthenticator.credentials(k, t[0] + 2_000);
        assertTrue(a.check(ahead).allowed());
        // Its second still lies within the skew until 00:00:04.999: a replay until then is refused as one.
        t[0] = Instant.parse("2030-01-01T00:00:04.999Z").toEpochMilli();
        assertEquals("replayed credentials", a.check(ahead).reason());
        t[0]++;
        assertTrue(a.check(ahead).reason().contains("outside the allowed skew"), a.check(ahead).reason());
    }

    @Test
    void aFullReplayCache_ofVersion2Credentials_failsClosed_untilTheyCanNoLongerPass() {
        long[] t = {NOW.toEpochMilli()};
        Clock clock = settable(t);
        SharedSecretAuthenticator a = SharedSecretAuthenticator.of(SECRET).withMaxSkew(Duration.ofSeconds(1))
                .withReplayCacheSize(2).withClock(clock);
        var k = SharedSecretAuthenticator.key(SECRET);
        // Clients 1 s ahead: their second (00:00:01) passes until 00:00:02.999.
        assertTrue(a.check(SharedSecretAuthenticator.credentials(k, t[0] + 1_000)).allowed());
        assertTrue(a.check(SharedSecretAuthenticator.credentials(k, t[0] + 1_000)).allowed());
        t[0] = Instant.parse("2030-01-01T00:00:02.999Z").toEpochMilli();
        assertTrue(a.check(SharedSecretAuthenticator.credentials(k, t[0])).reason().startsWith("replay cache full"));
        t[0]++;
        assertTrue(a.check(SharedSecretAuthenticator.credentials(k, t[0])).allowed());
    }

    /**
     * The largest hello a client without exposed regions sends on rpma: its 4-byte header,
     * librpma's peer configuration descriptor (the transport's handshake, made here by the rpma
     * transport itself) and the 21-byte raw descriptor of its control words (librpma 1.2's
     * {@code rpma_mr_get_descriptor_size}; registering one needs an RDMA device, so the lane's
     * {@code RpmaHostilePeerTest} checks a real hello), behind a length byte each, the credentials
     * behind theirs, the largest receive buffer size the builder allows (a u32), and the flags.
     */
    @Test
    void credentials_fitAnRpmaConnect_inTheLargestHelloOfAClientWithoutRegions_withTheKeepAlivesFlag()
            throws Exception {
        int max = rpmaConnectCapacity();
        assertEquals(56, max, "RDMA CM's connect private data on IB/RoCE");
        byte[] handshake = rpmaHandshake();
        byte[] control = new byte[21];
        new java.util.Random(11).nextBytes(control);
        int largestBuffer = 1 << 24;
        byte[] c = SharedSecretAuthenticator.credentials(SECRET).get();
        byte[] hello = new PeerHello(List.of(), handshake, control, largestBuffer, c).encode(max);
        assertEquals(4 + 1 + handshake.length + 1 + control.length + 1 + c.length + 4 + 1, hello.length,
                "header, handshake, control words, credentials, u32 buffer size, flags");
        assertTrue(hello.length <= max, hello.length + " bytes");
        assertEquals(PeerHello.CONTROL_READABLE, hello[hello.length - 1], "the flags byte is the last");
        PeerHello read = PeerHello.decode(Arrays.copyOf(hello, max)); // RDMA CM pads a connect to 56
        assertTrue(read.controlReadable(), "the server's keep-alive would not probe this client");
        assertEquals(largestBuffer, read.receiveBufferSize());
        assertArrayEquals(c, read.credentials());
        assertTrue(SharedSecretAuthenticator.of(SECRET).check(read.credentials()).allowed());
    }

    @Test
    void aClientThatExposesARegionOnRpma_hasNoRoomForThem_andItsHelloFailsNamingTheSizes() throws Exception {
        byte[] c = SharedSecretAuthenticator.credentials(SECRET).get();
        // librpma 1.2's region descriptor (21 bytes) behind the transport's 3-byte header.
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new PeerHello(
                List.of(new byte[24]), rpmaHandshake(), new byte[21], 4096, c).encode(rpmaConnectCapacity()));
        int need = 4 + 2 + 24 + 1 + rpmaHandshake().length + 1 + 21 + 1 + c.length;
        assertTrue(e.getMessage().contains("need " + need + " bytes") && e.getMessage().contains("maximum 56")
                && e.getMessage().contains("expose fewer regions or send shorter credentials"), e.getMessage());
    }

    /** The rpma transport's connect capacity, from its own constant. */
    private static int rpmaConnectCapacity() throws Exception {
        var f = Class.forName("io.cqflux.transport.rpma.PrivateData").getDeclaredField("CONNECT_CAPACITY");
        f.setAccessible(true);
        return f.getInt(null);
    }

    /** The rpma transport's handshake: librpma's peer configuration descriptor (librpma on the host). */
    private static byte[] rpmaHandshake() throws Exception {
        var m = Class.forName("io.cqflux.transport.rpma.RpmaPeerConfig").getDeclaredMethod("descriptor", boolean.class);
        m.setAccessible(true);
        return (byte[]) m.invoke(null, false);
    }
}
