package io.cqflux.core.testing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.Capability;
import io.cqflux.core.CompletionRecord;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.FlushType;
import io.cqflux.core.Opcode;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.UnsupportedCapabilityException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The transport contract every native transport passes, against real completions: the fabric
 * transport on 127.0.0.1 with the tcp provider in the normal test run, the rpma transport in
 * the Soft-RoCE lane. Subclasses provide the transports and the address; behaviour that differs
 * between transports for a documented native reason is a protected hook.
 *
 * <p>Each test opens a server and a client transport, connects them through a listener, and
 * pumps every completion queue and event channel of both sides in the test thread
 * ({@link TransportPump}).
 */
public abstract class TransportContract extends TransportFixture {

    // ---- behaviours ------------------------------------------------------------------------

    @Test
    void connect_exchangesPrivateDataBothWays_verbatim_possiblyZeroPadded() {
        Pair p = connect(bytes("hello server"), bytes("hello client"));
        // Verbatim: no framing; a transport may pad with zeros (RDMA CM, rdma_get_cm_event(3)).
        assertVerbatim(bytes("hello server"), p.rawRequestData(), client.maxConnectPrivateData());
        assertVerbatim(bytes("hello client"), p.rawAcceptData(), server.maxAcceptPrivateData());
        assertTrue(p.listener().address().getPort() > 0);
    }

    @Test
    void connect_withPrivateDataOfExactlyTheLimits_arrivesWhole() {
        byte[] req = new byte[client.maxConnectPrivateData()];
        byte[] acc = new byte[server.maxAcceptPrivateData()];
        for (int i = 0; i < req.length; i++) {
            req[i] = (byte) (i + 1);
        }
        for (int i = 0; i < acc.length; i++) {
            acc[i] = (byte) (255 - i);
        }
        Pair p = connect(req, acc);
        assertVerbatim(req, p.rawRequestData(), req.length);
        assertVerbatim(acc, p.rawAcceptData(), acc.length);
    }

    private static void assertVerbatim(byte[] sent, byte[] got, int max) {
        assertTrue(got.length >= sent.length && got.length <= Math.max(max, sent.length),
                "received " + got.length + " bytes for " + sent.length + " sent (limit " + max + ")");
        assertArrayEquals(sent, java.util.Arrays.copyOf(got, sent.length), "the sent bytes come first, unchanged");
        for (int i = sent.length; i < got.length; i++) {
            assertEquals(0, got[i], "padding byte " + i + " is zero");
        }
    }

