package io.cqflux.reactor;

import java.util.Objects;

/**
 * What a server with raw private data answers one connection request
 * ({@link AcceptOptions#rawPrivateData(java.util.function.Function)}): accept with its own raw
 * private data, or reject. Immutable and thread-safe.
 */
public final class AcceptDecision {
    private static final AcceptDecision REJECT = new AcceptDecision(null);

    private final byte[] data;

    private AcceptDecision(byte[] data) {
        this.data = data;
    }

    /**
     * Accepts the request and answers with raw private data, verbatim.
     *
     * @param privateData the bytes, at most {@link Cqflux#maxAcceptPrivateData()} (196 on rpma),
     *     possibly empty (then the accept carries none); copied
     * @return the decision
     */
    public static AcceptDecision accept(byte[] privateData) {
        return new AcceptDecision(Objects.requireNonNull(privateData, "privateData").clone());
    }

    /** {@return the decision to reject the request (the client's connect fails with {@code REJECTED})} */
    public static AcceptDecision reject() {
        return REJECT;
    }

    /** {@return whether the request is accepted} */
    public boolean isAccept() {
        return data != null;
    }

    /** {@return the private data to answer with (a copy), or {@code null} for a rejection} */
    public byte[] privateData() {
        return data == null ? null : data.clone();
    }

    byte[] data() {
        return data;
    }

    @Override
    public String toString() {
        return data == null ? "AcceptDecision[reject]" : "AcceptDecision[accept, " + data.length + " bytes]";
    }
}
