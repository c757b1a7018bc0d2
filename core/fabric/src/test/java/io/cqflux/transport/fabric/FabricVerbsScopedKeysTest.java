package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionRecord;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.util.EnumSet;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Keys scoped to their connection on libfabric's verbs provider over Soft-RoCE (rxe), at the
 * transport: a domain (protection domain) per accepted connection (ScopedDomain), and, since verbs
 * has FI_MR_LOCAL, the transport's regions registered in it on the connection's first post with
 * them (ScopedLocalMr). Lane only (tag {@code fabric-verbs}); counts the process's descriptors, so
 * {@link Isolated}.
 */
@Tag("fabric-verbs")
@Isolated
class FabricVerbsScopedKeysTest extends ScopedKeysFixture {

    FabricVerbsScopedKeysTest() {
        super("verbs", FabricVerbsContractTest::laneAddress);
    }

    @Test
    void aScopedKey_presentedOnAnotherConnection_failsThere_andItsOwnerGoesOn() {
        Listening in = listen();
        Accepted a = accept(in, true, (byte) 0x11);
        Accepted b = accept(in, true, (byte) 0x22);
        byte[] aBefore = a.region().segment().toArray(ValueLayout.JAVA_BYTE);

        CompletionRecord w = writeWithKeyOf(a, b, 7);
        // rxe's responder looks the rkey up in the queue pair's protection domain (B's), where A's is unknown.
        assertEquals(CompletionStatus.REM_ACCESS_ERR, w.status(), "A's key on B's connection: " + w);
        assertArrayEquals(aBefore, a.region().segment().toArray(ValueLayout.JAVA_BYTE), "A's region changed");
        // B's queue pair is in the error state: its next operation, with B's own key, is flushed.
        CompletionRecord after = writeWithKeyOf(b, b, 8);
        assertFalse(after.isSuccess(), "B's connection went on after a forged key: " + after);

        CompletionRecord own = writeWithKeyOf(a, a, 9);
        assertTrue(own.isSuccess(), own::toString);
        assertEquals(0x66, a.region().segment().get(ValueLayout.JAVA_BYTE, 0) & 0xff, "A's write did not land");
        assertTrue(a.server().events.stream().noneMatch(ConnectionEvent::isTerminal), a.server().events::toString);
    }

    @Test
    void aScopedKey_presentedOnAnUnscopedConnection_failsThere() {
        Listening in = listen();
        Accepted a = accept(in, true, (byte) 0x11);
        Accepted b = accept(in, false, (byte) 0x22);
        CompletionRecord w = writeWithKeyOf(a, b, 7);
        assertEquals(CompletionStatus.REM_ACCESS_ERR, w.status(), w::toString);
        assertEquals(0x11, a.region().segment().get(ValueLayout.JAVA_BYTE, 0) & 0xff, "A's region changed");
        assertTrue(writeWithKeyOf(a, a, 8).isSuccess());
    }

    @Test
    void anUnscopedKey_presentedOnAnotherConnection_works() {
        // The same in the transport's one protection domain: what the scope changes.
        assertAnUnscopedKeyWorksOnAnotherConnection();
    }

