package io.cqflux.benchmarks;

import io.cqflux.core.Capability;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.FlushType;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.internal.Checks;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.Listener;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.spi.TransportOptions;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A transport with an "instant NIC": a test double for benchmarks of the Java path of an
 * operation (the reactive layer, the in-flight table, the event loop's drain) with no native
 * library behind it. Both ends of a connection live in one JVM.
 *
 * <p><b>What it does.</b> Every post completes at once: the data moves with
 * {@link MemorySegment#copy} into the peer's registered memory (so the reactive layer's own
 * control words, receive credits and goodbye, work as over a real transport), and the work
 * request's completion goes onto the connection's in-memory completion ring. The completion
 * queue's {@link CompletionQueue#poll} copies ring entries into the loop's scratch array (as a
 * native drain fills it) and hands the sink a flyweight that reads them back. It keeps the SPI's
 * contract: an unsignaled post produces a completion only on error, a durable write's two work
 * requests complete in order, a send consumes one of the peer's posted receives (a send that
 * finds none waits for the next, as RNR retries would), and a write with immediate data consumes
 * one too ({@code ibv_post_send(3)} IBV_WR_RDMA_WRITE_WITH_IMM).
 *
 * <p><b>Signalling.</b> The ring is written and read by the connection's own loop thread only:
 * posts happen there. Like a libfabric wait fd, its eventfd is not written for those: the
 * loop's {@link CompletionQueue#prepareToSleep()} ({@code fi_trywait(3)}'s role) says "not yet"
 * while the ring holds entries, so a loop never sleeps on a ready completion and no system call
 * is paid per operation. What another thread produces (the peer's send into a receive of this
 * side, connection events, connection requests) goes through a concurrent queue and an eventfd
 * write, so every wait strategy behaves as over a real transport.
 *
 * <p>Not modelled: errors of the network (it never loses a work request), queue-pair depth
 * (the reactive layer's credits bound it; an overrun of the ring throws, as a CQ overrun is
 * fatal for the queue), {@link FlushType#PERSISTENT} (refused at registration, as on fabric).
 *
 * <p><b>Parts.</b> This class is the transport's face and the drain benchmark's gate; the rest
 * sits beside it: {@link SynRegion} and {@link SynRemote} (registered memory and the descriptors
 * that name it), {@link SynListener} and {@link SynRequest} (ports and connection requests),
 * {@link SynConnection} and {@link SynEvents} (one end of a pair, its posts and its events),
 * {@link SynQueue} (the completion ring) and {@link SynSignal} (the eventfd they wake a loop
 * with).
 */
final class SyntheticTransport implements Transport {

    private static final Set<Capability> CAPABILITIES = EnumSet.of(Capability.RMA, Capability.WRITE_WITH_IMMEDIATE,
            Capability.MESSAGES, Capability.SEND_WITH_IMMEDIATE, Capability.ATOMIC_WRITE, Capability.FLUSH_VISIBILITY);
    static final int MAX_PRIVATE_DATA = 1024;
    private static final long MAX_MESSAGE = 1L << 30;

    private final InetAddress localAddress;

    SyntheticTransport(TransportOptions options) {
        this.localAddress = options.localAddress();
    }

    /** The address connections of this transport report as their own. */
    InetAddress localAddress() {
        return localAddress;
    }

    @Override
    public String name() {
        return SyntheticTransportProvider.NAME;
    }

    @Override
    public Set<Capability> capabilities() {
        return CAPABILITIES;
    }

    @Override
    public long maxMessageSize() {
        return MAX_MESSAGE;
    }

    @Override
    public int maxConnectPrivateData() {
        return MAX_PRIVATE_DATA;
    }

    @Override
    public int maxAcceptPrivateData() {
        return MAX_PRIVATE_DATA;
    }

    @Override
    public LocalRegion register(MemorySegment memory, Set<RegionAccess> access) {
        if (access.isEmpty()) {
            throw new IllegalArgumentException("access must not be empty");
        }
        Checks.registerFlushAccess(name(), access, EnumSet.of(FlushType.VISIBILITY),
                "the synthetic transport models no persistent memory");
        return SynRegion.register(memory, access);
    }

    @Override
    public RemoteRegion remoteRegion(byte[] descriptor) {
        return SynRemote.fromDescriptor(descriptor);
    }

    @Override
    public RemoteRegion remoteRegion(byte[] rawDescriptor, Set<RegionAccess> access) {
        return SynRemote.fromRawDescriptor(rawDescriptor, access);
    }

    @Override
    public Listener listen(InetSocketAddress address, ConnectionConfig config) {
        return SynListener.open(address, config);
    }

    @Override
    public Connection connect(InetSocketAddress address, ConnectionConfig config, byte[] privateData) {
        Checks.privateData(privateData, MAX_PRIVATE_DATA, "connect");
        SynConnection c = new SynConnection(this, config, address);
        SynListener l = SynListener.at(address.getPort());
        if (l == null || !l.offer(new SynRequest(l, c, privateData.clone()))) {
            c.fail(ConnectionEvent.REJECTED);
        }
        return c;
    }

    @Override
    public void close() {
        // Nothing native; regions, listeners and connections close themselves.
    }

    // ------------------------------------------------------------------ the drain benchmark's gate

    /** While set, every synthetic completion queue in the JVM holds its completions back. */
    static volatile boolean held;
    /** Set by a release: the next poll that delivers notes the time in {@link #firstPollAfterRelease}. */
    private static volatile boolean markNextPoll;
    /** {@code System.nanoTime()} on the loop at the first poll after the last release, or 0. */
    static volatile long firstPollAfterRelease;
    /** The open synthetic queues, which a release signals. */
    static final Set<SynQueue> QUEUES = ConcurrentHashMap.newKeySet();

    /**
     * Holds (or releases) the completions of every synthetic queue in the JVM: held, a queue's
     * poll delivers nothing and its loop may sleep; released, each queue's eventfd is written so
     * that a sleeping loop wakes and drains what piled up. For a benchmark that measures the
     * drain of completions that are all ready (JavaPathBenchmarks.drain); any thread.
     *
     * @param hold whether to hold
     */
    static void hold(boolean hold) {
        if (!hold) {
            firstPollAfterRelease = 0;
            markNextPoll = true;
        }
        held = hold;
        if (!hold) {
            for (SynQueue q : QUEUES) {
                q.wake();
            }
        }
    }

    /** Loop thread: a queue's poll that was not held back; the first after a release notes the time. */
    static void notePoll() {
        if (markNextPoll) {
            // The drain benchmark's start, taken by the loop itself: the time the benchmark
            // thread needs to be scheduled is not the drain's.
            markNextPoll = false;
            firstPollAfterRelease = System.nanoTime();
        }
    }
}
