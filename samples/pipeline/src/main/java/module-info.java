/** The pipeline sample: a write-ahead log streamed into a ring in a peer's memory, with backpressure. */
module io.cqflux.samples.pipeline {
    requires io.cqflux.reactor;
    // The plot: a PNG drawn with Java2D (headless), so the sample needs no tool beside the JDK.
    requires java.desktop;
    // The live heap after each collection (MemoryPoolMXBean.getCollectionUsage), the honest memory figure.
    requires java.management;
}
