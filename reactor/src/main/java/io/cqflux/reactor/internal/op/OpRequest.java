package io.cqflux.reactor.internal.op;

import io.cqflux.core.FlushType;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.reactor.BufferLease;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.Region;
import io.cqflux.reactor.internal.connection.ConnectionCore;
import io.cqflux.reactor.internal.resources.ApiAccess;
import reactor.core.publisher.Mono;

/**
 * The posting side of an {@link OpMono}: what to post (immutable) and how far the loop got in
 * posting it (loop-confined). {@code OpMono} is the only subclass; it adds the subscription and
 * its signals. The two halves are one object, so that an operation stays one allocation from its
 * subscription to its completion: this class exists to keep the description and the posting
 * protocol apart from the subscription's signals in the source, not in memory.
 *
 * <p>The description is checked at subscription ({@link #validate()}) with the check the
 * transport runs before its native call; the posting protocol ({@link #stage()},
 * {@link #context()}, {@link #postedAt()}, {@link #ownError()}) is read and written by the
 * connection's loop thread only ({@code SendQueue}, {@code CompletionDispatch}).
 */
public abstract sealed class OpRequest extends Mono<Void> permits OpMono {
    private static final ApiAccess API = ApiAccess.get();

    public static final int NEW = 0;
    /** First part of a two-part operation posted, the second still to post. */
    public static final int SECOND_PENDING = 1;
    public static final int POSTED = 2;

    private static final FlushType[] FLUSH_TYPES = FlushType.values();

    // ------------------------------------------------------------ what to post (immutable)

    public final ConnectionCore core;
    public final OpKind kind;
    public final PeerRegion remote;
    public final long remoteOffset;
    public final Region local;
    public final long localOffset;
    public final long length;
    /**
     * Immediate data, or the value of an atomic write; for a flush or a durable write the flush
     * type's ordinal, -1 for none ({@link #flushType()}): one field less per operation, which
     * keeps the operation object small.
     */
    public final long value;
    /**
     * A pooled buffer this operation owns from its subscription on (its memory is {@link #local}
     * at {@link #localOffset}), given back in {@link OpMono#releaseRegions}; or null. One
     * subscription only: a second fails.
     */
    public final BufferLease lease;
    /**
     * Whether this is a staged read ({@link #stagedBy} then set), whose data is copied out in
     * {@link OpMono#releaseRegions}.
     */
    final boolean readBack;
    /**
     * The staged subscription ({@link StagedMono}) this operation runs for, or null: its
     * subscription time, not this one's, starts the time the listener hears of (the wait for a
     * buffer counts), and it may have reported the outcome itself.
     */
    public final StagedSubscription<?> stagedBy;

    // ------------------------------------------------------------ how far it was posted (loop thread)

    /** {@link #NEW}, {@link #SECOND_PENDING} or {@link #POSTED}; a byte, to keep the object small. Loop thread. */
    private byte stage = NEW;
    /** The in-flight table context, or -1. Loop thread. */
    private long context = -1;
    /**
     * When posted ({@code System.nanoTime()}, or the loop's unit clock for an operationTimeout of a
     * second or more: see {@code SendQueue.post}); the operation deadline counts from here.
     * Loop thread.
     */
    private long postedAt;
    /**
     * This operation's own failure (its error completion), which the end of the connection that
     * follows must not replace with the connection's. Loop thread.
     */
    private Throwable ownError;

    /**
     * @param readBack a staged read to copy the data out to, or null; when set it is the staged
     *     subscription the operation runs for ({@code stagedBy}, or {@code stagedBy} is null)
     */
    OpRequest(ConnectionCore core, OpKind kind, PeerRegion remote, long remoteOffset, Region local, long localOffset,
              long length, long value, FlushType flushType, BufferLease lease, StagedSubscription<?> readBack,
              StagedSubscription<?> stagedBy) {
        if (readBack != null && stagedBy != null && readBack != stagedBy) {
            throw new IllegalArgumentException("a staged read copies out to the subscription it runs for");
        }
        this.stagedBy = stagedBy != null ? stagedBy : readBack;
        this.readBack = readBack != null;
        this.lease = lease;
        this.core = core;
        this.kind = kind;
        this.remote = remote;
        this.remoteOffset = remoteOffset;
        this.local = local;
        this.localOffset = localOffset;
        this.length = length;
        this.value = flushes(kind) ? (flushType == null ? -1 : flushType.ordinal()) : value;
    }

    private static boolean flushes(OpKind kind) {
        return kind == OpKind.FLUSH || kind == OpKind.DURABLE_WRITE;
    }

    /** {@return the flush type of a flush or a durable write (null when none was given); null for other kinds} */
    public FlushType flushType() {
        return flushes(kind) && value >= 0 ? FLUSH_TYPES[(int) value] : null;
    }

    /**
     * Checks everything that can be checked before posting, with the same check the transport
     * runs before its native call ({@link OpKind#check}); throws what the Mono signals.
     */
    public void validate() {
        if (stagedBy == null) {
            core.admission.checkOpen();
        } else {
            core.admission.checkNotEnded(); // admitted at the staged operation's subscription
        }
        if (remote != null) {
            core.admission.checkOwns(remote);
        }
        if (local != null) {
            // At subscription, before the transport's own refusal on the loop, which would come
            // after a credit was taken.
            API.checkRegisteredWith(local, core.transport, kind.localRole);
        }
        kind.check(core.transport, this);
        core.admission.checkMessageLength(kind, length);
    }

    public LocalRegion nativeLocal() {
        return local == null ? null : API.nativeRegion(local);
    }

    public RemoteRegion nativeRemote() {
        return remote == null ? null : API.nativeRegion(remote);
    }

    /** Posts the first (or only) work request. Loop thread. */
    public boolean postFirst(Connection c, long ctx) {
        return kind.post(c, this, ctx);
    }

    /** Posts the second work request of a two-part operation. Loop thread. */
    public boolean postSecond(Connection c, long ctx) {
        return kind.postSecond(c, this, ctx);
    }

    // ---------------------------------------------------------------- the posting protocol (loop thread)

    /** {@return {@link #NEW}, {@link #SECOND_PENDING} or {@link #POSTED}} Loop thread. */
    public int stage() {
        return stage;
    }

    /** {@return the in-flight table context, or -1} Loop thread. */
    public long context() {
        return context;
    }

    /** {@return when the operation was posted, on the clock the connection's deadline reads} Loop thread. */
    public long postedAt() {
        return postedAt;
    }

    /** {@return this operation's own failure (a failed unsignaled part), or {@code null}} Loop thread. */
    public Throwable ownError() {
        return ownError;
    }

    /**
     * The connection is about to post the operation's first part under {@code ctx}. Loop thread.
     *
     * @param ctx the in-flight table context
     * @param at the post's time on the deadline's clock
     */
    public void posting(long ctx, long at) {
        this.context = ctx;
        this.postedAt = at;
    }

    /** The transport's queue was full: the operation waits again, with no context. Loop thread. */
    public void notPosted() {
        this.context = -1;
    }

    /** The first part of a two-part operation is posted; the second waits. Loop thread. */
    public void firstPartPosted() {
        this.stage = SECOND_PENDING;
    }

    /** Every part is posted (or, for a failed second part, nothing more will be). Loop thread. */
    public void posted() {
        this.stage = POSTED;
    }

    /**
     * The unsignaled part failed with an error of its own, which the end of the connection must
     * not replace. Loop thread.
     *
     * @param error the part's failure
     */
    public void partFailed(Throwable error) {
        this.ownError = error;
    }
}
