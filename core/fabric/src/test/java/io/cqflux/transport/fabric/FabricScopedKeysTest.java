package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.Capability;
import io.cqflux.core.CompletionRecord;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.KeyScope;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/**
 * Keys scoped to their connection at the transport (fabric/tcp on loopback): a domain per
 * accepted connection (ScopedDomain), and what a key of one presented on another does.
 */
class FabricScopedKeysTest extends ScopedKeysFixture {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    FabricScopedKeysTest() {
        super("tcp", () -> LOOPBACK);
    }

    @Test
    void tcp_offersScopedKeys() {
        assertTrue(server.capabilities().contains(Capability.CONNECTION_SCOPED_KEYS), server.capabilities()::toString);
        assertNull(server.connectionScopedKeysRefusal());
    }

    @Test
    void aScopedKey_presentedOnAnotherConnection_reachesNothing_andItsOwnerGoesOn() {
        Listening in = listen();
        Accepted a = accept(in, true, (byte) 0x11);
        Accepted b = accept(in, true, (byte) 0x22);
        byte[] aBefore = a.region().segment().toArray(ValueLayout.JAVA_BYTE);

        CompletionRecord w = writeWithKeyOf(a, b, 7);
        assertFalse(w.isSuccess(), "A's key worked on B's connection: " + w);
        assertArrayEquals(aBefore, a.region().segment().toArray(ValueLayout.JAVA_BYTE), "A's region changed");
        pump.until("B's connection ends", DEADLINE, () -> b.client().events.stream().anyMatch(ConnectionEvent::isTerminal));

        // A's own key still works on A's connection.
        CompletionRecord own = writeWithKeyOf(a, a, 8);
        assertTrue(own.isSuccess(), own::toString);
        assertEquals(0x66, a.region().segment().get(ValueLayout.JAVA_BYTE, 0) & 0xff, "A's write did not land");
    }

    @Test
    void anUnscopedKey_presentedOnAnotherConnection_works_whileItsConnectionLives() {
        // The same as above in the transport's one domain: what the scope changes.
        assertAnUnscopedKeyWorksOnAnotherConnection();
    }

    @Test
    void aScopedConnection_postsFromTheTransportsRegions_andFlushesIntoItsOwnSink() {
        // tcp needs no local descriptor (mr_mode 0): the application's regions, registered in the
        // transport's domain, serve the server's posts on a connection opened in another domain.
        Listening in = listen();
        LocalRegion target = region(client, 4096, RegionAccess.WRITE_DST, RegionAccess.READ_SRC,
                RegionAccess.FLUSH_TYPE_VISIBILITY);
        Accepted a = accept(in, true, (byte) 0x11);
        RemoteRegion dst = closeLater(server.remoteRegion(target.descriptor()));
        LocalRegion src = region(server, 64, RegionAccess.WRITE_SRC, RegionAccess.READ_DST);
        src.segment().fill((byte) 0x5a);
        Connection s = a.server().connection();
        post("server write", () -> s.write(dst, 0, src, 0, 64, 1, true));
        assertTrue(await(a.server(), 1).isSuccess());
        post("server flush", () -> s.flush(dst, 0, 64, FlushType.VISIBILITY, 2, true));
        assertTrue(await(a.server(), 2).isSuccess());
        post("server read", () -> s.read(src, 0, dst, 0, 8, 3, true));
        assertTrue(await(a.server(), 3).isSuccess());
        assertEquals(0x5a, target.segment().get(ValueLayout.JAVA_BYTE, 63) & 0xff);
        FabricConnection fc = (FabricConnection) s;
        assertEquals(0x5a, fc.flushSinkSegment().get(ValueLayout.JAVA_BYTE, 0) & 0xff,
                "the flush read back into the scoped domain's sink");
    }

    @Test
    void aScopedDomain_closesAfterItsLastChild_connectionAndRegionsInAnyOrder() {
        Listening in = listen();
        Accepted a = accept(in, true, (byte) 0x11);
        ScopedDomain d = (ScopedDomain) a.scope();
        assertFalse(d.nativeClosed(), "closed while its connection and region live");
        a.region().close();
        assertFalse(d.nativeClosed(), "closed while its connection lives");
        pump.remove(a.server());
        a.server().connection().close();
        assertTrue(d.nativeClosed(), "the domain outlived its last child");
        assertThrows(io.cqflux.core.ResourceClosedException.class,
                () -> d.register(arena.allocate(64, 8), EnumSet.of(RegionAccess.READ_SRC)));
    }

