package io.cqflux.reactor.internal.connection;

import io.cqflux.core.RegionAccess;
import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.reactor.Message;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.EnumSet;
import java.util.Set;

/*
 * Design: the control words two cqflux peers keep for each other.
 *
 * Each side registers 40 bytes per connection and names them in its hello (PeerHello, by the
 * transport's raw descriptor, so that they fit librpma's 56-byte connect private data beside an
 * exposed region). The peer writes into them by RDMA write, which needs no receive buffer:
 *
 *   [ 0,  8)  credit word: how many receives the peer has posted in total
 *   [ 8, 16)  staging of this side's own credit count (the source of its write)
 *   [16, 24)  goodbye word: the peer writes GOODBYE here before an orderly close
 *   [24, 32)  staging of this side's goodbye
 *   [32, 40)  landing of this side's keep-alive probe, a read of the peer's credit word
 *
 * Message credits. A send (or a write with immediate that consumes a receive) must land in a
 * receive buffer the peer posted. Without one, verbs makes the sender retry forever (librpma
 * connects with rnr_retry_count 7, "infinite", rpma_conn_req_connect) and libfabric's tcp
 * provider stalls the whole stream: the send sits at the head of the send queue, every operation
 * behind it waits, and the operation deadline would call a merely slow receiver dead. So a
 * sender posts a message only while the receiver's credit word, less the messages it already
 * posted, is positive. The receiver writes its absolute count of posted receives whenever it
 * moved, one write in flight at a time (the staging word is never rewritten under the NIC).
 * Counts only grow, so a late write can only understate what is available. The sender is not
 * woken by a write into its memory, so a starved sender re-reads its credit word on every
 * completion of its connection and from a 1 ms timer while it is starved.
 *
 * A receiver that can never post a receive (its receiveQueueSize is 0) writes NO_RECEIVES into
 * the credit word once, at establishment, instead of a count; a sender that reads it fails its
 * messages at once instead of waiting for a credit that cannot come. A peer that does not know
 * the word (an older cqflux) leaves it at 0, and its senders wait as they always did.
 *
 * Goodbye. Transports report an orderly disconnect and a peer process that died alike (the
 * kernel closes its socket or its RDMA CM id for it). So before this side closes a connection in
 * order it writes GOODBYE into the peer's goodbye word and waits (bounded) for that write to
 * complete; completions are in order on a reliable connection, so everything posted before it has
 * arrived too. When a connection ends, the end is CLOSED if the peer said goodbye and LOST if it
 * did not.
 *
 * A peer whose hello names no control words (an older cqflux, or a peer not written with cqflux)
 * gets raw sends and its end is judged by the transport's event alone.
 *
 * Forged words. The peer may write any 8 bytes into these 40 (it holds their key with write
 * access, and an RDMA write needs no receive), and so may any code that speaks the wire protocol
 * as a client. Nothing here is trusted: what the peer writes reaches only its own connection (a
 * credit count that lies makes this side post messages the peer cannot receive, which stall that
 * connection's own stream or queue pair; a forged goodbye makes its own end read CLOSED). As a
 * TLS endpoint ends a session on a record that cannot be right, this side ends the connection on
 * a value no cqflux peer can write (violation()): a credit count that is negative (other than
 * NO_RECEIVES), that goes back (counts only grow, and the writes of one side complete in order),
 * that says NO_RECEIVES after a count or a count after NO_RECEIVES, or that leaves more receives
 * outstanding than any peer can post at once (ConnectionConfig.MAX_QUEUE_SIZE); a goodbye word
 * that is neither 0 nor GOODBYE. The check is a read of two words, made at each keep-alive tick,
 * before each message is posted and when the connection ends. An impossible value counts only
 * when the next check, at least CONFIRM_NANOS later, still reads an impossible value (the same or
 * another); a plausible read in between clears it: a provider may place an 8-byte payload in
 * pieces (libfabric's tcp provider copies a write's data from the socket as it arrives, and one
 * read of the socket can end inside the word), so a single read can see an honest word half
 * written, and the loop's next progress of the connection completes it. An honest connection must
 * never end on such a read, however many it meets over its life; so a liar that alternates lies
 * with plausible values is not caught, and like a lie that stays plausible (a count that grows too
 * fast, within the bound) it only hurts the liar's own connection, which the operation deadline
 * ends. A liar whose value stays impossible, changing or not, is caught at the next check.
 *
 * Keep-alive. The words are also registered for remote reading, so that an idle side can ask
 * the peer's NIC for a sign of life without anything from the peer's application: an 8-byte
 * RDMA read of the peer's credit word into this side's landing word (KeepAlive). A read needs
 * the response to come back, so its completion proves the path and the peer's queue pair alive,
 * where a write may complete once it left this side (fi_cq(3): FI_TRANSMIT_COMPLETE, which a
 * provider may give for a write as soon as the data is on its way). The value read is never
 * used.
 */

