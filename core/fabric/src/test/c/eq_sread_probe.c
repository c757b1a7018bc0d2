/*
 * eq_sread_probe: what RequestReader depends on to read a tcp listener's event queue on a thread
 * of its own and hand its requests to the loop through a second event queue (libfabric 1.17).
 *
 *   1. fi_eq_sread on the passive endpoint's queue (FI_WAIT_FD) with nothing pending: returns
 *      -FI_EAGAIN after the timeout (not -FI_ETIMEDOUT).
 *   2. fi_eq_write of an FI_NOTIFY entry into that queue: an sread waiting on it returns the
 *      entry at once (how RequestReader#stop wakes its thread).
 *   3. A second queue (FI_WAIT_FD) with nothing bound to it, the signal queue: fi_trywait 0 and
 *      its fd quiet while empty; after an fi_eq_write its fd is readable and fi_trywait
 *      -FI_EAGAIN; after fi_eq_read took the entry, fi_trywait 0 and the fd quiet again.
 *   4. A client connects (its event queue driven by another thread, as tcp progresses the
 *      connect there): fi_eq_sread on the listener's queue returns its FI_CONNREQ with its data.
 *
 * Build and run (Debian 12, libfabric 1.17):
 *   gcc -O2 -o /tmp/eq_sread_probe eq_sread_probe.c -lfabric -lpthread && /tmp/eq_sread_probe
 * Measured: sread_empty rc -11 after 200 ms; eq_write 24, sread_after_write rc 24 ev 0 after
 * 0.0 ms; sig_trywait_empty 0, sig_poll_empty 0, sig_poll_after_write 1, sig_trywait_after_write
 * -11, sig_read 24, sig_trywait_after_read 0, sig_poll_after_read_trywait 0; sread_connreq rc 21
 * ev 1 after 4.3 ms, data "hello".
 */
#define _GNU_SOURCE
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double now_ms(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
static struct fid_fabric *fabric; static struct fid_eq *peq, *sig;
static struct fi_eq_attr attr = {.size = 64, .wait_obj = FI_WAIT_FD};
static struct fid_eq *gceq; static volatile int stop;
static void *drive(void *x){uint32_t ev;char b[512];while(!stop){ssize_t n=fi_eq_read(gceq,&ev,b,sizeof b,0); if(n>0) printf("client_event %u\n",ev); usleep(200);}return NULL;}
int main(void){
  struct fi_info *h=fi_allocinfo(),*info;
  h->caps=FI_MSG|FI_RMA;h->ep_attr->type=FI_EP_MSG;h->domain_attr->threading=FI_THREAD_SAFE;h->fabric_attr->prov_name=strdup("tcp");
  h->domain_attr->mr_mode=FI_MR_LOCAL|FI_MR_VIRT_ADDR|FI_MR_ALLOCATED|FI_MR_PROV_KEY;
  struct sockaddr_in a={.sin_family=AF_INET};a.sin_addr.s_addr=htonl(INADDR_LOOPBACK);size_t al=sizeof a;
  h->src_addr=malloc(sizeof a);memcpy(h->src_addr,&a,sizeof a);h->src_addrlen=sizeof a;h->addr_format=FI_SOCKADDR_IN;
  printf("getinfo %d\n",fi_getinfo(FI_VERSION(1,17),NULL,NULL,0,h,&info));
  fi_fabric(info->fabric_attr,&fabric,NULL);
  printf("eq_open %d\n",fi_eq_open(fabric,&attr,&peq,NULL));
  printf("sig_open %d\n",fi_eq_open(fabric,&attr,&sig,NULL));
  struct fid_pep *pep; fi_passive_ep(fabric,info,&pep,NULL); fi_pep_bind(pep,&peq->fid,0); printf("listen %d\n",fi_listen(pep));
  fi_getname(&pep->fid,&a,&al);
  /* 1. sread with nothing: times out? */
  uint32_t ev; char buf[512]; double t0=now_ms();
  ssize_t n=fi_eq_sread(peq,&ev,buf,sizeof buf,200,0); printf("sread_empty rc %zd after %.0f ms\n",n,now_ms()-t0);
  /* 2. a raw TCP client connects and sends a (bogus) 32-byte header: does sread return the connreq or error */
  /* instead: fi_eq_write a user event into peq wakes sread */
  struct fi_eq_entry e={.fid=&peq->fid,.context=(void*)0x42};
  t0=now_ms(); ssize_t w=fi_eq_write(peq,FI_NOTIFY,&e,sizeof e,0); printf("eq_write peq rc %zd\n",w);
  n=fi_eq_sread(peq,&ev,buf,sizeof buf,1000,0); printf("sread_after_write rc %zd ev %u (NOTIFY=%d) after %.1f ms\n",n,ev,FI_NOTIFY,now_ms()-t0);
  /* 3. signal EQ: write, poll fd readable, trywait, read */
  int fd; fi_control(&sig->fid,FI_GETWAIT,&fd);
  struct fid *f=&sig->fid; printf("sig_trywait_empty %d\n",fi_trywait(fabric,&f,1));
  struct pollfd p={fd,POLLIN,0}; printf("sig_poll_empty %d\n",poll(&p,1,0));
  w=fi_eq_write(sig,FI_NOTIFY,&e,sizeof e,0); printf("sig_write rc %zd\n",w);
  printf("sig_poll_after_write %d\n",poll(&p,1,0));
  printf("sig_trywait_after_write %d\n",fi_trywait(fabric,&f,1));
  n=fi_eq_read(sig,&ev,buf,sizeof buf,0); printf("sig_read rc %zd ev %u\n",n,ev);
  printf("sig_trywait_after_read %d\n",fi_trywait(fabric,&f,1));
  printf("sig_poll_after_read_trywait %d\n",poll(&p,1,0));
  /* 4. a real client connect: sread gets FI_CONNREQ */
  struct fi_info *ci; h->src_addr=NULL;h->src_addrlen=0;h->dest_addr=malloc(sizeof a);memcpy(h->dest_addr,&a,sizeof a);h->dest_addrlen=sizeof a;
  fi_getinfo(FI_VERSION(1,17),NULL,NULL,0,h,&ci);
  struct fid_domain *cd; fi_domain(fabric,ci,&cd,NULL); struct fid_ep *cep; fi_endpoint(cd,ci,&cep,NULL);
  struct fid_eq *ceq; fi_eq_open(fabric,&attr,&ceq,NULL); fi_ep_bind(cep,&ceq->fid,0);
  struct fid_cq *cq; struct fi_cq_attr ca={.size=16,.format=FI_CQ_FORMAT_CONTEXT,.wait_obj=FI_WAIT_FD}; fi_cq_open(cd,&ca,&cq,NULL);
  fi_ep_bind(cep,&cq->fid,FI_TRANSMIT|FI_RECV); fi_enable(cep);
  printf("connect %d\n",fi_connect(cep,ci->dest_addr,"hello",5)); gceq=ceq; pthread_t th; pthread_create(&th,NULL,drive,NULL);
  t0=now_ms(); n=fi_eq_sread(peq,&ev,buf,sizeof buf,2000,0); printf("sread_connreq rc %zd ev %u (CONNREQ=%d) after %.1f ms data %.5s\n",n,ev,FI_CONNREQ,now_ms()-t0,((struct fi_eq_cm_entry*)buf)->data);
  stop=1; pthread_join(th,NULL);
  return 0;
}
