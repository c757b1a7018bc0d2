package io.cqflux.core.spi;

/**
 * A native source that several loop-confined owners share, each of them a {@link Pollable} whose
 * {@link Pollable#sharedBy()} names it: one fd for many connections. All its members belong to
 * the one loop that registers it; it is registered once per loop however many members it has.
 * Its {@link #prepareToSleep()} and {@link #watchTouches} are those of the native source.
 */
public interface SharedSource extends Pollable {

    /**
     * Reads what is pending on the native source, without blocking, and hands each entry to the
     * member it names, which then calls its {@code touched} callback (see
     * {@link Pollable#sharedBy()}); an entry for no current member is dropped. Called on the loop
     * thread when the fd is readable or the source said it is not safe to sleep.
     */
    void dispatch();
}
