package io.cqflux.reactor;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import reactor.core.publisher.Mono;

/**
 * An {@link Authenticator} for clients that share a secret with the server: each connect
 * presents a truncated HMAC-SHA256, under the secret, over a timestamp and a random nonce.
 *
 * <pre>{@code
 * // server
 * cq.bind(address, AcceptOptions.exposing(region).authenticatedBy(SharedSecretAuthenticator.of(secret)));
 * // client
 * cq.connect(address, ConnectOptions.defaults().credentials(SharedSecretAuthenticator.credentials(secret)));
 * }</pre>
 *
 * <p><b>Credentials</b> ({@value #CREDENTIALS_LENGTH} bytes, version 2): {@code 0x02}; the low
 * 16 bits of the client's clock in seconds since the epoch (u16 big-endian); a 6-byte nonce from
 * {@link SecureRandom}; and the first 13 bytes (104 bits) of
 * {@code HMAC-SHA256(secret, "cqflux-auth-2" || 0x02 || seconds || nonce)}, {@code seconds} the
 * whole count as a u64 big-endian. They are made that small for rpma: RDMA CM's connect carries 56
 * bytes of private data on IB/RoCE, and the hello of a client that exposes no region takes at
 * most 34 of them besides the credentials (its 4-byte header; the 1-byte peer configuration, the
 * 21-byte control-word descriptor and the credentials behind a length byte each; a receive buffer
 * size above 32,767 as a u32; and the flags byte that lets the server's keep-alive probe the
 * client): 34 + 22 = 56. A client that exposes a region on rpma has no room for them: its
 * connect fails before anything is sent, naming the sizes.
 *
 * <p>Why each part is as small as it is:
 * <ul>
 *   <li>The clock: the server takes the time that has these low 16 bits and lies nearest its own
 *       clock (the window of 65,536 s is far wider than the largest skew, one hour), and the MAC
 *       covers the whole count, so a credential replayed one wrap (about 18 h) later is refused by
 *       its MAC, and clocks apart by more than the skew are refused as such (unless they are apart
 *       by a multiple of 65,536 s, within the skew: then the MAC refuses them).</li>
 *   <li>The tag: forging one needs the secret or a guess right with probability
 *       2<sup>-104</sup>, and every guess is a connect the server sees and refuses: there is
 *       nothing to search offline. RFC 2104, section 5, recommends keeping at least 80 bits and
 *       at least half the hash's output (128 bits here, for the birthday bound); 104 bits, what
 *       fits beside the rest, meet the first. The birthday bound is about an observer collecting
 *       some 2<sup>52</sup> tags to find two that agree, which yields no credential here: the
 *       server checks one tag against one exact timestamp and nonce.</li>
 *   <li>The nonce: it does not resist guessing (the MAC does; a nonce an attacker chooses still
 *       needs the tag) but keeps two honest credentials apart. The replay cache holds the pair of
 *       second and nonce, so two honest clients collide only when they draw the same nonce in the
 *       same second: with k connects in a second, about k<sup>2</sup> / 2<sup>49</sup>, at a
 *       thousand a second one collision in about 18 years of them; the later one is refused
 *       ("replayed credentials") and connects again with a fresh nonce. A replay is always caught,
 *       whatever the nonce's size: it repeats the pair exactly.</li>
 * </ul>
 *
 * <p>The server also accepts version 1, which clients before version 2 send (57 bytes:
 * {@code 0x01}, the clock in milliseconds as a u64, a 16-byte nonce and the whole
 * {@code HMAC-SHA256(secret, "cqflux-auth-1" || 0x01 || millis || nonce)}); it fits fabric/tcp's
 * 256 bytes of connect private data, not rpma's 56.
 *
 * <p><b>What is checked</b>, in this order: the length and version; the timestamp within
 * {@link #withMaxSkew(Duration) the allowed skew} of the server's clock (a version 2 timestamp
 * stands for its whole second); the MAC, compared in constant time ({@link MessageDigest#isEqual});
 * and the timestamp with the nonce, which must not have been accepted while it could still pass
 * the skew check (twice the skew, plus the second a version 2 timestamp stands for): a replay. The
 * replay cache is bounded ({@link #withReplayCacheSize(int)}); when it is full of nonces still
 * inside their window, new clients are refused ("replay cache full") rather than a nonce forgotten
 * early: it fails closed.
 *
 * <p><b>What it does not do.</b> The credentials travel in clear, as does everything on RDMA: an
 * observer on the path cannot replay them (the nonce) or forge new ones (the secret), but can see
 * the keys the server hands out afterwards; see {@code docs/security.md}. Server and clients need
 * clocks within the skew of each other.
 *
 * <p>Thread-safe. Each instance keeps its own replay cache (the {@code with...} methods return
 * new instances with empty ones): give one instance to the servers that must not accept each
 * other's replays.
 */
