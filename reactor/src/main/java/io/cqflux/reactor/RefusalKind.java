package io.cqflux.reactor;

/**
 * Why a server refused a request or ended a connection for what its peer did: one counter each in
 * {@link RdmaServer.Stats} (per server, and for the whole instance in {@link Cqflux#serverStats()}),
 * and the {@code kind} tag of the {@code cqflux.server.refusals} meter of the micrometer module.
 * See {@code docs/security.md}.
 */
public enum RefusalKind {
    /** Rejected at arrival: {@link AcceptOptions#withMaxConnections} reached. Nothing was opened. */
    MAX_CONNECTIONS("max_connections"),
    /** Rejected at arrival: {@link AcceptOptions#withMaxPendingHandshakes} reached. Nothing was opened. */
    MAX_PENDING("max_pending"),
    /** Refused by the {@link Authenticator} (or given no decision). */
    AUTHENTICATOR("authenticator"),
    /** Rejected at arrival: its private data was not a well-formed hello. Nothing was opened. */
    MALFORMED_HELLO("malformed_hello"),
    /** Its handshake (the authenticator's decision included) outlasted {@link AcceptOptions#withHandshakeTimeout}. */
    HANDSHAKE_TIMEOUT("handshake_timeout"),
    /**
     * Ended: the peer wrote values into its connection's control words (credits, goodbye) that no
     * cqflux peer can write.
     */
    CONTROL_WORD("control_word"),
    /**
     * Ended: the peer sent a message the server had granted it no receive for, and the message
     * found a receive posted but not yet granted (one that finds none is held back by the
     * transport: docs/security.md).
     */
    BEYOND_CREDITS("beyond_credits"),
    /**
     * Rejected at arrival: {@link AcceptOptions#withMaxConnectionsPerAddress} reached for the
     * request's address. Nothing was opened.
     */
    MAX_PER_ADDRESS("max_per_address");

    private final String tag;

    RefusalKind(String tag) {
        this.tag = tag;
    }

    /** {@return the value of the meter's {@code kind} tag: lower case, stable} */
    public String tagValue() {
        return tag;
    }
}
