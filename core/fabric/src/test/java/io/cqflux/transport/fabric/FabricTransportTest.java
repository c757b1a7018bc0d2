package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.Capability;
import io.cqflux.core.CompletionRecord;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.FlushType;
import io.cqflux.core.Opcode;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.UnsupportedCapabilityException;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.testing.TransportFixture;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/** Fabric/tcp specifics: provider capabilities, the EAVAIL error path, what tcp does with flags. */
class FabricTransportTest extends TransportFixture {

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
    void tcp_capabilities_haveNoAtomicWriteAndNoPersistentFlush() {
        assertEquals("fabric/tcp", client.name());
        assertFalse(client.capabilities().contains(Capability.ATOMIC_WRITE));
        // tcp has cq_data_size 8; it advertises FI_RMA_PMEM, but its commit covers only the
        // committing operation's own bytes, so no flush can make earlier writes persistent.
        // mr_mode 0 (no FI_MR_LOCAL): a domain per accepted connection can scope its keys.
        assertEquals(EnumSet.of(Capability.RMA, Capability.MESSAGES, Capability.WRITE_WITH_IMMEDIATE,
                Capability.SEND_WITH_IMMEDIATE, Capability.FLUSH_VISIBILITY, Capability.CONNECTION_SCOPED_KEYS),
                client.capabilities());
        assertEquals(FabricTransport.PRIVATE_DATA_BOUND, client.maxConnectPrivateData());
    }

    /**
     * The flush read-back rests on read-after-write ordering: the hints request FI_ORDER_RAW and
     * FI_ORDER_WAW, and tcp (1.17) returns both in tx_attr and rx_attr, so FLUSH_VISIBILITY is
     * offered; an info without them (a blank one here) would offer no flush.
     */
    @Test
    void tcp_info_ordersReadAfterWriteAndWriteAfterWrite_soTheReadBackFlushIsOffered() {
        try (java.lang.foreign.Arena tmp = java.lang.foreign.Arena.ofConfined()) {
            java.lang.foreign.MemorySegment info = FabricInfo.getinfo(tmp, "tcp", null, null,
                    LOOPBACK.getHostAddress(), null, io.cqflux.transport.fabric.ffm.fabric_h.FI_SOURCE());
            assertFalse(info.equals(java.lang.foreign.MemorySegment.NULL), "tcp does not match the hints");
            try {
                long want = io.cqflux.transport.fabric.ffm.fabric_h.FI_ORDER_RAW()
                        | io.cqflux.transport.fabric.ffm.fabric_h.FI_ORDER_WAW();
                long tx = io.cqflux.transport.fabric.ffm.fi_tx_attr.msg_order(
                        io.cqflux.transport.fabric.ffm.fi_info.tx_attr(info));
                long rx = io.cqflux.transport.fabric.ffm.fi_rx_attr.msg_order(
                        io.cqflux.transport.fabric.ffm.fi_info.rx_attr(info));
                System.out.printf("FACT tcp msg_order tx 0x%x rx 0x%x%n", tx, rx);
                assertEquals(want, tx & want, "tx_attr msg_order 0x" + Long.toHexString(tx));
                assertEquals(want, rx & want, "rx_attr msg_order 0x" + Long.toHexString(rx));
                assertEquals(FabricFacts.TCP_ORDERS_READ_AFTER_WRITE, FabricInfo.readAfterWriteOrdered(info));
            } finally {
                io.cqflux.transport.fabric.ffm.fabric_h.fi_freeinfo(info);
            }
            java.lang.foreign.MemorySegment blank = io.cqflux.transport.fabric.ffm.fabric_h.fi_dupinfo(
                    java.lang.foreign.MemorySegment.NULL);
            try {
                assertFalse(FabricInfo.readAfterWriteOrdered(blank), "an info with msg_order 0 is ordered");
            } finally {
                io.cqflux.transport.fabric.ffm.fabric_h.fi_freeinfo(blank);
            }
        }
        assertTrue(client.capabilities().contains(Capability.FLUSH_VISIBILITY));
    }

    @Test
    void providerNamedInAnotherCase_isTcpWithTcpsRules_notAProviderThatCouldPersist() {
        // fi_getinfo(3) matches prov_name without regard to case: "TCP" opens tcp. The transport
        // must then know it is tcp, or it would take tcp's FI_RMA_PMEM at its word and offer a
        // persistent flush that tcp cannot give.
        for (String asked : new String[] {"TCP", "Tcp"}) {
            try (Transport t = Fabric.open(asked, LOOPBACK)) {
                assertEquals("fabric/tcp", t.name(), asked);
                assertEquals(client.capabilities(), t.capabilities(), asked);
                assertFalse(t.capabilities().contains(Capability.FLUSH_PERSISTENT), asked);
            }
        }
    }