    @Test
    void rawDescriptor_withStatedAccess_addressesTheRegion_andMalformedOrAccessFreeIsRefused() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
        Pair p = connect(new byte[0], new byte[0]);
        byte[] raw = target.rawDescriptor();
        System.out.println("FACT " + server.name() + " raw region descriptor: " + raw.length + " bytes (cqflux's: "
                + target.descriptor().length + ")");
        RemoteRegion remote = closeLater(client.remoteRegion(raw, EnumSet.of(RegionAccess.WRITE_DST)));
        assertEquals(4096, remote.size());
        assertEquals(EnumSet.of(RegionAccess.WRITE_DST), remote.access(), "the access the caller stated");
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
        src.segment().set(ValueLayout.JAVA_LONG, 0, 0x0DDBA11L);
        post("write", () -> p.client().write(remote, 512, src, 0, 8, 1, true));
        assertTrue(await(p.clientSide(), 1).isSuccess());
        assertEquals(0x0DDBA11L, target.segment().get(ValueLayout.JAVA_LONG, 512));
        // the stated access is enforced before posting: READ_SRC was not stated
        assertMessage(assertThrows(IllegalArgumentException.class,
                () -> p.client().read(src, 0, remote, 512, 8, 2, true)), "READ_SRC");
        assertThrows(IllegalArgumentException.class,
                () -> client.remoteRegion(java.util.Arrays.copyOf(raw, raw.length + 1), EnumSet.of(RegionAccess.WRITE_DST)));
        // An empty access is refused where the raw form names none (fabric); where it carries the
        // owner's usage (rpma: the last byte of librpma's descriptor) it means that usage.
        RemoteRegion own;
        try {
            own = closeLater(client.remoteRegion(raw, EnumSet.noneOf(RegionAccess.class)));
        } catch (IllegalArgumentException namesNone) {
            own = null;
        }
        if (own != null) {
            assertEquals(target.access(), own.access(), "an empty access means the descriptor's own");
        }
        assertThrows(IllegalArgumentException.class, () -> client.remoteRegion(null, EnumSet.of(RegionAccess.WRITE_DST)));
    }

    @Test
    void writeThenRead_randomSizesUpTo1MiB_roundTripExactly() {
        LocalRegion target = region(server, REGION, RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        LocalRegion src = region(client, REGION, RegionAccess.WRITE_SRC);
        LocalRegion dst = region(client, REGION, RegionAccess.READ_DST);
        Random rnd = new Random(42);
        int[] sizes = {1, 7, 8, 4096, 65_537, REGION, 1 + rnd.nextInt(300_000), 1 + rnd.nextInt(REGION)};
        long ctx = 1;
        for (int size : sizes) {
            long off = rnd.nextInt(REGION - size + 1);
            byte[] data = new byte[size];
            rnd.nextBytes(data);
            MemorySegment.copy(data, 0, src.segment(), ValueLayout.JAVA_BYTE, off, size);
            long w = ctx++;
            post("write", () -> p.client().write(remote, off, src, off, size, w, true));
            CompletionRecord wc = await(p.clientSide(), w);
            assertTrue(wc.isSuccess(), wc::toString);
            assertEquals(Opcode.WRITE, wc.opcode());
            assertArrayEquals(data, target.segment().asSlice(off, size).toArray(ValueLayout.JAVA_BYTE),
                    "server memory after a " + size + "-byte write");
            dst.segment().fill((byte) 0);
            long r = ctx++;
            post("read", () -> p.client().read(dst, off, remote, off, size, r, true));
            CompletionRecord rc = await(p.clientSide(), r);
            assertTrue(rc.isSuccess(), rc::toString);
            assertEquals(Opcode.READ, rc.opcode());
            assertArrayEquals(data, dst.segment().asSlice(off, size).toArray(ValueLayout.JAVA_BYTE),
                    "read back " + size + " bytes");
        }
    }

    @Test
    void flush_afterUnsignaledWrite_completesAsFlushWithDataInPlace() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST, RegionAccess.FLUSH_TYPE_VISIBILITY);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        assertTrue(remote.flushTypes().contains(FlushType.VISIBILITY), remote.flushTypes()::toString);
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        src.segment().set(ValueLayout.JAVA_LONG, 64, 0x1122334455667788L);
        post("write", () -> p.client().write(remote, 64, src, 64, 8, 10, false));
        post("flush", () -> p.client().flush(remote, 64, 8, FlushType.VISIBILITY, 11, true));
        CompletionRecord f = await(p.clientSide(), 11);
        assertTrue(f.isSuccess(), f::toString);
        // The transport reports what the device said: a flush travels as a write (fabric) or an
        // emulated one as a read (rpma_flush(3)); the caller owns what it posted under context 11.
        assertTrue(f.opcode() == Opcode.FLUSH || f.opcode() == Opcode.WRITE || f.opcode() == Opcode.READ,
                f::toString);
        assertEquals(0x1122334455667788L, target.segment().get(ValueLayout.JAVA_LONG, 64));
        pump.drainFor(Duration.ofMillis(20));
        assertTrue(p.clientSide().completions.isEmpty(), "an unsignaled write must not complete on success: "
                + p.clientSide().completions);
    }

    @Test
    void writeWithImmediate_deliversValueInHostOrderToTheTarget() {
        assertTrue(client.capabilities().contains(Capability.WRITE_WITH_IMMEDIATE), client.capabilities()::toString);
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST, RegionAccess.RECV);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        src.segment().fill((byte) 0x5a);
        post("receive", () -> p.server().receive(target, 0, 0, 77));
        post("write with immediate", () -> p.client().writeWithImmediate(remote, 128, src, 0, 16, 0xCAFEBABE, 20, true));
        CompletionRecord w = await(p.clientSide(), 20);
        assertTrue(w.isSuccess(), w::toString);
        assertTrue(w.opcode() == Opcode.WRITE_WITH_IMMEDIATE || w.opcode() == Opcode.WRITE, w::toString);
        pump.until("the target's completion", DEADLINE, () -> !p.serverSide().completions.isEmpty());
        CompletionRecord t = p.serverSide().completions.remove(0);
        assertTrue(t.isSuccess(), t::toString);
        assertEquals(Opcode.RECEIVE_WRITE_WITH_IMMEDIATE, t.opcode());
        assertTrue(t.hasImmediate());
        assertEquals(0xCAFEBABE, t.immediate());
        if (writeWithImmediateConsumesReceive()) {
            assertEquals(77, t.context());
        }
        assertEquals(0x5a, target.segment().get(ValueLayout.JAVA_BYTE, 128 + 15));
    }

    @Test
    void sendWithImmediate_landsInPostedReceiveWithValueAndBytes() {
        assertTrue(client.capabilities().contains(Capability.SEND_WITH_IMMEDIATE), client.capabilities()::toString);
        Pair p = connect(new byte[0], new byte[0]);
        LocalRegion rx = region(server, 4096, RegionAccess.RECV);
        LocalRegion tx = region(client, 4096, RegionAccess.SEND);
        tx.segment().asSlice(0, 5).copyFrom(MemorySegment.ofArray(bytes("ping!")));
        post("receive", () -> p.server().receive(rx, 100, 200, 30));
        post("send", () -> p.client().sendWithImmediate(tx, 0, 5, 0x01020304, 31, true));
        CompletionRecord s = await(p.clientSide(), 31);
        assertTrue(s.isSuccess(), s::toString);
        assertTrue(s.opcode() == Opcode.SEND_WITH_IMMEDIATE || s.opcode() == Opcode.SEND, s::toString);
        CompletionRecord r = await(p.serverSide(), 30);
        assertTrue(r.isSuccess(), r::toString);
        assertEquals(Opcode.RECEIVE, r.opcode());
        assertEquals(5, r.byteLength());
        assertTrue(r.hasImmediate());
        assertEquals(0x01020304, r.immediate());
        assertArrayEquals(bytes("ping!"), rx.segment().asSlice(100, 5).toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void send_landsInPostedReceive() {
        Pair p = connect(new byte[0], new byte[0]);
        LocalRegion rx = region(server, 4096, RegionAccess.RECV);
        LocalRegion tx = region(client, 4096, RegionAccess.SEND);
        byte[] msg = bytes("a two-sided message");
        tx.segment().asSlice(8, msg.length).copyFrom(MemorySegment.ofArray(msg));
        post("receive", () -> p.server().receive(rx, 0, 4096, 40));
        post("send", () -> p.client().send(tx, 8, msg.length, 41, true));
        assertEquals(Opcode.SEND, await(p.clientSide(), 41).opcode());
        CompletionRecord r = await(p.serverSide(), 40);
        assertEquals(Opcode.RECEIVE, r.opcode());
        assertEquals(msg.length, r.byteLength());
        assertFalse(r.hasImmediate());
        assertArrayEquals(msg, rx.segment().asSlice(0, msg.length).toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void drain_returnsSeveralCompletionsInOnePoll() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        LocalRegion dst = region(client, 4096, RegionAccess.READ_DST);
        int n = 12;
        for (int round = 0; round < 5 && p.clientSide().largestBatch < 2; round++) {
            long base = 1000L * (round + 1);
            for (int i = 0; i < n; i++) {
                long c = base + i;
                int off = i * 8;
                post("read", () -> p.client().read(dst, off, remote, off, 8, c, true));
            }
            pump.until(n + " reads", DEADLINE, () -> p.clientSide().completions.size() >= n);
            p.clientSide().completions.forEach(c -> assertTrue(c.isSuccess(), c::toString));
            p.clientSide().completions.clear();
        }
        assertTrue(p.clientSide().largestBatch >= 2, "largest batch " + p.clientSide().largestBatch);
    }

    @Test
    void writeToDeregisteredRegion_fails() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        target.close();
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        post("write", () -> p.client().write(remote, 0, src, 0, 64, 50, true));
        CompletionRecord c = await(p.clientSide(), 50);
        assertFalse(c.isSuccess(), c::toString);
        if (badKeyEndsConnection()) {
            pump.until("a terminal event", DEADLINE, () -> p.clientSide().events.stream().anyMatch(ConnectionEvent::isTerminal));
        }
        checkBadKeyOutcome(c, List.copyOf(p.clientSide().events));
        assertThrows(IllegalStateException.class, c::opcode, "error entries have no opcode");
    }

    @Test
    void peerClose_failsPendingReceivesAndEndsConnection() {
        Pair p = connect(new byte[0], new byte[0]);
        LocalRegion rx = region(client, 4096, RegionAccess.RECV);
        for (int i = 0; i < 3; i++) {
            int k = i;
            post("receive", () -> p.client().receive(rx, k * 64L, 64, 60 + k));
        }
        pump.remove(p.serverSide());
        p.server().close();
        pump.until("three failed receives and a terminal event", DEADLINE,
                () -> p.clientSide().completions.size() >= 3
                        && p.clientSide().events.stream().anyMatch(ConnectionEvent::isTerminal));
        List<Long> ctxs = new ArrayList<>();
        for (CompletionRecord c : p.clientSide().completions) {
            assertFalse(c.isSuccess(), c::toString);
            ctxs.add(c.context());
        }
        assertTrue(ctxs.containsAll(List.of(60L, 61L, 62L)), ctxs::toString);
        ConnectionEvent e = p.clientSide().events.get(p.clientSide().events.size() - 1);
        assertTrue(e == ConnectionEvent.CLOSED || e == ConnectionEvent.LOST, e::toString);
    }

    @Test
    void closedConnection_refusesEveryPost_andItsQueuesAndEventsReportNothing() {
        // The transports keep their posting structs and their queues' out-parameters in unscoped
        // views of the connection's arena (FabricLibrary.unscoped, RpmaNative.unscoped: no
        // acquire per native call). After close() these checks are all that stands between a
        // call and freed memory: a missing one crashes the JVM here instead of throwing.
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                RegionAccess.FLUSH_TYPE_VISIBILITY);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        LocalRegion local = region(client, 4096, RegionAccess.WRITE_SRC, RegionAccess.READ_DST,
                RegionAccess.SEND, RegionAccess.RECV);
        Connection c = p.client();
        Set<Capability> caps = client.capabilities();
        List<io.cqflux.core.spi.CompletionQueue> queues = c.completionQueues();
        pump.remove(p.clientSide());
        c.close();
        c.close(); // idempotent
        assertThrows(io.cqflux.core.ResourceClosedException.class, () -> c.write(remote, 0, local, 0, 64, 1, true));
        assertThrows(io.cqflux.core.ResourceClosedException.class, () -> c.read(local, 0, remote, 0, 64, 2, true));
        assertThrows(io.cqflux.core.ResourceClosedException.class, () -> c.send(local, 0, 64, 3, true));
        assertThrows(io.cqflux.core.ResourceClosedException.class, () -> c.receive(local, 0, 64, 4));
        if (caps.contains(Capability.WRITE_WITH_IMMEDIATE)) {
            assertThrows(io.cqflux.core.ResourceClosedException.class,
                    () -> c.writeWithImmediate(remote, 0, local, 0, 64, 5, 5, true));
        }
        if (caps.contains(Capability.SEND_WITH_IMMEDIATE)) {
            assertThrows(io.cqflux.core.ResourceClosedException.class,
                    () -> c.sendWithImmediate(local, 0, 64, 6, 6, true));
        }
        if (caps.contains(Capability.FLUSH_VISIBILITY)) {
            assertThrows(io.cqflux.core.ResourceClosedException.class,
                    () -> c.flush(remote, 0, 64, FlushType.VISIBILITY, 7, true));
        }
        MemorySegment scratch = arena.allocate(32L * io.cqflux.core.spi.CompletionQueue.MAX_ENTRY_BYTES, 64);
        for (io.cqflux.core.spi.CompletionQueue q : queues) {
            assertEquals(0, q.poll(scratch, 32, r -> fail("a completion from a closed queue: " + r)), q::toString);
            assertTrue(q.prepareToSleep(), q::toString);
            q.acknowledge();
        }
        assertTrue(c.events().prepareToSleep());
        assertEquals(null, c.events().nextEvent());
    }

    @Test
    void peerDisconnect_reportsClosedOnBothEnds() {
        Pair p = connect(new byte[0], new byte[0]);
        p.server().disconnect();
        p.server().disconnect(); // idempotent
        pump.until("CLOSED on both ends", DEADLINE,
                () -> p.clientSide().events.contains(ConnectionEvent.CLOSED)
                        && p.serverSide().events.contains(ConnectionEvent.CLOSED));
        LocalRegion tx = region(client, 64, RegionAccess.SEND);
        assertThrows(IllegalStateException.class, () -> p.client().send(tx, 0, 8, 1, true));
    }

    @Test
    void connectToPortWithoutListener_reportsRejectedOrUnreachable() throws IOException {
        int port = FreePorts.next(listenAddress().getAddress());
        Connection c = closeLater(client.connect(new InetSocketAddress(listenAddress().getAddress(), port), config(),
                new byte[0]));
        TransportPump.Side cs = pump.add("client", c);
        pump.until("a terminal event", DEADLINE, () -> !cs.events.isEmpty());
        ConnectionEvent e = cs.events.get(0);
        assertTrue(e == ConnectionEvent.REJECTED || e == ConnectionEvent.UNREACHABLE, e::toString);
        assertEquals(expectedEventForMissingListener(), e);
    }

    /** {@return the event for a connect to a port nobody listens on (librpma over rxe: REJECTED)} */
    protected ConnectionEvent expectedEventForMissingListener() {
        return ConnectionEvent.REJECTED;
    }

    @Test
    void invalidRequests_areRefusedBeforePosting() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
        LocalRegion readOnly = region(server, 4096, RegionAccess.READ_SRC);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        RemoteRegion noWrite = closeLater(client.remoteRegion(readOnly.descriptor()));
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        LocalRegion dst = region(client, 4096, RegionAccess.READ_DST);
        Connection c = p.client();
        // out-of-range offsets and lengths
        assertMessage(assertThrows(IllegalArgumentException.class, () -> c.write(remote, 4090, src, 0, 8, 1, true)), "4096");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> c.write(remote, 0, src, 4095, 2, 1, true)), "4096");
        assertThrows(IllegalArgumentException.class, () -> c.write(remote, -1, src, 0, 8, 1, true));
        assertThrows(IllegalArgumentException.class, () -> c.write(remote, 0, src, 0, 0, 1, true));
        assertThrows(IllegalArgumentException.class, () -> c.read(dst, 0, remote, 4000, 200, 1, true));
        // missing access, local and remote
        assertMessage(assertThrows(IllegalArgumentException.class, () -> c.write(noWrite, 0, src, 0, 8, 1, true)), "WRITE_DST");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> c.write(remote, 0, dst, 0, 8, 1, true)), "WRITE_SRC");
        assertMessage(assertThrows(IllegalArgumentException.class, () -> c.read(src, 0, remote, 0, 8, 1, true)), "READ_DST");
        // unsupported flush type: the region was registered without flush usage
        assertThrows(IllegalArgumentException.class, () -> c.flush(remote, 0, 8, FlushType.PERSISTENT, 1, true));
        // atomic write: misaligned (on every transport), or unsupported altogether (aligned)
        assertMessage(assertThrows(IllegalArgumentException.class, () -> c.atomicWrite(remote, 4, 1, 1, true)), "8");
        if (!client.capabilities().contains(Capability.ATOMIC_WRITE)) {
            UnsupportedCapabilityException u = assertThrows(UnsupportedCapabilityException.class,
                    () -> c.atomicWrite(remote, 16, 1, 1, true));
            assertEquals(Capability.ATOMIC_WRITE, u.capability());
            assertEquals(client.name(), u.provider());
        }
        // private data over the limit
        assertThrows(IllegalArgumentException.class,
                () -> client.connect(p.listener().address(), config(), new byte[client.maxConnectPrivateData() + 1]));
        // nothing of the above was posted: the next valid operation is the only completion
        post("write", () -> c.write(remote, 0, src, 0, 8, 99, true));
        assertTrue(await(p.clientSide(), 99).isSuccess());
        pump.drainFor(Duration.ofMillis(20));
        assertEquals(List.of(), p.clientSide().completions);
    }

    @Test
    void register_refusesFreedReadOnlyAndNullBearingArguments_beforeRegistering() {
        // The transport runs Checks.registration itself: the SPI is safe without the reactive layer.
        Arena gone = Arena.ofShared();
        MemorySegment freed = gone.allocate(4096, 64);
        gone.close();
        assertMessage(assertThrows(IllegalArgumentException.class,
                () -> client.register(freed, java.util.EnumSet.of(RegionAccess.WRITE_SRC))), "freed");
        try (Arena a = Arena.ofShared()) {
            MemorySegment ro = a.allocate(4096, 64).asReadOnly();
            assertMessage(assertThrows(IllegalArgumentException.class,
                    () -> client.register(ro, java.util.EnumSet.of(RegionAccess.WRITE_DST))), "read-only");
            java.util.Set<RegionAccess> withNull = new java.util.HashSet<>(java.util.Arrays.asList(
                    RegionAccess.WRITE_SRC, null));
            assertMessage(assertThrows(IllegalArgumentException.class, () -> client.register(a.allocate(64), withNull)),
                    "null");
        }
    }

    @Test
    void regionDescriptor_roundTripsSizeAccessAndFlushTypes() {
        LocalRegion r = region(server, 8192, RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                RegionAccess.FLUSH_TYPE_VISIBILITY);
        RemoteRegion rr = closeLater(client.remoteRegion(r.descriptor()));
        assertEquals(8192, rr.size());
        assertEquals(Set.of(RegionAccess.WRITE_DST, RegionAccess.READ_SRC, RegionAccess.FLUSH_TYPE_VISIBILITY),
                rr.access());
        assertTrue(rr.flushTypes().contains(FlushType.VISIBILITY));
        assertThrows(IllegalArgumentException.class, () -> client.remoteRegion(new byte[3]));
    }

    @Test
    void handshake_appliesToEstablishedConnectionsBothWays_andMalformedBytesAreRefused() {
        byte[] hs = server.handshake();
        assertTrue(hs.length <= 255, "handshake of " + hs.length + " bytes");
        assertArrayEquals(hs, server.handshake(), "the same bytes every time");
        Pair p = connect(new byte[0], new byte[0]);
        assertDoesNotThrow(() -> p.client().applyPeerHandshake(server.handshake()));
        assertDoesNotThrow(() -> p.server().applyPeerHandshake(client.handshake()));
        // a peer that sent none (an older hello) is accepted too
        assertDoesNotThrow(() -> p.client().applyPeerHandshake(new byte[0]));
        assertThrows(IllegalArgumentException.class,
                () -> p.client().applyPeerHandshake(java.util.Arrays.copyOf(hs, hs.length + 1)));
        assertThrows(IllegalArgumentException.class, () -> p.client().applyPeerHandshake(null));
    }

    private static void assertMessage(Throwable t, String part) {
        assertTrue(t.getMessage() != null && t.getMessage().contains(part),
                "message \"" + t.getMessage() + "\" should name " + part);
    }
}
