package io.cqflux.spring.boot;

/**
 * A {@code cqflux.*} property whose value the library refused: names the property, its value and
 * the library's own message (the bound it breaks). It is the root of the start's failure (the
 * library's exception is attached as suppressed, not as the cause), so that whatever reports the
 * most specific cause names the property; {@link CqfluxPropertyFailureAnalyzer} turns it into
 * Spring Boot's "APPLICATION FAILED TO START" paragraph.
 */
public final class CqfluxPropertyException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String property;
    private final transient Object value;

    /**
     * @param property the property, e.g. {@code cqflux.loops}
     * @param value its value as bound
     * @param cause the library's refusal, naming the bound (kept as suppressed)
     */
    public CqfluxPropertyException(String property, Object value, RuntimeException cause) {
        super(property + "=" + value + " is refused: " + cause.getMessage());
        addSuppressed(cause);
        this.property = property;
        this.value = value;
    }

    /** {@return the property, e.g. {@code cqflux.loops}} */
    public String property() {
        return property;
    }

    /** {@return its value as bound} */
    public Object value() {
        return value;
    }
}