    @Test
    void aScopedConnection_writesReadsFlushesSendsAndReceives_fromTheTransportsRegions() {
        FabricTransport t = serverTransport();
        assertTrue(t.needsLocalDescriptors(), "verbs has FI_MR_LOCAL");
        Listening in = listen();
        LocalRegion target = region(client, 4096, RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                RegionAccess.FLUSH_TYPE_VISIBILITY);
        LocalRegion clientTx = region(client, 4096, RegionAccess.SEND);
        long registrationsBefore = t.scopedLocalRegistrations();
        Accepted a = accept(in, true, (byte) 0x11);
        Connection s = a.server().connection();
        RemoteRegion dst = closeLater(server.remoteRegion(target.descriptor()));
        LocalRegion src = region(server, 4096, RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
        LocalRegion rx = region(server, 4096, RegionAccess.RECV);
        LocalRegion tx = region(server, 4096, RegionAccess.SEND);
        src.segment().fill((byte) 0x5a);

        post("server write", () -> s.write(dst, 0, src, 0, 64, 1, true));
        assertEquals(CompletionStatus.SUCCESS, await(a.server(), 1).status());
        post("server flush", () -> s.flush(dst, 0, 64, FlushType.VISIBILITY, 2, true));
        assertEquals(CompletionStatus.SUCCESS, await(a.server(), 2).status());
        target.segment().asSlice(1000, 8).fill((byte) 0x77);
        post("server read", () -> s.read(src, 2000, dst, 1000, 8, 3, true));
        assertEquals(CompletionStatus.SUCCESS, await(a.server(), 3).status());
        assertEquals(0x5a, target.segment().get(ValueLayout.JAVA_BYTE, 63) & 0xff, "the write did not land");
        assertEquals(0x77, src.segment().get(ValueLayout.JAVA_BYTE, 2007) & 0xff, "the read did not land");
        assertEquals(0x5a, ((FabricConnection) s).flushSinkSegment().get(ValueLayout.JAVA_BYTE, 0) & 0xff,
                "the flush read back into the scoped domain's sink");

        // Receives into a region of the transport's domain, from a message the client sends.
        post("server receive", () -> s.receive(rx, 0, 4096, 4));
        clientTx.segment().asSlice(0, 5).copyFrom(java.lang.foreign.MemorySegment.ofArray(bytes("hello")));
        post("client send", () -> a.client().connection().send(clientTx, 0, 5, 5, true));
        assertEquals(CompletionStatus.SUCCESS, await(a.client(), 5).status());
        CompletionRecord got = await(a.server(), 4);
        assertEquals(CompletionStatus.SUCCESS, got.status(), got::toString);
        assertEquals(5, got.byteLength());
        assertArrayEquals(bytes("hello"), rx.segment().asSlice(0, 5).toArray(ValueLayout.JAVA_BYTE));

        // And sends from one: the client receives them.
        LocalRegion clientRx = region(client, 4096, RegionAccess.RECV);
        post("client receive", () -> a.client().connection().receive(clientRx, 0, 4096, 6));
        tx.segment().asSlice(0, 3).copyFrom(java.lang.foreign.MemorySegment.ofArray(bytes("abc")));
        post("server send", () -> s.send(tx, 0, 3, 7, true));
        assertEquals(CompletionStatus.SUCCESS, await(a.server(), 7).status());
        assertEquals(CompletionStatus.SUCCESS, await(a.client(), 6).status());
        assertArrayEquals(bytes("abc"), clientRx.segment().asSlice(0, 3).toArray(ValueLayout.JAVA_BYTE));

        // One registration in the connection's domain per region used, made on first use and kept.
        assertEquals(registrationsBefore + 3, t.scopedLocalRegistrations());
        post("server write again", () -> s.write(dst, 0, src, 64, 64, 8, true));
        assertEquals(CompletionStatus.SUCCESS, await(a.server(), 8).status());
        assertEquals(registrationsBefore + 3, t.scopedLocalRegistrations());
        assertEquals(1, ((FabricLocalRegion) src).scopedRegistrations());
        assertEquals(3, ((ScopedDomain) a.scope()).localRegistrations());
    }

    @Test
    void aWriteWithTheTransportDomainsDescriptor_onAScopedConnection_failsLocally_unlessInline()
            throws Exception {
        // The fact ScopedLocalMr rests on: posted as tcp's path does (the region's own descriptor,
        // of the transport's protection domain), past FabricConnection#desc. A write the provider
        // posts inline (at most tx_attr->inject_size bytes: verbs copies the data into the work
        // request, IBV_SEND_INLINE, and no lkey is looked at) succeeds; a larger one fails locally,
        // the lkey belonging to another protection domain than the queue pair's: rxe (kernel 6.1)
        // completes it with IBV_WC_LOC_QP_OP_ERR (prov_errno 2), not LOC_PROT_ERR.
        Listening in = listen();
        LocalRegion target = region(client, 4096, RegionAccess.WRITE_DST);
        RegionDescriptor.Remote dst = (RegionDescriptor.Remote) closeLater(server.remoteRegion(target.descriptor()));
        Accepted a = accept(in, true, (byte) 1);
        FabricLocalRegion src = (FabricLocalRegion) region(server, 4096, RegionAccess.WRITE_SRC);
        src.segment().fill((byte) 0x5a);
        java.lang.reflect.Field posterField = FabricConnection.class.getDeclaredField("poster");
        posterField.setAccessible(true);
        FabricPoster poster = (FabricPoster) posterField.get(a.server().connection());
        long completion = io.cqflux.transport.fabric.ffm.fabric_h.FI_COMPLETION();

        post("inline write with the transport domain's descriptor", () -> poster.rma(false, src.segment().address(),
                src.desc(), dst.base(), 64, dst.key(), 0, completion, 1, io.cqflux.core.Opcode.WRITE));
        CompletionRecord inline = await(a.server(), 1);
        assertEquals(CompletionStatus.SUCCESS, inline.status(), "64 bytes, posted inline: " + inline);
        assertEquals(0x5a, target.segment().get(ValueLayout.JAVA_BYTE, 63) & 0xff, "the inline write did not land");

        target.segment().fill((byte) 0);
        post("4 KiB write with the transport domain's descriptor", () -> poster.rma(false, src.segment().address(),
                src.desc(), dst.base(), 4096, dst.key(), 0, completion, 2, io.cqflux.core.Opcode.WRITE));
        CompletionRecord w = await(a.server(), 2);
        assertEquals(CompletionStatus.LOC_QP_OP_ERR, w.status(), "the transport's lkey on a scoped queue pair: " + w);
        assertEquals(0, target.segment().get(ValueLayout.JAVA_BYTE, 4095), "the write landed");
        assertEquals(0, src.scopedRegistrations(), "the post went past the connection's registration");

        // The same write through the connection registers the region in its domain first: it lands.
        Accepted b = accept(in, true, (byte) 2);
        post("write through the connection", () -> b.server().connection().write(dst, 0, src, 0, 4096, 3, true));
        assertEquals(CompletionStatus.SUCCESS, await(b.server(), 3).status());
        assertEquals(0x5a, target.segment().get(ValueLayout.JAVA_BYTE, 4095) & 0xff, "the write did not land");
        assertEquals(1, src.scopedRegistrations());
    }

    @Test
    void zeroLengthSendsAndReceives_onAScopedConnection_registerNothing() {
        // A zero-length message passes no descriptor (FabricPoster): nothing of the transport's is
        // registered in the connection's domain for it.
        FabricTransport t = serverTransport();
        Listening in = listen();
        LocalRegion clientRx = region(client, 4096, RegionAccess.RECV);
        LocalRegion clientTx = region(client, 4096, RegionAccess.SEND);
        long before = t.scopedLocalRegistrations();
        Accepted a = accept(in, true, (byte) 1);
        Connection s = a.server().connection();
        FabricLocalRegion rx = (FabricLocalRegion) region(server, 4096, RegionAccess.RECV);
        FabricLocalRegion tx = (FabricLocalRegion) region(server, 4096, RegionAccess.SEND);

        post("server zero-length receive", () -> s.receive(rx, 0, 0, 1));
        post("client zero-length send", () -> a.client().connection().send(clientTx, 0, 0, 2, true));
        assertEquals(CompletionStatus.SUCCESS, await(a.client(), 2).status());
        CompletionRecord got = await(a.server(), 1);
        assertEquals(CompletionStatus.SUCCESS, got.status(), got::toString);
        assertEquals(0, got.byteLength());

        post("client receive", () -> a.client().connection().receive(clientRx, 0, 4096, 3));
        post("server zero-length send", () -> s.send(tx, 0, 0, 4, true));
        assertEquals(CompletionStatus.SUCCESS, await(a.server(), 4).status());
        CompletionRecord recv = await(a.client(), 3);
        assertEquals(CompletionStatus.SUCCESS, recv.status(), recv::toString);
        assertEquals(0, recv.byteLength());

        assertEquals(0, rx.scopedRegistrations(), "a zero-length receive registered its region");
        assertEquals(0, tx.scopedRegistrations(), "a zero-length send registered its region");
        assertEquals(before, t.scopedLocalRegistrations());
    }

    @Test
    void anUnscopedConnection_postsFromTheTransportsRegions_andRegistersNothingAgain() {
        Listening in = listen();
        RemoteRegion dst = clientTarget();
        LocalRegion src = region(server, 4096, RegionAccess.WRITE_SRC);
        Accepted plain = accept(in, false, (byte) 0);
        post("write on the unscoped connection", () -> plain.server().connection().write(dst, 0, src, 0, 64, 1, true));
        assertEquals(CompletionStatus.SUCCESS, await(plain.server(), 1).status());
        assertEquals(0, ((FabricLocalRegion) src).scopedRegistrations(), "an unscoped connection registers nothing");
    }

    @Test
    void closingARegion_closesItsRegistrationsInEveryScopedDomain_andItsConnectionsGoOn() {
        FabricTransport t = serverTransport();
        Listening in = listen();
        RemoteRegion dst = clientTarget();
        Accepted a = accept(in, true, (byte) 1);
        Accepted b = accept(in, true, (byte) 2);
        long before = t.scopedLocalRegistrations();
        long closeFailures = FabricLibrary.closeFailures();
        LocalRegion src = server.register(arena.allocate(4096, 4096), EnumSet.of(RegionAccess.WRITE_SRC));
        post("a", () -> a.server().connection().write(dst, 0, src, 0, 64, 1, true));
        post("b", () -> b.server().connection().write(dst, 0, src, 0, 64, 2, true));
        assertTrue(await(a.server(), 1).isSuccess());
        assertTrue(await(b.server(), 2).isSuccess());
        assertEquals(before + 2, t.scopedLocalRegistrations());
        assertEquals(2, ((FabricLocalRegion) src).scopedRegistrations());

        src.close();
        assertEquals(before, t.scopedLocalRegistrations(), "the region's registrations in the scoped domains");
        assertEquals(0, ((ScopedDomain) a.scope()).localRegistrations());
        assertEquals(0, ((ScopedDomain) b.scope()).localRegistrations());
        assertThrows(ResourceClosedException.class, () -> ((FabricLocalRegion) src).descIn((ScopedDomain) a.scope()));
        // Both connections go on with another region.
        LocalRegion other = region(server, 4096, RegionAccess.WRITE_SRC);
        post("a again", () -> a.server().connection().write(dst, 0, other, 0, 64, 3, true));
        assertTrue(await(a.server(), 3).isSuccess());
        assertEquals(closeFailures, FabricLibrary.closeFailures(), "an fi_close of a registration failed");
    }

    @Test
    void endingAScopedConnection_closesItsDomainAndTheRegistrationsInIt_andTheRegionLivesOn() {
        FabricTransport t = serverTransport();
        Listening in = listen();
        RemoteRegion dst = clientTarget();
        LocalRegion src = region(server, 4096, RegionAccess.WRITE_SRC);
        long before = t.scopedLocalRegistrations();
        long closeFailures = FabricLibrary.closeFailures();
        Accepted a = accept(in, true, (byte) 1);
        post("a", () -> a.server().connection().write(dst, 0, src, 0, 64, 1, true));
        assertTrue(await(a.server(), 1).isSuccess());
        assertEquals(before + 1, t.scopedLocalRegistrations());

        ScopedDomain d = (ScopedDomain) a.scope();
        pump.remove(a.server());
        a.server().connection().close();
        assertFalse(d.nativeClosed(), "closed while the region registered in it lives");
        a.region().close();
        assertTrue(d.nativeClosed(), "the domain outlived its last child");
        assertEquals(before, t.scopedLocalRegistrations(), "the domain closed the transport's region's registration");
        assertEquals(0, ((FabricLocalRegion) src).scopedRegistrations());
        assertTrue(src.isOpen());

        Accepted b = accept(in, true, (byte) 2);
        post("b", () -> b.server().connection().write(dst, 0, src, 0, 64, 2, true));
        assertTrue(await(b.server(), 2).isSuccess(), "the region serves the next scoped connection");
        assertEquals(closeFailures, FabricLibrary.closeFailures(), "an fi_close of a registration or domain failed");
    }

    @Test
    void regionAndConnectionClosedAtOnce_closeEachRegistrationOnce_andLeaveNothing() throws Exception {
        FabricTransport t = serverTransport();
        Listening in = listen();
        RemoteRegion dst = clientTarget();
        long before = t.scopedLocalRegistrations();
        long closeFailures = FabricLibrary.closeFailures();
        for (int i = 0; i < 8; i++) {
            Accepted a = accept(in, true, (byte) i);
            a.region().close(); // the domain's last children: the connection and the request's hold (gone)
            LocalRegion src = server.register(arena.allocate(4096, 4096), EnumSet.of(RegionAccess.WRITE_SRC));
            long ctx = 10 + i;
            post("write", () -> a.server().connection().write(dst, 0, src, 0, 64, ctx, true));
            assertTrue(await(a.server(), ctx).isSuccess());
            pump.remove(a.server());
            pump.remove(a.client());
            atOnce(src::close, () -> a.server().connection().close());
            a.client().connection().close();
            assertTrue(((ScopedDomain) a.scope()).nativeClosed());
            assertEquals(before, t.scopedLocalRegistrations(), "round " + i);
        }
        assertEquals(closeFailures, FabricLibrary.closeFailures(), "an fi_close failed (closed twice, or a domain"
                + " before its registrations)");
    }

    @Test
    void scopedConnections_postingFromTheTransportsRegions_leaveNoDescriptorsOrRegistrationsBehind() throws IOException {
        FabricTransport t = serverTransport();
        Listening in = listen();
        RemoteRegion dst = clientTarget();
        LocalRegion src = region(server, 4096, RegionAccess.WRITE_SRC);
        LocalRegion rx = region(server, 4096, RegionAccess.RECV);
        // One first, so that what stays for the transport's life is counted before.
        Accepted warm = accept(in, true, (byte) 1);
        long before = openFds();
        long registrations = t.scopedLocalRegistrations();
        long closeFailures = FabricLibrary.closeFailures();
        for (int i = 0; i < 16; i++) {
            Accepted a = accept(in, true, (byte) i);
            long ctx = 100 + i;
            post("write", () -> a.server().connection().write(dst, 0, src, 0, 64, ctx, true));
            post("receive", () -> a.server().connection().receive(rx, 0, 64, ctx + 1000));
            assertTrue(await(a.server(), ctx).isSuccess());
            end(a);
            assertTrue(((ScopedDomain) a.scope()).nativeClosed());
        }
        assertEquals(registrations, t.scopedLocalRegistrations(), "registrations left behind by 16 scoped connections");
        assertEquals(0, ((FabricLocalRegion) src).scopedRegistrations());
        assertEquals(before, openFds(), "file descriptors left behind by 16 scoped connections");
        assertEquals(closeFailures, FabricLibrary.closeFailures(), "an fi_close failed: the count above would not"
                + " show a registration whose close failed");
        assertNotEquals(null, warm);
    }
}
