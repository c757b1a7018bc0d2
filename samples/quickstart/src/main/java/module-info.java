/** The quickstart demo: durable writes to a memory-mapped file on a server, read back and verified. */
module io.cqflux.samples.quickstart {
    requires io.cqflux.reactor;
}
