/*
 * reject_data_probe: does a server's fi_reject(3) private data reach the client on libfabric's
 * tcp provider? If it does, a server can refuse a request with a reason the client reads without
 * opening an endpoint for it (fi_cm(3): "fi_reject ... param: private data to send with the
 * reject"; the client's connect ends with an error entry on its EQ, FI_ECONNREFUSED, whose
 * err_data/err_data_size fi_eq(3) describes as provider-specific error data).
 *
 * One process, 127.0.0.1: a passive endpoint listens; a client endpoint connects; the server
 * reads FI_CONNREQ and rejects with a 24-byte reason; the client's EQ is read with fi_eq_sread
 * and, on -FI_EAVAIL, fi_eq_readerr with a buffer of its own for err_data.
 *
 * Build and run (Debian 12, libfabric 1.17):
 *   gcc -O2 -o /tmp/reject_data_probe reject_data_probe.c -lfabric && /tmp/reject_data_probe
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

int main(void) {
    struct fi_info *hints = fi_allocinfo(), *info = NULL, *cinfo = NULL;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_eq *peq, *ceq;
    struct fid_pep *pep;
    struct fid_ep *cep;
    struct fid_cq *ccq;
    struct fi_cq_attr cq_attr = {.size = 16, .format = FI_CQ_FORMAT_CONTEXT, .wait_obj = FI_WAIT_NONE};
    struct fi_eq_attr eq_attr = {.size = 16, .wait_obj = FI_WAIT_UNSPEC};
    struct sockaddr_in addr = {.sin_family = AF_INET};
    size_t addrlen = sizeof(addr);
    const char reason[] = "refused: not on the list";

    hints->ep_attr->type = FI_EP_MSG;
    hints->caps = FI_MSG;
    hints->fabric_attr->prov_name = strdup("tcp");
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    hints->src_addr = malloc(sizeof(addr));
    memcpy(hints->src_addr, &addr, sizeof(addr));
    hints->src_addrlen = sizeof(addr);
    hints->addr_format = FI_SOCKADDR_IN;
    CHECK("fi_getinfo", fi_getinfo(FI_VERSION(1, 11), NULL, NULL, 0, hints, &info));
    CHECK("fi_fabric", fi_fabric(info->fabric_attr, &fabric, NULL));
    CHECK("fi_domain", fi_domain(fabric, info, &domain, NULL));
    CHECK("fi_eq_open(server)", fi_eq_open(fabric, &eq_attr, &peq, NULL));
    CHECK("fi_eq_open(client)", fi_eq_open(fabric, &eq_attr, &ceq, NULL));
    CHECK("fi_passive_ep", fi_passive_ep(fabric, info, &pep, NULL));
    CHECK("fi_pep_bind", fi_pep_bind(pep, &peq->fid, 0));
    CHECK("fi_listen", fi_listen(pep));
    CHECK("fi_getname", fi_getname(&pep->fid, &addr, &addrlen));
    printf("listening_port %d\n", ntohs(addr.sin_port));

    free(hints->src_addr);
    hints->src_addr = NULL;
    hints->src_addrlen = 0;
    hints->dest_addr = malloc(sizeof(addr));
    memcpy(hints->dest_addr, &addr, sizeof(addr));
    hints->dest_addrlen = sizeof(addr);
    CHECK("fi_getinfo(client)", fi_getinfo(FI_VERSION(1, 11), NULL, NULL, 0, hints, &cinfo));
    CHECK("fi_endpoint(client)", fi_endpoint(domain, cinfo, &cep, NULL));
    CHECK("fi_ep_bind(client eq)", fi_ep_bind(cep, &ceq->fid, 0));
    CHECK("fi_cq_open(client)", fi_cq_open(domain, &cq_attr, &ccq, NULL));
    CHECK("fi_ep_bind(client cq)", fi_ep_bind(cep, &ccq->fid, FI_TRANSMIT | FI_RECV));
    CHECK("fi_enable(client)", fi_enable(cep));
    CHECK("fi_connect", fi_connect(cep, cinfo->dest_addr, "hello", 5));

    uint32_t event;
    char buf[sizeof(struct fi_eq_cm_entry) + 256];
    ssize_t n = -FI_EAGAIN;
    /* One thread: the client's side progresses only when it is read (its EQ and CQ). */
    for (int i = 0; i < 5000 && n == -FI_EAGAIN; i++) {
        struct fi_cq_entry ce;
        fi_cq_read(ccq, &ce, 1);
        uint32_t cev;
        char cbuf[64];
        ssize_t cn = fi_eq_read(ceq, &cev, cbuf, sizeof(cbuf), FI_PEEK);
        (void) cn;
        n = fi_eq_sread(peq, &event, buf, sizeof(buf), 1, 0);
    }
    printf("server_event %zd %s\n", n, event == FI_CONNREQ ? "FI_CONNREQ" : "other");
    if (n < 0 || event != FI_CONNREQ) {
        return 1;
    }
    struct fi_eq_cm_entry *req = (struct fi_eq_cm_entry *) buf;
    printf("request_private_data_bytes %zd\n", n - (ssize_t) sizeof(struct fi_eq_cm_entry));
    CHECK("fi_reject", fi_reject(pep, req->info->handle, reason, sizeof(reason)));
    fi_freeinfo(req->info);

    n = -FI_EAGAIN;
    for (int i = 0; i < 5000 && n == -FI_EAGAIN; i++) {
        struct fi_cq_entry ce;
        fi_cq_read(ccq, &ce, 1);
        n = fi_eq_sread(ceq, &event, buf, sizeof(buf), 1, 0);
    }
    printf("client_sread %zd %s\n", n, n < 0 ? fi_strerror((int) -n) : "an event");
    if (n == -FI_EAVAIL) {
        char data[256];
        struct fi_eq_err_entry err = {0};
        err.err_data = data;
        err.err_data_size = sizeof(data);
        memset(data, 0, sizeof(data));
        n = fi_eq_readerr(ceq, &err, 0);
        printf("client_readerr %zd err %d (%s) prov_errno %d\n", n, err.err, fi_strerror(err.err), err.prov_errno);
        printf("client_err_data_size %zu\n", err.err_data_size);
        printf("client_err_data_matches_reason %s\n",
               err.err_data_size == sizeof(reason) && memcmp(err.err_data, reason, sizeof(reason)) == 0
                   ? "yes" : "no");
        if (err.err_data_size > 0 && err.err_data_size <= sizeof(data)) {
            printf("client_err_data \"%.*s\"\n", (int) err.err_data_size, (char *) err.err_data);
        }
    }
    fi_close(&cep->fid);
    fi_close(&ccq->fid);
    fi_close(&pep->fid);
    fi_close(&ceq->fid);
    fi_close(&peq->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(cinfo);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    return 0;
}
