/*
 * cq_pool_probe: whose are the transfer entries that libfabric's tcp provider allocates on first
 * use, the endpoint's or its completion queue's, and does a peer's one-sided operation allocate
 * them on the target side, where nothing was posted?
 *
 * srx_probe.c found about 452 KiB allocated on an endpoint's first post, whatever the queue
 * sizes. fi_endpoint(3) lets many endpoints bind one CQ ("fi_ep_bind ... A CQ may be bound to
 * multiple endpoints"), so the owner decides what an idle connection costs: a pool per endpoint
 * is paid by every connection that ever carried anything, a pool per CQ once per CQ.
 *
 * One process, 127.0.0.1, FI_EP_MSG with FI_MSG | FI_RMA, one domain, one 4 KiB region on the
 * server's side (remote read and write, requested key 7). Two rounds, each with a fresh pair of
 * endpoints, as argv[1] says:
 *   "own"    the server's endpoint binds a CQ of its own;
 *   "shared" the server's endpoint binds the client's CQ (one CQ, two endpoints).
 * In each: the client posts one receive first (its pool, measured), then writes 8 bytes into
 * the server's region three times and reads them back three times (argv[2] "reads-first": the
 * reads before the writes); the server posts nothing.
 * Printed: malloc's bytes in use (mallinfo2) across each step, and whether the write landed.
 *
 * Build and run (Debian 12, libfabric 1.17):
 *   gcc -O2 -o /tmp/cq_pool_probe cq_pool_probe.c -lfabric
 *   /tmp/cq_pool_probe own; /tmp/cq_pool_probe own reads-first; /tmp/cq_pool_probe shared
 *
 * Result (libfabric 1.17, tcp 117.0):
 *   own:    the client's first receive 462,944 bytes; its first write 462,928-462,976 more (the
 *           server's endpoint taking it, with nothing posted there); every later write and read 0.
 *   own reads-first: the client's first read 462,928 more (the server's endpoint answering it).
 *   shared: the client's first receive 462,944; its first write -48 to -96 (nothing more), every
 *           later one 0; every write landed.
 * So the pool belongs to the CQ: it is allocated by the first operation through any endpoint
 * bound to the CQ, a peer's incoming write or read included, and endpoints that share the CQ
 * share it. A connection with a CQ of its own pays it on both sides as soon as anything crosses
 * (a keep-alive probe, a credit write); a CQ shared by K connections costs each a K-th of it.
 */
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MUST(what, call) do { int rc_ = (int) (call); if (rc_ < 0) { \
    printf("%s %d %s\n", what, rc_, fi_strerror(-rc_)); exit(1); } } while (0)

static long heap_in_use(void) {
    struct mallinfo2 m = mallinfo2();
    return (long) (m.uordblks + m.hblkhd);
}

static struct fid_cq *open_cq(struct fid_domain *domain) {
    struct fi_cq_attr attr = {.size = 64, .format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_NONE};
    struct fid_cq *cq;
    MUST("fi_cq_open", fi_cq_open(domain, &attr, &cq, NULL));
    return cq;
}

/* Reads the client's CQ until its one completion; the server's CQ, if another, is read too: on
 * tcp an endpoint makes progress when its CQ is read. */
static int await_completion(struct fid_cq *client, struct fid_cq *server) {
    for (int i = 0; i < 1000000; i++) {
        struct fi_cq_data_entry entry;
        if (server != client) {
            (void) fi_cq_read(server, &entry, 1);
        }
        ssize_t n = fi_cq_read(client, &entry, 1);
        if (n == 1) {
            return 0;
        }
        if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry err = {0};
            fi_cq_readerr(client, &err, 0);
            printf("completion_error %d %s\n", err.err, fi_strerror(err.err));
            return -1;
        }
    }
    printf("completion_timeout\n");
    return -1;
}

