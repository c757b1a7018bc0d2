package io.cqflux.benchmarks;

import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.FlushType;
import io.cqflux.core.Opcode;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.internal.Checks;
import io.cqflux.core.spi.CompletionQueue;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.EventChannel;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/** One end of a pair; confined to its loop thread except where noted. */
final class SynConnection implements Connection {
    private static final AtomicInteger NEXT_CONNECTION = new AtomicInteger();
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
        this.description = "synthetic#" + NEXT_CONNECTION.incrementAndGet() + " " + transport.localAddress()
                .getHostAddress() + " -> " + peerAddress;
        int ring = config.completionQueueSize() + config.receiveQueueSize() + config.receiveCompletionQueueSize();
        this.cq = new SynQueue(Integer.highestOneBit(Math.max(ring, 2) - 1) << 1);
    }

    InetSocketAddress localAddress() {
        return new InetSocketAddress(transport.localAddress(), 0);
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

    /** What a send or a write with immediate data hands the peer's receive. */
    record Message(byte[] bytes, long length, boolean hasImmediate, int immediate, Opcode opcode) {
    }
}
