package io.cqflux.transport.fabric;

import io.cqflux.transport.fabric.CompletionGroup.Member;
import io.cqflux.transport.fabric.ffm.fi_ops_cm;
import io.cqflux.transport.fabric.ffm.fid_ep;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashMap;
import java.util.Map;

/**
 * The members of one {@link CompletionGroup} by slot and by receiving tag, and the retirement of
 * a left member's slot and tag until the group's next read of its queue to empty.
 *
 * <p>Tags. tcp's target entry for a peer's write with CQ data has no context (CompletionGroup,
 * routing): for it the sending fabric transport puts a tag into the high 32 bits of the 64-bit CQ
 * data, whose low 32 bits are the immediate (tcp's {@code cq_data_size} is 8, and the provider
 * carries all 64 bits), when its own transport has the groups on (without them the wire is
 * unchanged): its own TCP port and its peer's, which on the receiving side are the endpoint's
 * peer port and its own ({@code fi_getname(3)}, {@code fi_getpeer(3)}). Two members of one group
 * with the same pair would make the tag ambiguous. An accepted end knows its tag from the
 * connection request, before its endpoint exists, and joins only a group where no one holds it,
 * so clients on different hosts with one source port land in different groups. A client cannot
 * choose: Linux may reuse one local port for connections to different destinations, so two
 * connections of one client to servers listening on one port can have one tag; there the tag is
 * {@link #ambiguous}, and a tag that a member takes while a left member's tag retires (below)
 * keeps its {@link #tombstone}: the group drops the entries of both, never guesses.
 *
 * <p>Retirement. A closed member's slot is not reused until a read of the queue to empty ran
 * after the member's endpoint was closed: {@code fi_close} of the endpoint takes it off the
 * queue's endpoint list, so that read has taken every entry the endpoint left. Until then its
 * entries find no member and are dropped; a new member never gets them. A left member's tag
 * retires with its slot: its late notifications reach no one.
 *
 * <p>Threading: guarded by the group's read lock; every method but the static ones is called
 * under it (CompletionGroup: a read with its routing, a join, a leave).
 */
@SuppressWarnings("restricted") // FFM: this package is the native-access boundary of the fabric transport
final class GroupRoster {

    /** The group's logger: what the roster logs is the group's, under the name it always had. */
    private static final System.Logger LOG = System.getLogger(CompletionGroup.class.getName());

    private final CompletionGroup group;
    /** By slot. */
    private final Member[] members;
    /** Free slots, the next on top. */
    private final int[] free;
    private int freeTop;
    /** Slots of closed members whose entries may still be queued. */
    private final int[] retiring;
    private int retiringCount;
    /**
     * Receiving tags of the members: the member, {@link #ambiguous} where two hold one,
     * {@link #tombstone} where a holder left and its entries may still be queued.
     */
    private final Map<Integer, Member> tags = new HashMap<>();
    /** Tags of left members, settled by the next read to empty. */
    private final java.util.Set<Integer> retiringTags = new java.util.HashSet<>();
    /** Members whose tag is not known yet. */
    private int untagged;

    /** The tag's value where two members hold one: its entries are dropped, never guessed. */
    final Member ambiguous;
    /** The tag's value where its holder left, until the next read to empty (class comment). */
    final Member tombstone;

    GroupRoster(CompletionGroup group, int capacity) {
        this.group = group;
        this.ambiguous = group.new Member(0, "a tag two members hold", false);
        this.tombstone = group.new Member(0, "a closed member's tag", false);
        this.members = new Member[capacity];
        this.free = new int[capacity];
        for (int i = capacity - 1; i >= 0; i--) {
            free[freeTop++] = i;
        }
        this.retiring = new int[capacity];
    }

    /**
     * {@return whether a new member with receiving tag {@code tag} fits now: a free slot, and no
     * member (nor a left one whose entries may still be queued) holds the tag}
     *
     * @param tag the member's receiving tag, or 0 when it is not known before its endpoint
     */
    boolean hasRoomFor(int tag) {
        return freeTop > 0 && (tag == 0 || !tags.containsKey(tag));
    }

