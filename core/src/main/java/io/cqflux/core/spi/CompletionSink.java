package io.cqflux.core.spi;

import io.cqflux.core.Completion;

/**
 * Receives completions during a drain. The {@link Completion} is a flyweight valid only during
 * the call: it reads the loop's batch memory, which the next poll overwrites and the loop's end
 * frees (reading it then is undefined, not an exception); keep {@link Completion#snapshot()}
 * instead. Implementations must not throw: the event loop wraps user handlers so that one
 * failing entry never loses the rest of a batch.
 */
@FunctionalInterface
public interface CompletionSink {

    /** @param completion the entry, valid only during this call */
    void onCompletion(Completion completion);
}
