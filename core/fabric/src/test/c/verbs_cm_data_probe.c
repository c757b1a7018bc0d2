/*
 * verbs_cm_data_probe: how much connection private data does libfabric's verbs provider carry,
 * in a connect and in an accept, and does a reject's data reach the client?
 *
 * fi_cm(3): "FI_OPT_CM_DATA_SIZE ... the size of connection private data"; fi_connect and
 * fi_accept take "param: user-specified data exchanged as part of the connection exchange".
 * RDMA CM itself carries 56 bytes in a connect request and 196 in a reply
 * (rdma_connect(3), rdma_accept(3)); the provider puts a header of its own in front.
 *
 * One process on the rxe address given (the Soft-RoCE lane's eth0: 10.0.2.15): a passive endpoint
 * listens; client endpoints connect with 56 bytes (over the reported size), then 55 (the size);
 * the server accepts the 55-byte request first with 56 bytes, then 55, and reads what arrived on
 * each side; a second client's request is rejected with 25 bytes of data (24 characters and the
 * NUL), and the client's error entry is read with a buffer of its own for err_data.
 *
 * One thread drives both sides: the provider processes RDMA CM's events (route resolved, then
 * its rdma_connect) when the endpoint's EQ is read.
 *
 * Build and run (Debian 12, libfabric 1.17), in the lane:
 *   gcc -O2 -o /tmp/verbs_cm_data_probe verbs_cm_data_probe.c -lfabric
 *   scripts/softroce/run-in-vm.sh -- /tmp/verbs_cm_data_probe 10.0.2.15
 * Output: "name value" lines.
 */
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(what, call) do { int _r = (int) (call); if (_r < 0) { \
    printf("%s %d %s\n", what, _r, fi_strerror(-_r)); exit(1); } } while (0)

