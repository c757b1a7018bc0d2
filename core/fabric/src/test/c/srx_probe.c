/*
 * srx_probe: does libfabric's tcp provider offer a shared receive context (fi_srx_context(3))
 * that several connected FI_EP_MSG endpoints share, and how does a receive's completion name the
 * endpoint whose message it took?
 *
 * fi_endpoint(3), "SHARED CONTEXTS": receive buffers are posted directly to the shared receive
 * context and are "usable by any endpoint bound to the shared receive context"; "Shared receive
 * contexts are not associated with completion queues or counters. Completed receive operations
 * are posted to the CQs bound to the endpoint." An endpoint asks for one with
 * ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT ("Providers that do not support shared receive
 * contexts will fail the request") and binds it with fi_ep_bind before fi_enable.
 *
 * One process, 127.0.0.1: a passive endpoint listens; two client endpoints connect; the server
 * opens one srx, gives each accepted endpoint FI_SHARED_CONTEXT, binds the srx and a receive CQ
 * of its own (cq A, cq B), posts 4 receives on the srx (contexts 1..4), and each client sends
 * one message naming itself. Printed: the domain's max_ep_srx_ctx, each call's return code, and
 * for each completion the CQ it came out of, its op_context and the payload.
 *
 * Build and run (Debian 12, libfabric 1.17):
 *   gcc -O2 -o /tmp/srx_probe srx_probe.c -lfabric && /tmp/srx_probe
 * Output: "name value" lines.
 *
 * Result (libfabric 1.17, provider tcp 117.0): fi_getinfo with FI_SHARED_CONTEXT 0,
 * max_ep_srx_ctx 8192, fi_srx_context 0, fi_endpoint/fi_ep_bind(srx)/fi_enable/fi_accept 0 for
 * both endpoints, fi_recv on the srx 0 four times. Client 1's message took the receive posted
 * first (op_context 1) and came out of server CQ 1; client 0's took the next one (op_context 2)
 * and came out of server CQ 0; flags 0x402 (FI_RECV | FI_MSG). So on tcp an srx works, the
 * op_context is the receive's (posting order), never the sender's, and only the CQ the
 * endpoint is bound to names which connection a message came from: endpoints that share one CQ
 * (one per loop) cannot tell from the entry.
 *
 * Memory (mallinfo2, one thread): the first fi_recv on an endpoint of its own allocated 462,944
 * bytes, the first on the srx 463,104 and the next three 0; client 1's first fi_send (nothing
 * posted on it before) 463,088, client 0's 0 (its endpoint had posted a receive). So the provider
 * allocates about 452 KiB of transfer entries per endpoint, or per srx, on its first post of
 * anything, receive or transmit, whatever the queue sizes: an srx saves that only on endpoints
 * that never transmit, and a connection that posts so much as one write pins it.
 */
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(what, call) do { int _r = (int) (call); printf("%s %d %s\n", what, _r, _r < 0 ? fi_strerror(-_r) : "ok"); \
    if (_r < 0) { exit(1); } } while (0)

/* Bytes malloc handed out (one thread: the main arena is all of it; mallinfo2(3)). */
static long in_use(void) {
    struct mallinfo2 m = mallinfo2();
    return (long) (m.uordblks + m.hblkhd);
}

static struct fid_cq *new_cq(struct fid_domain *domain) {
    struct fi_cq_attr a = {.size = 64, .format = FI_CQ_FORMAT_DATA, .wait_obj = FI_WAIT_NONE};
    struct fid_cq *cq;
    CHECK("fi_cq_open", fi_cq_open(domain, &a, &cq, NULL));
    return cq;
}

