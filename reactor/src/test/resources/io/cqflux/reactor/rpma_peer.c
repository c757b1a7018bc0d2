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

/* waits for one completion on the main CQ and checks it */
static void await(struct rpma_conn *conn, struct rpma_cq *cq, const char *what)
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

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 4 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: %s server|client ADDRESS PORT\n", argv[0]);
		return 64;
	}
	alarm(60);
	return strcmp(argv[1], "server") == 0 ? server(argv[2], argv[3]) : client(argv[2], argv[3]);
}
