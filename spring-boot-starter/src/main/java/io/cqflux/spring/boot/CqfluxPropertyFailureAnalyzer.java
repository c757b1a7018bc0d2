package io.cqflux.spring.boot;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a start that failed on a refused {@code cqflux.*} value ({@link CqfluxPropertyException})
 * into Spring Boot's one-paragraph diagnosis naming the property, its value and the bound.
 */
public final class CqfluxPropertyFailureAnalyzer extends AbstractFailureAnalyzer<CqfluxPropertyException> {

    /** Created by Spring Boot from {@code META-INF/spring.factories}. */
    public CqfluxPropertyFailureAnalyzer() {
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, CqfluxPropertyException cause) {
        return new FailureAnalysis("cqflux refused a property: " + cause.getMessage(),
                "Change " + cause.property() + " in the application's configuration to a value within the bound"
                        + " named above (the cqflux.* properties are listed in the starter's configuration metadata"
                        + " and the guide's Spring section).", cause);
    }
}
