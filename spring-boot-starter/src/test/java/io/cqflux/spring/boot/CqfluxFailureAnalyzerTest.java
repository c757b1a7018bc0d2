package io.cqflux.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.cqflux.core.TransportUnavailableException;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.mock.env.MockEnvironment;

class CqfluxFailureAnalyzerTest {

    @Test
    void unknownTransport_isOneParagraphNamingThePropertyAndTheArtifact() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(CqfluxAutoConfiguration.class))
                .withPropertyValues("cqflux.transport=nosuch")
                .run(ctx -> {
                    assertThat(ctx).hasFailed();
                    MockEnvironment env = new MockEnvironment().withProperty("cqflux.transport", "nosuch");
                    FailureAnalysis a = new CqfluxFailureAnalyzer(env).analyze(ctx.getStartupFailure());
                    assertThat(a).isNotNull();
                    assertThat(a.getDescription()).contains("cqflux.transport=nosuch")
                            .contains("no transport provider named 'nosuch'");
                    assertThat(a.getAction()).contains("Set cqflux.transport to auto, rpma or fabric")
                            .contains("cqflux-transport-nosuch");
                });
    }

    @Test
    void libraryMissing_actionNamesThePackagesAndTheOtherTransport() {
        Throwable wrapped = new BeanCreationException("cqflux", "Failed to instantiate",
                new TransportUnavailableException("rpma", "librpma.so.0 is not installed; apt-get install librpma0", null));
        FailureAnalysis a = new CqfluxFailureAnalyzer(new MockEnvironment().withProperty("cqflux.transport", "rpma"))
                .analyze(wrapped);
        assertThat(a.getDescription()).contains("cqflux.transport=rpma").contains("librpma.so.0 is not installed");
        assertThat(a.getAction()).contains("librpma0").contains("cqflux.transport").contains("fabric");
        assertThat(a.getCause()).isInstanceOf(TransportUnavailableException.class);
    }

    @Test
    void noRdmaDevice_actionNamesSoftRoceAndTheFabricTransport() {
        FailureAnalysis a = new CqfluxFailureAnalyzer(new MockEnvironment().withProperty("cqflux.transport", "rpma"))
                .analyze(new TransportUnavailableException("rpma", "no RDMA device: the kernel exposes none", null));
        assertThat(a.getDescription()).contains("cqflux.transport=rpma").contains("no RDMA device");
        assertThat(a.getAction()).contains("rdma_rxe").contains("cqflux.transport=fabric").doesNotContain("librpma0");
    }

    @Test
    void otherFailures_areNotAnalysed() {
        assertThat(new CqfluxFailureAnalyzer(new MockEnvironment()).analyze(new IllegalStateException("x"))).isNull();
    }

    @Test
    void analyzer_isRegisteredForSpringBoot() throws Exception {
        java.util.Properties factories = new java.util.Properties();
        try (var in = CqfluxFailureAnalyzer.class.getResourceAsStream("/META-INF/spring.factories")) {
            factories.load(in);
        }
        assertThat(factories.getProperty(FailureAnalyzer.class.getName())).contains(CqfluxFailureAnalyzer.class.getName())
                .contains(CqfluxPropertyFailureAnalyzer.class.getName());
        // Each entry names a class that is there (a typo would only show when a start fails).
        for (String name : factories.getProperty(FailureAnalyzer.class.getName()).split(",")) {
            assertThat(FailureAnalyzer.class.isAssignableFrom(Class.forName(name.trim()))).as(name).isTrue();
        }
    }
}