/**
 * The control words of one connection (see the design comment at the top of this file).
 * Loop-confined after construction, except {@link #close()}, which runs after the native
 * connection is gone.
 */
public final class PeerControl implements AutoCloseable {

    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();
    /** Bytes of the control words. */
    public static final int SIZE = 40;
    private static final long CREDIT_WORD = 0;
    private static final long CREDIT_STAGING = 8;
    private static final long GOODBYE_WORD = 16;
    private static final long GOODBYE_STAGING = 24;
    private static final long PROBE_LANDING = 32;
    /**
     * What a receiver that can never post a receive writes into its peer's credit word: negative,
     * so no count of posted receives can equal it, and a sender that does not know it sees no credit.
     */
    public static final long NO_RECEIVES = 0x8371_6678_206E_7278L;
    /** What an orderly close writes into the peer's goodbye word ("cqfx bye"). */
    public static final long GOODBYE = 0x6371_6678_2062_7965L;
    /** The access a peer's control words are addressed with. */
    public static final Set<RegionAccess> PEER_ACCESS = Set.of(RegionAccess.WRITE_DST, RegionAccess.READ_SRC);
    /**
     * The access a peer's control words are addressed with when its hello does not say they are
     * readable (a peer from before the keep-alive): writes only, and no keep-alive.
     */
    public static final Set<RegionAccess> PEER_WRITE_ONLY = Set.of(RegionAccess.WRITE_DST);

    private final Arena arena;
    private final LocalRegion words;
    private RemoteRegion peer;
    /** Whether the peer's words may be read (its hello said so): the keep-alive's probe. */
    private boolean peerReadable;
    /** Messages this side posted that consume one of the peer's receives. */
    private long used;
    /** Receives this side posted, in total. */
    private long posted;
    /** The last count whose write into the peer's credit word was posted. */
    private long granted;
    private boolean grantInFlight;
    /** The largest credit count read from the peer so far; 0 before any. */
    private long creditSeen;
    /** Whether the peer's credit word said NO_RECEIVES. */
    private boolean noReceivesSeen;
    /** Messages the peer sent that consumed one of this side's receives. */
    private long received;

    /** Whether the last check read an impossible value, first at {@link #suspectSince}. */
    private boolean suspect;
    private long suspectSince;

    /** How long an impossible value must stay impossible before it counts (see "Forged words"). */
    static final long CONFIRM_NANOS = 1_000_000L;

    /** The most receives a cqflux peer can have posted at once: its receive queue's bound. */
    static final long MAX_OUTSTANDING = io.cqflux.core.ConnectionConfig.MAX_QUEUE_SIZE;

    private PeerControl(Arena arena, LocalRegion words) {
        this.arena = arena;
        this.words = words;
    }

