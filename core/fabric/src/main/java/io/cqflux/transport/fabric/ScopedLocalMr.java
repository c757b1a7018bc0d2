package io.cqflux.transport.fabric;

import java.lang.foreign.MemorySegment;

/**
 * A region of the transport's domain registered once more in one connection's scoped domain, so
 * that the connection's posts can pass a local descriptor of their endpoint's own domain: with
 * {@code FI_MR_LOCAL} (verbs) {@code fi_mr(3)} requires every local buffer's {@code desc} to come
 * from a registration in the domain the endpoint was opened in (on verbs, the queue pair's
 * protection domain, whose lkeys alone it accepts). Registered with the parent's local rights
 * only, never a remote one, and its key is told to no peer.
 *
 * <p><b>Why on first use, not at the accept.</b> Which of the instance's regions a connection
 * will post from is not known when it is accepted (the application's regions, the send buffers,
 * the receive pool's chunks as they grow), and registering every region of the instance in every
 * scoped domain would pin each once per connection whether used there or not. So the cost is one
 * registration per region a connection does use, paid by its first operation with it, on the
 * thread that posts (the loop's): a kernel call that pins the whole region, however little of it
 * the operation uses (the figures, and what it adds to {@code RLIMIT_MEMLOCK}, are in
 * docs/security.md, section 5); a failure fails that operation with {@code fi_mr_reg}'s error.
 *
 * <p><b>Lifetime.</b> Made on the connection's first post that uses the parent
 * (FabricLocalRegion#descIn) and kept for the next ones: one per (parent, scoped domain); where
 * two threads made one at once, the one not kept is closed by the thread that made it. Two
 * owners may close a kept one, whichever comes first, and the other finds it closed: the parent's close
 * (the reactive core closes a region only when no operation using it is in flight) and the
 * domain's close after its last child (ScopedDomain: its children, the connection's endpoint
 * first, are closed by then, so no post can use it; {@code fi_domain(3)}: a domain's objects
 * before it). {@link #close()} runs {@code fi_close} once, under this object's lock, and tells
 * both owners afterwards, outside it; so a domain that closes this one waits for a close in
 * progress on another thread to finish before its own {@code fi_close}. It holds no count of the
 * domain: a domain closes with its connection, not with the regions the application keeps.
 * Thread-safe.
 */
final class ScopedLocalMr {

    private final FabricTransport transport;
    private final ScopedDomain scope;
    private final FabricLocalRegion parent;
    private final MemorySegment mr;
    private final MemorySegment desc;
    private volatile boolean open = true;

    ScopedLocalMr(FabricTransport transport, ScopedDomain scope, FabricLocalRegion parent, MemorySegment mr,
                  MemorySegment desc) {
        this.transport = transport;
        this.scope = scope;
        this.parent = parent;
        this.mr = mr;
        this.desc = desc;
        transport.scopedLocalRegistered();
    }

    /** {@return {@code fi_mr_desc} of this registration: valid for the scoped domain's endpoint only} */
    MemorySegment desc() {
        return desc;
    }

    boolean isOpen() {
        return open;
    }

    ScopedDomain scope() {
        return scope;
    }

    /**
     * Closes the registration once, then lets both owners forget it; idempotent. The transport's
     * count of open registrations drops only when {@code fi_close} succeeded: one that failed
     * (logged and counted by FabricLibrary) stays counted, so that a leak check sees it.
     */
    void close() {
        synchronized (this) {
            if (!open) {
                return;
            }
            open = false;
            if (FabricLibrary.close(mr, "mr", this)) {
                transport.scopedLocalClosed();
            }
        }
        scope.forget(this);
        parent.forget(scope, this);
    }

    @Override
    public String toString() {
        return parent + " in the " + scope;
    }
}