public final class SharedSecretAuthenticator implements Authenticator {
    private static final byte V1 = 1;
    private static final int V1_NONCE = 16;
    private static final int V1_MAC = 32;
    private static final int V1_LENGTH = 1 + 8 + V1_NONCE + V1_MAC;
    private static final byte[] V1_LABEL = "cqflux-auth-1".getBytes(StandardCharsets.US_ASCII);

    private static final byte V2 = 2;
    private static final int V2_NONCE = 6;
    /** HMAC-SHA256 truncated to 104 bits (RFC 2104, section 5). */
    private static final int V2_TAG = 13;
    private static final byte[] V2_LABEL = "cqflux-auth-2".getBytes(StandardCharsets.US_ASCII);
    /** Length of {@link #credentials(byte[])}'s bytes (version 2). */
    public static final int CREDENTIALS_LENGTH = 1 + 2 + V2_NONCE + V2_TAG;

    private static final SecureRandom RANDOM = new SecureRandom();

    private final SecretKeySpec key;
    private final Duration maxSkew;
    private final int cacheSize;
    private final Clock clock;
    /**
     * Version, timestamp and nonce of each credential accepted, to the last server time at which
     * it still passes the skew check, in the order accepted. That order is not the expiries' (the
     * clients' clocks differ within the skew), so a pass from the oldest stops at the first entry
     * still live and may keep those behind it longer; every entry is gone at the latest twice the
     * skew and a second after it was accepted, which only ever refuses more, never less.
     */
    private final LinkedHashMap<ByteBuffer, Long> seen = new LinkedHashMap<>();
    /** The latest server time any check has used (guarded by {@code seen}). */
    private long highWater = Long.MIN_VALUE;

    private SharedSecretAuthenticator(SecretKeySpec key, Duration maxSkew, int cacheSize, Clock clock) {
        this.key = key;
        this.maxSkew = maxSkew;
        this.cacheSize = cacheSize;
        this.clock = clock;
    }

    /**
     * {@return a server-side authenticator for {@code secret}, with a skew of 30 s and a replay
     * cache of 100,000 nonces}
     *
     * @param secret the shared secret, at least 16 bytes (copied)
     * @throws IllegalArgumentException when it is shorter
     */
    public static SharedSecretAuthenticator of(byte[] secret) {
        return new SharedSecretAuthenticator(key(secret), Duration.ofSeconds(30), 100_000, Clock.systemUTC());
    }

    /**
     * {@return this authenticator with another allowed difference between the client's timestamp
     * and the server's clock}
     *
     * @param skew more than zero, at most one hour
     * @throws IllegalArgumentException when out of that range
     */
    public SharedSecretAuthenticator withMaxSkew(Duration skew) {
        Objects.requireNonNull(skew, "skew");
        if (skew.isNegative() || skew.isZero() || skew.compareTo(Duration.ofHours(1)) > 0) {
            throw new IllegalArgumentException("max skew " + skew + " is outside (0, 1 h]");
        }
        return new SharedSecretAuthenticator(key, skew, cacheSize, clock);
    }

    /**
     * {@return this authenticator with another bound on the nonces it remembers}
     *
     * @param nonces at least 1
     * @throws IllegalArgumentException when less
     */
    public SharedSecretAuthenticator withReplayCacheSize(int nonces) {
        if (nonces < 1) {
            throw new IllegalArgumentException("replay cache size " + nonces + " is below 1");
        }
        return new SharedSecretAuthenticator(key, maxSkew, nonces, clock);
    }

    /** For tests: the clock that timestamps are checked against. */
    SharedSecretAuthenticator withClock(Clock c) {
        return new SharedSecretAuthenticator(key, maxSkew, cacheSize, Objects.requireNonNull(c, "clock"));
    }

    /**
     * {@return a supplier of fresh credentials for {@code secret} (version 2,
     * {@value #CREDENTIALS_LENGTH} bytes), one timestamp and nonce per call, for
     * {@link ConnectOptions#credentials(Supplier)}} They fit the connect of every transport, rpma's
     * included, for a client that exposes no region.
     *
     * @param secret the shared secret, at least 16 bytes (copied)
     * @throws IllegalArgumentException when it is shorter
     */
    public static Supplier<byte[]> credentials(byte[] secret) {
        SecretKeySpec k = key(secret);
        return () -> credentials(k, System.currentTimeMillis());
    }

    /** Version 2 credentials for a client whose clock reads {@code millis}. */
    static byte[] credentials(SecretKeySpec k, long millis) {
        return credentials(k, millis, nonce(V2_NONCE));
    }

    /** Version 2 credentials with a given nonce (tests pin the format with it). */
    static byte[] credentials(SecretKeySpec k, long millis, byte[] nonce) {
        long seconds = Math.floorDiv(millis, 1000L);
        ByteBuffer b = ByteBuffer.allocate(CREDENTIALS_LENGTH);
        b.put(V2).putShort((short) seconds).put(nonce).put(mac(k, V2_LABEL, V2, seconds, nonce), 0, V2_TAG);
        return b.array();
    }