    /**
     * Registers this side's control words.
     *
     * @param t where to register them: the transport, or one accepted connection's own key scope
     * @return the control words, not yet linked to a peer
     */
    public static PeerControl register(io.cqflux.core.spi.Registrar t) {
        Arena a = io.cqflux.core.internal.DeferredArena.ofShared(); // closed after the deregistration: DeferredArena
        try {
            MemorySegment mem = a.allocate(SIZE, 8);
            return new PeerControl(a, t.register(mem, EnumSet.of(RegionAccess.WRITE_DST,
                    RegionAccess.WRITE_SRC, RegionAccess.READ_SRC, RegionAccess.READ_DST)));
        } catch (RuntimeException | Error e) {
            a.close();
            throw e;
        }
    }

    /**
     * {@return control words that take no part: nothing registered, never linked; for a
     * connection with raw private data (no hello), whose sends go raw and whose end the
     * transport's event alone decides}
     */
    public static PeerControl none() {
        return new PeerControl(null, null);
    }

    /** {@return the transport's raw descriptor of this side's control words, for the hello} */
    public byte[] descriptor() {
        return words.rawDescriptor();
    }

    /**
     * Links the peer's control words (from its hello).
     *
     * @param peerWords the peer's control words, or {@code null} when the peer named none
     */
    public void peer(RemoteRegion peerWords) {
        peer(peerWords, true);
    }

    /**
     * Links the peer's control words (from its hello).
     *
     * @param peerWords the peer's control words, or {@code null} when the peer named none
     * @param readable whether its hello said they may be read remotely (the keep-alive's probe)
     */
    public void peer(RemoteRegion peerWords, boolean readable) {
        this.peer = peerWords;
        this.peerReadable = peerWords != null && readable;
    }

    /** {@return whether the peer's words may be probed by the keep-alive (its hello said they are readable)} */
    public boolean peerReadable() {
        return peerReadable;
    }

    /** {@return the peer's control words, or {@code null} (closed with the connection)} */
    public RemoteRegion peerWords() {
        return peer;
    }

    /** {@return whether the peer takes part (its hello named control words)} */
    public boolean enabled() {
        return peer != null;
    }

    // ---------------------------------------------------------------- credits, the sender's side

    /** {@return whether a message may be posted now (always, when the peer does not take part)} */
    public boolean mayPost() {
        return peer == null || (long) WORD.getAcquire(words.segment(), CREDIT_WORD) - used > 0;
    }

    /** {@return whether the peer said it can never post a receive (NO_RECEIVES in the credit word)} */
    public boolean peerNeverReceives() {
        return peer != null && (long) WORD.getAcquire(words.segment(), CREDIT_WORD) == NO_RECEIVES;
    }

    /** A message that consumes one of the peer's receives is being posted. */
    public void consume() {
        used++;
    }

    // ---------------------------------------------------------------- credits, the receiver's side

    /**
     * This side posted receives.
     *
     * @param n how many
     */
    public void receivesPosted(int n) {
        posted += n;
    }

    /** This side can never post a receive: the next grant tells the peer NO_RECEIVES instead of a count. */
    public void neverReceives() {
        posted = NO_RECEIVES;
    }

    /** {@return whether the peer should hear of receives it does not know about yet} */
    public boolean grantPending() {
        return peer != null && !grantInFlight && posted != granted;
    }

    /**
     * Posts the write of this side's receive count into the peer's credit word; only when
     * {@link #grantPending()}. Loop thread.
     *
     * @param c the connection
     * @param context the in-flight table context of the write
     * @return whether it was posted (false: the transport's queue is momentarily full)
     */
    public boolean postGrant(Connection c, long context) {
        WORD.setRelease(words.segment(), CREDIT_STAGING, posted);
        if (!c.write(peer, CREDIT_WORD, words, CREDIT_STAGING, 8, context, true)) {
            return false;
        }
        granted = posted;
        grantInFlight = true;
        return true;
    }

    /** The grant write completed. */
    public void grantDone() {
        grantInFlight = false;
    }

    // ---------------------------------------------------------------- goodbye

    /**
     * Posts the goodbye write into the peer's goodbye word. Loop thread.
     *
     * @param c the connection
     * @param context the in-flight table context of the write
     * @return whether it was posted
     */
    public boolean postGoodbye(Connection c, long context) {
        WORD.setRelease(words.segment(), GOODBYE_STAGING, GOODBYE);
        return c.write(peer, GOODBYE_WORD, words, GOODBYE_STAGING, 8, context, true);
    }

