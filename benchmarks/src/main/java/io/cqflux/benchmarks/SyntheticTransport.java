package io.cqflux.benchmarks;

import io.cqflux.core.Capability;
import io.cqflux.core.Completion;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.FlushType;
import io.cqflux.core.Opcode;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.internal.Checks;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.CompletionSink;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.EventChannel;
import io.cqflux.core.spi.Listener;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.spi.TransportOptions;
import io.cqflux.epoll.ffm.libc_h;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

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
 */
final class SyntheticTransport implements Transport {

    private static final Set<Capability> CAPABILITIES = EnumSet.of(Capability.RMA, Capability.WRITE_WITH_IMMEDIATE,
            Capability.MESSAGES, Capability.SEND_WITH_IMMEDIATE, Capability.ATOMIC_WRITE, Capability.FLUSH_VISIBILITY);
    private static final int MAX_PRIVATE_DATA = 1024;
    private static final long MAX_MESSAGE = 1L << 30;

    /** Registered regions of every synthetic transport in the JVM, by id (descriptors name them). */
    private static final ConcurrentHashMap<Long, SynRegion> REGIONS = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_REGION = new AtomicLong();
    /** Listening ports of every synthetic transport in the JVM. */
    private static final ConcurrentHashMap<Integer, SynListener> LISTENERS = new ConcurrentHashMap<>();
    private static final AtomicInteger NEXT_PORT = new AtomicInteger(40_000);
    private static final AtomicInteger NEXT_CONNECTION = new AtomicInteger();

    private final InetAddress localAddress;

    SyntheticTransport(TransportOptions options) {
        this.localAddress = options.localAddress();
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
        SynRegion r = new SynRegion(NEXT_REGION.incrementAndGet(), memory, EnumSet.copyOf(access));
        REGIONS.put(r.id, r);
        return r;
    }

    @Override
    public RemoteRegion remoteRegion(byte[] descriptor) {
        if (descriptor == null || descriptor.length != 20) {
            throw new IllegalArgumentException("synthetic region descriptor of "
                    + (descriptor == null ? "null" : descriptor.length + " bytes") + ", expected 20");
        }
        ByteBuffer b = ByteBuffer.wrap(descriptor);
        long id = b.getLong();
        long size = b.getLong();
        int bits = b.getInt();
        EnumSet<RegionAccess> access = EnumSet.noneOf(RegionAccess.class);
        for (RegionAccess a : RegionAccess.values()) {
            if ((bits & a.bit()) != 0) {
                access.add(a);
            }
        }
        return remote(id, size, access);
    }

    @Override
    public RemoteRegion remoteRegion(byte[] rawDescriptor, Set<RegionAccess> access) {
        if (rawDescriptor == null || rawDescriptor.length != 16) {
            throw new IllegalArgumentException("synthetic raw descriptor of "
                    + (rawDescriptor == null ? "null" : rawDescriptor.length + " bytes") + ", expected 16");
        }
        if (access.isEmpty()) {
            throw new IllegalArgumentException("access must not be empty");
        }
        ByteBuffer b = ByteBuffer.wrap(rawDescriptor);
        return remote(b.getLong(), b.getLong(), EnumSet.copyOf(access));
    }

    private static SynRemote remote(long id, long size, Set<RegionAccess> access) {
        SynRegion target = REGIONS.get(id);
        if (target == null || size < 0 || size > target.segment.byteSize()) {
            throw new IllegalArgumentException("synthetic region " + id + " of " + size
                    + " bytes is not registered in this JVM");
        }
        return new SynRemote(target, size, access);
    }

    @Override
    public Listener listen(InetSocketAddress address, ConnectionConfig config) {
        int port = address.getPort() == 0 ? NEXT_PORT.incrementAndGet() : address.getPort();
        SynListener l = new SynListener(new InetSocketAddress(address.getAddress(), port), config);
        if (LISTENERS.putIfAbsent(port, l) != null) {
            l.signal.close();
            throw new IllegalStateException("synthetic port " + port + " is already listening");
        }
        return l;
    }

