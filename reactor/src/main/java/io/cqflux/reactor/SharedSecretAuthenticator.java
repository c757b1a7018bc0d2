package io.cqflux.reactor;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
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
 * presents an HMAC-SHA256, under the secret, over a timestamp and a random nonce.
 *
 * <pre>{@code
 * // server
 * cq.bind(address, AcceptOptions.exposing(region).authenticatedBy(SharedSecretAuthenticator.of(secret)));
 * // client
 * cq.connect(address, ConnectOptions.defaults().credentials(SharedSecretAuthenticator.credentials(secret)));
 * }</pre>
 *
 * <p><b>Credentials</b> (57 bytes): {@code 0x01}, the client's clock in milliseconds since the
 * epoch (u64 big-endian), a 16-byte nonce from {@link SecureRandom}, and
 * {@code HMAC-SHA256(secret, "cqflux-auth-1" || 0x01 || timestamp || nonce)} (32 bytes). They fit
 * fabric/tcp's 256 bytes of connect private data; on rpma (56 bytes, about 30 of them the hello)
 * they do not, and a connect with them fails before anything is sent, naming the sizes.
 *
 * <p><b>What is checked</b>, in this order: the length and format; the timestamp within
 * {@link #withMaxSkew(Duration) the allowed skew} of the server's clock; the MAC, compared in
 * constant time ({@link MessageDigest#isEqual}); and the nonce, which must not have been seen
 * within twice the skew (a replay). The replay cache is bounded
 * ({@link #withReplayCacheSize(int)}); when it is full of nonces still inside their window, new
 * clients are refused ("replay cache full") rather than a nonce forgotten early: it fails closed.
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
    private static final byte VERSION = 1;
    private static final int NONCE = 16;
    private static final int MAC = 32;
    /** Length of {@link #credentials(byte[])}'s bytes. */
    public static final int CREDENTIALS_LENGTH = 1 + 8 + NONCE + MAC;
    private static final byte[] LABEL = "cqflux-auth-1".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final SecretKeySpec key;
    private final Duration maxSkew;
    private final int cacheSize;
    private final Clock clock;
    /** Nonce to the server time it was first seen, oldest first. */
    private final LinkedHashMap<ByteBuffer, Long> seen = new LinkedHashMap<>();

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
     * {@return a supplier of fresh credentials for {@code secret}, one timestamp and nonce per
     * call, for {@link ConnectOptions#credentials(Supplier)}}
     *
     * @param secret the shared secret, at least 16 bytes (copied)
     * @throws IllegalArgumentException when it is shorter
     */
    public static Supplier<byte[]> credentials(byte[] secret) {
        SecretKeySpec k = key(secret);
        return () -> credentials(k, System.currentTimeMillis());
    }

    static byte[] credentials(SecretKeySpec k, long millis) {
        byte[] nonce = new byte[NONCE];
        RANDOM.nextBytes(nonce);
        ByteBuffer b = ByteBuffer.allocate(CREDENTIALS_LENGTH);
        b.put(VERSION).putLong(millis).put(nonce).put(mac(k, millis, nonce));
        return b.array();
    }

    static SecretKeySpec key(byte[] secret) {
        Objects.requireNonNull(secret, "secret");
        if (secret.length < 16) {
            throw new IllegalArgumentException("shared secret of " + secret.length + " bytes is below the minimum 16");
        }
        return new SecretKeySpec(secret.clone(), "HmacSHA256");
    }

    private static byte[] mac(SecretKeySpec k, long millis, byte[] nonce) {
        try {
            Mac m = Mac.getInstance("HmacSHA256");
            m.init(k);
            m.update(LABEL);
            m.update(VERSION);
            m.update(ByteBuffer.allocate(8).putLong(millis).array());
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
        if (c.length != CREDENTIALS_LENGTH || c[0] != VERSION) {
            return Decision.deny("malformed credentials (" + c.length + " bytes; expected " + CREDENTIALS_LENGTH
                    + ", version " + VERSION + ")");
        }
        ByteBuffer b = ByteBuffer.wrap(c);
        b.get();
        long millis = b.getLong();
        byte[] nonce = new byte[NONCE];
        b.get(nonce);
        byte[] tag = new byte[MAC];
        b.get(tag);
        long now = clock.millis();
        if (Math.abs(now - millis) > maxSkew.toMillis()) {
            return Decision.deny("credentials timestamp outside the allowed skew of " + maxSkew.toMillis()
                    + " ms (check the clocks)");
        }
        if (!MessageDigest.isEqual(tag, mac(key, millis, nonce))) {
            return Decision.deny("bad credentials");
        }
        ByteBuffer n = ByteBuffer.wrap(nonce);
        long keep = 2 * maxSkew.toMillis();
        synchronized (seen) {
            for (Iterator<Map.Entry<ByteBuffer, Long>> it = seen.entrySet().iterator(); it.hasNext();) {
                if (now - it.next().getValue() <= keep) {
                    break;
                }
                it.remove();
            }
            if (seen.containsKey(n)) {
                return Decision.deny("replayed credentials");
            }
            if (seen.size() >= cacheSize) {
                return Decision.deny("replay cache full (" + cacheSize + " authentications within "
                        + keep + " ms): try again later");
            }
            seen.put(n, now);
        }
        return Decision.allow();
    }

    @Override
    public String toString() {
        return "SharedSecretAuthenticator[skew " + maxSkew.toMillis() + " ms, replay cache " + cacheSize + "]";
    }
}
