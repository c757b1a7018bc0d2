package io.cqflux.transport.fabric;

import io.cqflux.transport.fabric.CompletionGroup.Member;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The members of one {@link CompletionGroup} by slot and by receiving tag, and the retirement of
 * a left member's slot and tag until the group's next read of its queue to empty.
 *
 * <p>Tags. tcp's target entry for a peer's write with CQ data has no context (CompletionGroup,
 * routing): for it the sender puts a tag into the high 32 bits of the 64-bit CQ data, whose low
 * 32 bits are the immediate (tcp's {@code cq_data_size} is 8, and the provider carries all 64
 * bits). The receiver chooses the tag: each member draws one at its join, at random
 * ({@link SecureRandom}) among the 32-bit values other than 0 that no member of its group holds
 * and no left member's retiring entries may still carry, and its connection tells its peer in the
 * connection's parameters ({@link #parameters}, carried in the hello: FabricConnection#parameters),
 * which the peer's connection then puts in every write with immediate to it
 * (FabricConnection#applyPeerParameters). So a tag is never ambiguous, whatever the addresses and
 * ports between the peers (NAT, port mapping, proxies), and a peer learns only its own
 * connection's tag: to hand a notification to a neighbour of its group it must guess that
 * neighbour's, and each wrong guess is dropped and counted (CompletionGroup).
 *
 * <p>Retirement. A closed member's slot is not reused until a read of the queue to empty ran
 * after the member's endpoint was closed: {@code fi_close} of the endpoint takes it off the
 * queue's endpoint list, so that read has taken every entry the endpoint left. Until then its
 * entries find no member and are dropped; a new member never gets them. A left member's tag
 * retires with its slot: its late notifications reach no one, and no new member draws it
 * meanwhile.
 *
 * <p>Threading: guarded by the group's read lock; every method but the static ones is called
 * under it (CompletionGroup: a read with its routing, a join, a leave).
 */
final class GroupRoster {

    /** The length of a tcp connection's parameters: its receiving tag, u32 big-endian (0: its queue is its own). */
    static final int PARAMETERS_LENGTH = 4;
    /** Where tags come from: a peer must not predict its neighbours' from its own (class comment). */
    private static final SecureRandom TAGS = new SecureRandom();

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
     * Receiving tags: the member that holds one, or {@link #tombstone} where its holder left and
     * its entries may still be queued.
     */
    private final Map<Integer, Member> tags = new HashMap<>();
    /** Tags of left members, removed by the next read to empty. */
    private final List<Integer> retiringTags = new ArrayList<>();

    /** The tag's value where its holder left, until the next read to empty (class comment). */
    final Member tombstone;

    GroupRoster(CompletionGroup group, int capacity) {
        this.group = group;
        this.tombstone = group.new Member(0, "a closed member's tag", 0);
        this.members = new Member[capacity];
        this.free = new int[capacity];
        for (int i = capacity - 1; i >= 0; i--) {
            free[freeTop++] = i;
        }
        this.retiring = new int[capacity];
    }

    /** {@return whether a new member fits now: a free slot (a retiring one does not)} */
    boolean hasRoom() {
        return freeTop > 0;
    }

    /** {@return a candidate tag, drawn before the group's lock is taken (CompletionGroup#join)} */
    static int drawTag() {
        return TAGS.nextInt();
    }

    /**
     * Takes a slot for a new member, with a tag of its own (CompletionGroup#join).
     *
     * @param drawn a tag drawn outside the lock ({@link #drawTag}), drawn again here only when it
     *     is 0 or taken
     */
    Member join(String description, int drawn) {
        if (freeTop == 0) {
            throw new IllegalStateException(group + " has no free slot for " + description);
        }
        int t = drawn;
        while (t == 0 || tags.containsKey(t)) {
            t = TAGS.nextInt();
        }
        Member m = group.new Member(free[--freeTop], description, t);
        members[m.slot] = m;
        tags.put(t, m);
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
        tags.put(m.tag, tombstone);
        retiringTags.add(m.tag);
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
     * gone, so their slots may serve new members and their tags go.
     */
    void readToEmpty() {
        while (retiringCount > 0) {
            free[freeTop++] = retiring[--retiringCount];
        }
        for (int t : retiringTags) {
            tags.remove(t, tombstone);
        }
        retiringTags.clear();
    }

    /** {@return the member in {@code slot}, or null: none, or a slot past the group's} */
    Member at(int slot) {
        return slot < members.length ? members[slot] : null;
    }

    /** {@return what tag {@code tag} maps to: a member, {@link #tombstone} or null} */
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

    /** {@return a tcp connection's parameters: its receiving tag, 0 where its queue is its own} */
    static byte[] parameters(int tag) {
        return ByteBuffer.allocate(PARAMETERS_LENGTH).putInt(tag).array();
    }

    /**
     * {@return the receiving tag a peer's parameters ask for, 0 for none (also for empty ones: a
     * peer that told none, such as a cqflux from before the tags)}
     *
     * @throws IllegalArgumentException when the bytes are neither empty nor a tag, naming their
     *     length and what was expected
     */
    static int peerTag(byte[] parameters, String description) {
        if (parameters == null) {
            throw new IllegalArgumentException("peer connection parameters null for " + description);
        }
        if (parameters.length == 0) {
            return 0;
        }
        if (parameters.length != PARAMETERS_LENGTH) {
            throw new IllegalArgumentException("peer connection parameters of " + parameters.length + " bytes for "
                    + description + ": expected 0 bytes, or " + PARAMETERS_LENGTH + " (a receiving tag)");
        }
        return ByteBuffer.wrap(parameters).getInt();
    }
}
