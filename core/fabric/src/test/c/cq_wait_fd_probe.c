/*
 * cq_wait_fd_probe: how many file descriptors does one completion queue of libfabric's tcp
 * provider cost, for each wait object a caller may ask for?
 *
 * fi_cq(3): wait_obj FI_WAIT_NONE (no wait object), FI_WAIT_FD (one fd to poll, fi_control
 * FI_GETWAIT), FI_WAIT_POLLFD (a set of fds, struct fi_wait_pollfd) or FI_WAIT_UNSPEC (the
 * provider's choice). The transport opens its CQs with FI_WAIT_FD and registers that fd in the
 * event loop's epoll set; a connection with a CQ of its own then costs its socket and the CQ's
 * descriptors. Is there a wait object that costs fewer?
 *
 * For each wait object: open N CQs in one tcp domain, count /proc/self/fd before and after,
 * close them. FI_GETWAIT is called once on the first CQ of the FD and POLLFD kinds, to show
 * what a caller would poll.
 *
 * Build and run (Debian 12, libfabric 1.17):
 *   gcc -O2 -o /tmp/cq_wait_fd_probe cq_wait_fd_probe.c -lfabric && /tmp/cq_wait_fd_probe 10
 * Output: "wait_obj cqs fds fds_per_cq" lines.
 */
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** The open file descriptors of this process, the directory's own one left out. */
static int open_fds(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.') {
            n++;
        }
    }
    closedir(d);
    return n - 1;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 10;
    if (n < 1 || n > 1000) {
        fprintf(stderr, "count %d is outside [1, 1000]\n", n);
        return 2;
    }
    struct fi_info *hints = fi_allocinfo(), *info;
    hints->fabric_attr->prov_name = strdup("tcp");
    hints->ep_attr->type = FI_EP_MSG;
    hints->caps = FI_MSG | FI_RMA;
    int rc = fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", "0", FI_SOURCE, hints, &info);
    if (rc != 0) {
        fprintf(stderr, "fi_getinfo: %s\n", fi_strerror(-rc));
        return 1;
    }
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    if (fi_fabric(info->fabric_attr, &fabric, NULL) != 0 || fi_domain(fabric, info, &domain, NULL) != 0) {
        fprintf(stderr, "fi_fabric or fi_domain failed\n");
        return 1;
    }
    const enum fi_wait_obj kinds[] = {FI_WAIT_NONE, FI_WAIT_FD, FI_WAIT_POLLFD, FI_WAIT_UNSPEC};
    const char *names[] = {"FI_WAIT_NONE", "FI_WAIT_FD", "FI_WAIT_POLLFD", "FI_WAIT_UNSPEC"};
    struct fid_cq **cqs = calloc((size_t) n, sizeof *cqs);
    for (int k = 0; k < 4; k++) {
        int before = open_fds(), opened = 0;
        for (int i = 0; i < n; i++) {
            struct fi_cq_attr attr = {.size = 64, .format = FI_CQ_FORMAT_DATA, .wait_obj = kinds[k]};
            rc = fi_cq_open(domain, &attr, &cqs[i], NULL);
            if (rc != 0) {
                printf("%s fi_cq_open %s\n", names[k], fi_strerror(-rc));
                break;
            }
            opened++;
        }
        int after = open_fds();
        if (opened > 0 && kinds[k] == FI_WAIT_FD) {
            int fd = -1;
            rc = fi_control(&cqs[0]->fid, FI_GETWAIT, &fd);
            printf("%s getwait rc %d fd %d\n", names[k], rc, fd);
        }
        if (opened > 0 && kinds[k] == FI_WAIT_POLLFD) {
            struct fi_wait_pollfd pollfd = {0};
            rc = fi_control(&cqs[0]->fid, FI_GETWAIT, &pollfd);
            printf("%s getwait rc %d (%s) nfds %zu\n", names[k], rc, fi_strerror(-rc), pollfd.nfds);
        }
        printf("%s %d %d %.2f\n", names[k], opened, after - before, opened > 0 ? (double) (after - before) / opened : 0.0);
        for (int i = 0; i < opened; i++) {
            fi_close(&cqs[i]->fid);
        }
    }
    free(cqs);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    return 0;
}