    @Test
    void scopeKeys_isOnePerRequest_andRefusedOnceAnswered() {
        Listening in = listen();
        ConnectionRequest r = request(in);
        KeyScope first = r.scopeKeys();
        assertSame(first, r.scopeKeys());
        r.reject();
        first.close();
        assertTrue(((ScopedDomain) first).nativeClosed(), "a rejected request's scope closes with its hold");
        assertThrows(IllegalStateException.class, r::scopeKeys);
    }

    @Test
    void scopedConnections_leaveNoFileDescriptorsBehind() throws IOException {
        Listening in = listen();
        // One first, so that what stays for the transport's life (the loop's event queue) is counted before.
        Accepted warm = accept(in, true, (byte) 1);
        long before = openFds();
        for (int i = 0; i < 16; i++) {
            Accepted a = accept(in, true, (byte) i);
            end(a);
            assertTrue(((ScopedDomain) a.scope()).nativeClosed());
        }
        assertEquals(before, openFds(), "file descriptors left behind by 16 scoped connections");
        assertNotNull(warm);
    }

    @Test
    void tcp_postsFromTheTransportsRegions_withoutRegisteringThemInTheConnectionsDomain() {
        // No FI_MR_LOCAL on tcp: a scoped connection's posts pass the instance's descriptors as
        // they are, so nothing of the transport's is registered again per connection (verbs does:
        // FabricVerbsScopedKeysTest).
        FabricTransport t = serverTransport();
        assertFalse(t.needsLocalDescriptors());
        Listening in = listen();
        LocalRegion target = region(client, 4096, RegionAccess.WRITE_DST);
        Accepted a = accept(in, true, (byte) 0x11);
        RemoteRegion dst = closeLater(server.remoteRegion(target.descriptor()));
        LocalRegion src = region(server, 64, RegionAccess.WRITE_SRC);
        post("server write", () -> a.server().connection().write(dst, 0, src, 0, 64, 1, true));
        assertTrue(await(a.server(), 1).isSuccess());
        assertEquals(0, t.scopedLocalRegistrations());
        assertEquals(0, ((FabricLocalRegion) src).scopedRegistrations());
    }

    @Test
    void aLocalRegistration_inAClosedScope_failsWithTheReason_andTheRegionGoesOn() {
        // The verbs path (ScopedLocalMr) at its edges, on tcp's domains: a post that would need
        // the region registered in a scope already closed fails with a clear error, not a crash.
        Listening in = listen();
        ConnectionRequest r = request(in);
        ScopedDomain scope = (ScopedDomain) r.scopeKeys();
        r.reject();
        scope.close();
        FabricLocalRegion src = (FabricLocalRegion) region(server, 64, RegionAccess.WRITE_SRC);
        io.cqflux.core.ResourceClosedException e = assertThrows(io.cqflux.core.ResourceClosedException.class,
                () -> src.descIn(scope));
        assertTrue(e.getMessage().contains("key scope of") && e.getMessage().contains("cannot be registered"),
                e::getMessage);
        assertEquals(0, src.scopedRegistrations());
        assertTrue(src.isOpen());
    }

    @Test
    void localRegistrations_closeWithTheirRegionOrTheirScope_onceEach_evenAtOnce() throws Exception {
        FabricTransport t = serverTransport();
        Listening in = listen();
        long closeFailures = FabricLibrary.closeFailures();
        for (int i = 0; i < 16; i++) {
            Accepted a = accept(in, true, (byte) i);
            ScopedDomain scope = (ScopedDomain) a.scope();
            FabricLocalRegion src = (FabricLocalRegion) server.register(arena.allocate(4096, 4096),
                    EnumSet.of(RegionAccess.WRITE_SRC, RegionAccess.RECV));
            assertSame(src.descIn(scope), src.descIn(scope), "registered once, then looked up");
            assertEquals(1, t.scopedLocalRegistrations());
            assertEquals(1, scope.localRegistrations());
            a.region().close();
            pump.remove(a.server());
            pump.remove(a.client());
            // The region and the scope's last child close on two threads at once (odd rounds), or
            // the region first and then the scope (even rounds).
            Runnable closeRegion = src::close;
            Runnable closeConnection = () -> a.server().connection().close();
            if (i % 2 == 0) {
                closeRegion.run();
                assertEquals(0, t.scopedLocalRegistrations(), "the region's close left its registration");
                assertFalse(scope.nativeClosed());
                closeConnection.run();
            } else {
                atOnce(closeRegion, closeConnection);
            }
            a.client().connection().close();
            assertTrue(scope.nativeClosed());
            assertEquals(0, t.scopedLocalRegistrations(), "round " + i);
            assertEquals(0, src.scopedRegistrations());
        }
        assertEquals(closeFailures, FabricLibrary.closeFailures(), "an fi_close failed: twice, or a domain before"
                + " a registration in it");
    }

