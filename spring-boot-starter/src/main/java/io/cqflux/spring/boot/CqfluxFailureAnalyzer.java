package io.cqflux.spring.boot;

import io.cqflux.core.TransportUnavailableException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.env.Environment;

/**
 * Turns a start that failed because no cqflux transport could be opened (a native library not
 * installed or not loadable, no RDMA device for {@code rpma}, a transport named that is not on the
 * class path) into Spring Boot's one-paragraph diagnosis: what was asked for, what the library
 * found, and what to do, instead of the chain of bean-creation exceptions around it.
 */
public final class CqfluxFailureAnalyzer extends AbstractFailureAnalyzer<TransportUnavailableException> {
    private final Environment environment;

    /**
     * Created by Spring Boot from {@code META-INF/spring.factories}.
     *
     * @param environment where {@code cqflux.transport} and {@code cqflux.local-address} are read from
     */
    public CqfluxFailureAnalyzer(Environment environment) {
        this.environment = environment;
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, TransportUnavailableException cause) {
        String asked = environment.getProperty("cqflux.transport", "auto");
        String local = environment.getProperty("cqflux.local-address", "the loopback address");
        String description = "cqflux could not open a transport (cqflux.transport=" + asked + ", on " + local
                + "): " + cause.getMessage();
        String action;
        if (cause.getMessage().contains("no transport provider named")) {
            action = "Set cqflux.transport to auto, rpma or fabric, or add the artifact cqflux-transport-"
                    + cause.transport() + " to the application's dependencies.";
        } else if (cause.getMessage().contains("no transport provider is on the class path")) {
            action = "Add cqflux-transport-fabric (any Linux host, libfabric's tcp provider) and/or"
                    + " cqflux-transport-rpma (RDMA devices) to the application's dependencies; the"
                    + " cqflux-spring-boot-starter brings both unless they were excluded.";
        } else if (cause.getMessage().contains("no RDMA device")) {
            action = "Give this host an RDMA device serving cqflux.local-address (a NIC, or Soft-RoCE: modprobe"
                    + " rdma_rxe; rdma link add rxe0 type rxe netdev <interface>), or set cqflux.transport=fabric"
                    + " (libfabric over tcp, any Linux host), or cqflux.transport=auto to take rpma where a device"
                    + " exists and fabric elsewhere.";
        } else {
            action = "Do what the message above says for " + cause.transport() + " (on Debian or Ubuntu the native"
                    + " libraries are the packages libfabric1 for fabric and librpma0 for rpma), or choose a"
                    + " transport this host has with cqflux.transport: fabric runs on any Linux host with"
                    + " libfabric over tcp; rpma needs an RDMA device (a NIC, Soft-RoCE or SoftiWARP)"
                    + " serving cqflux.local-address. Run the JVM with --enable-native-access=ALL-UNNAMED"
                    + " so that the library may be loaded.";
        }
        return new FailureAnalysis(description, action, cause);
    }
}