    /** {@return whether the peer wrote its goodbye into this side's word} */
    public boolean peerSaidGoodbye() {
        return (long) WORD.getAcquire(words.segment(), GOODBYE_WORD) == GOODBYE;
    }

    // ---------------------------------------------------------------- forged words

    /**
     * Reads the words the peer writes and says what no cqflux peer could have written there (see
     * "Forged words" in the design comment at the top of this file). Loop thread.
     *
     * @return what is impossible, once it stayed impossible from one check to a later one (see
     *     CONFIRM_NANOS), or {@code null} when the words are plausible, not yet confirmed, or the
     *     peer takes no part
     */
    public String violation() {
        if (peer == null || words == null) {
            return null;
        }
        long g = (long) WORD.getAcquire(words.segment(), GOODBYE_WORD);
        long c = (long) WORD.getAcquire(words.segment(), CREDIT_WORD);
        String v = impossible(g, c);
        if (v == null) {
            suspect = false;
            return null;
        }
        long now = System.nanoTime();
        if (suspect) {
            return now - suspectSince >= CONFIRM_NANOS ? v : null;
        }
        suspect = true;
        suspectSince = now;
        return null;
    }

    /** {@return what no cqflux peer can write about these two words, or null}; notes plausible counts */
    private String impossible(long g, long c) {
        if (g != 0 && g != GOODBYE) {
            return "its goodbye word holds 0x" + Long.toHexString(g) + ", neither 0 nor the goodbye 0x"
                    + Long.toHexString(GOODBYE);
        }
        if (c == NO_RECEIVES) {
            if (creditSeen > 0) {
                return "its credit word says it posts no receives after it granted " + creditSeen;
            }
            noReceivesSeen = true;
            return null;
        }
        if (noReceivesSeen) {
            return "its credit word grants " + c + " receives after it said it posts none";
        }
        if (c < 0) {
            return "its credit word holds the negative count " + c;
        }
        if (c < creditSeen) {
            return "its credit count went back from " + creditSeen + " to " + c + " (counts only grow)";
        }
        if (c - used > MAX_OUTSTANDING) {
            return "its credit count " + c + " leaves " + (c - used) + " receives outstanding beyond the "
                    + used + " messages sent, more than any peer can post at once (" + MAX_OUTSTANDING + ")";
        }
        creditSeen = c;
        return null;
    }

    /**
     * A message from the peer consumed one of this side's receives. Loop thread.
     *
     * @return what is wrong when the peer sent more messages than this side granted it credits
     *     for, else {@code null} (also when the peer takes no part: raw sends have no credits)
     */
    public String receivedBeyondGrant() {
        received++;
        if (peer == null || posted == NO_RECEIVES || received <= granted) {
            return null;
        }
        // An honest peer posts its n-th message only after it read a count of at least n in its
        // credit word, which only a grant write carries, and granted is that write's count from
        // its post on: so received never passes granted. The message found a receive this side
        // had posted and not yet granted.
        return "its message " + received + " arrived when " + granted + " receives had been granted to it";
    }

    // ---------------------------------------------------------------- keep-alive

    /**
     * Posts the keep-alive probe: a read of the peer's credit word into this side's landing
     * word. Loop thread; only when {@link #enabled()}, one at a time.
     *
     * @param c the connection
     * @param context the in-flight table context of the read
     * @return whether it was posted
     */
    public boolean postProbe(Connection c, long context) {
        return c.read(words, PROBE_LANDING, peer, CREDIT_WORD, 8, context, true);
    }

    /** Frees the control words; after the native connection is closed (the NIC may write them until then). */
    @Override
    public void close() {
        try {
            if (peer != null) {
                peer.close();
            }
            if (words != null) {
                words.close();
            }
        } finally {
            if (arena != null) {
                arena.close();
            }
        }
    }
}
