package io.cqflux.reactor;

/** STUB: the entry point, implemented by the reactive API work. */
public final class Cqflux {
    private Cqflux() {
    }
}