int main(int argc, char **argv) {
    int shared = argc > 1 && strcmp(argv[1], "shared") == 0;
    int reads_first = argc > 2 && strcmp(argv[2], "reads-first") == 0;
    static char region[4096];
    static char source[8] = "cqflux!";
    static char sink[64];
    struct fi_info *hints = fi_allocinfo(), *info, *client_info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_mr *mr;
    struct fid_eq *listen_eq, *client_eq;
    struct fid_pep *pep;
    struct fid_ep *client, *server;
    struct fid_cq *client_cq, *server_cq;
    struct fi_eq_attr eq_attr = {.size = 16, .wait_obj = FI_WAIT_UNSPEC};
    struct sockaddr_in addr = {.sin_family = AF_INET};
    size_t addrlen = sizeof(addr);
    uint32_t event;
    char entry[sizeof(struct fi_eq_cm_entry) + 256];

    hints->ep_attr->type = FI_EP_MSG;
    hints->caps = FI_MSG | FI_RMA;
    hints->fabric_attr->prov_name = strdup("tcp");
    hints->addr_format = FI_SOCKADDR_IN;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    hints->src_addr = malloc(sizeof(addr));
    memcpy(hints->src_addr, &addr, sizeof(addr));
    hints->src_addrlen = sizeof(addr);
    MUST("fi_getinfo", fi_getinfo(FI_VERSION(1, 11), NULL, NULL, 0, hints, &info));
    printf("provider %s %u.%u layout %s\n", info->fabric_attr->prov_name, FI_MAJOR(info->fabric_attr->prov_version),
           FI_MINOR(info->fabric_attr->prov_version), shared ? "shared" : "own");
    MUST("fi_fabric", fi_fabric(info->fabric_attr, &fabric, NULL));
    MUST("fi_domain", fi_domain(fabric, info, &domain, NULL));
    MUST("fi_mr_reg", fi_mr_reg(domain, region, sizeof(region), FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 7, 0, &mr, NULL));
    MUST("fi_eq_open", fi_eq_open(fabric, &eq_attr, &listen_eq, NULL));
    MUST("fi_passive_ep", fi_passive_ep(fabric, info, &pep, NULL));
    MUST("fi_pep_bind", fi_pep_bind(pep, &listen_eq->fid, 0));
    MUST("fi_listen", fi_listen(pep));
    MUST("fi_getname", fi_getname(&pep->fid, &addr, &addrlen));

    free(hints->src_addr);
    hints->src_addr = NULL;
    hints->src_addrlen = 0;
    hints->dest_addr = malloc(sizeof(addr));
    memcpy(hints->dest_addr, &addr, sizeof(addr));
    hints->dest_addrlen = sizeof(addr);
    MUST("fi_getinfo(client)", fi_getinfo(FI_VERSION(1, 11), NULL, NULL, 0, hints, &client_info));
    MUST("fi_eq_open(client)", fi_eq_open(fabric, &eq_attr, &client_eq, NULL));
    MUST("fi_endpoint(client)", fi_endpoint(domain, client_info, &client, NULL));
    MUST("fi_ep_bind(client eq)", fi_ep_bind(client, &client_eq->fid, 0));
    client_cq = open_cq(domain);
    MUST("fi_ep_bind(client cq)", fi_ep_bind(client, &client_cq->fid, FI_TRANSMIT | FI_RECV));
    MUST("fi_enable(client)", fi_enable(client));
    MUST("fi_connect", fi_connect(client, client_info->dest_addr, NULL, 0));

    ssize_t n = -FI_EAGAIN;
    for (int i = 0; i < 5000 && n == -FI_EAGAIN; i++) {
        (void) fi_eq_read(client_eq, &event, entry, sizeof(entry), FI_PEEK); /* progresses the connect */
        n = fi_eq_sread(listen_eq, &event, entry, sizeof(entry), 1, 0);
    }
    if (n < 0 || event != FI_CONNREQ) {
        printf("no_connection_request %zd\n", n);
        return 1;
    }
    struct fi_eq_cm_entry *request = (struct fi_eq_cm_entry *) entry;
    MUST("fi_endpoint(server)", fi_endpoint(domain, request->info, &server, NULL));
    MUST("fi_ep_bind(server eq)", fi_ep_bind(server, &listen_eq->fid, 0));
    server_cq = shared ? client_cq : open_cq(domain);
    MUST("fi_ep_bind(server cq)", fi_ep_bind(server, &server_cq->fid, FI_TRANSMIT | FI_RECV));
    MUST("fi_enable(server)", fi_enable(server));
    MUST("fi_accept", fi_accept(server, NULL, 0));
    fi_freeinfo(request->info);
    int up = 0;
    for (int i = 0; i < 5000 && up < 2; i++) {
        if (fi_eq_read(listen_eq, &event, entry, sizeof(entry), 0) > 0 && event == FI_CONNECTED) {
            up++;
        }
        if (fi_eq_sread(client_eq, &event, entry, sizeof(entry), 1, 0) > 0 && event == FI_CONNECTED) {
            up++;
        }
    }
    if (up != 2) {
        printf("not_connected\n");
        return 1;
    }

    long before = heap_in_use();
    MUST("fi_recv(client)", fi_recv(client, sink, sizeof(sink), NULL, FI_ADDR_UNSPEC, (void *) 1));
    printf("client_first_receive_bytes %ld\n", heap_in_use() - before);
    for (int i = 0; i < 3 && reads_first; i++) {
        before = heap_in_use();
        MUST("fi_read", fi_read(client, sink, sizeof(source), NULL, 0, 8, 7, (void *) 3));
        if (await_completion(client_cq, server_cq) != 0) {
            return 1;
        }
        printf("read_%d_bytes %ld\n", i, heap_in_use() - before);
    }
    for (int i = 0; i < 3; i++) {
        before = heap_in_use();
        MUST("fi_write", fi_write(client, source, sizeof(source), NULL, 0, 8, 7, (void *) 2));
        if (await_completion(client_cq, server_cq) != 0) {
            return 1;
        }
        printf("write_%d_bytes %ld landed %s\n", i, heap_in_use() - before,
               memcmp(region + 8, source, sizeof(source)) == 0 ? "yes" : "no");
    }
    for (int i = 0; i < 3 && !reads_first; i++) {
        before = heap_in_use();
        MUST("fi_read", fi_read(client, sink, sizeof(source), NULL, 0, 8, 7, (void *) 3));
        if (await_completion(client_cq, server_cq) != 0) {
            return 1;
        }
        printf("read_%d_bytes %ld\n", i, heap_in_use() - before);
    }
    fi_close(&client->fid);
    fi_close(&server->fid);
    if (!shared) {
        fi_close(&server_cq->fid);
    }
    fi_close(&client_cq->fid);
    fi_close(&client_eq->fid);
    fi_close(&pep->fid);
    fi_close(&listen_eq->fid);
    fi_close(&mr->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(client_info);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    return 0;
}
