package io.cqflux.transport.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.CompletionRecord;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.testing.TransportFixture;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * fi_trywait is asked again only when it has to be (TrywaitAnswer): after a read of the queue,
 * after a post on its endpoint (a CQ), after fi_shutdown, and once an answer is older than the
 * trust interval; an untouched queue answers from its last call. Against the real library (1.17,
 * whose providers the cache was read for): the server side is pumped by the fixture, the
 * client's queues by the test, with a trust interval of a minute where a test counts calls, so
 * that a slow moment of the machine cannot expire an answer between two of its lines.
 */
class FabricTrywaitTest extends TransportFixture {

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
    void completionQueue_asksTrywaitAgainOnlyAfterAReadOrAPost_andStillDeliversWhatCame() {
        Writer w = writer();
        Client k = w.k();
        FabricCompletionQueue cq = k.cq();

        int calls = cq.trywaitAnswer().calls();
        assertTrue(cq.prepareToSleep());
        assertTrue(cq.prepareToSleep());
        assertEquals(calls, cq.trywaitAnswer().calls(), "an untouched queue answers from its last fi_trywait");

        assertEquals(0, k.poll());
        cq.prepareToSleep();
        assertEquals(calls + 1, cq.trywaitAnswer().calls(), "a read asks fi_trywait again");

        assertTrue(w.write(0, 77));
        cq.prepareToSleep();
        assertEquals(calls + 2, cq.trywaitAnswer().calls(), "a post asks fi_trywait again");
        // The write completes although prepareToSleep may have said "sleep": reading until it
        // comes (the fd would have woken a loop) finds it.
        pump.until("the write's completion", DEADLINE, () -> k.poll() >= 0 && k.saw(77));
        assertTrue(k.seen().stream().filter(r -> r.context() == 77).allMatch(CompletionRecord::isSuccess),
                k.seen()::toString);
    }

    @Test
    void afterFiSuccess_theWaitFdSignalsWhatComesNext_soACachedAnswerLosesNothing() {
        // What the cache rests on for tcp (TrywaitAnswer): once fi_trywait said FI_SUCCESS, a
        // completion that comes later makes the wait fd readable, with no read of the queue.
        Writer w = writer();
        Client k = w.k();
        FabricCompletionQueue cq = k.cq();

        assertTrue(w.write(0, 88));
        // Delivery complete needs the server's acknowledgement, and the server has not run since.
        assertTrue(cq.prepareToSleep(), "nothing can have completed yet");
        int calls = cq.trywaitAnswer().calls();
        assertTrue(cq.prepareToSleep(), "an untouched queue's answer stands");
        assertEquals(calls, cq.trywaitAnswer().calls(), "and was not asked again");
        pump.until("the client CQ's fd readable, the queue unread", DEADLINE, () -> readable(cq.fd()));
        assertFalse(k.saw(88), "nothing read it yet");
        pump.until("the write's completion", DEADLINE, () -> k.poll() >= 0 && k.saw(88));
    }

    @Test
    void postingAReceive_asksTrywaitAgain_andTheMessageThatComesWakesTheQueue() {
        LocalRegion rx = region(client, 4096, RegionAccess.RECV);
        LocalRegion tx = region(server, 4096, RegionAccess.SEND);
        Pair p = connect(new byte[0], new byte[0]);
        Client k = takeClient(p);
        FabricCompletionQueue cq = k.cq();
        int calls = cq.trywaitAnswer().calls();
        assertTrue(cq.prepareToSleep(), "an idle queue's answer stands");
        assertEquals(calls, cq.trywaitAnswer().calls());

        assertTrue(k.c().receive(rx, 0, 64, 91));
        assertTrue(cq.prepareToSleep(), "nothing was sent yet");
        assertEquals(calls + 1, cq.trywaitAnswer().calls(), "a receive post asks fi_trywait again");
        // (A message that arrives before its receive is posted was no case for the cache in this
        // test's earlier form: while tcp held it, fi_trywait said -FI_EAGAIN, so no answer stood.)
        assertTrue(p.server().send(tx, 0, 8, 90, true));
        pump.until("the client CQ's fd readable, the queue unread", DEADLINE, () -> readable(cq.fd()));
        pump.until("the receive's completion, and the send's", DEADLINE, () -> k.poll() >= 0 && k.saw(91)
                && p.serverSide().completions.stream().anyMatch(r -> r.context() == 90));
    }

    @Test
    void anUntouchedQueuesAnswer_standsForAtMostTheTrustInterval() throws InterruptedException {
        Client k = takeClient(connect(new byte[0], new byte[0]));
        FabricCompletionQueue cq = k.cq();
        cq.trywaitAnswer().trustFor(TrywaitAnswer.TRUST_NANOS);
        assertEquals(0, k.poll());
        assertTrue(cq.prepareToSleep(), "an idle queue");
        int calls = cq.trywaitAnswer().calls();
        Thread.sleep(TrywaitAnswer.TRUST_NANOS / 1_000_000 + 2);
        assertTrue(cq.prepareToSleep());
        assertEquals(calls + 1, cq.trywaitAnswer().calls(), "an answer older than the trust interval is asked again");
    }

