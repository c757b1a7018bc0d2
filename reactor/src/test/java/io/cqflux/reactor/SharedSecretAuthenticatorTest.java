package io.cqflux.reactor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.function.Supplier;
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
        c[12] ^= 1; // inside the nonce: the MAC no longer matches
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
        Clock clock = new Clock() {
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
}
