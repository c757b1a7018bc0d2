package io.cqflux.epoll.loop;

import java.util.Arrays;

/*
 * Design.
 *
 * Ids. epoll(7) hands back only the 64-bit epoll_event.data that was given to epoll_ctl(2), so
 * every registered source gets an id: its slot index in the low 32 bits and the slot's generation
 * in the high 32. A slot is reused after removal with its generation bumped, so an event that
 * epoll_wait(2) already returned for a removed source (a handler earlier in the same batch closed
 * it) finds either an empty slot or a newer id, never the wrong source. Slot 0 is never handed
 * out: id 0 is the poller's wake-up eventfd (EpollPoller.WAKE_ID).
 *
 * Iteration. Busy rounds and the pre-sleep check walk the queues and the other sources in two
 * arrays that are replaced (copy on write) on every add and remove, so a handler may unregister
 * any source, itself included, while the loop iterates a snapshot. Registration is rare; walking
 * is every round.
 */

/**
 * The registration table of one {@link EventLoop}: maps the ids stored in
 * {@code epoll_event.data} to {@link LoopSource}s, and keeps the completion queues and the other
 * sources in two arrays for the rounds that visit every source.
 *
 * <p>Thread safety and lifetime: loop thread only, not thread-safe; lives as long as its loop and
 * holds no native memory.
 */
final class SourceTable {

    private static final LoopSource[] NO_SOURCES = new LoopSource[0];

    private final EventLoop loop;

    private LoopSource[] slots = new LoopSource[16];
    private int[] generations = new int[16];
    private int[] freeSlots = new int[16];
    private int freeCount;
    private int nextSlot = 1;
    /** Copy-on-write arrays so that a handler may unregister while the loop iterates them. */
    private LoopSource[] queues = NO_SOURCES;
    private LoopSource[] others = NO_SOURCES;
    /** Listed queues that may be left unpolled while quiet ({@link LoopSource#quietCapable}). */
    private int quietCapable;

    /**
     * Creates an empty table.
     *
     * @param loop the loop that owns the table (whose thread alone may use it)
     */
    SourceTable(EventLoop loop) {
        this.loop = loop;
    }

    /**
     * Takes a slot for {@code s}, stores its id in {@link LoopSource#id} and lists it.
     *
     * @param s the source, not in the table
     * @return the id to give epoll ({@code epoll_event.data}); never {@link EpollPoller#WAKE_ID}
     */
    long add(LoopSource s) {
        assert loop.inEventLoop();
        int slot = freeCount > 0 ? freeSlots[--freeCount] : nextSlot++;
        if (slot >= slots.length) {
            slots = Arrays.copyOf(slots, slots.length * 2);
            generations = Arrays.copyOf(generations, generations.length * 2);
        }
        int gen = ++generations[slot];
        long id = ((long) gen << 32) | slot;
        s.id = id;
        slots[slot] = s;
        if (s.cq != null) {
            queues = append(queues, s);
            if (s.quietCapable) {
                quietCapable++;
            }
        } else {
            others = append(others, s);
        }
        return id;
    }

    /**
     * @param id an {@code epoll_event.data} value
     * @return the source registered under exactly that id (slot and generation), or {@code null}
     *     when it was removed meanwhile or the id is not a source's
     */
    LoopSource lookup(long id) {
        assert loop.inEventLoop();
        int slot = (int) id;
        if (slot <= 0 || slot >= nextSlot) {
            return null;
        }
        LoopSource s = slots[slot];
        return s != null && s.id == id ? s : null;
    }

    /**
     * Frees the slot of {@code s} and unlists it; idempotent.
     *
     * @param s a source that {@link #add} took in
     */
    void remove(LoopSource s) {
        assert loop.inEventLoop();
        int slot = (int) s.id;
        if (slot <= 0 || slot >= nextSlot || slots[slot] != s) {
            return;
        }
        slots[slot] = null;
        if (freeCount == freeSlots.length) {
            freeSlots = Arrays.copyOf(freeSlots, freeSlots.length * 2);
        }
        freeSlots[freeCount++] = slot;
        if (s.cq != null) {
            queues = remove(queues, s);
            if (s.quietCapable) {
                quietCapable--;
            }
        } else {
            others = remove(others, s);
        }
    }

    /** {@return the registered completion queues; a snapshot that later adds and removes leave alone} */
    LoopSource[] queues() {
        assert loop.inEventLoop();
        return queues;
    }

    /** {@return how many registered queues a spinning round may leave unpolled while they are quiet} */
    int quietCapableQueues() {
        assert loop.inEventLoop();
        return quietCapable;
    }

    /** {@return the registered non-queue sources; a snapshot that later adds and removes leave alone} */
    LoopSource[] others() {
        assert loop.inEventLoop();
        return others;
    }

    /** {@return every registered source, in slot order; a fresh array} */
    LoopSource[] all() {
        assert loop.inEventLoop();
        LoopSource[] out = new LoopSource[queues.length + others.length];
        int n = 0;
        for (int i = 1; i < nextSlot; i++) {
            if (slots[i] != null) {
                out[n++] = slots[i];
            }
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    private static LoopSource[] append(LoopSource[] a, LoopSource s) {
        LoopSource[] b = Arrays.copyOf(a, a.length + 1);
        b[a.length] = s;
        return b;
    }

    private static LoopSource[] remove(LoopSource[] a, LoopSource s) {
        for (int i = 0; i < a.length; i++) {
            if (a[i] == s) {
                if (a.length == 1) {
                    return NO_SOURCES;
                }
                LoopSource[] b = new LoopSource[a.length - 1];
                System.arraycopy(a, 0, b, 0, i);
                System.arraycopy(a, i + 1, b, i, a.length - i - 1);
                return b;
            }
        }
        return a;
    }
}