    /**
     * Takes a slot for a new member (CompletionGroup#join).
     *
     * @param tag its receiving tag when known before its endpoint, registered at once; 0 when it is not
     */
    Member join(String description, int tag) {
        if (freeTop == 0) {
            throw new IllegalStateException(group + " has no free slot for " + description);
        }
        Member m = group.new Member(free[--freeTop], description, tag != 0);
        members[m.slot] = m;
        if (tag != 0) {
            holdTag(m, tag);
        } else {
            untagged++;
        }
        return m;
    }

    /**
     * The member leaves: its slot and its tag retire until the next read to empty (class comment).
     *
     * @return whether it was a member (a second leave finds it gone)
     */
    boolean leave(Member m) {
        if (members[m.slot] != m) {
            return false;
        }
        members[m.slot] = null;
        if (m.tag == 0) {
            if (!m.portless) {
                untagged--;
            }
        } else {
            // Like its slot, its tag retires until a read to empty: a notification of its
            // peer may still be queued, and must reach no one (class comment).
            Member held = tags.get(m.tag);
            if (held == m || held == ambiguous) {
                tags.put(m.tag, tombstone);
            }
            retiringTags.add(m.tag);
        }
        retiring[retiringCount++] = m.slot;
        return true;
    }

    /** {@return the loop's callback of a member that has one (CompletionGroup#leave), or null} */
    Runnable neighbourTouch() {
        for (Member x : members) {
            if (x != null && x.onTouched != null) {
                return x.onTouched;
            }
        }
        return null;
    }

    /**
     * The queue was read to empty after every retiring member's fi_close: their entries are all
     * gone, so their slots may serve new members and their tags are settled.
     */
    void readToEmpty() {
        while (retiringCount > 0) {
            free[freeTop++] = retiring[--retiringCount];
        }
        settleTags();
    }

    /** {@return the member in {@code slot}, or null: none, or a slot past the group's} */
    Member at(int slot) {
        return slot < members.length ? members[slot] : null;
    }

    /** {@return what tag {@code tag} maps to: a member, {@link #ambiguous}, {@link #tombstone} or null} */
    Member tagged(int tag) {
        return tags.get(tag);
    }

    /** {@return members now} */
    int count() {
        int n = 0;
        for (Member m : members) {
            n += m == null ? 0 : 1;
        }
        return n;
    }

    /** {@return a member that holds {@code tag} now, or null} */
    Member holder(int tag) {
        for (Member x : members) {
            if (x != null && x.tag == tag) {
                return x;
            }
        }
        return null;
    }

    /** A member takes tag {@code t}. */
    private void holdTag(Member m, int t) {
        m.takeTag(t);
        Member held = tags.get(t);
        if (held == null) {
            tags.put(t, m);
        } else if (held != tombstone) {
            tags.put(t, ambiguous);
            group.warnAmbiguous(t, m);
        } else {
            // A left holder's tombstone stays until the read to empty (which the leave asked for)
            // settles the tag; until then a notification for this live member cannot be told from
            // the left one's late notifications and is dropped, which route counts and warns of
            // when it happens. Usually nothing is lost: only noted here, and the once-per-tag
            // warning is left for a real loss.
            LOG.log(System.Logger.Level.DEBUG, "{0} takes tag 0x{1} while a left member''s tombstone stands:"
                    + " its notifications wait for the group''s next read to empty", m, Integer.toHexString(t));
        }
    }

    /**
     * The read to empty has taken every entry of the left members: their tags go to the members
     * that still hold them, one or (ambiguous) several, or away.
     */
    private void settleTags() {
        for (int t : retiringTags) {
            Member only = null;
            int holders = 0;
            for (Member x : members) {
                if (x != null && x.tag == t) {
                    only = x;
                    holders++;
                }
            }
            if (holders == 0) {
                tags.remove(t);
            } else if (holders == 1) {
                tags.put(t, only);
            } else {
                if (tags.get(t) != ambiguous) {
                    group.warnAmbiguous(t, only);
                }
                tags.put(t, ambiguous);
            }
        }
        retiringTags.clear();
    }

    /** {@return the receiving tag of a peer's port and one's own: the peer's in the high 16 bits} */
    static int receivingTag(int peerPort, int ownPort) {
        return peerPort <= 0 || ownPort <= 0 ? 0 : (peerPort << 16) | ownPort;
    }

