package io.cqflux.spring.boot;

import io.cqflux.reactor.Cqflux;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.env.Environment;

/**
 * Refuses an application's own {@link Cqflux} bean while {@code cqflux.*} instance properties are
 * set. The starter's instance backs off when the application declares one (that is how an
 * application takes over the instance), and then nothing reads {@code cqflux.transport},
 * {@code cqflux.loops} and the other instance properties: they would be ignored without a word.
 * The check runs before any bean is created (no transport is opened), and the refusal names the
 * application's bean and every ignored property. The properties that the starter's other beans
 * read, and that therefore still apply beside an application's instance, are not counted:
 * {@code cqflux.enabled}, {@code cqflux.readiness}, {@code cqflux.peers.*}, {@code cqflux.server.*},
 * {@code cqflux.web.*}, {@code cqflux.observations.*} (the observations of whichever instance the
 * context holds), {@code cqflux.shutdown-timeout} (the lifecycle's stop budget, which
 * disposes the application's instance too), {@code cqflux.connect-timeout} (how long the lifecycle
 * waits for the peers at start, and the server's bind and stop budget; the instance's own
 * connection timeout stays the application's) and {@code cqflux.local-address} (the server's
 * address when {@code cqflux.server.address} is unset; the instance's own local address stays the
 * application's).
 */
public final class CqfluxInstanceGuard implements BeanFactoryPostProcessor, EnvironmentAware {
    /** The name of the starter's own instance bean. */
    static final String STARTER_BEAN = "cqflux";

    /** Properties that do not configure the instance, so apply to an application's own one as well. */
    private static final Set<String> NOT_INSTANCE = Set.of("cqflux.enabled", "cqflux.readiness",
            "cqflux.shutdown-timeout", "cqflux.connect-timeout", "cqflux.local-address");
    private static final List<String> NOT_INSTANCE_PREFIXES = List.of("cqflux.peers", "cqflux.server", "cqflux.web",
            "cqflux.observations");

    private Environment environment;

    /** Created by the auto-configuration. */
    public CqfluxInstanceGuard() {
    }

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    @Override
    public void postProcessBeanFactory(ConfigurableListableBeanFactory factory) throws BeansException {
        String[] names = factory.getBeanNamesForType(Cqflux.class, true, false);
        List<String> own = new ArrayList<>();
        for (String n : names) {
            if (!isStarters(factory, n)) {
                own.add(n);
            }
        }
        if (own.isEmpty() || own.size() < names.length) {
            // The starter's instance is there (then the properties configure it), or there is none.
            return;
        }
        Set<String> ignored = instanceProperties(environment);
        if (!ignored.isEmpty()) {
            throw new CqfluxInstanceConflictException(own, ignored);
        }
    }

    private static boolean isStarters(ConfigurableListableBeanFactory factory, String name) {
        if (!STARTER_BEAN.equals(name) || !factory.containsBeanDefinition(name)) {
            return false;
        }
        BeanDefinition d = factory.getBeanDefinition(name);
        return STARTER_BEAN.equals(d.getFactoryMethodName())
                && d.getFactoryBeanName() != null
                && d.getFactoryBeanName().contains(CqfluxAutoConfiguration.class.getName());
    }

    /** {@return the {@code cqflux.*} properties set in {@code environment} that configure the instance} */
    static Set<String> instanceProperties(Environment environment) {
        Set<String> found = new TreeSet<>();
        if (environment == null) {
            return found;
        }
        ConfigurationPropertyName root = ConfigurationPropertyName.of("cqflux");
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (source instanceof IterableConfigurationPropertySource it) {
                it.stream().filter(root::isAncestorOf).map(ConfigurationPropertyName::toString)
                        .filter(CqfluxInstanceGuard::configuresInstance).forEach(found::add);
            }
        }
        return found;
    }

    private static boolean configuresInstance(String name) {
        if (NOT_INSTANCE.contains(name)) {
            return false;
        }
        for (String p : NOT_INSTANCE_PREFIXES) {
            if (name.equals(p) || name.startsWith(p + ".") || name.startsWith(p + "[")) {
                return false;
            }
        }
        return true;
    }

    /**
     * An application's own {@link Cqflux} bean displaced the starter's while {@code cqflux.*}
     * instance properties are set, which would then be ignored.
     */
    public static final class CqfluxInstanceConflictException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        /**
         * @param beans the application's {@link Cqflux} beans
         * @param ignored the instance properties nothing would read
         */
        CqfluxInstanceConflictException(List<String> beans, Set<String> ignored) {
            super("the application's Cqflux bean " + beans + " replaces the starter's instance, so these"
                    + " cqflux.* properties, which only build the starter's instance, would be ignored: " + ignored
                    + ". Either remove the bean and adjust the starter's instance with a CqfluxBuilderCustomizer"
                    + " bean, or remove those properties (or set cqflux.enabled=false to turn the starter off)."
                    + " The starter's other beans still read cqflux.enabled, cqflux.readiness, cqflux.peers.*,"
                    + " cqflux.server.*, cqflux.web.*, cqflux.observations.*, cqflux.shutdown-timeout (the stop budget),"
                    + " cqflux.connect-timeout (the wait for the peers at start, the server's bind) and"
                    + " cqflux.local-address (the server's default address)");
        }
    }
}
