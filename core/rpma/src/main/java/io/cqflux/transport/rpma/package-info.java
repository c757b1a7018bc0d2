/**
 * The rpma transport: librpma (≥ 0.14 API, {@code librpma.so.0}) through the FFM API. Only
 * {@link io.cqflux.transport.rpma.Rpma} is public; the implementations of the transport SPI are
 * package-private here, the bindings are in the non-exported {@code io.cqflux.transport.rpma.ffm}.
 *
 * <p><b>Map.</b> {@code RpmaTransport} (a {@code struct rpma_peer}), {@code RpmaLocalRegion} /
 * {@code RpmaRemoteRegion} (memory registrations and peers' descriptors, {@code RegionDescriptor}),
 * {@code RpmaListener} / {@code RpmaConnectionRequest} (endpoint and incoming requests),
 * {@code RpmaConnection} (operations, CM events), {@code RpmaCompletionQueue} (main, receive or
 * shared-channel CQ as the loop drives it) with the {@code RpmaCompletion} flyweight over
 * {@code struct ibv_wc}, {@code RpmaLog} (librpma's log into {@code System.Logger}),
 * {@code RpmaNative} (availability, errno capture, error mapping, {@code fcntl}/{@code poll}).
 *
 * <p><b>librpma facts the code depends on</b> (each also commented where it matters):
 * <ul>
 *   <li>A CQ fd is blocking by default; made non-blocking, {@code rpma_cq_wait} and
 *       {@code rpma_conn_wait} return {@code RPMA_E_NO_COMPLETION} when no notification is
 *       pending ({@code rpma_cq_get_fd(3)}).</li>
 *   <li>The CM event fds are NOT made non-blocking: on an empty non-blocking channel
 *       {@code rpma_conn_next_event}/{@code rpma_ep_next_conn_req} fail with
 *       {@code RPMA_E_PROVIDER} (errno {@code EAGAIN}) and an ERROR log line, because librpma
 *       maps only {@code ENODATA} to {@code RPMA_E_NO_EVENT}; they are read only when
 *       {@code poll(2)} says readable.</li>
 *   <li>RDMA CM pads private data (56 bytes on connect, 196 on accept over IB/RoCE); it is
 *       passed verbatim both ways, so a format carried over it tells its own length
 *       ({@code PrivateData}); empty data is sent as none (librpma refuses an empty buffer).</li>
 *   <li>The active side's RTU is sent while it reads its ESTABLISHED event, so the passive side's
 *       ESTABLISHED waits for the client's event loop; after the peer's disconnect,
 *       {@code rpma_conn_disconnect} must be called to answer it (done on {@code CLOSED}).</li>
 *   <li>Flush completes as {@code IBV_WC_RDMA_READ}, atomic write as {@code IBV_WC_RDMA_WRITE}
 *       (inline, fenced: its 8 source bytes are copied at post time); reported as the device says:
 *       the reactive layer, which owns every posted context, knows what it posted.</li>
 *   <li>{@code rpma_utils_get_ibv_context} can return 0 with a NULL context (127.0.0.1 over
 *       Soft-RoCE).</li>
 *   <li>{@code rpma_conn_req_delete} of an incoming request never destroys its {@code rdma_cm_id},
 *       nor does a failed accept; the transport does ({@code RpmaConnectionRequest}), and reads
 *       the requester's address from it, which librpma has no getter for.</li>
 * </ul>
 */
package io.cqflux.transport.rpma;