    /** CompletionGroup#tag: the member's tag from its endpoint's ports, or its join's checked against them. */
    void tag(Member m) {
        if (m.tag == 0) {
            tagLocked(m);
        } else {
            confirmTag(m);
        }
    }

    /** CompletionGroup#connectEnded: a member still without ports is asked no more. */
    void connectEnded(Member m) {
        tagLocked(m);
        if (members[m.slot] == m && m.tag == 0 && !m.portless) {
            m.markPortless();
            untagged--;
        }
    }

    /** {@return members a read still asks for their ports} */
    int untagged() {
        return untagged;
    }

    /** Asks every member not tagged yet and not portless for its ports (CompletionGroup#route). */
    void tagUntagged() {
        if (untagged > 0) {
            for (Member u : members) {
                if (u != null && u.tag == 0 && !u.portless) {
                    tagLocked(u);
                }
            }
        }
    }

    /**
     * A tag taken at {@link #join} from the connection request is checked once against the
     * endpoint's ports, which are what the peer puts in its notifications; where they differ the
     * ports win.
     */
    private void confirmTag(Member m) {
        if (members[m.slot] != m || m.ep == null || m.tagConfirmed) {
            return;
        }
        int[] p = ports(m.ep);
        if (p == null) {
            return;
        }
        m.markTagConfirmed();
        int t = receivingTag(p[1], p[0]);
        if (t == m.tag) {
            return;
        }
        LOG.log(System.Logger.Level.DEBUG, "{0}: tag 0x{1} from its request, 0x{2} from its socket", m,
                Integer.toHexString(m.tag), Integer.toHexString(t));
        int old = m.tag;
        if (tags.get(old) == m) {
            tags.remove(old);
        } else {
            retiringTags.add(old); // ambiguous or retiring: the next read to empty settles it
        }
        holdTag(m, t);
    }

    private void tagLocked(Member m) {
        if (members[m.slot] != m || m.tag != 0 || m.portless || m.ep == null) {
            return;
        }
        int[] p = ports(m.ep);
        if (p == null) {
            return;
        }
        // A client's tag: its peer may accept another client with the same pair (Linux reuses a
        // local port for connections to different destinations), which no choice of group here
        // can avoid: holdTag marks it ambiguous, and its notifications are dropped and logged.
        untagged--;
        m.markTagConfirmed(); // taken from the ports themselves
        holdTag(m, receivingTag(p[1], p[0]));
    }

    /**
     * {@return the tag a sender puts in the high 32 bits of its write-with-immediate's CQ data:
     * its own port, then its peer's; 0 when the endpoint cannot tell}
     */
    static long sendingTag(MemorySegment ep) {
        int[] p = ports(ep);
        return p == null ? 0 : Integer.toUnsignedLong((p[0] << 16) | p[1]) << 32;
    }

    /** {@return the endpoint's own port and its peer's ({@code fi_getname}, {@code fi_getpeer}), or null} */
    private static int[] ports(MemorySegment ep) {
        try (Arena tmp = Arena.ofConfined()) {
            MemorySegment addr = tmp.allocate(128, 8);
            MemorySegment len = tmp.allocate(ValueLayout.JAVA_LONG);
            MemorySegment cm = fid_ep.cm(ep);
            len.set(ValueLayout.JAVA_LONG, 0, addr.byteSize());
            if (fi_ops_cm.getname.invoke(fi_ops_cm.getname(cm), ep, addr, len) != 0) {
                return null;
            }
            int local = port(addr);
            len.set(ValueLayout.JAVA_LONG, 0, addr.byteSize());
            if (fi_ops_cm.getpeer.invoke(fi_ops_cm.getpeer(cm), ep, addr, len) != 0) {
                return null;
            }
            int peer = port(addr);
            return local <= 0 || peer <= 0 ? null : new int[] {local, peer};
        }
    }

    /** The port of a sockaddr_in or sockaddr_in6, or -1. */
    private static int port(MemorySegment sa) {
        java.net.InetSocketAddress a = io.cqflux.core.internal.SocketAddresses.decode(sa);
        return a == null ? -1 : a.getPort();
    }
}