    @Test
    void mrCache_isTurnedOffBeforeLibfabricStarts_andAProviderThatWouldUseItIsRefusedWhenOn() {
        // Set by FabricLibrary before the first fi_getinfo (this JVM's environment had none).
        if (System.getenv(FabricLibrary.MR_CACHE_MONITOR) == null) {
            assertEquals(FabricLibrary.MR_CACHE_OFF, FabricLibrary.nativeEnv(FabricLibrary.MR_CACHE_MONITOR));
        }
        assertEquals(null, FabricLibrary.mrCacheRefusal("verbs", null));
        assertEquals(null, FabricLibrary.mrCacheRefusal("verbs", "disabled"));
        assertEquals(null, FabricLibrary.mrCacheRefusal("tcp", "memhooks"));
        String why = FabricLibrary.mrCacheRefusal("verbs", "memhooks");
        assertTrue(why != null && why.contains("FI_MR_CACHE_MONITOR=memhooks") && why.contains("disabled"), why);
    }

    @Test
    void atomicWrite_onTcp_isRefusedUpFrontNamingProviderAndCapability() {
        LocalRegion target = region(server, 64, RegionAccess.WRITE_DST);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        UnsupportedCapabilityException e = assertThrows(UnsupportedCapabilityException.class,
                () -> p.client().atomicWrite(remote, 0, 42, 1, true));
        assertEquals("fabric/tcp", e.provider());
        assertEquals(Capability.ATOMIC_WRITE, e.capability());
        assertTrue(e.getMessage().contains("fabric/tcp") && e.getMessage().contains("ATOMIC_WRITE"), e.getMessage());
    }

    @Test
    void listener_cmDataSize_coversThePrivateDataBound() {
        FabricListener l = (FabricListener) closeLater(server.listen(listenAddress(), config()));
        long size = l.cmDataSize();
        System.out.println("FACT tcp FI_OPT_CM_DATA_SIZE " + size);
        assertTrue(size >= FabricTransport.PRIVATE_DATA_BOUND, "FI_OPT_CM_DATA_SIZE " + size);
        assertTrue(l.address().getPort() > 0);
    }

