package io.cqflux.spring.boot;

import io.cqflux.reactor.Cqflux;
import java.util.ArrayList;
import java.util.List;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.SpringBootVersion;
import org.springframework.util.ClassUtils;

/**
 * Says, once every singleton exists, what the starter wired and why it left out what it did: the
 * {@code cqflux} health component and the {@code cqflux.*} meters are each either reported as
 * wired (one INFO line for the whole) or named with the reason they are missing (a missing module
 * at INFO, a class path that cannot work at WARN). A starter whose optional parts switch off on
 * class-path conditions otherwise fails silently: the symptom is a health component or meters
 * that are simply not there, with nothing in the log to say why.
 */
public final class CqfluxWiringReport implements SmartInitializingSingleton {
    /** The logger the report writes to. */
    static final String LOGGER = "io.cqflux.spring.boot";

    /** Spring Boot 4's health API (module {@code spring-boot-health}), which the health contributor implements. */
    static final String BOOT4_HEALTH = "org.springframework.boot.health.contributor.ReactiveHealthIndicator";
    /** Spring Boot 3's health API: present without {@link #BOOT4_HEALTH} only on a Boot 3 class path. */
    static final String BOOT3_HEALTH = "org.springframework.boot.actuate.health.ReactiveHealthIndicator";
    /** Micrometer. */
    static final String METER_REGISTRY = "io.micrometer.core.instrument.MeterRegistry";
    /** The starter's meter binder (module {@code cqflux-micrometer}). */
    static final String CQFLUX_METRICS = "io.cqflux.micrometer.CqfluxMetrics";
    /**
     * What binds {@code MeterBinder} beans to the registries in Spring Boot 4: a bean that its
     * metrics auto-configuration ({@code MetricsAutoConfiguration}, module
     * {@code spring-boot-micrometer-metrics}) declares. Without it a registry bean and the binder
     * bean are both there and nothing joins them.
     */
    static final String BOOT_METER_BINDING =
            "org.springframework.boot.micrometer.metrics.autoconfigure.MeterRegistryPostProcessor";

    private static final Log LOG = LogFactory.getLog(LOGGER);

    private final ListableBeanFactory beans;
    private final ClassLoader classLoader;

    /**
     * @param beans the context, read once every singleton exists
     * @param classLoader where the optional modules are looked for
     */
    public CqfluxWiringReport(ListableBeanFactory beans, ClassLoader classLoader) {
        this.beans = beans;
        this.classLoader = classLoader;
    }

    @Override
    public void afterSingletonsInstantiated() {
        Report r = report();
        for (String w : r.warnings()) {
            LOG.warn(w);
        }
        LOG.info(r.summary());
    }

    /** What was wired, and what was not and why. */
    record Report(String summary, List<String> warnings) {
    }

    /** {@return the report of the context as it stands} */
    Report report() {
        List<String> warnings = new ArrayList<>();
        String boot = SpringBootVersion.getVersion();
        if (boot != null && !boot.startsWith("4.")) {
            warnings.add("cqflux: Spring Boot " + boot + " is not supported by this starter, which is built for"
                    + " Spring Boot 4.0 (Boot 4 moved the health, metrics and web-server types it uses); expect no"
                    + " cqflux health component and no cqflux.* meters. Upgrade to Spring Boot 4.0.");
        }
        StringBuilder s = new StringBuilder("cqflux: ");
        String[] instances = beans.getBeanNamesForType(Cqflux.class, false, false);
        s.append(instances.length == 1 ? "instance '" + instances[0] + "'" : instances.length + " Cqflux instances");
        s.append("; health: ").append(health(warnings));
        s.append("; meters: ").append(meters());
        return new Report(s.toString(), List.copyOf(warnings));
    }

    private String health(List<String> warnings) {
        if (!present(BOOT4_HEALTH)) {
            if (present(BOOT3_HEALTH)) {
                warnings.add("cqflux: no 'cqflux' health component: the class path has Spring Boot 3's health API ("
                        + BOOT3_HEALTH + ") but not Spring Boot 4's (" + BOOT4_HEALTH
                        + ", module spring-boot-health), which this starter implements");
                return "none (Spring Boot 3's health API only)";
            }
            return "none (spring-boot-health is not on the class path: add spring-boot-starter-actuator)";
        }
        if (!beans.containsBean("cqfluxHealthContributor")) {
            return "none (the health contributor is switched off: management.health.cqflux.enabled=false or"
                    + " management.health.defaults.enabled=false)";
        }
        return "'cqflux' component";
    }

    private String meters() {
        if (!present(METER_REGISTRY)) {
            return "none (Micrometer is not on the class path)";
        }
        if (!present(CQFLUX_METRICS)) {
            return "none (cqflux-micrometer is not on the class path)";
        }
        String[] binders = beans.getBeanNamesForType(ClassUtils.resolveClassName(CQFLUX_METRICS, classLoader), false, false);
        String[] registries = beans.getBeanNamesForType(
                ClassUtils.resolveClassName(METER_REGISTRY, classLoader), false, false);
        if (registries.length == 0) {
            return "none (no MeterRegistry bean: add spring-boot-starter-actuator, whose metrics auto-configuration"
                    + " makes one and binds the meters to it)";
        }
        if (binders.length == 0) {
            return "none (no CqfluxMetrics bean: cqflux's metrics auto-configuration did not match)";
        }
        if (!present(BOOT_METER_BINDING) || beans.getBeanNamesForType(
                ClassUtils.resolveClassName(BOOT_METER_BINDING, classLoader), false, false).length == 0) {
            return "none bound by Spring Boot (a MeterRegistry and the CqfluxMetrics binder exist, but Spring Boot's"
                    + " metrics auto-configuration, which binds MeterBinder beans to the registries, is not active:"
                    + " add spring-boot-starter-actuator, or call CqfluxMetrics.bindTo(registry) yourself)";
        }
        return "cqflux.* bound";
    }

    private boolean present(String className) {
        return ClassUtils.isPresent(className, classLoader);
    }
}