    @Test
    void aLocalRegistration_askedOnFourThreadsAtOnce_isKeptOnce_andTheOthersAreClosed() throws Exception {
        // The registration runs under no lock (FabricLocalRegion#registerIn): threads that made one
        // at once keep the first and close theirs, and every caller gets the kept one's descriptor.
        // The hook holds each thread after its registration until all four made one, so that the
        // four collide in every round.
        FabricTransport t = serverTransport();
        Listening in = listen();
        Accepted a = accept(in, true, (byte) 1);
        ScopedDomain scope = (ScopedDomain) a.scope();
        long closeFailures = FabricLibrary.closeFailures();
        for (int round = 0; round < 8; round++) {
            FabricLocalRegion src = (FabricLocalRegion) server.register(arena.allocate(4096, 4096),
                    EnumSet.of(RegionAccess.WRITE_SRC));
            int n = 4;
            java.util.concurrent.CyclicBarrier allMade = new java.util.concurrent.CyclicBarrier(n);
            java.util.concurrent.atomic.AtomicInteger made = new java.util.concurrent.atomic.AtomicInteger();
            FabricLocalRegion.afterScopedRegistrationForTests = (region, into) -> {
                if (region == src && into == scope) {
                    made.incrementAndGet();
                    try {
                        allMade.await(DEADLINE.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
                    } catch (Exception e) {
                        throw new AssertionError("the four registering threads did not all arrive", e);
                    }
                }
            };
            java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
            long[] got = new long[n];
            Throwable[] failed = new Throwable[n];
            Thread[] threads = new Thread[n];
            for (int i = 0; i < n; i++) {
                int k = i;
                threads[i] = Thread.ofPlatform().start(() -> {
                    awaitQuietly(go);
                    try {
                        got[k] = src.descIn(scope).address();
                    } catch (Throwable e) {
                        failed[k] = e;
                    }
                });
            }
            go.countDown();
            try {
                for (Thread x : threads) {
                    x.join();
                }
            } finally {
                FabricLocalRegion.afterScopedRegistrationForTests = null;
            }
            for (int i = 0; i < n; i++) {
                assertNull(failed[i], "thread " + i + " of round " + round);
                assertEquals(got[0], got[i], "thread " + i + " got another registration's descriptor");
            }
            assertEquals(n, made.get(), "registrations made at once, round " + round);
            assertEquals(1, src.scopedRegistrations(), "round " + round);
            assertEquals(1, scope.localRegistrations(), "round " + round);
            assertEquals(1, t.scopedLocalRegistrations(), "registrations not kept were left open, round " + round);
            src.close();
            assertEquals(0, t.scopedLocalRegistrations());
            assertEquals(0, scope.localRegistrations());
        }
        assertEquals(closeFailures, FabricLibrary.closeFailures(), "an fi_close failed");
    }

    @Test
    void aLocalRegistration_whoseRegionClosesWhileItIsMade_failsNamingTheClose_andLeavesNothing() {
        // FabricLocalRegion#registerIn: the region closes between fi_mr_reg and keeping the
        // registration; the registration made is closed, not kept, and the domain goes on.
        FabricTransport t = serverTransport();
        Listening in = listen();
        Accepted a = accept(in, true, (byte) 1);
        ScopedDomain scope = (ScopedDomain) a.scope();
        long closeFailures = FabricLibrary.closeFailures();
        FabricLocalRegion src = (FabricLocalRegion) server.register(arena.allocate(4096, 4096),
                EnumSet.of(RegionAccess.WRITE_SRC));
        int[] inHook = new int[1];
        io.cqflux.core.ResourceClosedException e = descInFails(src, scope, () -> {
            inHook[0]++;
            assertEquals(1, t.scopedLocalRegistrations(), "the registration was not made before the hook");
            src.close();
        });
        assertEquals(1, inHook[0], "the hook did not run once");
        assertTrue(e.getMessage().contains("was closed while it was registered in the " + scope), e::getMessage);
        assertFalse(src.isOpen());
        assertEquals(0, src.scopedRegistrations());
        assertEquals(0, scope.localRegistrations());
        assertEquals(0, t.scopedLocalRegistrations(), "the registration made was left open");
        assertFalse(scope.nativeClosed(), "the domain closed with a region of the transport's");
        assertEquals(closeFailures, FabricLibrary.closeFailures(), "an fi_close failed");
        // The connection still works through its domain.
        RemoteRegion dst = clientTarget();
        LocalRegion other = region(server, 64, RegionAccess.WRITE_SRC);
        post("server write", () -> a.server().connection().write(dst, 0, other, 0, 64, 1, true));
        assertTrue(await(a.server(), 1).isSuccess());
    }

    @Test
    void aLocalRegistration_whoseConnectionClosesWhileItIsMade_holdsTheDomainOpen_thenClosesWithIt() {
        // FabricLocalRegion#registerIn: the scope's last child (the connection) closes while the
        // hold of ScopedDomain#holdForLocal is out; the domain closes when the hold is given back,
        // and closes the registration kept in it first.
        FabricTransport t = serverTransport();
        Listening in = listen();
        Accepted a = accept(in, true, (byte) 1);
        ScopedDomain scope = (ScopedDomain) a.scope();
        a.region().close(); // the connection is the scope's last child
        pump.remove(a.server());
        pump.remove(a.client());
        long closeFailures = FabricLibrary.closeFailures();
        FabricLocalRegion src = (FabricLocalRegion) server.register(arena.allocate(4096, 4096),
                EnumSet.of(RegionAccess.WRITE_SRC));
        boolean[] openInHook = new boolean[2];
        io.cqflux.core.ResourceClosedException e = descInFails(src, scope, () -> {
            a.server().connection().close();
            openInHook[0] = true;
            openInHook[1] = !scope.nativeClosed();
        });
        assertTrue(openInHook[0], "the hook did not run");
        assertTrue(openInHook[1], "the domain closed under the registration's hold");
        assertTrue(e.getMessage().contains("is closed"), e::getMessage);
        assertTrue(scope.nativeClosed(), "the domain outlived the hold given back after its last child");
        assertEquals(0, scope.localRegistrations());
        assertEquals(0, src.scopedRegistrations(), "the domain's close left its registration in the region");
        assertEquals(0, t.scopedLocalRegistrations(), "the registration kept was not closed by the domain");
        assertTrue(src.isOpen(), "the region closed with the domain");
        assertThrows(io.cqflux.core.ResourceClosedException.class, () -> src.descIn(scope));
        src.close();
        assertEquals(0, t.scopedLocalRegistrations());
        assertEquals(closeFailures, FabricLibrary.closeFailures(), "an fi_close failed");
    }

    @Test
    void scopedKeys_areOfferedOnTcpAndVerbsOnly_andAnotherProviderIsRefused_namingItAndWhy() {
        assertTrue(ProviderProfile.scopedKeysMeasured("tcp"));
        assertTrue(ProviderProfile.scopedKeysMeasured("verbs"));
        for (String p : new String[] {"sockets", "psm3", "shm", "ofi_rxm"}) {
            assertFalse(ProviderProfile.scopedKeysMeasured(p), p);
            String why = FabricTransport.scopedKeysRefusal(p);
            assertTrue(why.contains("provider " + p + " ") && why.contains("not measured")
                    && why.contains("tcp and verbs only"), why);
        }
    }

    @Test
    void sockets_offersNoScopedKeys_andRefusesThemNamingItself() {
        // A provider other than tcp and verbs, opened for real (sockets is on the host, as
        // CompletionGroupTest relies on too): the capability is absent and the refusal names it.
        try (Transport sockets = Fabric.open("sockets", LOOPBACK)) {
            assertEquals("fabric/sockets", sockets.name());
            assertFalse(sockets.capabilities().contains(Capability.CONNECTION_SCOPED_KEYS),
                    sockets.capabilities()::toString);
            String why = sockets.connectionScopedKeysRefusal();
            assertNotNull(why, "no refusal on sockets");
            assertTrue(why.contains("provider sockets ") && why.contains("not measured"), why);
        }
    }

    /**
     * {@return the failure of registering {@code src} in {@code scope} with {@code hook} run right
     * after the registration is made (FabricLocalRegion#registerIn), the hook removed after}
     */
    private static io.cqflux.core.ResourceClosedException descInFails(FabricLocalRegion src, ScopedDomain scope,
                                                                      Runnable hook) {
        FabricLocalRegion.afterScopedRegistrationForTests = (region, into) -> {
            if (region == src && into == scope) {
                hook.run();
            }
        };
        try {
            return assertThrows(io.cqflux.core.ResourceClosedException.class, () -> src.descIn(scope));
        } finally {
            FabricLocalRegion.afterScopedRegistrationForTests = null;
        }
    }
}