    @Test
    void quiet_holdsWhileNothingTouchesTheQueue_andATargetsQueueSignalsTheBytesOfAWrite() throws InterruptedException {
        // CompletionQueue.quiet(): what a spinning loop skips polls on. The last fi_trywait said
        // FI_SUCCESS and nothing touched the queue since: a read, a post or a shutdown ends it;
        // its age does not (a spinning loop asks prepareToSleep every 100 µs, which renews it).
        Writer w = writer();
        Client k = w.k();
        FabricCompletionQueue cq = k.cq();
        assertTrue(cq.canBeQuiet(), "tcp on libfabric " + libfabric());
        assertTrue(cq.quiet(), "an idle queue whose fi_trywait said FI_SUCCESS");
        assertEquals(0, k.poll());
        assertFalse(cq.quiet(), "a read ends it");
        assertTrue(cq.prepareToSleep());
        assertTrue(cq.quiet());
        assertTrue(w.write(0, 93));
        assertFalse(cq.quiet(), "a post ends it");
        pump.until("the write's completion", DEADLINE, () -> k.poll() >= 0 && k.saw(93));
        pump.until("the client's CQ quiet again", DEADLINE, () -> k.poll() >= 0 && cq.prepareToSleep() && cq.quiet());

        // The target of a write gets no completion, only bytes on its socket: once its queue is
        // quiet, those bytes must make its fd readable, or a spinning loop would never poll it.
        FabricConnection s = (FabricConnection) w.pair().server();
        FabricCompletionQueue scq = (FabricCompletionQueue) s.completionQueues().get(0);
        pump.remove(w.pair().serverSide());
        scq.trywaitAnswer().trustFor(MINUTE);
        MemorySegment scratch = arena.allocate(16L * CompletionQueue.MAX_ENTRY_BYTES, 64);
        pump.until("the server's CQ quiet", DEADLINE,
                () -> scq.poll(scratch, 16, r -> { }) >= 0 && scq.prepareToSleep() && scq.quiet());
        assertFalse(readable(scq.fd()), "a quiet queue's fd is not readable while nothing comes");
        assertTrue(w.write(8, 94));
        pump.until("the target's fd readable, its queue unpolled", DEADLINE, () -> readable(scq.fd()));
        assertTrue(scq.quiet(), "the answer still stands: the loop learns of the bytes from the fd");
        // Polled (as the loop does for a readable quiet queue), the target acknowledges the write.
        pump.until("the write's completion", DEADLINE,
                () -> scq.poll(scratch, 16, r -> { }) >= 0 && k.poll() >= 0 && k.saw(94));

        cq.trywaitAnswer().trustFor(TrywaitAnswer.TRUST_NANOS);
        pump.until("the client's CQ quiet again", DEADLINE, () -> k.poll() >= 0 && cq.prepareToSleep() && cq.quiet());
        Thread.sleep(TrywaitAnswer.TRUST_NANOS / 1_000_000 + 2);
        assertTrue(cq.quiet(), "age alone does not end it: the loop's next prepareToSleep renews the answer");
        int calls = cq.trywaitAnswer().calls();
        assertTrue(cq.prepareToSleep());
        assertEquals(calls + 1, cq.trywaitAnswer().calls(), "an answer older than the trust interval is asked again");
        assertTrue(cq.quiet());
        k.c().disconnect();
        assertFalse(cq.quiet(), "a shutdown ends it");
    }

