/*
 * rpma_peer.c - a peer written with librpma alone (no cqflux), for the interop tests
 * (RpmaInteropTest). It speaks the private-data format of librpma's example programs,
 *
 *   struct common_data { uint16_t data_offset; uint8_t mr_desc_size; uint8_t pcfg_desc_size;
 *                        char descriptors[]; }   (region descriptor, then peer configuration)
 *
 * in both directions, and checks every byte it is given.
 *
 *   rpma_peer server ADDRESS PORT    listens ("listening" on stdout when it may be connected to)
 *   rpma_peer client ADDRESS PORT
 *
 * Both register one 4096-byte region. Byte i of pattern s is (i * 31 + s) & 0xff.
 *   - The server's region holds pattern 1 at [0, 1024) before anyone connects; it declares
 *     direct write to persistent memory and registers the region for PERSISTENT and VISIBILITY
 *     flushes (librpma trusts the declaration: the lane's DRAM serves).
 *   - The client announces data_offset 512 and registers for VISIBILITY flushes.
 *   - The server, once established, writes pattern 3 to [data_offset, +64) of the client's region,
 *     flushes it (VISIBILITY) and sends a 1-byte message.
 *   - The client waits for that message, checks pattern 3 at 512, reads [0, 1024) of the server's
 *     region and checks pattern 1, writes pattern 2 to [2048, 3072) of it and flushes with the
 *     strongest type the server's descriptor names (after applying the server's peer
 *     configuration), then disconnects.
 *   - The server, on CLOSED, checks pattern 2 at [2048, 3072) and pattern 1 at [0, 1024).
 *
 * Three more modes behave like librpma's example programs in the ways that trap a foreign peer:
 *
 *   rpma_peer pingclient ADDRESS PORT ROUNDS   as example 08's client: no private data of its own
 *       (RDMA CM delivers 56 zero bytes), then ROUNDS - 1 times: post a receive, send a counter
 *       (8 bytes, host order), wait for both completions and take the answer as the next counter;
 *       then send I_M_DONE with "completion on error" only and disconnect at once. Checks that
 *       every answer is the counter plus one.
 *   rpma_peer zeroclient ADDRESS PORT          as examples 02 and 05's clients: no private data of
 *       its own; takes the server's common_data from the accept (at least sizeof, 28 bytes, of it),
 *       reads [data_offset, +1024) and checks pattern 1, writes pattern 2 to [data_offset + 2048,
 *       +1024) and flushes it (VISIBILITY), then disconnects.
 *   rpma_peer roserver ADDRESS PORT            as example 02's server: its region (pattern 1 at
 *       [0, 1024)) is registered READ_SRC only, its common_data is the whole 28-byte struct, it
 *       ignores the request's private data and waits for the client to disconnect.
 *   rpma_peer pmemserver ADDRESS PORT          as example 05's server: the same, but the region is
 *       WRITE_DST with both flush types and direct write to persistent memory declared; after the
 *       client disconnects it checks pattern 2 at [0, 1024).
 *   rpma_peer pingserver ADDRESS PORT          as example 08's server: no private data; its first
 *       receive posted before it accepts; answers each counter with the counter plus one until
 *       I_M_DONE, then waits for the client to disconnect.
 *   rpma_peer connserver|connclient ADDRESS PORT  as example 01: each side sends a NUL-terminated
 *       greeting as private data and prints the other's; the client disconnects.
 *
 * Exit 0 only when every check passed; every step prints one line. alarm() bounds each side.
 */
#include <librpma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define REGION 4096
#define CLIENT_OFFSET 512

#define TRY(call)                                                                          \
	do {                                                                               \
		int rc_ = (call);                                                          \
		if (rc_) {                                                                 \
			printf("%s: %s failed: %d (%s)\n", role, #call, rc_, rpma_err_2str(rc_)); \
			exit(3);                                                           \
		}                                                                          \
	} while (0)

static const char *role = "peer";

/* the struct of librpma's examples (examples/common/common-conn.h), used by the example modes */
#define DESCRIPTORS_MAX_SIZE 24
struct common_data {
	uint16_t data_offset;
	uint8_t mr_desc_size;
	uint8_t pcfg_desc_size;
	char descriptors[DESCRIPTORS_MAX_SIZE];
};

#define I_M_DONE ((uint64_t)-1)

static uint8_t pattern(size_t i, int s)
{
	return (uint8_t)((i * 31 + (size_t)s) & 0xff);
}

static void fill(uint8_t *p, size_t n, int s)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pattern(i, s);
}

