import java.io.File;
import java.io.IOException;
import java.util.Enumeration;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * The Soft-RoCE lane's AOT training run (JEP 483/514): loads every class of the jars named by the
 * system property {@code cqflux.aot.preload} (path-separator list) through the application class
 * loader, then hands its arguments to the JUnit console launcher (the lane's test discovery).
 *
 * <p>Run on the host with {@code -XX:AOTCacheOutput}, so that the cache holds the classes the
 * guest's launcher would otherwise load, parse and verify under TCG emulation. The lane's tests
 * need an RDMA device, so they cannot run here; loading their classes (and the library's) without
 * initialising them is what the cache can carry anyway. It must sit on the same class path in
 * the training run and in the guest's run: an AOT cache is only used with the class path it was
 * made for.
 */
public final class AotTrainer {

    private AotTrainer() {
    }

    public static void main(String[] args) throws IOException {
        ClassLoader loader = ClassLoader.getSystemClassLoader();
        int loaded = 0;
        int failed = 0;
        String preload = System.getProperty("cqflux.aot.preload", "");
        for (String path : preload.split(File.pathSeparator)) {
            if (path.isEmpty()) {
                continue;
            }
            try (JarFile jar = new JarFile(path)) {
                for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements();) {
                    String name = e.nextElement().getName();
                    // module-info, package-info and multi-release entries are no loadable classes.
                    if (!name.endsWith(".class") || name.contains("-") || name.startsWith("META-INF/")) {
                        continue;
                    }
                    try {
                        Class.forName(name.substring(0, name.length() - 6).replace('/', '.'), false, loader);
                        loaded++;
                    } catch (LinkageError | ClassNotFoundException notLoadable) {
                        // An optional dependency's class missing from the class path: the guest
                        // cannot load it either.
                        failed++;
                    }
                }
            }
        }
        System.err.println("softroce/aot: loaded " + loaded + " classes for the cache (" + failed + " not loadable)");
        org.junit.platform.console.ConsoleLauncher.main(args);
    }
}
