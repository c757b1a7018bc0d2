package io.cqflux.core.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Copies out of native memory, for the transports' per-request reads on a loop. */
public final class Segments {

    private Segments() {
    }

    /**
     * {@return {@code n} bytes of {@code from} at {@code offset}, copied} Not
     * {@code MemorySegment.toArray}: it builds a new element layout ({@code withOrder}) at every
     * call, which in code that runs once per connection or request, on a loop, is far from free.
     *
     * @param from the memory
     * @param offset where the bytes start
     * @param n how many, at most {@code Integer.MAX_VALUE}
     */
    public static byte[] copyOut(MemorySegment from, long offset, long n) {
        byte[] b = new byte[Math.toIntExact(n)];
        MemorySegment.copy(from, ValueLayout.JAVA_BYTE, offset, b, 0, b.length);
        return b;
    }
}