    /** Version 1 credentials, as clients before version 2 make them (tests of the compatibility). */
    static byte[] credentialsV1(SecretKeySpec k, long millis) {
        byte[] nonce = nonce(V1_NONCE);
        ByteBuffer b = ByteBuffer.allocate(V1_LENGTH);
        b.put(V1).putLong(millis).put(nonce).put(mac(k, V1_LABEL, V1, millis, nonce));
        return b.array();
    }

    private static byte[] nonce(int n) {
        byte[] nonce = new byte[n];
        RANDOM.nextBytes(nonce);
        return nonce;
    }

    static SecretKeySpec key(byte[] secret) {
        Objects.requireNonNull(secret, "secret");
        if (secret.length < 16) {
            throw new IllegalArgumentException("shared secret of " + secret.length + " bytes is below the minimum 16");
        }
        return new SecretKeySpec(secret.clone(), "HmacSHA256");
    }

    private static byte[] mac(SecretKeySpec k, byte[] label, byte version, long time, byte[] nonce) {
        try {
            Mac m = Mac.getInstance("HmacSHA256");
            m.init(k);
            m.update(label);
            m.update(version);
            m.update(ByteBuffer.allocate(8).putLong(time).array());
            m.update(nonce);
            return m.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available", e);
        }
    }

    @Override
    public Mono<Decision> authenticate(Request request) {
        return Mono.just(check(request.credentials()));
    }

    /** The decision for one client's credentials (see the class comment for the order). */
    Decision check(byte[] c) {
        if (c.length == 0) {
            return Decision.deny("no credentials (this server needs shared-secret credentials)");
        }
        long now = clock.millis();
        long skew = maxSkew.toMillis();
        ByteBuffer b = ByteBuffer.wrap(c);
        byte version = b.get();
        long time;
        byte[] nonce;
        byte[] expected;
        long firstMillis;
        long lastMillis;
        if (c.length == CREDENTIALS_LENGTH && version == V2) {
            int low = b.getShort() & 0xFFFF;
            long nowSeconds = Math.floorDiv(now, 1000L);
            // The time with these low bits nearest the server's clock.
            time = nowSeconds + (short) (low - nowSeconds);
            firstMillis = time * 1000;
            lastMillis = firstMillis + 999;
            nonce = new byte[V2_NONCE];
            b.get(nonce);
            expected = Arrays.copyOf(mac(key, V2_LABEL, V2, time, nonce), V2_TAG);
        } else if (c.length == V1_LENGTH && version == V1) {
            time = b.getLong();
            firstMillis = time;
            lastMillis = time;
            nonce = new byte[V1_NONCE];
            b.get(nonce);
            expected = mac(key, V1_LABEL, V1, time, nonce);
        } else {
            return Decision.deny("malformed credentials (" + c.length + " bytes; expected " + V1_LENGTH
                    + " for version " + V1 + " or " + CREDENTIALS_LENGTH + " for version " + V2 + ", and the first"
                    + " byte, the version, is " + version + ")");
        }
        byte[] tag = new byte[expected.length];
        b.get(tag);
        if (firstMillis > now + skew || lastMillis < now - skew) {
            return Decision.deny("credentials timestamp outside the allowed skew of " + skew
                    + " ms (check the clocks)");
        }
        if (!MessageDigest.isEqual(tag, expected)) {
            return Decision.deny("bad credentials");
        }
        ByteBuffer n = ByteBuffer.allocate(1 + 8 + nonce.length).put(version).putLong(time).put(nonce).flip();
        // The last server time at which these credentials still pass the skew check.
        long expiry = lastMillis + skew;
        synchronized (seen) {
            // One time that never goes back for both the eviction and the check below: with the
            // clock read per call, a clock stepped back (NTP, a resumed VM), or two servers'
            // checks on different threads, could evict an entry by a later time and then accept
            // its replay by an earlier one.
            highWater = Math.max(highWater, now);
            if (expiry < highWater) {
                return Decision.deny("credentials timestamp outside the allowed skew of " + skew
                        + " ms (check the clocks)");
            }
            for (Iterator<Map.Entry<ByteBuffer, Long>> it = seen.entrySet().iterator(); it.hasNext();) {
                if (it.next().getValue() >= highWater) {
                    break;
                }
                it.remove();
            }
            if (seen.containsKey(n)) {
                return Decision.deny("replayed credentials");
            }
            if (seen.size() >= cacheSize) {
                return Decision.deny("replay cache full (" + cacheSize + " authentications within "
                        + (2 * skew + 1000) + " ms): try again later");
            }
            seen.put(n, expiry);
        }
        return Decision.allow();
    }

    @Override
    public String toString() {
        return "SharedSecretAuthenticator[skew " + maxSkew.toMillis() + " ms, replay cache " + cacheSize + "]";
    }
}
