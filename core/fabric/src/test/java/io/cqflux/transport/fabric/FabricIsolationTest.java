package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.FI_REMOTE_READ;
import static io.cqflux.transport.fabric.ffm.fabric_h.FI_REMOTE_WRITE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionRecord;
import io.cqflux.core.FlushType;
import io.cqflux.core.Opcode;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.testing.TransportFixture;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Isolation at the transport: keys a peer cannot guess and never sees again, and remote rights
 * exactly as granted (fabric/tcp on loopback).
 */
class FabricIsolationTest extends TransportFixture {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    @Override
    protected Transport openTransport() {
        return Fabric.open("tcp", LOOPBACK);
    }

    @Override
    protected InetSocketAddress listenAddress() {
        return new InetSocketAddress(LOOPBACK, 0);
    }

    @Test
    void keySequence_ofTwoBytes_issuesEveryKeyButNotAvailableOnce_thenRefuses() {
        // A 16-bit width is small enough to run through: the permutation must hit each value once.
        KeySequence s = new KeySequence(2, new SecureRandom());
        Set<Long> seen = new HashSet<>();
        for (int i = 0; i < 65_535; i++) {
            long k = s.next();
            assertTrue(k >= 0 && k < 0xffff, "key " + k + " outside [0, 0xffff)");
            assertTrue(seen.add(k), "key " + k + " issued twice");
        }
        IllegalStateException e = assertThrows(IllegalStateException.class, s::next);
        assertTrue(e.getMessage().contains("65536") && e.getMessage().contains("never issued twice"), e.getMessage());
    }

    @Test
    void keySequence_isNotSequential_andDiffersPerDomain() {
        KeySequence a = new KeySequence(8, new SecureRandom());
        KeySequence b = new KeySequence(8, new SecureRandom());
        long a0 = a.next();
        long a1 = a.next();
        assertNotEquals(a0, b.next(), "two domains must not share their key sequence");
        assertTrue(Math.abs(a1 - a0) > 1L << 20, "consecutive keys " + a0 + ", " + a1 + " are close");
        assertThrows(IllegalArgumentException.class, () -> new KeySequence(9, new SecureRandom()));
    }

    @Test
    void tcpKeys_areSpreadOverSixtyFourBits_andNeverReusedAfterClose() {
        List<LocalRegion> open = new ArrayList<>();
        Set<Long> issued = new HashSet<>();
        long bitsSet = 0;
        int small = 0;
        for (int i = 0; i < 512; i++) {
            LocalRegion r = server.register(arena.allocate(64, 64), EnumSet.of(RegionAccess.WRITE_DST));
            open.add(r);
            long k = ((FabricLocalRegion) r).key();
            assertTrue(issued.add(k), "key " + Long.toHexString(k) + " issued twice");
            bitsSet += Long.bitCount(k);
            if (Long.compareUnsigned(k, 1L << 32) < 0) {
                small++;
            }
        }
        for (LocalRegion r : open) {
            r.close();
        }
        // Closed keys stay retired: the next registrations draw new ones.
        for (int i = 0; i < 512; i++) {
            try (LocalRegion r = server.register(arena.allocate(64, 64), EnumSet.of(RegionAccess.WRITE_DST))) {
                long k = ((FabricLocalRegion) r).key();
                assertTrue(issued.add(k), "key " + Long.toHexString(k) + " came back after its region closed");
            }
        }
        double meanBits = bitsSet / 512.0;
        // Uniform 64-bit keys have 32 bits set on average (sd 4; of the mean of 512, 0.18).
        assertTrue(meanBits > 30 && meanBits < 34, "mean bits set " + meanBits);
        assertTrue(small <= 2, small + " of 512 keys below 2^32");
    }

