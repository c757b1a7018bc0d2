package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.spring.boot.actuate.CqfluxHealthContributorAutoConfiguration;
import io.cqflux.spring.boot.metrics.CqfluxMetricsAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/** What the starter could not wire is a logged reason, never a silent skip. */
@ExtendWith(OutputCaptureExtension.class)
class CqfluxWiringReportTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class,
                    CqfluxHealthContributorAutoConfiguration.class, CqfluxMetricsAutoConfiguration.class))
            .withPropertyValues("cqflux.transport=fabric");

    @Test
    void healthAndRegistryPresent_oneInfoLineNamesTheHealthComponentAndTheBoundMeters(CapturedOutput out) {
        runner.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                        SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class))
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(out).contains("cqflux: instance 'cqflux'; health: 'cqflux' component; meters: cqflux.* bound");
                });
    }

    /**
     * A registry bean of the application's own without Spring Boot's metrics auto-configuration:
     * nothing binds the binder to it, and the report says so instead of "bound".
     */
    @Test
    void aRegistryOfItsOwn_withoutBootsMetricsAutoConfiguration_theLogSaysNothingBindsTheMeters(CapturedOutput out) {
        runner.withBean(io.micrometer.core.instrument.MeterRegistry.class,
                        io.micrometer.core.instrument.simple.SimpleMeterRegistry::new)
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx.getBean(io.micrometer.core.instrument.MeterRegistry.class).getMeters())
                            .as("what the report must not call bound").isEmpty();
                    assertThat(out).contains("meters: none bound by Spring Boot (a MeterRegistry and the"
                            + " CqfluxMetrics binder exist").doesNotContain("cqflux.* bound");
                });
    }

    @Test
    void withoutSpringBootHealth_theLogSaysThereIsNoHealthComponentAndWhatToAdd(CapturedOutput out) {
        runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.health"))
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed().doesNotHaveBean("cqfluxHealthContributor");
                    assertThat(out).contains("INFO").contains("health: none (spring-boot-health is not on the class path:"
                            + " add spring-boot-starter-actuator)");
                });
    }

    @Test
    void healthSwitchedOff_theLogNamesTheProperty(CapturedOutput out) {
        runner.withPropertyValues("management.health.cqflux.enabled=false").run(ctx -> {
            assertThat(ctx).hasNotFailed().doesNotHaveBean("cqfluxHealthContributor");
            assertThat(out).contains("health: none (the health contributor is switched off:"
                    + " management.health.cqflux.enabled=false");
        });
    }

    @Test
    void withoutAMeterRegistryBean_theLogSaysSoAndWhatToAdd(CapturedOutput out) {
        runner.run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(out).contains("meters: none (no MeterRegistry bean: add spring-boot-starter-actuator, whose"
                    + " metrics auto-configuration makes one and binds the meters to it)");
        });
    }

    @Test
    void withoutMicrometer_theLogSaysSo(CapturedOutput out) {
        runner.withClassLoader(new FilteredClassLoader("io.micrometer.core")).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            assertThat(out).contains("meters: none (Micrometer is not on the class path)");
        });
    }
}