    @Override
    public Connection connect(InetSocketAddress address, ConnectionConfig config, byte[] privateData) {
        Checks.privateData(privateData, MAX_PRIVATE_DATA, "connect");
        SynConnection c = new SynConnection(this, config, address);
        SynListener l = LISTENERS.get(address.getPort());
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
    private static volatile boolean held;
    /** Set by a release: the next poll that delivers notes the time in {@link #firstPollAfterRelease}. */
    private static volatile boolean markNextPoll;
    /** {@code System.nanoTime()} on the loop at the first poll after the last release, or 0. */
    static volatile long firstPollAfterRelease;
    private static final Set<SynQueue> QUEUES = ConcurrentHashMap.newKeySet();

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
                q.signal.signal();
            }
        }
    }

    // ------------------------------------------------------------------ eventfd

    /** An eventfd that other threads write to wake the loop; writes after close are dropped. */
    static final class Signal {
        private final Arena arena = Arena.ofShared();
        private final MemorySegment one;
        private final MemorySegment sink;
        private final int fd;
        private boolean closed;

        Signal() {
            // eventfd(2): a write adds to the counter and makes the fd readable, a read resets it.
            fd = libc_h.eventfd(0, libc_h.EFD_NONBLOCK() | libc_h.EFD_CLOEXEC());
            if (fd < 0) {
                arena.close();
                throw new IllegalStateException("eventfd(0, EFD_NONBLOCK|EFD_CLOEXEC) returned " + fd);
            }
            one = arena.allocate(ValueLayout.JAVA_LONG);
            one.set(ValueLayout.JAVA_LONG, 0, 1L);
            sink = arena.allocate(ValueLayout.JAVA_LONG);
        }

        int fd() {
            return fd;
        }

        /** Any thread; under the lock so that a closed (and perhaps reused) fd is never written. */
        synchronized void signal() {
            if (!closed) {
                libc_h.write(fd, one, 8L);
            }
        }

        /** Resets the counter; EAGAIN when nothing was written is fine. */
        synchronized void clear() {
            if (!closed) {
                libc_h.read(fd, sink, 8L);
            }
        }

        synchronized void close() {
            if (!closed) {
                closed = true;
                libc_h.close(fd);
                arena.close();
            }
        }
    }

    // ------------------------------------------------------------------ regions

    /** Registered local memory; its id is the descriptor peers use. */
    static final class SynRegion implements LocalRegion {
        final long id;
        final MemorySegment segment;
        private final Set<RegionAccess> access;
        volatile boolean open = true;

        SynRegion(long id, MemorySegment segment, Set<RegionAccess> access) {
            this.id = id;
            this.segment = segment;
            this.access = access;
        }

        @Override
        public MemorySegment segment() {
            return segment;
        }

        @Override
        public long size() {
            return segment.byteSize();
        }

        @Override
        public Set<RegionAccess> access() {
            return access;
        }

        @Override
        public byte[] descriptor() {
            return ByteBuffer.allocate(20).putLong(id).putLong(segment.byteSize()).putInt(RegionAccess.bits(access))
                    .array();
        }

        @Override
        public byte[] rawDescriptor() {
            return ByteBuffer.allocate(16).putLong(id).putLong(segment.byteSize()).array();
        }

        @Override
        public boolean isOpen() {
            return open;
        }

        @Override
        public void close() {
            open = false;
            REGIONS.remove(id, this);
        }
    }

    /** A peer's region: the registered region itself, reached in this JVM. */
    static final class SynRemote implements RemoteRegion {
        final SynRegion target;
        private final long size;
        private final Set<RegionAccess> access;
        private final Set<FlushType> flushTypes;

        SynRemote(SynRegion target, long size, Set<RegionAccess> access) {
            this.target = target;
            this.size = size;
            this.access = access;
            this.flushTypes = access.contains(RegionAccess.FLUSH_TYPE_VISIBILITY)
                    ? EnumSet.of(FlushType.VISIBILITY) : EnumSet.noneOf(FlushType.class);
        }

        @Override
        public long size() {
            return size;
        }

        @Override
        public Set<FlushType> flushTypes() {
            return flushTypes;
        }

        @Override
        public Set<RegionAccess> access() {
            return access;
        }

        @Override
        public void close() {
            // no native copy
        }
    }

    // ------------------------------------------------------------------ listening

    /** A listening port: requests queue here until the loop takes them. */
    static final class SynListener implements Listener {
        final InetSocketAddress address;
        final ConnectionConfig config;
        final Signal signal = new Signal();
        private final ConcurrentLinkedQueue<SynRequest> requests = new ConcurrentLinkedQueue<>();
        private volatile boolean closed;

        SynListener(InetSocketAddress address, ConnectionConfig config) {
            this.address = address;
            this.config = config;
        }

        boolean offer(SynRequest r) {
            if (closed) {
                return false;
            }
            requests.add(r);
            signal.signal();
            return true;
        }

        @Override
        public int fd() {
            return signal.fd();
        }

        @Override
        public InetSocketAddress address() {
            return address;
        }

        @Override
        public ConnectionRequest nextRequest() {
            SynRequest r = requests.poll();
            if (r == null) {
                signal.clear();
                r = requests.poll(); // one offered between the poll and the clear
            }
            return r;
        }

        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            LISTENERS.remove(address.getPort(), this);
            for (SynRequest r; (r = requests.poll()) != null; ) {
                r.reject();
            }
            signal.close();
        }
    }

    /** A client's request, answered once. */
    static final class SynRequest implements ConnectionRequest {
        private final SynListener listener;
        private final SynConnection client;
        private final byte[] data;
        private boolean answered;

        SynRequest(SynListener listener, SynConnection client, byte[] data) {
            this.listener = listener;
            this.client = client;
            this.data = data;
        }

        @Override
        public byte[] privateData() {
            return data.clone();
        }

        @Override
        public synchronized Connection accept(byte[] privateData) {
            if (answered) {
                throw new IllegalStateException("connection request already answered");
            }
            Checks.privateData(privateData, MAX_PRIVATE_DATA, "accept");
            answered = true;
            SynConnection server = new SynConnection(client.transport, listener.config, client.localAddress());
            SynConnection.pair(client, data, server, privateData.clone());
            return server;
        }

        @Override
        public synchronized void reject() {
            if (!answered) {
                answered = true;
                client.fail(ConnectionEvent.REJECTED);
            }
        }
    }

    // ------------------------------------------------------------------ connection

    /** One end of a pair; confined to its loop thread except where noted. */
    static final class SynConnection implements Connection {
        private static final int CONNECTING = 0;
        private static final int ESTABLISHED = 1;
        private static final int ENDED = 2;

        final SyntheticTransport transport;
        private final ConnectionConfig config;
        private final String description;
        private final InetSocketAddress peerAddress;
        private final SynQueue cq;
        private final SynEvents events = new SynEvents();
        private volatile int state = CONNECTING;
        private volatile SynConnection peer;
        private volatile byte[] peerData = new byte[0];
        private boolean closed;
        /** Receives posted and not yet consumed; guarded by {@code this} (the peer delivers into it). */
        private final ArrayDeque<long[]> receives = new ArrayDeque<>();
        private final ArrayDeque<LocalRegion> receiveRegions = new ArrayDeque<>();
        /** Messages that found no posted receive (RNR: they wait); guarded by {@code this}. */
        private final ArrayDeque<Message> unmatched = new ArrayDeque<>();

        SynConnection(SyntheticTransport transport, ConnectionConfig config, InetSocketAddress peerAddress) {
            this.transport = transport;
            this.config = config;
            this.peerAddress = peerAddress;
            this.description = "synthetic#" + NEXT_CONNECTION.incrementAndGet() + " " + transport.localAddress
                    .getHostAddress() + " -> " + peerAddress;
            int ring = config.completionQueueSize() + config.receiveQueueSize() + config.receiveCompletionQueueSize();
            this.cq = new SynQueue(Integer.highestOneBit(Math.max(ring, 2) - 1) << 1);
        }

        InetSocketAddress localAddress() {
            return new InetSocketAddress(transport.localAddress, 0);
        }

        static void pair(SynConnection client, byte[] requestData, SynConnection server, byte[] acceptData) {
            server.peer = client;
            server.peerData = requestData;
            client.peer = server;
            client.peerData = acceptData;
            // States first: a loop that handles ESTABLISHED may post at once.
            server.state = ESTABLISHED;
            server.events.add(ConnectionEvent.ESTABLISHED);
            if (client.state == CONNECTING) {
                client.state = ESTABLISHED;
                client.events.add(ConnectionEvent.ESTABLISHED);
            } else {
                server.peerEnded(); // the client gave up before the answer
            }
        }

        /** Any thread: the connection attempt failed with {@code event}. */
        void fail(ConnectionEvent event) {
            state = ENDED;
            events.add(event);
        }

        /** Any thread: the peer disconnected. */
        void peerEnded() {
            if (state != ENDED) {
                state = ENDED;
                events.add(ConnectionEvent.CLOSED);
            }
        }

        @Override
        public String description() {
            return description;
        }

        @Override
        public ConnectionConfig config() {
            return config;
        }

        @Override
        public EventChannel events() {
            return events;
        }

        @Override
        public byte[] peerPrivateData() {
            return peerData.clone();
        }

        @Override
        public List<CompletionQueue> completionQueues() {
            return List.of(cq);
        }

        private void requireEstablished() {
            if (closed) {
                throw new ResourceClosedException(description + " is closed");
            }
            if (state != ESTABLISHED) {
                throw new IllegalStateException(description + " is not connected: cannot post");
            }
        }

        @Override
        public boolean read(LocalRegion dst, long dstOffset, RemoteRegion src, long srcOffset, long length,
                            long context, boolean signaled) {
            Checks.read(transport, dst, dstOffset, src, srcOffset, length);
            requireEstablished();
            SynRegion from = ((SynRemote) src).target;
            CompletionStatus s = CompletionStatus.REM_ACCESS_ERR;
            if (from.open) {
                MemorySegment.copy(from.segment, srcOffset, dst.segment(), dstOffset, length);
                s = CompletionStatus.SUCCESS;
            }
            cq.complete(context, s, Opcode.READ, length, signaled);
            return true;
        }

        @Override
        public boolean write(RemoteRegion dst, long dstOffset, LocalRegion src, long srcOffset, long length,
                             long context, boolean signaled) {
            Checks.write(transport, dst, dstOffset, src, srcOffset, length);
            requireEstablished();
            cq.complete(context, copyTo(dst, dstOffset, src, srcOffset, length), Opcode.WRITE, length, signaled);
            return true;
        }

        private static CompletionStatus copyTo(RemoteRegion dst, long dstOffset, LocalRegion src, long srcOffset,
                                               long length) {
            SynRegion to = ((SynRemote) dst).target;
            if (!to.open) {
                return CompletionStatus.REM_ACCESS_ERR;
            }
            MemorySegment.copy(src.segment(), srcOffset, to.segment, dstOffset, length);
            return CompletionStatus.SUCCESS;
        }

        @Override
        public boolean writeWithImmediate(RemoteRegion dst, long dstOffset, LocalRegion src, long srcOffset,
                                          long length, int immediate, long context, boolean signaled) {
            Checks.writeWithImmediate(transport, dst, dstOffset, src, srcOffset, length);
            requireEstablished();
            CompletionStatus s = copyTo(dst, dstOffset, src, srcOffset, length);
            if (s == CompletionStatus.SUCCESS) {
                peer.deliver(new Message(null, length, true, immediate, Opcode.RECEIVE_WRITE_WITH_IMMEDIATE));
            }
            cq.complete(context, s, Opcode.WRITE_WITH_IMMEDIATE, length, signaled);
            return true;
        }

        @Override
        public boolean atomicWrite(RemoteRegion dst, long dstOffset, long value, long context, boolean signaled) {
            Checks.atomicWrite(transport, dst, dstOffset);
            requireEstablished();
            SynRegion to = ((SynRemote) dst).target;
            CompletionStatus s = CompletionStatus.REM_ACCESS_ERR;
            if (to.open) {
                to.segment.set(ValueLayout.JAVA_LONG_UNALIGNED, dstOffset, value);
                s = CompletionStatus.SUCCESS;
            }
            cq.complete(context, s, Opcode.ATOMIC_WRITE, 8, signaled);
            return true;
        }

        @Override
        public boolean flush(RemoteRegion dst, long dstOffset, long length, FlushType type, long context,
                             boolean signaled) {
            Checks.flush(transport, dst, dstOffset, length, type);
            requireEstablished();
            CompletionStatus s = ((SynRemote) dst).target.open ? CompletionStatus.SUCCESS : CompletionStatus.REM_ACCESS_ERR;
            cq.complete(context, s, Opcode.FLUSH, 0, signaled);
            return true;
        }

        @Override
        public boolean send(LocalRegion src, long offset, long length, long context, boolean signaled) {
            Checks.send(transport, src, offset, length, false);
            return message(src, offset, length, false, 0, Opcode.SEND, context, signaled);
        }

        @Override
        public boolean sendWithImmediate(LocalRegion src, long offset, long length, int immediate, long context,
                                         boolean signaled) {
            Checks.send(transport, src, offset, length, true);
            return message(src, offset, length, true, immediate, Opcode.SEND_WITH_IMMEDIATE, context, signaled);
        }

        private boolean message(LocalRegion src, long offset, long length, boolean hasImmediate, int immediate,
                                Opcode opcode, long context, boolean signaled) {
            requireEstablished();
            // The bytes are copied now (the sender's buffer is free once its completion is in).
            byte[] bytes = src.segment().asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE);
            peer.deliver(new Message(bytes, length, hasImmediate, immediate,
                    Opcode.RECEIVE));
            cq.complete(context, CompletionStatus.SUCCESS, opcode, length, signaled);
            return true;
        }

        @Override
        public boolean receive(LocalRegion dst, long offset, long length, long context) {
            Checks.receive(transport, dst, offset, length);
            if (closed) {
                throw new ResourceClosedException(description + " is closed");
            }
            if (state == ENDED) {
                throw new IllegalStateException(description + " is no longer connected: cannot post a receive");
            }
            Message m;
            synchronized (this) {
                m = unmatched.poll();
                if (m == null) {
                    receives.add(new long[] {offset, length, context});
                    receiveRegions.add(dst);
                    return true;
                }
            }
            land(m, dst, offset, length, context);
            return true;
        }

        /** Any thread (the peer's loop): a message or a write-with-immediate notice arrives. */
        void deliver(Message m) {
            long[] r;
            LocalRegion dst;
            synchronized (this) {
                r = receives.poll();
                if (r == null) {
                    unmatched.add(m);
                    return;
                }
                dst = receiveRegions.poll();
            }
            land(m, dst, r[0], r[1], r[2]);
        }

        private void land(Message m, LocalRegion dst, long offset, long capacity, long context) {
            if (m.bytes != null && m.length > capacity) {
                cq.completeFromAnyThread(context, CompletionStatus.LOC_LEN_ERR, Opcode.RECEIVE, 0, false, 0);
                return;
            }
            if (m.bytes != null && m.length > 0) {
                MemorySegment.copy(MemorySegment.ofArray(m.bytes), 0, dst.segment(), offset, m.length);
            }
            cq.completeFromAnyThread(context, CompletionStatus.SUCCESS, m.opcode, m.length, m.hasImmediate,
                    m.immediate);
        }

        @Override
        public void disconnect() {
            if (state == ENDED) {
                return;
            }
            state = ENDED;
            events.add(ConnectionEvent.CLOSED);
            SynConnection p = peer;
            if (p != null) {
                p.peerEnded();
            }
        }

        @Override
        public void close() {
            if (closed) {
                return;
            }
            disconnect();
            closed = true;
            events.signal.close();
            cq.close();
        }
    }

    /** What a send or a write with immediate data hands the peer's receive. */
    record Message(byte[] bytes, long length, boolean hasImmediate, int immediate, Opcode opcode) {
    }

    /** A connection's event channel. */
    static final class SynEvents implements EventChannel {
        final Signal signal = new Signal();
        private final ConcurrentLinkedQueue<ConnectionEvent> queue = new ConcurrentLinkedQueue<>();

        void add(ConnectionEvent e) {
            queue.add(e);
            signal.signal();
        }

        @Override
        public int fd() {
            return signal.fd();
        }

        @Override
        public ConnectionEvent nextEvent() {
            ConnectionEvent e = queue.poll();
            if (e == null) {
                signal.clear();
                e = queue.poll(); // one added between the poll and the clear
            }
            return e;
        }
    }

    // ------------------------------------------------------------------ completion queue

    /**
     * The completion ring. Posts on the loop thread append to plain arrays; completions made on
     * another thread (a receive the peer's send landed in) come through a concurrent queue and an
     * eventfd write.
     */
    static final class SynQueue implements CompletionQueue {
        // Scratch layout of one entry, as a native drain would have written it.
        private static final long CONTEXT = 0;
        private static final long STATUS = 8;
        private static final long OPCODE = 12;
        private static final long LENGTH = 16;
        private static final long IMMEDIATE = 24;
        private static final long HAS_IMMEDIATE = 28;
        private static final long ENTRY = 32;
        private static final CompletionStatus[] STATUSES = CompletionStatus.values();
        private static final Opcode[] OPCODES = Opcode.values();

        private final Signal signal = new Signal();
        private final int mask;
        private final long[] contexts;
        private final int[] statuses;
        private final int[] opcodes;
        private final long[] lengths;
        private final int[] immediates;
        private final boolean[] hasImmediates;
        private long head;
        private long tail;
        private final ConcurrentLinkedQueue<long[]> inbound = new ConcurrentLinkedQueue<>();
        private final Entry flyweight = new Entry();

        SynQueue(int capacity) {
            mask = capacity - 1;
            contexts = new long[capacity];
            statuses = new int[capacity];
            opcodes = new int[capacity];
            lengths = new long[capacity];
            immediates = new int[capacity];
            hasImmediates = new boolean[capacity];
            QUEUES.add(this);
        }

        /** Loop thread: a posted work request completed; an unsignaled success reports nothing. */
        void complete(long context, CompletionStatus status, Opcode opcode, long length, boolean signaled) {
            if (signaled || status != CompletionStatus.SUCCESS) {
                append(context, status.ordinal(), opcode.ordinal(), length, false, 0);
            }
        }

        /** Any thread: a receive completed. */
        void completeFromAnyThread(long context, CompletionStatus status, Opcode opcode, long length,
                                   boolean hasImmediate, int immediate) {
            inbound.add(new long[] {context, status.ordinal(), opcode.ordinal(), length, hasImmediate ? 1 : 0,
                    immediate});
            signal.signal();
        }

        private void append(long context, int status, int opcode, long length, boolean hasImmediate, int immediate) {
            if (tail - head > mask) {
                throw new IllegalStateException("synthetic completion queue overrun (" + (mask + 1) + " entries)");
            }
            int i = (int) tail & mask;
            contexts[i] = context;
            statuses[i] = status;
            opcodes[i] = opcode;
            lengths[i] = length;
            hasImmediates[i] = hasImmediate;
            immediates[i] = immediate;
            tail++;
        }

        @Override
        public int fd() {
            return signal.fd();
        }

        @Override
        public void acknowledge() {
            signal.clear();
        }

        @Override
        public boolean prepareToSleep() {
            return held || head == tail && inbound.isEmpty();
        }

        @Override
        public int poll(MemorySegment scratch, int max, CompletionSink sink) {
            if (held) {
                return 0;
            }
            if (markNextPoll) {
                // The drain benchmark's start, taken by the loop itself: the time the benchmark
                // thread needs to be scheduled is not the drain's.
                markNextPoll = false;
                firstPollAfterRelease = System.nanoTime();
            }
            for (long[] e; tail - head <= mask && (e = inbound.poll()) != null; ) {
                append(e[0], (int) e[1], (int) e[2], e[3], e[4] != 0, (int) e[5]);
            }
            int n = (int) Math.min(tail - head, max);
            if (n == 0) {
                return 0;
            }
            // Fill the batch first, then dispatch, as a native drain does: a sink that posts
            // appends behind what this batch took.
            for (int k = 0; k < n; k++) {
                int i = (int) (head + k) & mask;
                long off = k * ENTRY;
                scratch.set(ValueLayout.JAVA_LONG_UNALIGNED, off + CONTEXT, contexts[i]);
                scratch.set(ValueLayout.JAVA_INT_UNALIGNED, off + STATUS, statuses[i]);
                scratch.set(ValueLayout.JAVA_INT_UNALIGNED, off + OPCODE, opcodes[i]);
                scratch.set(ValueLayout.JAVA_LONG_UNALIGNED, off + LENGTH, lengths[i]);
                scratch.set(ValueLayout.JAVA_INT_UNALIGNED, off + IMMEDIATE, immediates[i]);
                scratch.set(ValueLayout.JAVA_INT_UNALIGNED, off + HAS_IMMEDIATE, hasImmediates[i] ? 1 : 0);
            }
            head += n;
            for (int k = 0; k < n; k++) {
                flyweight.at(scratch, k * ENTRY);
                sink.onCompletion(flyweight);
            }
            return n;
        }

        @Override
        public void close() {
            QUEUES.remove(this);
            signal.close();
        }

        /** The flyweight view of one scratch entry. */
        private static final class Entry extends Completion {
            private MemorySegment base = MemorySegment.NULL;
            private long offset;

            void at(MemorySegment segment, long off) {
                base = segment;
                offset = off;
            }

            @Override
            public long context() {
                return base.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + CONTEXT);
            }

            @Override
            public CompletionStatus status() {
                return STATUSES[base.get(ValueLayout.JAVA_INT_UNALIGNED, offset + STATUS)];
            }

            @Override
            public int vendorError() {
                return 0;
            }

            @Override
            public int queuePair() {
                return 0;
            }

            @Override
            public int errorNumber() {
                return 0;
            }

            @Override
            public long overflowLength() {
                return 0;
            }

            @Override
            public String errorText() {
                return status() == CompletionStatus.SUCCESS ? "" : "synthetic " + status();
            }

            @Override
            protected Opcode rawOpcode() {
                return OPCODES[base.get(ValueLayout.JAVA_INT_UNALIGNED, offset + OPCODE)];
            }

            @Override
            protected long rawByteLength() {
                return base.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + LENGTH);
            }

            @Override
            protected long rawFlags() {
                return 0;
            }

            @Override
            protected boolean rawHasImmediate() {
                return base.get(ValueLayout.JAVA_INT_UNALIGNED, offset + HAS_IMMEDIATE) != 0;
            }

            @Override
            protected int rawImmediate() {
                return base.get(ValueLayout.JAVA_INT_UNALIGNED, offset + IMMEDIATE);
            }
        }
    }
}
