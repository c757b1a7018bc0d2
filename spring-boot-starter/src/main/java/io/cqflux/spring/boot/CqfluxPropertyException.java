package io.cqflux.spring.boot;

/**
 * A {@code cqflux.*} property whose value the library refused: names the property and its value,
 * with the library's own message (the bound it breaks) as the cause. {@link
 * CqfluxPropertyFailureAnalyzer} turns it into Spring Boot's "APPLICATION FAILED TO START"
 * paragraph.
 */
public final class CqfluxPropertyException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final String property;
    private final transient Object value;

    /**
     * @param property the property, e.g. {@code cqflux.loops}
     * @param value its value as bound
     * @param cause the library's refusal, naming the bound
     */
    public CqfluxPropertyException(String property, Object value, RuntimeException cause) {
        super(property + "=" + value + " is refused: " + cause.getMessage(), cause);
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