/* 0 when p holds pattern s; else prints the first mismatch */
static int check(const char *what, const uint8_t *p, size_t n, int s)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] != pattern(i, s)) {
			printf("%s: MISMATCH %s at byte %zu: 0x%02x, expected 0x%02x\n", role, what, i, p[i],
			       pattern(i, s));
			return 1;
		}
	}
	printf("%s: ok %s (%zu bytes)\n", role, what, n);
	return 0;
}

/* common_data of this side: data_offset (host order), sizes, region and peer-config descriptors */
static size_t pack(char *out, size_t cap, uint16_t offset, struct rpma_mr_local *mr, struct rpma_peer_cfg *pcfg)
{
	size_t mr_size, pcfg_size;
	TRY(rpma_mr_get_descriptor_size(mr, &mr_size));
	TRY(rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_size));
	if (4 + mr_size + pcfg_size > cap) {
		printf("%s: common_data of %zu bytes exceeds %zu\n", role, 4 + mr_size + pcfg_size, cap);
		exit(3);
	}
	memcpy(out, &offset, 2);
	out[2] = (char)mr_size;
	out[3] = (char)pcfg_size;
	TRY(rpma_mr_get_descriptor(mr, out + 4));
	TRY(rpma_peer_cfg_get_descriptor(pcfg, out + 4 + mr_size));
	return 4 + mr_size + pcfg_size;
}

/* parses the peer's common_data (bounds-checked against what arrived) */
static void unpack(const struct rpma_conn_private_data *pd, uint16_t *offset, struct rpma_mr_remote **mr,
		   struct rpma_peer_cfg **pcfg)
{
	const uint8_t *b = pd->ptr;
	if (pd->ptr == NULL || pd->len < 4 || (size_t)4 + b[2] + b[3] > pd->len) {
		printf("%s: peer private data of %u bytes is not common_data\n", role, (unsigned)pd->len);
		exit(3);
	}
	memcpy(offset, b, 2);
	printf("%s: peer common_data: offset %u, region descriptor %u bytes, peer configuration %u bytes\n", role,
	       (unsigned)*offset, b[2], b[3]);
	TRY(rpma_mr_remote_from_descriptor(b + 4, b[2], mr));
	if (pcfg != NULL)
		TRY(rpma_peer_cfg_from_descriptor(b + 4 + b[2], b[3], pcfg));
}

/* waits for one completion on a CQ and checks it; returns its opcode */
static enum ibv_wc_opcode await(struct rpma_conn *conn, struct rpma_cq *cq, const char *what)
{
	struct ibv_wc wc;
	int n = 0;
	for (;;) {
		int rc = rpma_cq_get_wc(cq, 1, &wc, &n);
		if (rc == RPMA_E_NO_COMPLETION) {
			TRY(rpma_cq_wait(cq)); /* an empty wake-up is normal (rpma_cq_get_wc(3)) */
			continue;
		}
		TRY(rc);
		break;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		printf("%s: %s completed with %s\n", role, what, ibv_wc_status_str(wc.status));
		exit(4);
	}
	printf("%s: %s completed\n", role, what);
	(void)conn;
	return wc.opcode;
}

static struct rpma_peer *open_peer(const char *addr, enum rpma_util_ibv_context_type type)
{
	struct ibv_context *dev;
	struct rpma_peer *peer;
	TRY(rpma_utils_get_ibv_context(addr, type, &dev));
	TRY(rpma_peer_new(dev, &peer));
	return peer;
}