    @Test
    void remoteAccess_ofAFlushableReadOnlyRegion_grantsNoRemoteWrite() {
        long ro = RegionRegistrar.remoteAccess(EnumSet.of(RegionAccess.READ_SRC, RegionAccess.FLUSH_TYPE_VISIBILITY));
        assertEquals(FI_REMOTE_READ(), ro);
        long flushOnly = RegionRegistrar.remoteAccess(EnumSet.of(RegionAccess.FLUSH_TYPE_VISIBILITY));
        assertEquals(0, flushOnly & FI_REMOTE_WRITE());
        long rw = RegionRegistrar.remoteAccess(EnumSet.of(RegionAccess.WRITE_DST, RegionAccess.FLUSH_TYPE_VISIBILITY));
        assertEquals(FI_REMOTE_WRITE() | FI_REMOTE_READ(), rw);
        long local = RegionRegistrar.remoteAccess(EnumSet.of(RegionAccess.READ_DST, RegionAccess.WRITE_SRC,
                RegionAccess.SEND, RegionAccess.RECV));
        assertEquals(0, local & (FI_REMOTE_WRITE() | FI_REMOTE_READ()), "local-only access grants no remote right");
    }

    @Test
    void flush_ofAReadOnlyFlushableRegion_succeeds_butAForgedWriteToItChangesNothing() {
        LocalRegion target = region(server, 4096, RegionAccess.READ_SRC, RegionAccess.FLUSH_TYPE_VISIBILITY);
        for (int i = 0; i < 4096; i += 8) {
            target.segment().set(ValueLayout.JAVA_LONG, i, 0x5eed_0000L + i);
        }
        byte[] before = target.segment().toArray(ValueLayout.JAVA_BYTE);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion granted = closeLater(client.remoteRegion(p.acceptData()));
        post("flush", () -> p.client().flush(granted, 0, 64, FlushType.VISIBILITY, 1, true));
        CompletionRecord f = await(p.clientSide(), 1);
        assertTrue(f.isSuccess(), f::toString);
        assertEquals(Opcode.READ, f.opcode(), "the flush reads back");

        // A client that claims write access for itself from the raw descriptor.
        RemoteRegion forged = closeLater(client.remoteRegion(target.rawDescriptor(),
                EnumSet.of(RegionAccess.WRITE_DST)));
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        src.segment().fill((byte) 0x66);
        post("forged write", () -> p.client().write(forged, 0, src, 0, 4096, 2, true));
        CompletionRecord w = await(p.clientSide(), 2);
        assertFalse(w.isSuccess(), "a write to a region granted no WRITE_DST must fail: " + w);
        assertArrayEquals(before, target.segment().toArray(ValueLayout.JAVA_BYTE), "the region changed");
    }

    @Test
    void forgedKeysNearAnIssuedOne_reachNoOtherRegion() {
        // The victim is another connection's region in the same domain; the attacker knows the
        // key of the region exposed to it and tries its neighbours, one connection per try (a
        // bad key ends the connection on tcp).
        LocalRegion victim = region(server, 4096, RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
        LocalRegion exposed = region(server, 4096, RegionAccess.WRITE_DST);
        victim.segment().fill((byte) 0x11);
        byte[] before = victim.segment().toArray(ValueLayout.JAVA_BYTE);
        long known = ((FabricLocalRegion) exposed).key();
        LocalRegion src = region(client, 64, RegionAccess.WRITE_SRC);
        src.segment().fill((byte) 0x77);
        long[] guesses = {known + 1, known - 1, known + 2, known - 2, 0, 1, 2, 3};
        for (int i = 0; i < guesses.length; i++) {
            long g = guesses[i];
            Pair p = connect(new byte[0], exposed.descriptor());
            RemoteRegion forged = closeLater(client.remoteRegion(RegionDescriptor.encodeRaw(g, 0, 4096, 8),
                    EnumSet.of(RegionAccess.WRITE_DST)));
            long ctx = 100 + i;
            post("forged write", () -> p.client().write(forged, 0, src, 0, 64, ctx, true));
            CompletionRecord w = await(p.clientSide(), ctx);
            assertFalse(w.isSuccess(), "forged key " + Long.toHexString(g) + " was accepted: " + w);
        }
        assertArrayEquals(before, victim.segment().toArray(ValueLayout.JAVA_BYTE), "the victim region changed");
        assertEquals(0, exposed.segment().get(ValueLayout.JAVA_LONG, 0), "the exposed region changed");
    }
}
