/*
 * cq_wait_fd_probe: how many file descriptors does one completion queue of libfabric's tcp
 * provider cost, for each wait object a caller may ask for?
 *
 * fi_cq(3): wait_obj FI_WAIT_NONE (no wait object), FI_WAIT_FD (one fd to poll, fi_control
 * FI_GETWAIT), FI_WAIT_POLLFD (a set of fds, struct fi_wait_pollfd), FI_WAIT_UNSPEC (the
 * provider's choice), FI_WAIT_SET (the wait set given in wait_set, fi_poll(3)'s fi_wait_open),
 * FI_WAIT_YIELD and FI_WAIT_MUTEX_COND. The transport opens its CQs with FI_WAIT_FD and registers
 * that fd in the event loop's epoll set; a connection with a CQ of its own then costs its socket
 * and the CQ's descriptors. Does another wait object cost fewer?
 *
 * For each wait object: open N CQs in one tcp domain (for FI_WAIT_SET, all on one wait set of
 * type FI_WAIT_FD, counted apart), count /proc/self/fd before and after the opens, close them and
 * count again. The counts are taken at fi_cq_open, before any endpoint is bound or any operation
 * posted. FI_GETWAIT is called once on the first CQ of the FD and POLLFD kinds: for POLLFD with a
 * zero-sized struct fi_wait_pollfd, which returns -FI_ETOOSMALL and the number of fds a caller
 * would poll (fi_control in fi_cq(3)).
 *
 * Build and run (Debian 12, libfabric 1.17):
 *   gcc -O2 -Wall -Wextra -o /tmp/cq_wait_fd_probe cq_wait_fd_probe.c -lfabric && /tmp/cq_wait_fd_probe 10
 * Output: "wait_obj cqs fds fds_per_cq fds_after_close" lines, and the wait set's own cost.
 */
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** The open file descriptors of this process, the directory's own one left out; -1 on error. */
static int open_fds(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL) {
        perror("opendir /proc/self/fd");
        return -1;
    }
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
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    if (hints == NULL) {
        fprintf(stderr, "fi_allocinfo failed\n");
        return 1;
    }
    hints->fabric_attr->prov_name = strdup("tcp");
    hints->ep_attr->type = FI_EP_MSG;
    hints->caps = FI_MSG | FI_RMA;
    int rc = fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", "0", FI_SOURCE, hints, &info);
    if (rc != 0) {
        fprintf(stderr, "fi_getinfo: %s\n", fi_strerror(-rc));
        fi_freeinfo(hints);
        return 1;
    }
    struct fid_fabric *fabric = NULL;
    struct fid_domain *domain = NULL;
    rc = fi_fabric(info->fabric_attr, &fabric, NULL);
    if (rc != 0) {
        fprintf(stderr, "fi_fabric: %s\n", fi_strerror(-rc));
        fi_freeinfo(info);
        fi_freeinfo(hints);
        return 1;
    }
    rc = fi_domain(fabric, info, &domain, NULL);
    if (rc != 0) {
        fprintf(stderr, "fi_domain: %s\n", fi_strerror(-rc));
        fi_close(&fabric->fid);
        fi_freeinfo(info);
        fi_freeinfo(hints);
        return 1;
    }
    const enum fi_wait_obj kinds[] = {FI_WAIT_NONE, FI_WAIT_FD, FI_WAIT_POLLFD, FI_WAIT_UNSPEC, FI_WAIT_SET,
                                      FI_WAIT_YIELD, FI_WAIT_MUTEX_COND};
    const char *names[] = {"FI_WAIT_NONE", "FI_WAIT_FD", "FI_WAIT_POLLFD", "FI_WAIT_UNSPEC", "FI_WAIT_SET",
                           "FI_WAIT_YIELD", "FI_WAIT_MUTEX_COND"};
    struct fid_cq **cqs = calloc((size_t) n, sizeof *cqs);
    if (cqs == NULL) {
        fprintf(stderr, "calloc failed\n");
        return 1;
    }
    for (int k = 0; k < (int) (sizeof kinds / sizeof kinds[0]); k++) {
        struct fid_wait *set = NULL;
        if (kinds[k] == FI_WAIT_SET) {
            int b = open_fds();
            struct fi_wait_attr wattr = {.wait_obj = FI_WAIT_FD};
            rc = fi_wait_open(fabric, &wattr, &set);
            if (rc != 0) {
                printf("%s fi_wait_open %s\n", names[k], fi_strerror(-rc));
                continue;
            }
            printf("%s the wait set itself (FI_WAIT_FD): %d fds\n", names[k], open_fds() - b);
        }
        int before = open_fds(), opened = 0;
        for (int i = 0; i < n; i++) {
            struct fi_cq_attr attr = {.size = 64, .format = FI_CQ_FORMAT_DATA, .wait_obj = kinds[k], .wait_set = set};
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
            printf("%s getwait rc %d (%s, expected) nfds %zu\n", names[k], rc, fi_strerror(-rc), pollfd.nfds);
        }
        for (int i = 0; i < opened; i++) {
            rc = fi_close(&cqs[i]->fid);
            if (rc != 0) {
                printf("%s fi_close %s\n", names[k], fi_strerror(-rc));
            }
        }
        printf("%s %d %d %.2f %d\n", names[k], opened, after - before,
               opened > 0 ? (double) (after - before) / opened : 0.0, open_fds() - before);
        if (set != NULL) {
            fi_close(&set->fid);
        }
    }
    free(cqs);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    return 0;
}