    @Test
    void aTargetsFiSuccess_standsUntilTouched_whileAReadResponseLargerThanTheSocketBuffersGoesOut() {
        // What a loop that watches touches rests on (TrywaitAnswer): after FI_SUCCESS the target's
        // queue is polled and asked again only when its fd is readable, never because time passed.
        // A 16 MiB read makes the target send a response far larger than loopback's socket
        // buffers: the provider starts it, cannot finish it, and must signal the fd (or have
        // POLLOUT armed) for every part, or the read never completes.
        long size = 16L << 20;
        LocalRegion source = region(server, size, RegionAccess.READ_SRC);
        Pair p = connect(new byte[0], source.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        LocalRegion dst = region(client, size, RegionAccess.READ_DST);
        FabricConnection s = (FabricConnection) p.server();
        FabricCompletionQueue scq = (FabricCompletionQueue) s.completionQueues().get(0);
        pump.remove(p.serverSide());
        MemorySegment scratch = arena.allocate(16L * CompletionQueue.MAX_ENTRY_BYTES, 64);
        pump.until("the target's CQ settled", DEADLINE, () -> scq.poll(scratch, 16, r -> { }) >= 0 && scq.prepareToSleep());
        int calls = scq.trywaitAnswer().calls();

        assertTrue(p.client().read(dst, 0, remote, 0, size, 95, true));
        int[] wakeups = {0};
        boolean[] standing = {true};
        pump.until("the 16 MiB read's completion, the target woken only by its fd", DEADLINE, () -> {
            if (!standing[0] || readable(scq.fd())) {
                if (standing[0]) {
                    wakeups[0]++;
                }
                scq.poll(scratch, 16, r -> { }); // a read: the answer is cleared
                standing[0] = scq.prepareToSleep();
            }
            return p.clientSide().completions.stream().anyMatch(r -> r.context() == 95);
        });
        assertTrue(p.clientSide().completions.stream().filter(r -> r.context() == 95)
                .allMatch(CompletionRecord::isSuccess), p.clientSide().completions::toString);
        assertTrue(wakeups[0] > 1, "the response went out over several wake-ups by the fd: " + wakeups[0]);
        assertTrue(scq.trywaitAnswer().calls() > calls, "fi_trywait asked after each wake-up");
    }

    @Test
    void eventQueue_asksTrywaitAgainOnlyAfterAReadOrAShutdown() {
        Pair p = connect(new byte[0], new byte[0]);
        FabricConnection c = (FabricConnection) p.client();
        FabricEventQueue eq = c.eventQueue();
        assertTrue(eq.trywaitAnswer().caches(), "libfabric " + libfabric() + ": tcp's EQ answers are cached on 1.17 only");
        eq.trywaitAnswer().trustFor(MINUTE);
        pump.remove(p.clientSide());
        pump.until("the client's EQ is empty", DEADLINE, () -> {
            while (c.events().nextEvent() != null) {
                // the fixture saw ESTABLISHED already; nothing else is expected
            }
            return eq.trywait();
        });
        int calls = eq.trywaitAnswer().calls();
        assertTrue(eq.trywait());
        assertTrue(eq.trywait());
        assertEquals(calls, eq.trywaitAnswer().calls(), "an untouched queue answers from its last fi_trywait");

        assertEquals(FabricEventQueue.NONE, eq.read());
        eq.trywait();
        assertEquals(calls + 1, eq.trywaitAnswer().calls(), "a read asks fi_trywait again");

        c.disconnect();
        eq.trywait();
        assertEquals(calls + 2, eq.trywaitAnswer().calls(), "fi_shutdown asks fi_trywait again");
        assertFalse(c.events().prepareToSleep(), "the CLOSED that disconnect() reports keeps the loop awake");
    }

    private static final MethodHandle POLL = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("poll").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));

    /** {@return whether {@code fd} is readable now: poll(2), a struct pollfd of {fd, POLLIN}, timeout 0} */
    private static boolean readable(int fd) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pfd = a.allocate(8, 4);
            pfd.set(ValueLayout.JAVA_INT, 0, fd);
            pfd.set(ValueLayout.JAVA_SHORT, 4, (short) 1); // POLLIN
            int n = (int) POLL.invokeExact(pfd, 1L, 0);
            return n > 0 && (pfd.get(ValueLayout.JAVA_SHORT, 6) & 1) != 0;
        } catch (Throwable t) {
            throw new AssertionError(t);
        }
    }

    /** A connection whose client writes into the server's region; the client's end is the test's. */
    private record Writer(Pair pair, Client k, RemoteRegion remote, LocalRegion src) {
        /** Posts an 8-byte write (DELIVERY) at {@code offset} of the server's region; {@return whether it was posted} */
        boolean write(long offset, long context) {
            return k.c().write(remote, offset, src, 0, 8, context, true);
        }
    }

    private Writer writer() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        return new Writer(p, takeClient(p), remote, src);
    }

    /** The client's end, which the test reads itself, and what its CQ delivered. */
    private record Client(FabricConnection c, FabricCompletionQueue cq, MemorySegment scratch,
                          List<CompletionRecord> seen) {
        int poll() {
            return cq.poll(scratch, 16, r -> seen.add(r.snapshot()));
        }

        boolean saw(long context) {
            return seen.stream().anyMatch(r -> r.context() == context);
        }
    }

    /**
     * Takes the client's end off the pump and reads its CQ until fi_trywait says it is safe to
     * block.
     */
    private Client takeClient(Pair p) {
        FabricConnection c = (FabricConnection) p.client();
        pump.remove(p.clientSide());
        Client k = new Client(c, (FabricCompletionQueue) c.completionQueues().get(0),
                arena.allocate(16L * CompletionQueue.MAX_ENTRY_BYTES, 64), new ArrayList<>());
        assertTrue(k.cq().trywaitAnswer().caches(), "libfabric " + libfabric() + ": tcp's CQ answers are cached on 1.17 only");
        k.cq().trywaitAnswer().trustFor(MINUTE);
        pump.until("the client's CQ is empty", DEADLINE, () -> k.poll() >= 0 && k.cq().prepareToSleep());
        return k;
    }

    private static final long MINUTE = java.time.Duration.ofMinutes(1).toNanos();

    /** {@return the loaded libfabric's version, major.minor} */
    private static String libfabric() {
        int v = FabricLibrary.libraryVersion();
        return (v >>> 16) + "." + (v & 0xffff);
    }
}