int main(void) {
    struct fi_info *hints = fi_allocinfo(), *info = NULL, *cinfo = NULL;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_eq *peq, *ceq[2];
    struct fid_pep *pep;
    struct fid_ep *cep[2], *sep[2], *srx;
    struct fid_cq *ccq[2], *scq[2];
    struct fi_eq_attr eq_attr = {.size = 16, .wait_obj = FI_WAIT_UNSPEC};
    struct sockaddr_in addr = {.sin_family = AF_INET};
    size_t addrlen = sizeof(addr);
    static char rbuf[4][64];
    static char sbuf[2][64];

    hints->ep_attr->type = FI_EP_MSG;
    hints->caps = FI_MSG;
    hints->fabric_attr->prov_name = strdup("tcp");
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    hints->src_addr = malloc(sizeof(addr));
    memcpy(hints->src_addr, &addr, sizeof(addr));
    hints->src_addrlen = sizeof(addr);
    hints->addr_format = FI_SOCKADDR_IN;
    hints->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
    int r = fi_getinfo(FI_VERSION(1, 11), NULL, NULL, 0, hints, &info);
    printf("fi_getinfo(rx_ctx_cnt=FI_SHARED_CONTEXT) %d %s\n", r, r < 0 ? fi_strerror(-r) : "ok");
    if (r < 0) {
        return 1;
    }
    printf("provider %s %u.%u\n", info->fabric_attr->prov_name, FI_MAJOR(info->fabric_attr->prov_version),
           FI_MINOR(info->fabric_attr->prov_version));
    printf("max_ep_srx_ctx %zu\n", info->domain_attr->max_ep_srx_ctx);
    printf("info_rx_ctx_cnt %zu (FI_SHARED_CONTEXT is %zu)\n", info->ep_attr->rx_ctx_cnt, (size_t) FI_SHARED_CONTEXT);
    printf("rx_attr_size %zu\n", info->rx_attr->size);
    CHECK("fi_fabric", fi_fabric(info->fabric_attr, &fabric, NULL));
    CHECK("fi_domain", fi_domain(fabric, info, &domain, NULL));
    CHECK("fi_srx_context", fi_srx_context(domain, info->rx_attr, &srx, NULL));
    CHECK("fi_eq_open(server)", fi_eq_open(fabric, &eq_attr, &peq, NULL));
    CHECK("fi_passive_ep", fi_passive_ep(fabric, info, &pep, NULL));
    CHECK("fi_pep_bind", fi_pep_bind(pep, &peq->fid, 0));
    CHECK("fi_listen", fi_listen(pep));
    CHECK("fi_getname", fi_getname(&pep->fid, &addr, &addrlen));

    free(hints->src_addr);
    hints->src_addr = NULL;
    hints->src_addrlen = 0;
    hints->ep_attr->rx_ctx_cnt = 0;
    hints->dest_addr = malloc(sizeof(addr));
    memcpy(hints->dest_addr, &addr, sizeof(addr));
    hints->dest_addrlen = sizeof(addr);
    CHECK("fi_getinfo(client)", fi_getinfo(FI_VERSION(1, 11), NULL, NULL, 0, hints, &cinfo));

    for (int c = 0; c < 2; c++) {
        CHECK("fi_eq_open(client)", fi_eq_open(fabric, &eq_attr, &ceq[c], NULL));
        CHECK("fi_endpoint(client)", fi_endpoint(domain, cinfo, &cep[c], NULL));
        CHECK("fi_ep_bind(client eq)", fi_ep_bind(cep[c], &ceq[c]->fid, 0));
        ccq[c] = new_cq(domain);
        CHECK("fi_ep_bind(client cq)", fi_ep_bind(cep[c], &ccq[c]->fid, FI_TRANSMIT | FI_RECV));
        CHECK("fi_enable(client)", fi_enable(cep[c]));
        CHECK("fi_connect", fi_connect(cep[c], cinfo->dest_addr, NULL, 0));

        uint32_t event;
        char buf[sizeof(struct fi_eq_cm_entry) + 256];
        ssize_t n = -FI_EAGAIN;
        for (int i = 0; i < 5000 && n == -FI_EAGAIN; i++) {
            struct fi_cq_data_entry ce;
            uint32_t cev;
            char cbuf[64];
            fi_cq_read(ccq[c], &ce, 1);
            (void) fi_eq_read(ceq[c], &cev, cbuf, sizeof(cbuf), FI_PEEK); /* progresses the connect */
            n = fi_eq_sread(peq, &event, buf, sizeof(buf), 1, 0);
        }
        if (n < 0 || event != FI_CONNREQ) {
            printf("server_event %zd\n", n);
            return 1;
        }
        struct fi_eq_cm_entry *req = (struct fi_eq_cm_entry *) buf;
        req->info->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
        CHECK("fi_endpoint(server, FI_SHARED_CONTEXT)", fi_endpoint(domain, req->info, &sep[c], NULL));
        CHECK("fi_ep_bind(server eq)", fi_ep_bind(sep[c], &peq->fid, 0));
        scq[c] = new_cq(domain);
        CHECK("fi_ep_bind(server cq)", fi_ep_bind(sep[c], &scq[c]->fid, FI_TRANSMIT | FI_RECV));
        CHECK("fi_ep_bind(server srx)", fi_ep_bind(sep[c], &srx->fid, 0));
        CHECK("fi_enable(server)", fi_enable(sep[c]));
        CHECK("fi_accept", fi_accept(sep[c], NULL, 0));
        fi_freeinfo(req->info);
        int up = 0;
        for (int i = 0; i < 5000 && up < 2; i++) {
            struct fi_cq_data_entry ce;
            fi_cq_read(ccq[c], &ce, 1);
            fi_cq_read(scq[c], &ce, 1);
            if (fi_eq_read(peq, &event, buf, sizeof(buf), 0) > 0 && event == FI_CONNECTED) {
                up++;
            }
            if (fi_eq_sread(ceq[c], &event, buf, sizeof(buf), 1, 0) > 0 && event == FI_CONNECTED) {
                up++;
            }
        }
        printf("connected_%d %s\n", c, up == 2 ? "yes" : "no");
        if (up != 2) {
            return 1;
        }
    }

    /* What the provider allocates for the first receive of an endpoint of its own, and for the
     * first receive on the srx, which every endpoint bound to it shares. */
    static char extra[64];
    long m0 = in_use();
    ssize_t own = fi_recv(cep[0], extra, sizeof(extra), NULL, FI_ADDR_UNSPEC, (void *) 99);
    long m1 = in_use();
    printf("first_fi_recv(own endpoint) %zd malloc_bytes %ld\n", own, m1 - m0);
    for (long i = 0; i < 4; i++) {
        long before = in_use();
        ssize_t n = fi_recv(srx, rbuf[i], sizeof(rbuf[i]), NULL, FI_ADDR_UNSPEC, (void *) (i + 1));
        printf("fi_recv(srx, context %ld) %zd %s malloc_bytes %ld\n", i + 1, n, n < 0 ? fi_strerror((int) -n) : "ok",
               in_use() - before);
    }
    /* Client 1 first, then client 0: the receive each message takes is whichever is next. */
    for (int c = 1; c >= 0; c--) {
        snprintf(sbuf[c], sizeof(sbuf[c]), "from client %d", c);
        long before = in_use();
        ssize_t n = fi_send(cep[c], sbuf[c], strlen(sbuf[c]) + 1, NULL, 0, (void *) 100);
        printf("fi_send(client %d) %zd malloc_bytes %ld (its endpoint's first transmit)\n", c, n, in_use() - before);
        for (int i = 0; i < 20000; i++) {
            struct fi_cq_data_entry ce;
            int done = 0;
            if (fi_cq_read(ccq[c], &ce, 1) == 1) {
                done = 1;
            }
            for (int s = 0; s < 2; s++) {
                ssize_t got = fi_cq_read(scq[s], &ce, 1);
                if (got == 1) {
                    long ctx = (long) ce.op_context;
                    printf("completion on_server_cq %d op_context %ld flags 0x%llx len %zu payload \"%s\"\n", s, ctx,
                           (unsigned long long) ce.flags, ce.len, ctx >= 1 && ctx <= 4 ? rbuf[ctx - 1] : "?");
                    done |= 2;
                } else if (got == -FI_EAVAIL) {
                    struct fi_cq_err_entry err = {0};
                    fi_cq_readerr(scq[s], &err, 0);
                    printf("error on_server_cq %d err %d %s\n", s, err.err, fi_strerror(err.err));
                    done |= 2;
                }
            }
            if (done == 3) {
                break;
            }
        }
    }
    for (int c = 0; c < 2; c++) {
        fi_close(&cep[c]->fid);
        fi_close(&sep[c]->fid);
        fi_close(&ccq[c]->fid);
        fi_close(&scq[c]->fid);
        fi_close(&ceq[c]->fid);
    }
    printf("fi_close(srx) %d\n", fi_close(&srx->fid));
    fi_close(&pep->fid);
    fi_close(&peq->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(cinfo);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    return 0;
}
