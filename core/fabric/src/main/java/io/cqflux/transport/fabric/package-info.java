/**
 * The fabric transport: libfabric ({@code libfabric.so.1}, API ≥ 1.11) through the FFM API, with
 * connected {@code FI_EP_MSG} endpoints; the data-path API ({@code fi_cq_read},
 * {@code fi_writemsg}, ...) is {@code static inline} in C and is called through the fid ops
 * tables, whose function pointers each object resolves once. Only
 * {@link io.cqflux.transport.fabric.Fabric} is public; the bindings are in the non-exported
 * {@code io.cqflux.transport.fabric.ffm}.
 *
 * <p>Facts about libfabric 1.17's {@code tcp} provider that the code depends on (each is
 * asserted by a test in this package):
 * <ul>
 *   <li>Loading libfabric loads libpsm_infinipath, whose constructor replaces the JVM's SIGSEGV
 *       handler unless {@code IPATH_NO_BACKTRACE} is set; the JVM then dies at a later
 *       safepoint poll. See {@code SignalGuard} and {@code FabricLibrary}.</li>
 *   <li>Never {@code dlclose} libfabric (no short-lived arena for its lookup).</li>
 *   <li>{@code fi_cq_readerr}/{@code fi_eq_readerr}: {@code err_data_size} is an input; reset it
 *       (and {@code err_data}) before every call when reusing the entry.</li>
 *   <li>No progress thread in practice: reading the CQs and EQs moves the data.</li>
 *   <li>tcp ignores {@code tx_attr.size}/{@code rx_attr.size}: posts never return
 *       {@code -FI_EAGAIN} for a full queue; the transport bounds signaled sends and receives
 *       by the configured queue sizes itself.</li>
 *   <li>{@code FI_TRANSMIT_COMPLETE} is treated like {@code FI_DELIVERY_COMPLETE} (target ack);
 *       without a completion flag a write completes once queued on the socket.</li>
 *   <li>{@code FI_FENCE} is not advertised and ignored by writemsg; the in-order stream gives
 *       the ordering. {@code FI_COMMIT_COMPLETE} commits only the op's own bytes, so a flush
 *       cannot make earlier writes persistent: this transport offers VISIBILITY flushes only, as a
 *       read-back (a zero-length write would need the region remotely writable).</li>
 *   <li>{@code mr_mode} 0: keys are what we request, 8 bytes, any value but
 *       {@code FI_KEY_NOTAVAIL}; one already in use in the domain answers {@code -FI_ENOKEY}.
 *       A key works on every endpoint of the domain ({@code FI_MR_ENDPOINT} is not offered), so
 *       keys are drawn unguessable and never reused (KeySequence).</li>
 *   <li>A remote write with CQ data completes at the target with flags
 *       {@code FI_REMOTE_WRITE|FI_REMOTE_CQ_DATA}, {@code op_context} NULL, len 0: it does not
 *       consume a posted receive. The len 0 is not the write's size: fi_cq(3) of 1.17 defines
 *       {@code len} for receives only, and the tcp provider sets it to 0 in that branch whatever
 *       the flags or modes (later releases report the payload size). Such a completion's
 *       {@code byteLength()} therefore reads {@code -1}, unknown, never 0; a length a provider
 *       does report is passed on. (A zero-length write with immediate reads -1 as well.)</li>
 *   <li>Closing: {@code fi_close} fails with {@code -FI_EBUSY} while objects are bound to the
 *       fid; the transport closes endpoints before their CQs and EQ and keeps the domain and
 *       fabric until the last listener, connection and region is closed. A failed
 *       {@code fi_close} is logged at WARNING and counted, never thrown from {@code close()}.</li>
 *   <li>A listener that closes rejects ({@code fi_reject}) and frees ({@code fi_freeinfo}) the
 *       {@code FI_CONNREQ}s it handed out unanswered and those still in its EQ; on tcp the
 *       handle owns the accepted socket, which would otherwise leak while the client waited.</li>
 *   <li>A bad key: the target drops the connection; the initiator's op fails with
 *       {@code ECANCELED} (prov_errno 2, "No such file or directory") and the EQ reports
 *       {@code FI_SHUTDOWN}, as for an orderly close: this transport reports CLOSED on both
 *       sides (what the provider said); the reactive layer, which saw the operation fail and no
 *       goodbye from its peer, ends the connection LOST.</li>
 *   <li>Connect to a port without listener: {@code fi_connect} returns 0, the EQ gets an error
 *       entry with {@code err} 111 ECONNREFUSED (REJECTED); {@code fi_reject} looks the same.</li>
 *   <li>{@code FI_OPT_CM_DATA_SIZE} is 256; {@code max_msg_size} is SIZE_MAX; {@code mr_mode}
 *       comes back 0 (offsets, requested keys); {@code cq_data_size} 8; caps include
 *       {@code FI_RMA_PMEM}, not {@code FI_ATOMIC}, not {@code FI_REMOTE_CQ_DATA}.</li>
 * </ul>
 *
 * <p>Completion queues: on tcp a loop's connections share one in groups of at most K
 * ({@link io.cqflux.core.spi.TransportOptions#FABRIC_COMPLETION_QUEUE_GROUP}; when unset, 32
 * beyond the (at most) 16 connections of each loop that keep their own; 1 gives each its own),
 * {@code CompletionGroup}, counted and closed by {@code LoopQueues} like the shared event queue:
 * a connection then costs its socket and a K-th of the queue's 3 fds and of its ~452 KiB of
 * transfer entries, and each read costs O(K), since tcp's {@code fi_cq_read} progresses every
 * endpoint bound to the queue. Entries are routed by the member's slot in the context bits that
 * belong to the transport ({@link io.cqflux.core.spi.Connection#TRANSPORT_CONTEXT_SHIFT}); a
 * peer's write with immediate, whose entry has no context, by a tag in the high half of its
 * 64-bit CQ data, which the receiving connection drew and told its peer in its connection
 * parameters ({@code GroupRoster}), which the hello carries. Only a connection whose private data
 * carries them ({@link io.cqflux.core.spi.Transport#connectWithHello}; an accepted one only for a
 * client that told its own) joins a group; one with raw private data, without a loop or with keys
 * scoped to it keeps queues of its own.
 */
package io.cqflux.transport.fabric;