    @Test
    void badKey_errorEntryCarriesLibfabricDetails() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        target.close();
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        post("write", () -> p.client().write(remote, 0, src, 0, 64, 7, true));
        CompletionRecord c = await(p.clientSide(), 7);
        // tcp reports the target dropping us as FI_SHUTDOWN, like an orderly close (fi_cm(3)); the
        // transport passes on what the provider said, and the owner of the operations (the
        // reactive layer) calls the connection LOST because an operation failed first.
        pump.until("the end", DEADLINE, () -> p.clientSide().events.contains(ConnectionEvent.CLOSED));
        System.out.println("FACT tcp bad key -> " + c + " vendorError=" + c.vendorError()
                + " events=" + p.clientSide().events + " server events=" + p.serverSide().events);
        assertFalse(c.isSuccess());
        assertTrue(c.errorNumber() == FabricErrno.ECANCELED.code() || c.errorNumber() == FabricErrno.ENOTCONN.code(),
                c::toString);
        assertEquals(CompletionStatus.WR_FLUSH_ERR, c.status(), "cut off because the connection ended");
        assertFalse(c.errorText().isEmpty(), "fi_cq_strerror text");
        // after the loss nothing can be posted any more
        assertThrows(IllegalStateException.class, () -> p.client().write(remote, 0, src, 0, 8, 8, true));
    }

    @Test
    void writeWithImmediate_onTcp_doesNotConsumeAPostedReceive() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST, RegionAccess.RECV);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC, RegionAccess.SEND);
        post("receive", () -> p.server().receive(target, 1024, 64, 500));
        post("write with immediate", () -> p.client().writeWithImmediate(remote, 0, src, 0, 8, 0x7f000001, 1, true));
        await(p.clientSide(), 1);
        pump.until("the target's completion", DEADLINE, () -> !p.serverSide().completions.isEmpty());
        CompletionRecord t = p.serverSide().completions.remove(0);
        System.out.println("FACT tcp writedata at target: " + t + " flags=0x" + Long.toHexString(t.flags()));
        assertEquals(Opcode.RECEIVE_WRITE_WITH_IMMEDIATE, t.opcode());
        assertEquals(0x7f000001, t.immediate());
        assertEquals(FabricFacts.TCP_WRITEDATA_CONSUMES_RECEIVE ? 500L : 0L, t.context(), t::toString);
        // 8 bytes were written; tcp does not say so, and the transport does not claim 0 bytes
        assertEquals(FabricFacts.TCP_WRITEDATA_REPORTS_LENGTH ? 8L : -1L, t.byteLength(), t::toString);
        // the posted receive is still there: a send fills it
        src.segment().set(ValueLayout.JAVA_INT, 0, 0x01020304);
        post("send", () -> p.client().send(src, 0, 4, 2, true));
        CompletionRecord r = await(p.serverSide(), 500);
        assertEquals(Opcode.RECEIVE, r.opcode());
        assertEquals(4, r.byteLength());
    }

    @Test
    void persistentFlush_isRefusedBeforePosting_visibilityFlushCoversEarlierWrite() {
        // tcp cannot make earlier writes persistent: a "persistent" region is refused outright,
        // never registered at visibility behind the caller's back.
        UnsupportedCapabilityException notRegistered = assertThrows(UnsupportedCapabilityException.class,
                () -> region(server, 4096, RegionAccess.WRITE_DST, RegionAccess.FLUSH_TYPE_PERSISTENT));
        assertTrue(notRegistered.getMessage().contains(server.name())
                && notRegistered.getMessage().contains("FLUSH_TYPE_PERSISTENT")
                && notRegistered.getMessage().contains("[VISIBILITY]"), notRegistered.getMessage());
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST, RegionAccess.FLUSH_TYPE_VISIBILITY);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        assertEquals(EnumSet.of(FlushType.VISIBILITY), remote.flushTypes());
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> p.client().flush(remote, 0, 8, FlushType.PERSISTENT, 3, true));
        assertTrue(refused.getMessage().contains("PERSISTENT") && refused.getMessage().contains("[VISIBILITY]"),
                refused.getMessage());
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        src.segment().set(ValueLayout.JAVA_LONG, 0, 77);
        post("write", () -> p.client().write(remote, 0, src, 0, 8, 1, false));
        post("flush", () -> p.client().flush(remote, 0, 8, FlushType.VISIBILITY, 2, true));
        CompletionRecord f = await(p.clientSide(), 2);
        assertTrue(f.isSuccess(), f::toString);
        assertEquals(Opcode.READ, f.opcode(), "a flush travels as a read-back, needing no write right");
        assertEquals(77, target.segment().get(ValueLayout.JAVA_LONG, 0));
    }

    /**
     * A flush of 0 bytes still reads a byte back (a 0-byte read may not touch the target's memory):
     * the byte at the offset, or the region's last byte when the offset is the region's end.
     */
    @Test
    void zeroLengthFlush_readsOneByteBack_evenAtTheRegionsEnd() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST, RegionAccess.FLUSH_TYPE_VISIBILITY);
        target.segment().set(ValueLayout.JAVA_BYTE, 100, (byte) 0x5A);
        target.segment().set(ValueLayout.JAVA_BYTE, 4095, (byte) 0x6B);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        java.lang.foreign.MemorySegment sink = ((FabricConnection) p.client()).flushSinkSegment();
        sink.fill((byte) 0);
        post("flush", () -> p.client().flush(remote, 100, 0, FlushType.VISIBILITY, 5, true));
        CompletionRecord a = await(p.clientSide(), 5);
        assertTrue(a.isSuccess(), a::toString);
        assertEquals((byte) 0x5A, sink.get(ValueLayout.JAVA_BYTE, 0), "a 0-byte flush read nothing back");
        sink.fill((byte) 0);
        post("flush", () -> p.client().flush(remote, 4096, 0, FlushType.VISIBILITY, 6, true));
        CompletionRecord b = await(p.clientSide(), 6);
        assertTrue(b.isSuccess(), b::toString);
        assertEquals((byte) 0x6B, sink.get(ValueLayout.JAVA_BYTE, 0), "a 0-byte flush at the end read nothing back");
    }

    @Test
    void transmitCompletion_writeCompletesLocallyAndStillArrives() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST);
        Pair p = connect(new byte[0], target.descriptor(),
                config().withWriteCompletion(io.cqflux.core.CompletionLevel.TRANSMIT));
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        assertEquals(io.cqflux.core.CompletionLevel.TRANSMIT, p.client().config().writeCompletion());
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        src.segment().set(ValueLayout.JAVA_LONG, 8, 5);
        post("write", () -> p.client().write(remote, 8, src, 8, 8, 3, true));
        assertTrue(await(p.clientSide(), 3).isSuccess());
        pump.until("the data at the target", DEADLINE, () -> target.segment().get(ValueLayout.JAVA_LONG, 8) == 5);
    }

    @Test
    void tcpIgnoresQueueSizes_soTheCallersCreditsAreTheOnlyBound() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST);
        io.cqflux.core.ConnectionConfig small = new io.cqflux.core.ConnectionConfig(2, 2, 8, 0,
                java.time.Duration.ofSeconds(5), false, io.cqflux.core.CompletionLevel.DELIVERY);
        Pair p = connect(new byte[0], target.descriptor(), small);
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        // Eight signaled writes on a send queue of two (but no more than the CQ holds): tcp (1.17)
        // accepts them all and never answers -FI_EAGAIN, so the transport keeps no count of its
        // own; the reactive layer's credits (InFlightTable) are what bounds a connection.
        int accepted = 0;
        while (accepted < 8 && p.client().write(remote, 0, src, 0, 8, accepted + 1, true)) {
            accepted++;
        }
        System.out.println("FACT tcp accepted " + accepted + " signaled writes on a send queue of 2");
        assertEquals(8, accepted);
        pump.until("the accepted writes", DEADLINE, () -> p.clientSide().completions.size() == 8);
        assertTrue(p.clientSide().completions.stream().allMatch(CompletionRecord::isSuccess));
    }

    @Test
    void connectToClosedPort_isRefusedThroughTheEventQueue() throws Exception {
        int port;
        try (java.net.ServerSocket ss = new java.net.ServerSocket(0, 1, LOOPBACK)) {
            port = ss.getLocalPort();
        }
        FabricConnection c = (FabricConnection) closeLater(client.connect(new InetSocketAddress(LOOPBACK, port),
                config(), bytes("x")));
        // fi_connect itself succeeds (tcp connects asynchronously); the refusal is an EQ error entry
        boolean synchronous = c.refusedAtConnect();
        io.cqflux.core.testing.TransportPump.Side s = pump.add("client", c);
        pump.until("REJECTED", DEADLINE, () -> !s.events.isEmpty());
        System.out.println("FACT tcp connect to closed port: refused by fi_connect itself=" + synchronous
                + " event=" + s.events + " eq err=" + c.lastEqError());
        assertFalse(synchronous);
        assertEquals(java.util.List.of(ConnectionEvent.REJECTED), s.events);
    }

    @Test
    void rejectedRequest_reportsRejectedToTheClient() {
        io.cqflux.core.spi.Listener l = closeLater(server.listen(listenAddress(), config()));
        java.util.Deque<io.cqflux.core.spi.ConnectionRequest> reqs = pump.add(l);
        io.cqflux.core.spi.Connection c = closeLater(client.connect(l.address(), config(), bytes("let me in")));
        io.cqflux.core.testing.TransportPump.Side s = pump.add("client", c);
        pump.until("a request", DEADLINE, () -> !reqs.isEmpty());
        io.cqflux.core.spi.ConnectionRequest r = reqs.poll();
        assertEquals("let me in", new String(r.privateData(), java.nio.charset.StandardCharsets.UTF_8));
        r.reject();
        assertThrows(IllegalStateException.class, r::reject, "once only");
        pump.until("REJECTED", DEADLINE, () -> !s.events.isEmpty());
        assertEquals(java.util.List.of(ConnectionEvent.REJECTED), s.events);
    }

    @Test
    void rejectedWithData_theClientReadsTheDataAsThePeersPrivateData() {
        io.cqflux.core.spi.Listener l = closeLater(server.listen(listenAddress(), config()));
        java.util.Deque<io.cqflux.core.spi.ConnectionRequest> reqs = pump.add(l);
        io.cqflux.core.spi.Connection c = closeLater(client.connect(l.address(), config(), bytes("let me in")));
        io.cqflux.core.testing.TransportPump.Side s = pump.add("client", c);
        pump.until("a request", DEADLINE, () -> !reqs.isEmpty());
        assertEquals(server.maxAcceptPrivateData(), server.maxRejectPrivateData(), "tcp carries a reject's data");
        byte[] reason = bytes("CX not on the list");
        reqs.poll().reject(reason);
        pump.until("REJECTED", DEADLINE, () -> !s.events.isEmpty());
        assertEquals(java.util.List.of(ConnectionEvent.REJECTED), s.events);
        assertArrayEquals(reason, c.peerPrivateData(), "the reject's data, byte for byte");
    }

    /**
     * A client that sends part of a connection request (libfabric 1.17 tcp's 32-byte header, which
     * announces 4 bytes of private data) and then nothing, its socket kept open. The provider reads
     * requests with a blocking recv inside the queue's read: the loop's read of the listener
     * ({@code nextRequest}) never waits on it, since a thread of the listener's own makes that read
     * (RequestReader), and that thread's read returns within RequestReadBound's bound (without it,
     * it waited for as long as the socket stayed open), so a well-formed client after it is
     * reported within a second, before the socket closes. cm_stall_probe.c shows the bound in C.
     */
    @Test
    void aPartialConnectionRequest_holdsTheListenersReadNoLongerThanTheBound_andAClientAfterItIsReported()
            throws Exception {
        io.cqflux.core.spi.Listener l = closeLater(server.listen(listenAddress(), config()));
        assertTrue(RequestReadBound.listeningFd(l.address()) >= 0, "the listening socket is found");
        byte[] header = new byte[32];
        header[0] = 3; // version
        header[3] = 4; // 4 bytes of private data announced (big-endian u16 at 2)
        header[24] = 1;
        try (java.net.Socket raw = new java.net.Socket(l.address().getAddress(), l.address().getPort())) {
            raw.getOutputStream().write(header);
            raw.getOutputStream().flush();
            // Without the bound the read below would wait for as long as this socket is open: the
            // socket closes after 2 s whatever happens, so that such a read fails the test, not hangs it.
            java.util.concurrent.CompletableFuture.delayedExecutor(2, java.util.concurrent.TimeUnit.SECONDS)
                    .execute(() -> {
                        try {
                            raw.close();
                        } catch (java.io.IOException e) {
                            // closed already
                        }
                    });
            Thread.sleep(50); // the header is there: the listener's queue sees the socket readable
            long longest = 0;
            long end = System.nanoTime() + 300_000_000L;
            while (System.nanoTime() < end) {
                long t0 = System.nanoTime();
                assertNull(l.nextRequest(), "the partial request is never reported");
                longest = Math.max(longest, System.nanoTime() - t0);
            }
            System.out.printf("FACT fabric/tcp: a partial connection request held the listener's read at most %.1f ms"
                    + " (bound %d ms)%n", longest / 1e6, RequestReadBound.BOUND.toMillis());
            assertTrue(longest < 200_000_000L, "the listener's read was held " + longest / 1_000_000 + " ms");
            // The reader's own read of the partial request is bounded too: a well-formed client
            // after it is reported long before the raw socket closes (2 s).
            java.util.Deque<io.cqflux.core.spi.ConnectionRequest> reqs = pump.add(l);
            long t1 = System.nanoTime();
            io.cqflux.core.spi.Connection c = closeLater(client.connect(l.address(), config(), bytes("after")));
            pump.add("client", c);
            pump.until("the well-formed request", DEADLINE, () -> !reqs.isEmpty());
            long reported = (System.nanoTime() - t1) / 1_000_000;
            assertTrue(reported < 1_000, "the well-formed request was reported after " + reported + " ms");
            reqs.poll().reject();
        }
    }

    /**
     * On tcp a listener's requests are read on a thread of its own (RequestReader): the loop only
     * takes them. Its close ends that thread promptly, waiting in fi_eq_sread or not, and rejects
     * a request the thread read that the loop never took: its client sees REJECTED, not a timeout.
     */
    @Test
    void aTcpListenersRequests_areReadOnAThreadOfItsOwn_whichItsCloseEnds_rejectingWhatWasReadAndNotTaken()
            throws Exception {
        FabricListener l = (FabricListener) server.listen(listenAddress(), config());
        Thread reader = l.readerThread();
        assertNotNull(reader, "tcp reads requests off the loop");
        assertTrue(reader.isAlive() && reader.isDaemon(), reader::toString);
        io.cqflux.core.spi.Connection c = closeLater(client.connect(l.address(), config(), bytes("x")));
        io.cqflux.core.testing.TransportPump.Side s = pump.add("client", c);
        // Read by the reader, never taken: the listener's fd turns readable (its signal queue).
        pump.until("the request is read", DEADLINE, () -> !l.prepareToSleep());
        long t0 = System.nanoTime();
        l.close();
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertFalse(reader.isAlive(), "the reader's thread outlived its listener");
        assertTrue(ms < 1_000, "the close took " + ms + " ms");
        pump.until("REJECTED", DEADLINE, () -> !s.events.isEmpty());
        assertEquals(java.util.List.of(ConnectionEvent.REJECTED), s.events);
        l.close(); // idempotent
    }

    /**
     * A signal delivered to the listener's reader thread ends its fi_eq_sread with -FI_EINTR
     * (epoll_wait(2) returns EINTR whatever SA_RESTART; a Ctrl-Z and fg, a debugger or a profiler
     * do it): no failure, the thread reads on. SIGPIPE, whose handler the JVM installs and which
     * does nothing, sent with tgkill(2) to that thread alone. Before, the thread ended and the
     * loop's next read threw, which closes a server.
     */
    @Test
    void aSignalToTheListenersReader_isNoFailure_andItReadsOn() throws Throwable {
        FabricListener l = closeLater((FabricListener) server.listen(listenAddress(), config()));
        Thread reader = l.readerThread();
        int tid = nativeTid(reader);
        java.lang.foreign.Linker linker = java.lang.foreign.Linker.nativeLinker();
        java.lang.invoke.MethodHandle tgkill = linker.downcallHandle(linker.defaultLookup().find("tgkill").orElseThrow(),
                java.lang.foreign.FunctionDescriptor.of(java.lang.foreign.ValueLayout.JAVA_INT,
                        java.lang.foreign.ValueLayout.JAVA_INT, java.lang.foreign.ValueLayout.JAVA_INT,
                        java.lang.foreign.ValueLayout.JAVA_INT));
        Thread.sleep(100); // in its fi_eq_sread
        for (int i = 0; i < 3; i++) {
            assertEquals(0, (int) tgkill.invokeExact((int) ProcessHandle.current().pid(), tid, 13 /* SIGPIPE */));
            Thread.sleep(50);
        }
        assertTrue(reader.isAlive(), "the reader ended on a signal");
        java.util.Deque<io.cqflux.core.spi.ConnectionRequest> reqs = pump.add(l);
        io.cqflux.core.spi.Connection c = closeLater(client.connect(l.address(), config(), bytes("after")));
        pump.add("client", c);
        pump.until("a request after the signals", DEADLINE, () -> !reqs.isEmpty());
        reqs.poll().reject();
    }

    /**
     * {@return the kernel's id of {@code t}: the task of this process whose name its name begins}
     * A thread names its task itself once it runs, so this looks for up to 2 s.
     */
    private static int nativeTid(Thread t) throws java.io.IOException, InterruptedException {
        for (int i = 0; i < 100; i++) {
            int tid = nativeTidNow(t);
            if (tid > 0) {
                return tid;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no task named as " + t.getName());
    }

    private static int nativeTidNow(Thread t) throws java.io.IOException {
        String comm = t.getName().substring(0, Math.min(15, t.getName().length())); // TASK_COMM_LEN - 1
        int found = -1;
        try (java.util.stream.Stream<java.nio.file.Path> tasks = java.nio.file.Files.list(java.nio.file.Path.of(
                "/proc/self/task"))) {
            for (java.nio.file.Path task : tasks.toList()) {
                if (java.nio.file.Files.readString(task.resolve("comm")).trim().equals(comm)) {
                    assertEquals(-1, found, "two tasks named " + comm);
                    found = Integer.parseInt(task.getFileName().toString());
                }
            }
        }
        return found;
    }

    /**
     * The reader holds at most RequestReader.MAX_READY requests the loop has not taken (each holds
     * a socket the provider accepted for it); beyond that it reads no more until the loop takes
     * one, and the clients behind wait in the kernel's listen backlog. 300 raw clients send a
     * request without private data (its 32-byte header, as a real client's, length 0): at most 256
     * wait, and all 300 are taken as the loop takes them.
     */
    @Test
    void aListenersReader_holdsAtMostMaxReadyRequests_andReadsOnAsTheyAreTaken() throws Exception {
        FabricListener l = closeLater((FabricListener) server.listen(listenAddress(), config()));
        byte[] header = new byte[32];
        header[0] = 3; // version
        header[24] = 1;
        int n = RequestReader.MAX_READY + 44;
        java.util.List<java.net.Socket> raw = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                java.net.Socket k = new java.net.Socket(l.address().getAddress(), l.address().getPort());
                raw.add(k);
                k.getOutputStream().write(header);
                k.getOutputStream().flush();
            }
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (l.readerWaiting() < RequestReader.MAX_READY && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            Thread.sleep(200); // would it read on?
            assertEquals(RequestReader.MAX_READY, l.readerWaiting(), "requests read and not taken");
            int taken = 0;
            while (taken < n && System.nanoTime() < deadline + 10_000_000_000L) {
                io.cqflux.core.spi.ConnectionRequest r = l.nextRequest();
                if (r == null) {
                    Thread.sleep(5);
                    continue;
                }
                r.reject();
                taken++;
            }
            assertEquals(n, taken, "requests taken");
        } finally {
            for (java.net.Socket k : raw) {
                k.close();
            }
        }
    }

    @Test
    void rejectWithDataBeyondTheBound_isRefusedNamingTheBound_andTheRequestStaysAnswerable() {
        io.cqflux.core.spi.Listener l = closeLater(server.listen(listenAddress(), config()));
        java.util.Deque<io.cqflux.core.spi.ConnectionRequest> reqs = pump.add(l);
        io.cqflux.core.spi.Connection c = closeLater(client.connect(l.address(), config(), bytes("x")));
        io.cqflux.core.testing.TransportPump.Side s = pump.add("client", c);
        pump.until("a request", DEADLINE, () -> !reqs.isEmpty());
        io.cqflux.core.spi.ConnectionRequest r = reqs.poll();
        int max = server.maxRejectPrivateData();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> r.reject(new byte[max + 1]));
        assertTrue(e.getMessage().contains((max + 1) + " bytes") && e.getMessage().contains("maximum " + max),
                e::getMessage);
        r.reject();
        pump.until("REJECTED", DEADLINE, () -> !s.events.isEmpty());
        assertEquals(java.util.List.of(ConnectionEvent.REJECTED), s.events);
        assertEquals(0, c.peerPrivateData().length, "a reject without data delivers none");
    }

    /** Prints rough loopback latencies (no timed assertion: the machine is shared and noisy). */
    @Test
    void latency_ofSignaledOperations_isReported() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                RegionAccess.FLUSH_TYPE_VISIBILITY);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        LocalRegion buf = region(client, 4096, RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
        int n = 500;
        StringBuilder out = new StringBuilder("FACT test-pump latency (poll(2) when idle, shared noisy host) (8 B, avg over " + n + "):");
        for (String kind : new String[] {"write", "read", "flush"}) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                long ctx = 10_000 + i;
                switch (kind) {
                    case "write" -> post(kind, () -> p.client().write(remote, 0, buf, 0, 8, ctx, true));
                    case "read" -> post(kind, () -> p.client().read(buf, 0, remote, 0, 8, ctx, true));
                    default -> post(kind, () -> p.client().flush(remote, 0, 8, FlushType.VISIBILITY, ctx, true));
                }
                CompletionRecord c = await(p.clientSide(), ctx);
                assertTrue(c.isSuccess(), c::toString);
            }
            out.append(String.format(" %s %.1f us", kind, (System.nanoTime() - t0) / 1e3 / n));
        }
        System.out.println(out);
    }

    @Test
    void peerClose_failsSignaledWriteAndReceives_nothingStaysPending() {
        LocalRegion target = region(server, 1 << 20, RegionAccess.WRITE_DST);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        LocalRegion buf = region(client, 1 << 20, RegionAccess.WRITE_SRC, RegionAccess.RECV);
        post("receive", () -> p.client().receive(buf, 0, 64, 1));
        post("receive", () -> p.client().receive(buf, 64, 64, 2));
        pump.remove(p.serverSide());
        p.server().close();
        // posted after the peer is gone but before this side noticed
        boolean posted = p.client().write(remote, 0, buf, 0, 1 << 20, 3, true);
        pump.until("all three failed and a terminal event", DEADLINE,
                () -> p.clientSide().completions.size() >= (posted ? 3 : 2)
                        && p.clientSide().events.stream().anyMatch(ConnectionEvent::isTerminal));
        StringBuilder b = new StringBuilder("FACT tcp after peer close:");
        for (CompletionRecord c : p.clientSide().completions) {
            assertFalse(c.isSuccess(), c::toString);
            b.append(' ').append(c.context()).append('=').append(c.status()).append('/').append(c.errorNumber())
                    .append(" \"").append(c.errorText()).append('"');
        }
        System.out.println(b + " events=" + p.clientSide().events);
        // The provider itself flushes every posted operation when the connection ends (the
        // transport synthesizes nothing): each context came back exactly once.
        assertEquals(posted ? 3 : 2, p.clientSide().completions.stream().mapToLong(CompletionRecord::context)
                .distinct().count(), "every posted context completed once");
    }

    /** Counts completions without keeping them: the sink itself allocates nothing. */
    private static final class CountingSink implements io.cqflux.core.spi.CompletionSink {
        long count;
        long failures;

        @Override
        public void onCompletion(io.cqflux.core.Completion c) {
            count++;
            if (!c.isSuccess()) {
                failures++;
            }
        }
    }

    @Test
    void postAndPoll_allocateNothingPerOperation() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        pump.remove(p.clientSide());
        pump.remove(p.serverSide());
        java.lang.foreign.MemorySegment scratch = arena.allocate(16L * 64, 64);
        io.cqflux.core.spi.CompletionQueue ccq = p.client().completionQueues().get(0);
        java.util.List<io.cqflux.core.spi.CompletionQueue> scq = p.server().completionQueues();
        CountingSink sink = new CountingSink();
        CountingSink serverSink = new CountingSink();
        // com.sun.management.ThreadMXBean#getThreadAllocatedBytes, reflectively: core's module
        // does not read java.management (tests run on the class path, where this works)
        java.util.function.LongSupplier allocated;
        try {
            Object mx = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean").invoke(null);
            java.lang.reflect.Method m = Class.forName("com.sun.management.ThreadMXBean")
                    .getMethod("getThreadAllocatedBytes", long.class);
            long tid = Thread.currentThread().threadId();
            allocated = () -> {
                try {
                    return (Long) m.invoke(mx, tid);
                } catch (ReflectiveOperationException e) {
                    throw new AssertionError(e);
                }
            };
        } catch (ReflectiveOperationException e) {
            throw new AssertionError("thread allocation counter unavailable", e);
        }
        int rounds = 2000;
        long bytes = 0;
        for (int phase = 0; phase < 2; phase++) { // phase 0 warms up (JIT), phase 1 measures
            long before = allocated.getAsLong();
            long t0 = System.nanoTime();
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            for (int i = 0; i < rounds; i++) {
                long want = sink.count + 1;
                while (!p.client().write(remote, 0, src, 0, 8, i, true)) {
                    ccq.poll(scratch, 16, sink);
                }
                while (sink.count < want) {
                    ccq.poll(scratch, 16, sink);
                    for (int k = 0; k < scq.size(); k++) {
                        scq.get(k).poll(scratch, 16, serverSink);
                    }
                    if (System.nanoTime() > deadline) {
                        throw new AssertionError("timed out at write " + i);
                    }
                }
            }
            bytes = allocated.getAsLong() - before;
            if (phase == 1) {
                System.out.printf("FACT busy-polled signaled 8 B DELIVERY write, post to completion: %.1f us avg%n",
                        (System.nanoTime() - t0) / 1e3 / rounds);
            }
        }
        System.out.println("FACT allocation per write+poll cycle after warm-up: " + (double) bytes / rounds + " bytes");
        assertEquals(0, sink.failures);
        assertTrue(bytes / rounds < 16, bytes + " bytes allocated over " + rounds + " write+poll cycles");
    }

    @Test
    void afterTheEnd_eventChannelIsQuietAndLetsTheLoopSleep() {
        Pair p = connect(new byte[0], new byte[0]);
        p.client().disconnect(); // CLOSED reported locally; the peer's FI_SHUTDOWN may follow later
        pump.until("CLOSED on both ends", DEADLINE, () -> p.clientSide().events.contains(ConnectionEvent.CLOSED)
                && p.serverSide().events.contains(ConnectionEvent.CLOSED));
        pump.until("both event channels ready to sleep", DEADLINE,
                () -> p.client().events().prepareToSleep() && p.server().events().prepareToSleep());
        assertEquals(null, p.client().events().nextEvent());
        assertEquals(java.util.List.of(ConnectionEvent.ESTABLISHED, ConnectionEvent.CLOSED), p.clientSide().events);
    }
}
