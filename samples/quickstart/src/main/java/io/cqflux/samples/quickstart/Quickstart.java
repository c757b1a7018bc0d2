package io.cqflux.samples.quickstart;

/** STUB: implemented with the reactive API. */
public final class Quickstart {
    private Quickstart() {
    }

    /** @param args command line */
    public static void main(String[] args) {
        System.out.println("not yet");
    }
}