static struct fi_info *info;
static struct fid_fabric *fabric;
static struct fid_domain *domain;
static struct fid_eq *peq;
static struct fi_cq_attr cq_attr = {.size = 16, .format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
static struct fi_eq_attr eq_attr = {.size = 16, .wait_obj = FI_WAIT_UNSPEC};

struct side {
    struct fid_ep *ep;
    struct fid_eq *eq;
    struct fid_cq *cq;
};

static void open_ep(struct side *s, struct fi_info *i) {
    CHECK("fi_eq_open", fi_eq_open(fabric, &eq_attr, &s->eq, NULL));
    CHECK("fi_endpoint", fi_endpoint(domain, i, &s->ep, NULL));
    CHECK("fi_ep_bind(eq)", fi_ep_bind(s->ep, &s->eq->fid, 0));
    CHECK("fi_cq_open", fi_cq_open(domain, &cq_attr, &s->cq, NULL));
    CHECK("fi_ep_bind(cq)", fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
    CHECK("fi_enable", fi_enable(s->ep));
}

static void close_ep(struct side *s) {
    fi_close(&s->ep->fid);
    fi_close(&s->cq->fid);
    fi_close(&s->eq->fid);
}

/*
 * Reads the client's EQ (which drives its connect) and the server's until one of them has an
 * event or an error: 1 client, 2 server; the event's bytes in *n.
 */
static int wait_event(struct side *client, struct fid_eq *server, uint32_t *event, char *buf, size_t len,
                      ssize_t *n) {
    for (int i = 0; i < 20000; i++) {
        *n = fi_eq_read(client->eq, event, buf, len, 0);
        if (*n != -FI_EAGAIN) {
            return 1;
        }
        if (server != NULL) {
            *n = fi_eq_sread(server, event, buf, len, 1, 0);
            if (*n != -FI_EAGAIN) {
                return 2;
            }
        }
    }
    return 0;
}

static void print_err(const char *who, struct fid_eq *eq) {
    char data[256];
    struct fi_eq_err_entry err = {0};
    memset(data, 0, sizeof(data));
    err.err_data = data;
    err.err_data_size = sizeof(data);
    ssize_t n = fi_eq_readerr(eq, &err, 0);
    printf("%s_readerr %zd err %d (%s) prov_errno %d err_data_size %zu", who, n, err.err, fi_strerror(err.err),
           err.prov_errno, err.err_data_size);
    if (err.err_data_size > 0 && err.err_data_size <= sizeof(data)) {
        printf(" err_data \"%.*s\"", (int) err.err_data_size, (char *) err.err_data);
    }
    printf("\n");
}

int main(int argc, char **argv) {
    struct fi_info *hints = fi_allocinfo(), *cinfo = NULL;
    struct fid_pep *pep;
    struct sockaddr_in addr = {.sin_family = AF_INET};
    size_t addrlen = sizeof(addr);
    char data[256];
    const char reason[] = "refused: not on the list";

    if (argc < 2 || inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) {
        printf("usage: verbs_cm_data_probe RXE_IPV4_ADDRESS\n");
        return 2;
    }
    memset(data, 'd', sizeof(data));
    hints->ep_attr->type = FI_EP_MSG;
    hints->caps = FI_MSG | FI_RMA;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->fabric_attr->prov_name = strdup("verbs");
    hints->src_addr = malloc(sizeof(addr));
    memcpy(hints->src_addr, &addr, sizeof(addr));
    hints->src_addrlen = sizeof(addr);
    hints->addr_format = FI_SOCKADDR_IN;
    CHECK("fi_getinfo", fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
    printf("domain %s\n", info->domain_attr->name);
    CHECK("fi_fabric", fi_fabric(info->fabric_attr, &fabric, NULL));
    CHECK("fi_domain", fi_domain(fabric, info, &domain, NULL));
    CHECK("fi_eq_open(server)", fi_eq_open(fabric, &eq_attr, &peq, NULL));
    CHECK("fi_passive_ep", fi_passive_ep(fabric, info, &pep, NULL));
    size_t cm_size = 0, optlen = sizeof(cm_size);
    CHECK("fi_getopt", fi_getopt(&pep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &cm_size, &optlen));
    printf("fi_opt_cm_data_size %zu\n", cm_size);
    CHECK("fi_pep_bind", fi_pep_bind(pep, &peq->fid, 0));
    CHECK("fi_listen", fi_listen(pep));
    CHECK("fi_getname", fi_getname(&pep->fid, &addr, &addrlen));

    free(hints->src_addr);
    hints->src_addr = NULL;
    hints->src_addrlen = 0;
    hints->dest_addr = malloc(sizeof(addr));
    memcpy(hints->dest_addr, &addr, sizeof(addr));
    hints->dest_addrlen = sizeof(addr);
    CHECK("fi_getinfo(client)", fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &cinfo));

    /* A connect one byte over the reported size. */
    struct side a, b, srv;
    open_ep(&a, cinfo);
    printf("fi_connect_%zu %d\n", cm_size + 1, fi_connect(a.ep, cinfo->dest_addr, data, cm_size + 1));
    printf("fi_connect_%zu %d\n", cm_size, fi_connect(a.ep, cinfo->dest_addr, data, cm_size));

    uint32_t event = 0;
    char buf[sizeof(struct fi_eq_cm_entry) + 256];
    ssize_t n;
    int who = wait_event(&a, peq, &event, buf, sizeof(buf), &n);
    if (who != 2 || n < 0 || event != FI_CONNREQ) {
        printf("no_connreq who %d n %zd event %u\n", who, n, event);
        if (who == 1 && n == -FI_EAVAIL) {
            print_err("client", a.eq);
        }
        return 1;
    }
    struct fi_eq_cm_entry *req = (struct fi_eq_cm_entry *) buf;
    printf("connreq_private_data_bytes %zd\n", n - (ssize_t) sizeof(struct fi_eq_cm_entry));
    open_ep(&srv, req->info);
    printf("fi_accept_%zu %d\n", cm_size + 1, fi_accept(srv.ep, data, cm_size + 1));
    printf("fi_accept_%zu %d\n", cm_size, fi_accept(srv.ep, data, cm_size));
    fi_freeinfo(req->info);
    int connected = 0;
    for (int round = 0; round < 2 && connected < 2; round++) {
        for (int i = 0; i < 20000; i++) {
            n = fi_eq_read(a.eq, &event, buf, sizeof(buf), 0);
            if (n != -FI_EAGAIN) {
                printf("client_event %s private_data_bytes %zd\n", event == FI_CONNECTED ? "FI_CONNECTED" : "other",
                       n < 0 ? n : n - (ssize_t) sizeof(struct fi_eq_cm_entry));
                connected++;
                break;
            }
            n = fi_eq_sread(srv.eq, &event, buf, sizeof(buf), 1, 0);
            if (n != -FI_EAGAIN) {
                printf("server_event %s private_data_bytes %zd\n", event == FI_CONNECTED ? "FI_CONNECTED" : "other",
                       n < 0 ? n : n - (ssize_t) sizeof(struct fi_eq_cm_entry));
                connected++;
                break;
            }
        }
    }

    /* A request rejected with data. */
    open_ep(&b, cinfo);
    CHECK("fi_connect(b)", fi_connect(b.ep, cinfo->dest_addr, "b", 1));
    who = wait_event(&b, peq, &event, buf, sizeof(buf), &n);
    if (who == 2 && n > 0 && event == FI_CONNREQ) {
        req = (struct fi_eq_cm_entry *) buf;
        printf("fi_reject_%zu %d\n", sizeof(reason), fi_reject(pep, req->info->handle, reason, sizeof(reason)));
        fi_freeinfo(req->info);
        who = wait_event(&b, NULL, &event, buf, sizeof(buf), &n);
        printf("rejected_client_read %zd %s\n", n, n < 0 ? fi_strerror((int) -n) : "an event");
        if (n == -FI_EAVAIL) {
            print_err("rejected_client", b.eq);
        }
    } else {
        printf("no_second_connreq who %d n %zd\n", who, n);
    }

    close_ep(&a);
    close_ep(&b);
    close_ep(&srv);
    fi_close(&pep->fid);
    fi_close(&peq->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(cinfo);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    return 0;
}
