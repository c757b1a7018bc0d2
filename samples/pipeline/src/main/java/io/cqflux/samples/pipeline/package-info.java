/** The pipeline sample: a write-ahead log replicated into a peer's memory over RDMA, with backpressure. */
package io.cqflux.samples.pipeline;
