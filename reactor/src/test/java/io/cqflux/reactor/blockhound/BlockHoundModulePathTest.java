package io.cqflux.reactor.blockhound;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.Opcode;
import io.cqflux.epoll.LoopStats;
import io.cqflux.reactor.Cqflux;
import java.lang.module.Configuration;
import java.lang.module.ModuleFinder;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.blockhound.BlockHound;
import reactor.core.publisher.Mono;

/**
 * cqflux-reactor as a named module, resolved from its build output and its dependencies' jars
 * (the tests themselves run on the class path): it resolves without BlockHound, and with
 * BlockHound present the integration is exported and found by BlockHound's service type.
 */
class BlockHoundModulePathTest {

    private static Path where(Class<?> c) throws URISyntaxException {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    private static ModuleFinder modules(boolean withBlockHound) throws URISyntaxException {
        List<Path> paths = new ArrayList<>(List.of(where(Cqflux.class), where(Opcode.class),
                where(LoopStats.class), where(Mono.class), where(Publisher.class)));
        if (withBlockHound) {
            paths.add(where(BlockHound.class));
        }
        return ModuleFinder.of(paths.toArray(Path[]::new));
    }

    @Test
    void withoutBlockHound_theModuleResolves() throws Exception {
        Configuration cf = ModuleLayer.boot().configuration().resolveAndBind(modules(false), ModuleFinder.of(),
                Set.of("io.cqflux.reactor"));
        assertTrue(cf.findModule("io.cqflux.reactor").isPresent());
        assertTrue(cf.findModule("reactor.blockhound").isEmpty());
        ModuleLayer layer = ModuleLayer.boot().defineModulesWithOneLoader(cf, ClassLoader.getPlatformClassLoader());
        // The public API loads (a class that touches no BlockHound type).
        assertEquals("io.cqflux.reactor", layer.findLoader("io.cqflux.reactor")
                .loadClass("io.cqflux.reactor.Cqflux").getModule().getName());
    }

    @Test
    void withBlockHound_theIntegrationIsExportedAndAServiceProvider() throws Exception {
        Configuration cf = ModuleLayer.boot().configuration().resolveAndBind(modules(true), ModuleFinder.of(),
                Set.of("io.cqflux.reactor", "reactor.blockhound"));
        ModuleLayer layer = ModuleLayer.boot().defineModulesWithOneLoader(cf, ClassLoader.getPlatformClassLoader());
        Module reactor = layer.findModule("io.cqflux.reactor").orElseThrow();
        assertTrue(reactor.isExported("io.cqflux.reactor.blockhound"), "the integration's package is not exported");
        ClassLoader loader = layer.findLoader("reactor.blockhound");
        Class<?> service = loader.loadClass("reactor.blockhound.integration.BlockHoundIntegration");
        List<String> providers = ServiceLoader.load(layer, service).stream()
                .map(p -> p.type().getName()).toList();
        assertTrue(providers.contains(CqfluxBlockHoundIntegration.class.getName()), providers::toString);
    }
}