static int server(const char *addr, const char *port)
{
	struct rpma_peer *peer = open_peer(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_peer_cfg *pcfg;
	struct rpma_mr_local *mr;
	struct rpma_mr_remote *theirs;
	struct rpma_ep *ep;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct rpma_conn_private_data in, out;
	enum rpma_conn_event ev;
	char data[196];
	uint16_t their_offset;
	uint8_t *mem;
	int bad = 0;

	role = "server";
	if (posix_memalign((void **)&mem, 4096, REGION))
		return 3;
	memset(mem, 0, REGION);
	fill(mem, 1024, 1);
	TRY(rpma_peer_cfg_new(&pcfg));
	TRY(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	TRY(rpma_mr_reg(peer, mem, REGION,
			RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND |
				RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
			&mr));
	out.ptr = data;
	out.len = (uint8_t)pack(data, sizeof(data), 0, mr, pcfg);
	TRY(rpma_ep_listen(peer, addr, port, &ep));
	printf("listening\n");
	fflush(stdout);

	TRY(rpma_ep_next_conn_req(ep, NULL, &req));
	TRY(rpma_conn_req_get_private_data(req, &in));
	printf("server: request private data of %u bytes\n", (unsigned)in.len);
	unpack(&in, &their_offset, &theirs, NULL);
	TRY(rpma_conn_req_connect(&req, &out, &conn));
	TRY(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED) {
		printf("server: expected ESTABLISHED, got %s\n", rpma_utils_conn_event_2str(ev));
		return 3;
	}
	printf("server: established\n");
	TRY(rpma_conn_get_cq(conn, &cq));

	/* into the client's memory, then tell it so */
	fill(mem + 3072, 64, 3);
	TRY(rpma_write(conn, theirs, their_offset, mr, 3072, 64, RPMA_F_COMPLETION_ON_ERROR, NULL));
	TRY(rpma_flush(conn, theirs, their_offset, 64, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
		       (void *)1));
	await(conn, cq, "write and flush into the client");
	TRY(rpma_send(conn, mr, 3072, 1, RPMA_F_COMPLETION_ALWAYS, (void *)2));
	await(conn, cq, "send to the client");

	TRY(rpma_conn_next_event(conn, &ev));
	printf("server: connection %s\n", rpma_utils_conn_event_2str(ev));
	bad |= ev != RPMA_CONN_CLOSED;
	bad |= check("pattern 2 written and flushed by the client at 2048", mem + 2048, 1024, 2);
	bad |= check("pattern 1 at 0 untouched", mem, 1024, 1);
	TRY(rpma_conn_disconnect(conn));
	TRY(rpma_conn_delete(&conn));
	TRY(rpma_mr_remote_delete(&theirs));
	TRY(rpma_mr_dereg(&mr));
	TRY(rpma_ep_shutdown(&ep));
	TRY(rpma_peer_cfg_delete(&pcfg));
	TRY(rpma_peer_delete(&peer));
	free(mem);
	printf("server: %s\n", bad ? "FAILED" : "verified");
	return bad ? 2 : 0;
}

static int client(const char *addr, const char *port)
{
	struct rpma_peer *peer = open_peer(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_peer_cfg *pcfg, *their_pcfg;
	struct rpma_mr_local *mr;
	struct rpma_mr_remote *theirs;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_cq *cq, *rcq;
	struct rpma_conn_private_data in, out;
	enum rpma_conn_event ev;
	char data[56];
	uint16_t their_offset;
	int flush_usage, bad = 0;
	uint8_t *mem;

	role = "client";
	if (posix_memalign((void **)&mem, 4096, REGION))
		return 3;
	memset(mem, 0, REGION);
	TRY(rpma_peer_cfg_new(&pcfg));
	TRY(rpma_mr_reg(peer, mem, REGION,
			RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_RECV |
				RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
			&mr));
	out.ptr = data;
	out.len = (uint8_t)pack(data, sizeof(data), CLIENT_OFFSET, mr, pcfg);
	TRY(rpma_conn_req_new(peer, addr, port, NULL, &req));
	/* the server's message may come at once: its receive is posted before connecting */
	TRY(rpma_conn_req_recv(req, mr, 4000, 64, (void *)9));
	TRY(rpma_conn_req_connect(&req, &out, &conn));
	TRY(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED) {
		printf("client: expected ESTABLISHED, got %s\n", rpma_utils_conn_event_2str(ev));
		return 3;
	}
	TRY(rpma_conn_get_private_data(conn, &in));
	printf("client: established; accept private data of %u bytes\n", (unsigned)in.len);
	unpack(&in, &their_offset, &theirs, &their_pcfg);
	TRY(rpma_conn_apply_remote_peer_cfg(conn, their_pcfg));
	TRY(rpma_mr_remote_get_flush_type(theirs, &flush_usage));
	TRY(rpma_conn_get_cq(conn, &cq));
	TRY(rpma_conn_get_rcq(conn, &rcq));

	await(conn, rcq != NULL ? rcq : cq, "receive of the server's message");
	bad |= check("pattern 3 written by the server at 512", mem + CLIENT_OFFSET, 64, 3);

	TRY(rpma_read(conn, mr, 0, theirs, their_offset, 1024, RPMA_F_COMPLETION_ALWAYS, (void *)3));
	await(conn, cq, "read of the server's region");
	bad |= check("pattern 1 read from the server", mem, 1024, 1);

	fill(mem + 2048, 1024, 2);
	enum rpma_flush_type type = (flush_usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT) ? RPMA_FLUSH_TYPE_PERSISTENT
										       : RPMA_FLUSH_TYPE_VISIBILITY;
	TRY(rpma_write(conn, theirs, their_offset + 2048, mr, 2048, 1024, RPMA_F_COMPLETION_ON_ERROR, NULL));
	TRY(rpma_flush(conn, theirs, their_offset + 2048, 1024, type, RPMA_F_COMPLETION_ALWAYS, (void *)4));
	await(conn, cq, type == RPMA_FLUSH_TYPE_PERSISTENT ? "write and flush PERSISTENT" : "write and flush VISIBILITY");

	TRY(rpma_conn_disconnect(conn));
	TRY(rpma_conn_next_event(conn, &ev));
	printf("client: connection %s\n", rpma_utils_conn_event_2str(ev));
	TRY(rpma_conn_delete(&conn));
	TRY(rpma_mr_remote_delete(&theirs));
	TRY(rpma_peer_cfg_delete(&their_pcfg));
	TRY(rpma_mr_dereg(&mr));
	TRY(rpma_peer_cfg_delete(&pcfg));
	TRY(rpma_peer_delete(&peer));
	free(mem);
	printf("client: %s\n", bad ? "FAILED" : "verified");
	return bad ? 2 : 0;
}

/* waits for the CLOSED that follows this side's disconnect, then frees the connection */
static void hang_up(struct rpma_conn **conn)
{
	enum rpma_conn_event ev;
	TRY(rpma_conn_disconnect(*conn));
	TRY(rpma_conn_next_event(*conn, &ev));
	printf("%s: connection %s\n", role, rpma_utils_conn_event_2str(ev));
	TRY(rpma_conn_delete(conn));
}

/* connects with no private data of its own, as the examples' clients do */
static struct rpma_conn *connect_plain(struct rpma_peer *peer, const char *addr, const char *port)
{
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	enum rpma_conn_event ev;
	TRY(rpma_conn_req_new(peer, addr, port, NULL, &req));
	TRY(rpma_conn_req_connect(&req, NULL, &conn));
	TRY(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED) {
		printf("%s: expected ESTABLISHED, got %s\n", role, rpma_utils_conn_event_2str(ev));
		exit(3);
	}
	printf("%s: established\n", role);
	return conn;
}

/* example 08's client, see the top of the file */
static int pingclient(const char *addr, const char *port, int rounds)
{
	struct rpma_peer *peer = open_peer(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_mr_local *recv_mr, *send_mr;
	struct rpma_conn *conn;
	struct rpma_cq *cq, *rcq;
	uint64_t *recv, *send, counter = 1000;
	int bad = 0;

	role = "pingclient";
	if (posix_memalign((void **)&recv, 4096, 4096) || posix_memalign((void **)&send, 4096, 4096))
		return 3;
	TRY(rpma_mr_reg(peer, recv, 8, RPMA_MR_USAGE_RECV, &recv_mr));
	TRY(rpma_mr_reg(peer, send, 8, RPMA_MR_USAGE_SEND, &send_mr));
	conn = connect_plain(peer, addr, port);
	TRY(rpma_conn_get_cq(conn, &cq));
	TRY(rpma_conn_get_rcq(conn, &rcq));
	for (int i = 1; i < rounds; i++) {
		TRY(rpma_recv(conn, recv_mr, 0, 8, NULL));
		*send = counter;
		TRY(rpma_send(conn, send_mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, NULL));
		if (rcq == NULL) {
			/* one CQ for both: two completions, in either order */
			await(conn, cq, "send or receive");
			await(conn, cq, "send or receive");
		} else {
			await(conn, cq, "send");
			await(conn, rcq, "receive");
		}
		if (*recv != counter + 1) {
			printf("pingclient: MISMATCH answer %llu to %llu\n", (unsigned long long)*recv,
			       (unsigned long long)counter);
			bad = 1;
		}
		counter = *recv;
	}
	/* the last message: not waited for, and the disconnect follows at once (as example 08) */
	*send = I_M_DONE;
	TRY(rpma_send(conn, send_mr, 0, 8, RPMA_F_COMPLETION_ON_ERROR, NULL));
	printf("pingclient: sent I_M_DONE after %d rounds, last counter %llu\n", rounds - 1,
	       (unsigned long long)counter);
	hang_up(&conn);
	TRY(rpma_mr_dereg(&send_mr));
	TRY(rpma_mr_dereg(&recv_mr));
	TRY(rpma_peer_delete(&peer));
	printf("pingclient: %s\n", bad ? "FAILED" : "verified");
	return bad ? 2 : 0;
}

/* examples 02 and 05's clients, see the top of the file */
static int zeroclient(const char *addr, const char *port)
{
	struct rpma_peer *peer = open_peer(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_mr_local *mr;
	struct rpma_mr_remote *theirs;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct rpma_conn_private_data in;
	struct common_data cd;
	uint8_t *mem;
	size_t their_size;
	int bad = 0;

	role = "zeroclient";
	printf("zeroclient: sizeof common_data %zu\n", sizeof(struct common_data));
	if (posix_memalign((void **)&mem, 4096, 4096))
		return 3;
	memset(mem, 0, 4096);
	TRY(rpma_mr_reg(peer, mem, 4096, RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC, &mr));
	conn = connect_plain(peer, addr, port);
	TRY(rpma_conn_get_private_data(conn, &in));
	if (in.ptr == NULL || in.len < sizeof(struct common_data)) {
		printf("zeroclient: accept private data of %u bytes is shorter than struct common_data (%zu)\n",
		       (unsigned)in.len, sizeof(struct common_data));
		return 3;
	}
	memcpy(&cd, in.ptr, sizeof(cd));
	printf("zeroclient: server common_data: offset %u, region descriptor %u bytes\n", (unsigned)cd.data_offset,
	       cd.mr_desc_size);
	TRY(rpma_mr_remote_from_descriptor(cd.descriptors, cd.mr_desc_size, &theirs));
	TRY(rpma_mr_remote_get_size(theirs, &their_size));
	TRY(rpma_conn_get_cq(conn, &cq));
	TRY(rpma_read(conn, mr, 0, theirs, cd.data_offset, 1024, RPMA_F_COMPLETION_ALWAYS, NULL));
	await(conn, cq, "read of the server's region");
	bad |= check("pattern 1 read from the server", mem, 1024, 1);
	fill(mem + 2048, 1024, 2);
	TRY(rpma_write(conn, theirs, cd.data_offset + 2048, mr, 2048, 1024, RPMA_F_COMPLETION_ON_ERROR, NULL));
	TRY(rpma_flush(conn, theirs, cd.data_offset + 2048, 1024, RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS,
		       NULL));
	await(conn, cq, "write and flush VISIBILITY");
	hang_up(&conn);
	TRY(rpma_mr_remote_delete(&theirs));
	TRY(rpma_mr_dereg(&mr));
	TRY(rpma_peer_delete(&peer));
	free(mem);
	printf("zeroclient: %s\n", bad ? "FAILED" : "verified");
	return bad ? 2 : 0;
}

/* examples 02 (pmem 0) and 05 (pmem 1)'s servers, see the top of the file */
static int exserver(const char *addr, const char *port, int pmem)
{
	struct rpma_peer *peer = open_peer(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_peer_cfg *pcfg;
	struct rpma_mr_local *mr;
	struct rpma_ep *ep;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_conn_private_data out;
	struct common_data cd;
	enum rpma_conn_event ev;
	size_t mr_size, pcfg_size;
	uint8_t *mem;
	int bad;

	role = pmem ? "pmemserver" : "roserver";
	if (posix_memalign((void **)&mem, 4096, 4096))
		return 3;
	memset(mem, 0, 4096);
	if (!pmem)
		fill(mem, 1024, 1);
	TRY(rpma_peer_cfg_new(&pcfg));
	if (pmem)
		TRY(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	TRY(rpma_mr_reg(peer, mem, 4096,
			pmem ? RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT |
				       RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY
			     : RPMA_MR_USAGE_READ_SRC,
			&mr));
	TRY(rpma_mr_get_descriptor_size(mr, &mr_size));
	TRY(rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_size));
	if (mr_size + pcfg_size > DESCRIPTORS_MAX_SIZE)
		return 3;
	memset(&cd, 0, sizeof(cd));
	cd.data_offset = 0;
	cd.mr_desc_size = (uint8_t)mr_size;
	cd.pcfg_desc_size = (uint8_t)pcfg_size;
	TRY(rpma_mr_get_descriptor(mr, cd.descriptors));
	TRY(rpma_peer_cfg_get_descriptor(pcfg, cd.descriptors + mr_size));
	out.ptr = &cd;
	out.len = sizeof(cd);
	TRY(rpma_ep_listen(peer, addr, port, &ep));
	printf("listening\n");
	fflush(stdout);
	TRY(rpma_ep_next_conn_req(ep, NULL, &req));
	TRY(rpma_conn_req_connect(&req, &out, &conn));
	TRY(rpma_conn_next_event(conn, &ev));
	printf("%s: %s\n", role, rpma_utils_conn_event_2str(ev));
	TRY(rpma_conn_next_event(conn, &ev));
	printf("%s: connection %s\n", role, rpma_utils_conn_event_2str(ev));
	bad = ev != RPMA_CONN_CLOSED;
	if (pmem)
		bad |= check("pattern 2 written and flushed by the client at 0", mem, 1024, 2);
	TRY(rpma_conn_disconnect(conn));
	TRY(rpma_conn_delete(&conn));
	TRY(rpma_mr_dereg(&mr));
	TRY(rpma_ep_shutdown(&ep));
	TRY(rpma_peer_cfg_delete(&pcfg));
	TRY(rpma_peer_delete(&peer));
	free(mem);
	printf("%s: %s\n", role, bad ? "FAILED" : "verified");
	return bad ? 2 : 0;
}

/* example 08's server, see the top of the file */
static int pingserver(const char *addr, const char *port)
{
	struct rpma_peer *peer = open_peer(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_mr_local *recv_mr, *send_mr;
	struct rpma_ep *ep;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_cq *cq, *rcq;
	enum rpma_conn_event ev;
	uint64_t *recv, *send;
	int answered = 0;

	role = "pingserver";
	if (posix_memalign((void **)&recv, 4096, 4096) || posix_memalign((void **)&send, 4096, 4096))
		return 3;
	TRY(rpma_mr_reg(peer, recv, 8, RPMA_MR_USAGE_RECV, &recv_mr));
	TRY(rpma_mr_reg(peer, send, 8, RPMA_MR_USAGE_SEND, &send_mr));
	TRY(rpma_ep_listen(peer, addr, port, &ep));
	printf("listening\n");
	fflush(stdout);
	TRY(rpma_ep_next_conn_req(ep, NULL, &req));
	TRY(rpma_conn_req_recv(req, recv_mr, 0, 8, NULL));
	TRY(rpma_conn_req_connect(&req, NULL, &conn));
	TRY(rpma_conn_next_event(conn, &ev));
	printf("pingserver: %s\n", rpma_utils_conn_event_2str(ev));
	TRY(rpma_conn_get_cq(conn, &cq));
	TRY(rpma_conn_get_rcq(conn, &rcq));
	if (rcq != NULL) {
		printf("pingserver: expected one CQ (librpma's default)\n");
		return 3;
	}
	/* one CQ for both: a send's completion and the next message's come in either order */
	for (int have_recv = 0, have_send = 1;;) {
		while (!have_recv || !have_send) {
			if (await(conn, cq, "send or receive") == IBV_WC_RECV)
				have_recv = 1;
			else
				have_send = 1;
		}
		if (*recv == I_M_DONE)
			break;
		*send = *recv + 1;
		have_recv = have_send = 0;
		TRY(rpma_recv(conn, recv_mr, 0, 8, NULL));
		TRY(rpma_send(conn, send_mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, NULL));
		answered++;
	}
	printf("pingserver: I_M_DONE after %d answers\n", answered);
	TRY(rpma_conn_next_event(conn, &ev));
	printf("pingserver: connection %s\n", rpma_utils_conn_event_2str(ev));
	TRY(rpma_conn_disconnect(conn));
	TRY(rpma_conn_delete(&conn));
	TRY(rpma_mr_dereg(&send_mr));
	TRY(rpma_mr_dereg(&recv_mr));
	TRY(rpma_ep_shutdown(&ep));
	TRY(rpma_peer_delete(&peer));
	printf("pingserver: %s\n", ev == RPMA_CONN_CLOSED && answered > 0 ? "verified" : "FAILED");
	return ev == RPMA_CONN_CLOSED && answered > 0 ? 0 : 2;
}

/* example 01, see the top of the file */
static int connpeer(const char *addr, const char *port, int is_server)
{
	struct rpma_peer *peer = open_peer(addr, is_server ? RPMA_UTIL_IBV_CONTEXT_LOCAL : RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_conn_private_data out, in;
	enum rpma_conn_event ev;
	char greeting[32];

	role = is_server ? "connserver" : "connclient";
	snprintf(greeting, sizeof(greeting), "Hello %s!", is_server ? "client" : "server");
	out.ptr = greeting;
	out.len = (uint8_t)(strlen(greeting) + 1);
	if (is_server) {
		TRY(rpma_ep_listen(peer, addr, port, &ep));
		printf("listening\n");
		fflush(stdout);
		TRY(rpma_ep_next_conn_req(ep, NULL, &req));
	} else {
		TRY(rpma_conn_req_new(peer, addr, port, NULL, &req));
	}
	TRY(rpma_conn_req_connect(&req, &out, &conn));
	TRY(rpma_conn_next_event(conn, &ev));
	if (ev != RPMA_CONN_ESTABLISHED) {
		printf("%s: expected ESTABLISHED, got %s\n", role, rpma_utils_conn_event_2str(ev));
		return 3;
	}
	TRY(rpma_conn_get_private_data(conn, &in));
	printf("%s: the peer says: %.*s\n", role, (int)strnlen(in.ptr, in.len), (const char *)in.ptr);
	if (!is_server)
		TRY(rpma_conn_disconnect(conn));
	TRY(rpma_conn_next_event(conn, &ev));
	printf("%s: connection %s\n", role, rpma_utils_conn_event_2str(ev));
	if (is_server)
		TRY(rpma_conn_disconnect(conn));
	TRY(rpma_conn_delete(&conn));
	if (ep != NULL)
		TRY(rpma_ep_shutdown(&ep));
	TRY(rpma_peer_delete(&peer));
	printf("%s: %s\n", role, ev == RPMA_CONN_CLOSED ? "verified" : "FAILED");
	return ev == RPMA_CONN_CLOSED ? 0 : 2;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && strcmp(argv[1], "pingclient") == 0) {
		alarm(60);
		return pingclient(argv[2], argv[3], atoi(argv[4]));
	}
	if (argc == 4 && strcmp(argv[1], "zeroclient") == 0) {
		alarm(60);
		return zeroclient(argv[2], argv[3]);
	}
	if (argc == 4 && (strcmp(argv[1], "roserver") == 0 || strcmp(argv[1], "pmemserver") == 0)) {
		alarm(60);
		return exserver(argv[2], argv[3], strcmp(argv[1], "pmemserver") == 0);
	}
	if (argc == 4 && strcmp(argv[1], "pingserver") == 0) {
		alarm(60);
		return pingserver(argv[2], argv[3]);
	}
	if (argc == 4 && (strcmp(argv[1], "connserver") == 0 || strcmp(argv[1], "connclient") == 0)) {
		alarm(60);
		return connpeer(argv[2], argv[3], strcmp(argv[1], "connserver") == 0);
	}
	if (argc != 4 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: %s server|client|zeroclient|roserver|pmemserver|pingserver|connserver|connclient ADDRESS PORT | pingclient ADDRESS PORT ROUNDS\n",
			argv[0]);
		return 64;
	}
	alarm(60);
	return strcmp(argv[1], "server") == 0 ? server(argv[2], argv[3]) : client(argv[2], argv[3]);
}
