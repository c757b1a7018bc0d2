package io.cqflux.transport.fabric;

import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;

/**
 * The memory-region keys a domain requests from a provider that takes requested keys
 * ({@code fi_mr_reg(3)} {@code requested_key}, i.e. a domain without {@code FI_MR_PROV_KEY}:
 * tcp). Thread-safe.
 *
 * <p>What must hold, and why: a key is the only thing that stands between a connected peer and a
 * region, and on a domain every key works on every endpoint of that domain (tcp 1.17 has no
 * {@code FI_MR_ENDPOINT}). A peer that may hold one key must therefore learn nothing about any
 * other: keys handed out in sequence let it reach every region of every other connection. And a
 * key must never come back after its region closed, or a peer that kept a stale descriptor would
 * reach whatever is registered next.
 *
 * <p>How: the n-th key is a keyed pseudorandom permutation of n over the key width (8 bytes on
 * tcp), a balanced Feistel network of four rounds (Luby-Rackoff: four rounds over a pseudorandom
 * function give a strong pseudorandom permutation) whose round function is AES-128 under a key
 * drawn from {@link SecureRandom} once per domain. A permutation never repeats within the domain's
 * life, with no memory of the keys issued; without the AES key the outputs are indistinguishable
 * from random draws, so one key tells nothing about the others. {@code FI_KEY_NOTAVAIL} (all ones)
 * is skipped.
 */
final class KeySequence {

    private static final int ROUNDS = 4;

    private final Cipher aes;
    private final int halfBits;
    private final long halfMask;
    private final long notAvailable;
    /** How many keys the width holds; 0 for 8 bytes (2^64, never reached). */
    private final long space;
    private final byte[] block = new byte[16];
    private final byte[] out = new byte[16];
    private long counter;

    /**
     * @param keyBytes the provider's key size ({@code fi_domain(3)} mr_key_size), 2 to 8 bytes
     * @param random where the permutation's secret comes from
     */
    KeySequence(int keyBytes, SecureRandom random) {
        if (keyBytes < 2 || keyBytes > 8) {
            throw new IllegalArgumentException("key size " + keyBytes + " bytes is outside [2, 8]");
        }
        this.halfBits = keyBytes * 4;
        this.halfMask = halfBits == 32 ? 0xffff_ffffL : (1L << halfBits) - 1;
        this.notAvailable = keyBytes == 8 ? -1L : (1L << (keyBytes * 8)) - 1;
        this.space = keyBytes == 8 ? 0 : 1L << (keyBytes * 8);
        byte[] secret = new byte[16];
        random.nextBytes(secret);
        try {
            aes = Cipher.getInstance("AES/ECB/NoPadding");
            aes.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(secret, "AES"));
        } catch (GeneralSecurityException e) {
            // AES/ECB/NoPadding is one of the transformations every Java platform must support.
            throw new IllegalStateException("AES/ECB/NoPadding is not available", e);
        }
        java.util.Arrays.fill(secret, (byte) 0);
    }

    /**
     * {@return the next key: never one this sequence returned before, never FI_KEY_NOTAVAIL}
     *
     * @throws IllegalStateException when a key width below 8 bytes has been used up
     */
    synchronized long next() {
        long k;
        do {
            if (space != 0 && counter >= space) {
                throw new IllegalStateException("all " + space + " memory-region keys of this domain have been issued;"
                        + " a key is never issued twice, open a new transport");
            }
            k = permute(counter++);
        } while (k == notAvailable);
        return k;
    }

    private long permute(long n) {
        long left = (n >>> halfBits) & halfMask;
        long right = n & halfMask;
        for (int round = 0; round < ROUNDS; round++) {
            long f = round(round, right);
            long next = (left ^ f) & halfMask;
            left = right;
            right = next;
        }
        return (left << halfBits) | right;
    }

    private long round(int round, long half) {
        block[0] = (byte) round;
        for (int i = 0; i < 8; i++) {
            block[8 + i] = (byte) (half >>> (56 - 8 * i));
        }
        try {
            aes.doFinal(block, 0, 16, out, 0);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES round of the key permutation failed", e);
        }
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = (v << 8) | (out[i] & 0xff);
        }
        return v;
    }
}
