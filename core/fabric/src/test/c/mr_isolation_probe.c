/*
 * mr_isolation_probe: what libfabric's tcp provider does with per-endpoint memory regions, and
 * what one registration per exposed region per connection costs.
 *
 *   1. fi_getinfo(3) for tcp with FI_MR_ENDPOINT in the hints' mr_mode: is the bit kept (the
 *      provider wants MRs bound to an endpoint, fi_mr(3) "FI_MR_ENDPOINT") or dropped?
 *   2. fi_mr_reg with FI_MR_ENDPOINT's flow regardless: fi_mr_bind(mr, ep) and fi_mr_enable.
 *      A return of -FI_ENOSYS means the provider cannot scope a key to one endpoint.
 *   3. N registrations of one 4 KiB buffer (one per connection, each its own key), the way
 *      per-connection exposure would register it: wall time per fi_mr_reg and the resident-set
 *      growth (/proc/self/statm), then the same for fi_close.
 *
 * Build and run (Debian 12, libfabric 1.17):
 *   gcc -O2 -o /tmp/mr_isolation_probe mr_isolation_probe.c -lfabric && /tmp/mr_isolation_probe 1000
 * Output: "name value" lines.
 */
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long rss_kib(void) {
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL || fscanf(f, "%ld %ld", &pages, &resident) != 2) {
        if (f) fclose(f);
        return -1;
    }
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static struct fi_info *tcp_info(int mr_mode) {
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    hints->caps = FI_MSG | FI_RMA;
    hints->ep_attr->type = FI_EP_MSG;
    hints->domain_attr->mr_mode = mr_mode;
    hints->domain_attr->threading = FI_THREAD_SAFE;
    hints->fabric_attr->prov_name = strdup("tcp");
    int rc = fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", NULL, FI_SOURCE, hints, &info);
    fi_freeinfo(hints);
    if (rc) {
        printf("getinfo_rc %d\n", rc);
        return NULL;
    }
    return info;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    struct fi_info *plain = tcp_info(FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY);
    struct fi_info *asked = tcp_info(FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY
            | FI_MR_ENDPOINT);
    if (plain == NULL || asked == NULL) return 1;
    printf("mr_mode_without_endpoint_hint %d\n", plain->domain_attr->mr_mode);
    printf("mr_mode_with_endpoint_hint %d\n", asked->domain_attr->mr_mode);
    printf("mr_mode_endpoint_bit_kept %d\n", (asked->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0);
    printf("mr_key_size %zu\n", asked->domain_attr->mr_key_size);

    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_ep *ep;
    struct fid_eq *eq;
    struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
    if (fi_fabric(asked->fabric_attr, &fabric, NULL) || fi_domain(fabric, asked, &domain, NULL)
            || fi_eq_open(fabric, &eq_attr, &eq, NULL) || fi_endpoint(domain, asked, &ep, NULL)
            || fi_ep_bind(ep, &eq->fid, 0)) {
        printf("open_failed 1\n");
        return 1;
    }
    static char buf[4096] __attribute__((aligned(4096)));

    struct fid_mr *mr;
    int rc = fi_mr_reg(domain, buf, sizeof buf, FI_REMOTE_WRITE, 0, 42, 0, &mr, NULL);
    printf("mr_reg_rc %d\n", rc);
    printf("mr_bind_ep_rc %d\n", fi_mr_bind(mr, &ep->fid, 0));
    printf("mr_enable_rc %d\n", fi_mr_enable(mr));
    /* The same requested key again in the same domain. */
    struct fid_mr *dup;
    printf("mr_reg_duplicate_key_rc %d\n", fi_mr_reg(domain, buf, sizeof buf, FI_REMOTE_WRITE, 0, 42, 0, &dup, NULL));
    /* A key with the top bit set, and FI_KEY_NOTAVAIL. */
    struct fid_mr *hi, *na;
    rc = fi_mr_reg(domain, buf, sizeof buf, FI_REMOTE_WRITE, 0, 0x8000000000000001ULL, 0, &hi, NULL);
    printf("mr_reg_top_bit_key_rc %d\n", rc);
    if (rc == 0) fi_close(&hi->fid);
    rc = fi_mr_reg(domain, buf, sizeof buf, FI_REMOTE_WRITE, 0, FI_KEY_NOTAVAIL, 0, &na, NULL);
    printf("mr_reg_key_notavail_rc %d\n", rc);
    if (rc == 0) fi_close(&na->fid);
    fi_close(&mr->fid);

    /* One registration per connection. */
    struct fid_mr **mrs = calloc(n, sizeof *mrs);
    for (int warm = 0; warm < 2; warm++) {
        long rss0 = rss_kib();
        double t0 = now_us();
        for (int i = 0; i < n; i++) {
            if (fi_mr_reg(domain, buf, sizeof buf, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 1000 + i, 0, &mrs[i], NULL)) {
                printf("bulk_reg_failed_at %d\n", i);
                return 1;
            }
        }
        double t1 = now_us();
        long rss1 = rss_kib();
        for (int i = 0; i < n; i++) fi_close(&mrs[i]->fid);
        double t2 = now_us();
        if (warm == 0) {
            /* The first pass grows the heap; the second reuses what the first freed. */
            printf("first_pass_rss_growth_kib %ld\n", rss1 - rss0);
            printf("first_pass_rss_growth_bytes_per_mr %ld\n", (rss1 - rss0) * 1024 / n);
        } else {
            printf("registrations %d\n", n);
            printf("reg_ns_per_mr %ld\n", (long) ((t1 - t0) * 1000 / n));
            printf("close_ns_per_mr %ld\n", (long) ((t2 - t1) * 1000 / n));
            printf("rss_growth_kib %ld\n", rss1 - rss0);
            printf("rss_growth_bytes_per_mr %ld\n", (rss1 - rss0) * 1024 / n);
        }
    }
    free(mrs);
    fi_close(&ep->fid);
    fi_close(&eq->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(plain);
    fi_freeinfo(asked);
    return 0;
}
