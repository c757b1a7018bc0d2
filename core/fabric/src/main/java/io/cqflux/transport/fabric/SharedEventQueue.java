package io.cqflux.transport.fabric;

import io.cqflux.core.spi.SharedSource;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One event queue bound to every endpoint that one event loop serves (or to one endpoint, for a
 * connection opened without a loop), and the routing of its events to those endpoints'
 * connections. Opened and closed by {@link LoopQueues}, which counts its endpoints.
 *
 * <p>Facts this rests on (libfabric 1.17, tcp; {@code benchmarks/c/fabric_shared_queues.c} and
 * {@code SharedEventQueueTest}):
 * <ul>
 *   <li>One EQ serves many endpoints, accepted and connecting alike: every entry names its
 *       endpoint ({@code fi_eq(3)}: {@code fi_eq_cm_entry.fid}, {@code fi_eq_err_entry.fid}), so
 *       routing by the endpoint's address is exact.</li>
 *   <li>{@code fi_close} of an endpoint removes its entries still queued in its EQ
 *       ({@code ofi_eq_remove_fid_events} in the provider's endpoint close): once the route of a
 *       closed endpoint is gone, a new endpoint at the same address can get none of them.</li>
 *   <li>{@code fi_close} of an EQ with endpoints still bound answers {@code -FI_EBUSY} and does
 *       no harm, but it closes nothing: the queue is closed after its last endpoint.</li>
 * </ul>
 *
 * <p>Threading: {@link #dispatch()} and the members run on the loop thread of the queue's
 * endpoints; {@link #route}, {@link #closeEndpoint} may come from another thread (an accept on
 * the listener's loop for a connection another loop serves, which closes it when fi_accept
 * fails; a connect or an accept on the reactive layer's set-up thread, which builds the
 * connection before its loop knows it), hence the concurrent map. A read and the lookup of its endpoint's route are one step
 * against an endpoint's fi_close and the removal of its route (one lock, uncontended but for such
 * a close): otherwise the loop could read an entry of endpoint X, X be closed and unrouted, a new
 * endpoint be routed at X's address, and the lookup hand it X's event. A route is taken under the
 * same lock: otherwise a new endpoint at X's address, routed between X's fi_close and its unroute,
 * would lose its route to X's unroute, and with it every event of its own (its connection would
 * wait for an FI_CONNECTED dropped as "of no connection").
 */
final class SharedEventQueue implements SharedSource {

    private static final System.Logger LOG = System.getLogger(SharedEventQueue.class.getName());

    /** The entries a shared queue asks for: one loop's connects and shutdowns at once. */
    static final int SHARED_SIZE = 1024;

    /** What the queue hands an event to: a connection's event channel. */
    interface Member {
        /**
         * One event for this member, copied out of the queue's entry buffer.
         *
         * @param event the event ({@code FI_CONNECTED}, {@code FI_SHUTDOWN}, ...) or
         *     {@link FabricEventQueue#ERROR}
         * @param cmData a CM event's private data (a copy, possibly empty); for an error, the
         *     entry's error data (a refused connect's reject data on tcp and verbs), possibly empty
         * @param error an error entry's positive {@code err}, else 0
         */
        void deliver(int event, byte[] cmData, int error);
    }

    final Object affinity;
    private final FabricEventQueue eq;
    private final Map<Long, Member> routes = new ConcurrentHashMap<>();
    /** Guards a read with its lookup, and an endpoint's fi_close with its unroute (class comment). */
    private final Object readLock = new Object();
    /** The loop that registered it first (SharedSource#claimLoop), else null. */
    private final AtomicReference<Object> loop = new AtomicReference<>();
    /** Endpoints bound to it, counted by its {@link LoopQueues} (guarded by that). */
    int endpoints;

    SharedEventQueue(FabricTransport transport, Object affinity) {
        this.affinity = affinity;
        this.eq = new FabricEventQueue(transport, affinity == null ? 16 : SHARED_SIZE);
    }

    /** {@return the native queue} */
    FabricEventQueue eq() {
        return eq;
    }

    /**
     * Routes the events of {@code ep} to {@code member}: before {@code fi_connect}/{@code fi_accept}.
     * Under the read lock, as an endpoint's close with its unroute is: {@code ep} may sit at the
     * address of an endpoint that another thread has just closed (malloc hands the freed block
     * out again at once), and that close's unroute would otherwise remove this route instead.
     */
    void route(MemorySegment ep, Member member) {
        synchronized (readLock) {
            routes.put(ep.address(), member);
        }
    }

    /**
     * Closes {@code ep}, bound to this queue, and stops routing to it: {@code fi_close} removes
     * its queued events (see the class comment), so no later read can name it. When the close
     * fails the route stays, like everything else bound to the endpoint. Any thread.
     *
     * @param kept what the caller keeps when the close fails, for the log line
     * @return whether the endpoint was closed
     */
    boolean closeEndpoint(MemorySegment ep, String description, String kept) {
        synchronized (readLock) {
            if (!FabricLibrary.close(ep, "endpoint", description, kept)) {
                return false;
            }
            routes.remove(ep.address());
            return true;
        }
    }

    /** {@return the lock of a read with its lookup and of an endpoint's close with its unroute (tests)} */
    Object readLock() {
        return readLock;
    }

    /** {@return how many endpoints it routes to (tests)} */
    int routes() {
        return routes.size();
    }

    @Override
    public void dispatch() {
        while (true) {
            int ev;
            long fid;
            Member m;
            synchronized (readLock) { // the read and its lookup against a close (class comment)
                ev = eq.read();
                if (ev == FabricEventQueue.NONE) {
                    return;
                }
                fid = eq.lastFid(ev == FabricEventQueue.ERROR);
                // A queue of one endpoint's own gives it everything, whatever fid the provider wrote
                // (checked for tcp only; verbs' error entries are not relied on to name one).
                m = affinity == null && routes.size() == 1 ? routes.values().iterator().next() : routes.get(fid);
            }
            if (m == null) {
                LOG.log(System.Logger.Level.DEBUG, "event {0} for fid 0x{1} of no connection dropped", ev,
                        Long.toHexString(fid));
                continue;
            }
            // The entry buffer is the loop's alone (only dispatch reads into it): copied unlocked.
            boolean error = ev == FabricEventQueue.ERROR;
            m.deliver(ev, error ? eq.lastErrorData() : eq.cmData(), error ? eq.lastError() : 0);
        }
    }

    @Override
    public Object claimLoop(Object l) {
        loop.compareAndSet(null, l);
        return loop.get();
    }

    /** {@return whether it serves one loop's endpoints (a shared queue), not one endpoint's own} */
    boolean shared() {
        return affinity != null;
    }

    @Override
    public int fd() {
        return eq.fd();
    }

    @Override
    public boolean prepareToSleep() {
        return eq.trywait();
    }

    @Override
    public boolean watchTouches(Runnable touched) {
        return eq.watch(touched);
    }

    /** Something changed the queue's endpoints (a shutdown): fi_trywait is asked again. */
    void touched() {
        eq.touched();
    }

    void close() {
        eq.close();
    }

    @Override
    public String toString() {
        return "fabric event queue (fd " + eq.fd() + ", " + routes.size() + " endpoints)";
    }
}
