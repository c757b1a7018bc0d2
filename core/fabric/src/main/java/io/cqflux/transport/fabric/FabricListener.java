package io.cqflux.transport.fabric;

import static io.cqflux.transport.fabric.ffm.fabric_h.*;

import io.cqflux.core.ConnectionConfig;
import io.cqflux.core.ResourceClosedException;
import io.cqflux.core.internal.RdmaCmIds;
import io.cqflux.core.internal.SocketAddresses;
import io.cqflux.transport.fabric.ffm.fi_eq_cm_entry;
import io.cqflux.transport.fabric.ffm.fi_info;
import io.cqflux.transport.fabric.ffm.fi_ops_cm;
import io.cqflux.transport.fabric.ffm.fi_ops_fabric;
import io.cqflux.transport.fabric.ffm.fid;
import io.cqflux.transport.fabric.ffm.fid_pep;
import io.cqflux.core.spi.ConnectionRequest;
import io.cqflux.core.spi.Listener;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A passive endpoint ({@code fi_endpoint(3)} {@code fi_passive_ep}) listening with its own event
 * queue. Its reads are loop-confined after construction, except on tcp, where a thread of its own
 * reads the queue and hands the requests to the loop (RequestReader); a request it handed out may be
 * answered (accepted or rejected) by one other thread, the reactive layer's set-up thread
 * (FabricTransport#acceptsOffLoop), while the loop goes on reading and answering others.
 * What the listener's lock excludes is a close against an answer, not reads against answers: an
 * answer claims its request ({@code once}) and raises the count of answers in progress under the
 * lock, then makes its native calls (on accept {@code fi_endpoint}, the CQs, {@code fi_ep_bind},
 * {@code fi_enable}, {@code fi_accept}; or {@code fi_reject}) outside it, and lowers the count
 * under the lock again. {@link #close()} marks the listener closed, then waits until no answer
 * is in progress before it rejects what is left and closes the passive endpoint: {@code fi_reject}
 * and {@code fi_accept} need that endpoint alive, and an answer after the close throws. The
 * native calls of an answer beside the loop's {@code fi_eq_read} on the passive endpoint's event
 * queue (and beside another answer) are allowed because the domain is {@code FI_THREAD_SAFE}
 * ({@code fi_domain(3)}: the provider serialises access to all objects itself; acceptsOffLoop
 * is false otherwise). {@link #close()} is idempotent and leaves accepted connections alive.
 *
 * <p><b>Pending requests on close.</b> A connection request is an {@code FI_CONNREQ} event whose
 * {@code fi_info} the application owns ({@code fi_freeinfo}) and whose {@code info->handle} holds
 * the provider's half-open connection (on tcp, the accepted socket) until {@code fi_accept} or
 * {@code fi_reject} ({@code fi_cm(3)}); {@code fi_reject} needs the passive endpoint. So
 * {@link #close()} first rejects and frees every request it handed out that was neither accepted
 * nor rejected, then every {@code FI_CONNREQ} still queued in its event queue, and only then closes
 * the passive endpoint: the clients see {@code REJECTED} instead of waiting for their connect
 * timeout, and no socket or {@code fi_info} leaks. A request handed out before the close can
 * no longer be answered afterwards: it throws {@link ResourceClosedException}.
 */
@SuppressWarnings("restricted") // FFM: this package is the native-access boundary of the fabric transport
final class FabricListener implements Listener {

    private static final System.Logger LOG = System.getLogger(FabricListener.class.getName());
    private final FabricTransport transport;
    private final ConnectionConfig config;
    private final FabricEventQueue eq;
    private final MemorySegment pep;
    private final MemorySegment rejectFp;
    private final InetSocketAddress bound;
    /** Whether a reject destroys the RDMA CM id the library leaves ({@link #reject}'s fact). */
    private final boolean destroysRejectedCmId;
    /** Whether the warning that a rejected request's id was not recognised was given (once per JVM). */
    private static final java.util.concurrent.atomic.AtomicBoolean UNRECOGNISED =
            new java.util.concurrent.atomic.AtomicBoolean();
    /** Requests handed out by {@link #nextRequest()} and not yet answered (guarded by this). */
    private final Set<Request> pending = new LinkedHashSet<>();
    private boolean closed;
    /** Answers (accepts, rejects) whose native calls are in progress; close waits for 0 (guarded by this). */
    private int answering;
    /** Tests: runs inside an answer after its request was claimed, before its native calls; null: none. */
    volatile Runnable duringAnswer;
    /** tcp: reads the queue on a thread of its own (RequestReader); null: the loop reads it. */
    private final RequestReader reader;

    private FabricListener(FabricTransport transport, ConnectionConfig config, FabricEventQueue eq, MemorySegment pep,
                           InetSocketAddress bound) {
        this.transport = transport;
        this.config = config;
        this.eq = eq;
        this.pep = pep;
        this.rejectFp = fi_ops_cm.reject(fid_pep.cm(pep));
        this.bound = bound;
        this.destroysRejectedCmId = ProviderProfile.destroysRejectedCmId(transport.provider(),
                FabricLibrary.libraryVersion(), FabricLibrary.hasSymbol("rdma_destroy_id"));
        // tcp reads a request with a blocking recv inside the queue's read (RequestReader): off the
        // loop. verbs reads RDMA CM's events, which never wait on a peer.
        this.reader = transport.isTcp() ? new RequestReader(transport, eq, bound) : null;
        if (reader != null) {
            try {
                reader.start();
            } catch (RuntimeException | Error e) {
                reader.close();
                throw e;
            }
        }
    }

    static FabricListener open(FabricTransport transport, InetSocketAddress address, ConnectionConfig config) {
        String host = address.getAddress() == null ? address.getHostString() : address.getAddress().getHostAddress();
        FabricEventQueue eq = null;
        MemorySegment pep = MemorySegment.NULL;
        transport.retain(); // released by close(), or below when opening fails
        try (Arena tmp = Arena.ofConfined()) {
            MemorySegment info = FabricInfo.getinfo(tmp, transport.provider(), null, null, host,
                    Integer.toString(address.getPort()), FI_SOURCE());
            if (info.equals(MemorySegment.NULL)) {
                throw new IllegalArgumentException("provider " + transport.provider() + " cannot listen on " + address);
            }
            MemorySegment out = tmp.allocate(C_POINTER);
            try {
                MemorySegment fops = io.cqflux.transport.fabric.ffm.fid_fabric.ops(transport.fabric());
                FabricLibrary.check("fi_passive_ep", fi_ops_fabric.passive_ep.invoke(fi_ops_fabric.passive_ep(fops),
                        transport.fabric(), info, out, MemorySegment.NULL), address.toString());
            } finally {
                fi_freeinfo(info);
            }
            pep = out.get(C_POINTER, 0);
            eq = new FabricEventQueue(transport);
            FabricLibrary.check("fi_pep_bind", FabricLibrary.bind(pep, eq.eq(), 0), address.toString());
            MemorySegment cm = fid_pep.cm(pep);
            FabricLibrary.check("fi_listen", fi_ops_cm.listen.invoke(fi_ops_cm.listen(cm), pep), address.toString());
            // fi_cm(3) fi_getname on a passive endpoint: the bound address, so port 0 reports the real port.
            MemorySegment addr = tmp.allocate(128, 8);
            MemorySegment len = tmp.allocate(ValueLayout.JAVA_LONG);
            len.set(ValueLayout.JAVA_LONG, 0, addr.byteSize());
            FabricLibrary.check("fi_getname", fi_ops_cm.getname.invoke(fi_ops_cm.getname(cm), pep, addr, len),
                    address.toString());
            InetSocketAddress bound = sockaddr(addr, address);
            if (transport.isTcp()) {
                RequestReadBound.apply(bound); // a client that stops mid-request must not hold the reader
            }
            return new FabricListener(transport, config, eq, pep, bound);
        } catch (RuntimeException e) {
            // fi_endpoint(3): the passive endpoint before the EQ it is bound to.
            if (!pep.equals(MemorySegment.NULL)) {
                FabricLibrary.close(pep, "passive endpoint", address);
            }
            if (eq != null) {
                eq.close();
            }
            transport.release();
            throw e;
        }
    }

    /** Decodes a sockaddr_in / sockaddr_in6; another family keeps {@code fallback}'s address. */
    static InetSocketAddress sockaddr(MemorySegment sa, InetSocketAddress fallback) {
        InetSocketAddress a = SocketAddresses.decode(sa);
        return a != null ? a : new InetSocketAddress(fallback.getAddress(), SocketAddresses.port(sa));
    }

    /**
     * {@return the requester's address from a connection request's info ({@code dest_addr}, a
     * {@code struct sockaddr} for the socket providers), or null when the provider gives none we
     * can read}
     */
    static InetSocketAddress requester(MemorySegment info) {
        MemorySegment a = fi_info.dest_addr(info);
        long len = fi_info.dest_addrlen(info);
        if (a.equals(MemorySegment.NULL) || len < 8) {
            return null;
        }
        // The binding's pointer layout targets an unbounded byte sequence: a slice bounds it
        // without reinterpret, a restricted method whose caller check walks the stack
        // (Reflection.getCallerClass) at every call, here on the loop for every request.
        return SocketAddresses.decode(a.byteSize() >= len ? a.asSlice(0, len) : a.reinterpret(len));
    }

    /** {@return the largest private data the provider carries, fi_getopt FI_OPT_CM_DATA_SIZE} */
    long cmDataSize() {
        return ProviderProfile.cmDataSize(pep);
    }

    @Override
    public int fd() {
        return reader != null ? reader.fd() : eq.fd();
    }

    @Override
    public boolean prepareToSleep() {
        return reader != null ? reader.prepareToSleep() : eq.trywait();
    }

    @Override
    public InetSocketAddress address() {
        return bound;
    }

    /** tcp: the close waits for the request reader's thread to end (RequestReader#stop). */
    @Override
    public boolean closesOffLoop() {
        return reader != null;
    }

    @Override
    public synchronized ConnectionRequest nextRequest() {
        if (closed) {
            return null; // the Listener contract: nothing pending once closed (as on rpma)
        }
        if (reader != null) {
            RequestReader.Item it = reader.next();
            if (it == null) {
                return null;
            }
            Request r = new Request(it.info(), it.data());
            pending.add(r);
            return r;
        }
        while (true) {
            int ev = eq.read();
            if (ev == FabricEventQueue.NONE) {
                return null;
            }
            if (ev == FI_CONNREQ()) {
                Request r = new Request(fi_eq_cm_entry.info(eq.entry()), eq.cmData());
                pending.add(r);
                return r;
            }
            if (ev == FabricEventQueue.ERROR) {
                LOG.log(System.Logger.Level.DEBUG, "listener {0}: event queue error {1}", bound, eq.lastError());
            } else {
                LOG.log(System.Logger.Level.DEBUG, "listener {0}: ignoring event {1}", bound, ev);
            }
        }
    }

    /**
     * Rejects the requests nobody answered (handed out, or still queued), then closes the passive
     * endpoint and its event queue, in that order (see the class comment); idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        // An answer in progress uses the passive endpoint (fi_accept, fi_reject): it goes first.
        boolean interrupted = false;
        while (answering > 0) {
            try {
                wait();
            } catch (InterruptedException e) {
                interrupted = true; // the endpoint must not close under an answer: wait on, then restore
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        try {
            if (reader != null) {
                // Its thread ends first: from here on the queue is this thread's to read.
                reader.stop();
            }
            List<Request> unanswered = new ArrayList<>(pending);
            pending.clear();
            for (Request r : unanswered) {
                r.rejectOnClose();
            }
            if (reader != null) {
                for (RequestReader.Item it : reader.drain()) {
                    rejectAndFree(it.info(), true);
                }
            }
            drainQueuedRequests();
        } finally {
            try {
                // fi_endpoint(3): the passive endpoint before the EQ it is bound to.
                FabricLibrary.close(pep, "passive endpoint", bound);
                eq.close();
                if (reader != null) {
                    reader.close();
                }
            } finally {
                transport.release();
            }
        }
    }

    /** Rejects and frees every FI_CONNREQ still in the event queue; other events are dropped. */
    private void drainQueuedRequests() {
        while (true) {
            int ev;
            try {
                ev = eq.read();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "listener " + bound + ": reading its event queue while closing failed",
                        e);
                return;
            }
            if (ev == FabricEventQueue.NONE) {
                return;
            }
            if (ev == FI_CONNREQ()) {
                rejectAndFree(fi_eq_cm_entry.info(eq.entry()), true);
            }
        }
    }

    /**
     * {@code fi_reject(pep, info->handle, NULL, 0)} then {@code fi_freeinfo(info)}; a failing
     * reject is logged, never thrown (it runs on close and on a failed accept).
     */
    private void rejectAndFree(MemorySegment info, boolean untouched) {
        try {
            reject(info, MemorySegment.NULL, 0, untouched);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "listener " + bound + ": rejecting a connection request failed", e);
        } finally {
            fi_freeinfo(info);
        }
    }

    /**
     * {@code fi_reject(pep, info->handle, param, paramlen)} (fi_cm(3)), its failure thrown; the
     * caller frees {@code info}. {@code untouched}: nothing but this reject used the request's
     * handle (an accept that failed may have opened an endpoint with it, which then owns its id).
     *
     * <p><b>Fact: libfabric 1.17's verbs provider leaves the RDMA CM id of every request it
     * rejects.</b> Its reject calls {@code rdma_reject(3)} and frees its request
     * ({@code struct vrb_connreq}) without {@code rdma_destroy_id(3)}, which {@code rdma_cm(7)}
     * leaves to whoever rejects; fixed in libfabric 1.21. Measured over Soft-RoCE in the lane
     * ({@code VerbsHostilePeerTest}'s malformed hellos, which the server refuses with fi_reject):
     * 10 refused requests left 10 more ids in {@code rdma resource show cm_id}, in the kernel until
     * the listener closes (libfabric's part in the heap for good). So on the library measured
     * ({@link ProviderProfile#destroysRejectedCmId}) the id is taken from the request before the
     * reject and destroyed after it: the request handle is the {@code struct fid} at the head of
     * libfabric's {@code vrb_connreq}, and the id pointer follows it ({@link #VRB_CONNREQ_ID}); it
     * is used only when the handle's class is {@code FI_CLASS_CONNREQ} and the id's own port is this
     * listener's, else left (and said once). Not after an accept that failed once its endpoint was
     * opened: the endpoint took the id then (fi_endpoint(3) with the request's info), and its
     * close destroys it.
     */
    private void reject(MemorySegment info, MemorySegment param, long length, boolean untouched) {
        MemorySegment handle = fi_info.handle(info);
        MemorySegment cmId = untouched && destroysRejectedCmId ? verbsCmId(handle) : MemorySegment.NULL;
        try {
            FabricLibrary.check("fi_reject", fi_ops_cm.reject.invoke(rejectFp, pep, handle, param, length),
                    bound.toString());
        } finally {
            if (!cmId.equals(MemorySegment.NULL) && rdma_destroy_id(cmId) != 0) {
                LOG.log(System.Logger.Level.WARNING, "listener " + bound + ": rdma_destroy_id of a rejected request"
                        + " failed");
            }
        }
    }

    /**
     * Offset of {@code id} in libfabric 1.17's {@code struct vrb_connreq}: after its
     * {@code struct fid handle} (fclass, context, ops).
     */
    static final long VRB_CONNREQ_ID = fid.sizeof();

    /**
     * {@return the RDMA CM id of a verbs request, or NULL where {@code handle} is not recognised as
     * one of this listener's} The binding's pointers target an unbounded byte sequence, so the
     * reads need no {@code reinterpret} (whose caller check walks the stack).
     */
    private MemorySegment verbsCmId(MemorySegment handle) {
        if (!handle.equals(MemorySegment.NULL) && fid.fclass(handle) == FI_CLASS_CONNREQ()) {
            MemorySegment id = handle.get(C_POINTER, VRB_CONNREQ_ID);
            if (!id.equals(MemorySegment.NULL)) {
                InetSocketAddress own = RdmaCmIds.source(id);
                if (own != null && own.getPort() == bound.getPort()) {
                    return id;
                }
            }
        }
        if (UNRECOGNISED.compareAndSet(false, true)) {
            LOG.log(System.Logger.Level.WARNING, "listener " + bound + ": a rejected request's handle holds no RDMA CM"
                    + " id of this listener where libfabric 1.17's verbs provider keeps it; the id of each request"
                    + " rejected stays until its listener closes");
        }
        return MemorySegment.NULL;
    }

    /** {@return the thread that reads the requests (tcp), or null where the loop reads them (tests)} */
    Thread readerThread() {
        return reader == null ? null : reader.thread();
    }

    /** {@return how many requests the reader read that wait to be taken (tests; tcp)} */
    int readerWaiting() {
        return reader.waiting();
    }

    /** {@return how many requests were handed out and not yet answered (tests)} */
    synchronized int pendingRequests() {
        return pending.size();
    }

    /** A pending FI_CONNREQ: owns the request's fi_info until accepted, rejected, or the listener closes. */
    private final class Request implements ConnectionRequest {
        private final MemorySegment info;
        private final byte[] data;
        /** The requester's address, read while the info is ours (fi_cm(3): dest_addr of FI_CONNREQ). */
        private final InetSocketAddress peer;
        private boolean done;
        /** The connection's own domain once {@link #scopeKeys()} opened it (guarded by the listener's lock). */
        private ScopedDomain scope;

        Request(MemorySegment info, byte[] data) {
            this.info = info;
            this.data = data;
            this.peer = requester(info);
        }

        @Override
        public byte[] privateData() {
            return data.clone();
        }

        @Override
        public InetSocketAddress peerAddress() {
            return peer;
        }

        @Override
        public io.cqflux.core.spi.Connection accept(byte[] privateData) {
            return accept(privateData, null);
        }

        @Override
        public io.cqflux.core.spi.Connection accept(byte[] privateData, Object affinity) {
            byte[] data = io.cqflux.core.internal.Checks.privateData(privateData, transport.maxAcceptPrivateData(),
                    "accept");
            // Raw bytes carry no parameters: the peer never learns a tag, so the queue is its own.
            return accept(hs -> data, false, affinity);
        }

        /** tcp: the connection may share its loop's completion queue, whose tag the hello carries. */
        @Override
        public io.cqflux.core.spi.Connection acceptWithHello(java.util.function.UnaryOperator<byte[]> hello,
                                                             Object affinity) {
            java.util.Objects.requireNonNull(hello, "hello");
            return accept(hello, true, affinity);
        }

        private io.cqflux.core.spi.Connection accept(java.util.function.UnaryOperator<byte[]> hello,
                                                      boolean groupable, Object affinity) {
            begin();
            boolean accepted = false;
            boolean[] endpointOpened = {false};
            try {
                hook();
                ScopedDomain d;
                synchronized (FabricListener.this) {
                    d = scope;
                }
                io.cqflux.core.spi.Connection c = FabricConnection.accept(transport, info, data, config, hello,
                        groupable, affinity, d, () -> endpointOpened[0] = true);
                accepted = true;
                return c;
            } finally {
                try {
                    if (accepted) {
                        fi_freeinfo(info);
                    } else {
                        // Do not leave the client waiting for an answer until its timeout. Until
                        // fi_endpoint took the request, its RDMA CM id is still the request's.
                        rejectAndFree(info, !endpointOpened[0]);
                    }
                } finally {
                    end();
                }
            }
        }

        /**
         * {@code fi_domain(3)} with the request's info: the connection's own domain, which the
         * accept opens its endpoint and CQs in. Counted as an answer in progress (the info must
         * outlive the call: a listener's close frees it), without claiming the request.
         */
        @Override
        public io.cqflux.core.spi.KeyScope scopeKeys() {
            String refusal = transport.connectionScopedKeysRefusal();
            if (refusal != null) {
                throw new io.cqflux.core.UnsupportedCapabilityException(transport.name(),
                        io.cqflux.core.Capability.CONNECTION_SCOPED_KEYS, refusal);
            }
            synchronized (FabricListener.this) {
                if (closed) {
                    throw new ResourceClosedException("listener on " + bound + " is closed: the request was rejected");
                }
                if (done) {
                    throw new IllegalStateException("connection request already accepted or rejected: its keys can no"
                            + " longer be scoped");
                }
                if (scope != null) {
                    return scope;
                }
                answering++;
            }
            try {
                ScopedDomain d = ScopedDomain.open(transport, info, "connection from " + FabricConnection.peerAddress(info)
                        + " on " + bound);
                synchronized (FabricListener.this) {
                    scope = d;
                }
                return d;
            } finally {
                end();
            }
        }

        @Override
        public void reject() {
            reject(null);
        }

        /**
         * {@code fi_reject(pep, info->handle, param, paramlen)} (fi_cm(3)): on tcp and verbs the
         * client's connect ends with an {@code FI_ECONNREFUSED} error entry whose {@code err_data}
         * holds these bytes (FabricEventQueue#read), and nothing was opened for the request here:
         * tcp answers on the request's socket and closes it, verbs with rdma_reject(3).
         */
        @Override
        public void reject(byte[] privateData) {
            // A provider whose reject carries no data (maxRejectPrivateData 0) drops it, as the
            // SPI's contract says; a bound above 0 is checked.
            int n = privateData == null || transport.maxRejectPrivateData() == 0 ? 0 : privateData.length;
            if (n > 0) {
                io.cqflux.core.internal.Checks.privateData(privateData, transport.maxRejectPrivateData(), "reject");
            }
            begin();
            // The native copy of the reject's data, fi_reject(3)'s param: the provider copies it
            // before returning, and answers run concurrently, so each has its own.
            try (Arena a = Arena.ofConfined()) {
                hook();
                MemorySegment param = MemorySegment.NULL;
                if (n > 0) {
                    param = a.allocate(n, 8);
                    MemorySegment.copy(privateData, 0, param, ValueLayout.JAVA_BYTE, 0, n);
                }
                FabricListener.this.reject(info, param, n, true);
            } finally {
                try {
                    fi_freeinfo(info);
                } finally {
                    end();
                }
            }
        }

        /** Called by close() with the listener's lock held. */
        void rejectOnClose() {
            if (!done) {
                done = true;
                rejectAndFree(info, true);
            }
        }

        /** Claims the request and counts its answer in progress, under the lock (see the class comment). */
        private void begin() {
            synchronized (FabricListener.this) {
                once();
                answering++;
            }
        }

        /** The answer's native calls are done: a close waiting for them may go on. */
        private void end() {
            synchronized (FabricListener.this) {
                if (--answering == 0) {
                    FabricListener.this.notifyAll();
                }
            }
        }

        private void hook() {
            Runnable h = duringAnswer;
            if (h != null) {
                h.run();
            }
        }

        private void once() {
            if (closed) {
                throw new ResourceClosedException("listener on " + bound + " is closed: the request was rejected");
            }
            if (done) {
                throw new IllegalStateException("connection request already accepted or rejected");
            }
            done = true;
            pending.remove(this);
        }
    }
}
