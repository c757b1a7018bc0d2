// Generated in the shape of jextract (JDK 22+) from /usr/include/librpma.h (librpma 1.2.0),
// <infiniband/verbs.h> and <rdma/rdma_cma.h> with the symbol list
// scripts/jextract/librpma.symbols; regenerate with scripts/jextract/librpma.sh where jextract is
// installed. DO NOT EDIT by hand beyond the documented loader deviation in librpma_h$shared.

package io.cqflux.transport.rpma.ffm;

import java.lang.foreign.*;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.*;

/** jextract-shaped bindings of librpma: one holder per function, constants as methods. */
@SuppressWarnings({"unused", "checkstyle:all"})
public class librpma_h extends librpma_h$shared {

    librpma_h() {
        // Should not be called directly
    }
    private static final int RPMA_E_UNKNOWN = (int)-100000L;
    /**
     * {@snippet lang=c :
     * RPMA_E_UNKNOWN = -100000
     * }
     */
    public static int RPMA_E_UNKNOWN() {
        return RPMA_E_UNKNOWN;
    }
    private static final int RPMA_E_NOSUPP = (int)-100001L;
    /**
     * {@snippet lang=c :
     * RPMA_E_NOSUPP = -100001
     * }
     */
    public static int RPMA_E_NOSUPP() {
        return RPMA_E_NOSUPP;
    }
    private static final int RPMA_E_PROVIDER = (int)-100002L;
    /**
     * {@snippet lang=c :
     * RPMA_E_PROVIDER = -100002
     * }
     */
    public static int RPMA_E_PROVIDER() {
        return RPMA_E_PROVIDER;
    }
    private static final int RPMA_E_NOMEM = (int)-100003L;
    /**
     * {@snippet lang=c :
     * RPMA_E_NOMEM = -100003
     * }
     */
    public static int RPMA_E_NOMEM() {
        return RPMA_E_NOMEM;
    }
    private static final int RPMA_E_INVAL = (int)-100004L;
    /**
     * {@snippet lang=c :
     * RPMA_E_INVAL = -100004
     * }
     */
    public static int RPMA_E_INVAL() {
        return RPMA_E_INVAL;
    }
    private static final int RPMA_E_NO_COMPLETION = (int)-100005L;
    /**
     * {@snippet lang=c :
     * RPMA_E_NO_COMPLETION = -100005
     * }
     */
    public static int RPMA_E_NO_COMPLETION() {
        return RPMA_E_NO_COMPLETION;
    }
    private static final int RPMA_E_NO_EVENT = (int)-100006L;
    /**
     * {@snippet lang=c :
     * RPMA_E_NO_EVENT = -100006
     * }
     */
    public static int RPMA_E_NO_EVENT() {
        return RPMA_E_NO_EVENT;
    }
    private static final int RPMA_E_AGAIN = (int)-100007L;
    /**
     * {@snippet lang=c :
     * RPMA_E_AGAIN = -100007
     * }
     */
    public static int RPMA_E_AGAIN() {
        return RPMA_E_AGAIN;
    }
    private static final int RPMA_E_SHARED_CHANNEL = (int)-100008L;
    /**
     * {@snippet lang=c :
     * RPMA_E_SHARED_CHANNEL = -100008
     * }
     */
    public static int RPMA_E_SHARED_CHANNEL() {
        return RPMA_E_SHARED_CHANNEL;
    }
    private static final int RPMA_E_NOT_SHARED_CHNL = (int)-100009L;
    /**
     * {@snippet lang=c :
     * RPMA_E_NOT_SHARED_CHNL = -100009
     * }
     */
    public static int RPMA_E_NOT_SHARED_CHNL() {
        return RPMA_E_NOT_SHARED_CHNL;
    }
    private static final int RPMA_DEFAULT_TIMEOUT_MS = (int)1000L;
    /**
     * {@snippet lang=c :
     * RPMA_DEFAULT_TIMEOUT_MS = 1000
     * }
     */
    public static int RPMA_DEFAULT_TIMEOUT_MS() {
        return RPMA_DEFAULT_TIMEOUT_MS;
    }
    private static final int RPMA_W_WAIT_FOR_COMPLETION = (int)1L;
    /**
     * {@snippet lang=c :
     * RPMA_W_WAIT_FOR_COMPLETION = 1
     * }
     */
    public static int RPMA_W_WAIT_FOR_COMPLETION() {
        return RPMA_W_WAIT_FOR_COMPLETION;
    }
    private static final int RPMA_UTIL_IBV_CONTEXT_LOCAL = (int)0L;
    /**
     * {@snippet lang=c :
     * RPMA_UTIL_IBV_CONTEXT_LOCAL = 0
     * }
     */
    public static int RPMA_UTIL_IBV_CONTEXT_LOCAL() {
        return RPMA_UTIL_IBV_CONTEXT_LOCAL;
    }
    private static final int RPMA_UTIL_IBV_CONTEXT_REMOTE = (int)1L;
    /**
     * {@snippet lang=c :
     * RPMA_UTIL_IBV_CONTEXT_REMOTE = 1
     * }
     */
    public static int RPMA_UTIL_IBV_CONTEXT_REMOTE() {
        return RPMA_UTIL_IBV_CONTEXT_REMOTE;
    }
    private static final int RPMA_MR_USAGE_READ_SRC = (int)1L;
    /**
     * {@snippet lang=c :
     * RPMA_MR_USAGE_READ_SRC = 1
     * }
     */
    public static int RPMA_MR_USAGE_READ_SRC() {
        return RPMA_MR_USAGE_READ_SRC;
    }
    private static final int RPMA_MR_USAGE_READ_DST = (int)2L;
    /**
     * {@snippet lang=c :
     * RPMA_MR_USAGE_READ_DST = 2
     * }
     */
    public static int RPMA_MR_USAGE_READ_DST() {
        return RPMA_MR_USAGE_READ_DST;
    }
    private static final int RPMA_MR_USAGE_WRITE_SRC = (int)4L;
    /**
     * {@snippet lang=c :
     * RPMA_MR_USAGE_WRITE_SRC = 4
     * }
     */
    public static int RPMA_MR_USAGE_WRITE_SRC() {
        return RPMA_MR_USAGE_WRITE_SRC;
    }
    private static final int RPMA_MR_USAGE_WRITE_DST = (int)8L;
    /**
     * {@snippet lang=c :
     * RPMA_MR_USAGE_WRITE_DST = 8
     * }
     */
    public static int RPMA_MR_USAGE_WRITE_DST() {
        return RPMA_MR_USAGE_WRITE_DST;
    }
    private static final int RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY = (int)16L;
    /**
     * {@snippet lang=c :
     * RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY = 16
     * }
     */
    public static int RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY() {
        return RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;
    }
    private static final int RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT = (int)32L;
    /**
     * {@snippet lang=c :
     * RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT = 32
     * }
     */
    public static int RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT() {
        return RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
    }
    private static final int RPMA_MR_USAGE_SEND = (int)64L;
    /**
     * {@snippet lang=c :
     * RPMA_MR_USAGE_SEND = 64
     * }
     */
    public static int RPMA_MR_USAGE_SEND() {
        return RPMA_MR_USAGE_SEND;
    }
    private static final int RPMA_MR_USAGE_RECV = (int)128L;
    /**
     * {@snippet lang=c :
     * RPMA_MR_USAGE_RECV = 128
     * }
     */
    public static int RPMA_MR_USAGE_RECV() {
        return RPMA_MR_USAGE_RECV;
    }
    private static final int RPMA_CONN_UNDEFINED = (int)-1L;
    /**
     * {@snippet lang=c :
     * RPMA_CONN_UNDEFINED = -1
     * }
     */
    public static int RPMA_CONN_UNDEFINED() {
        return RPMA_CONN_UNDEFINED;
    }
    private static final int RPMA_CONN_ESTABLISHED = (int)0L;
    /**
     * {@snippet lang=c :
     * RPMA_CONN_ESTABLISHED = 0
     * }
     */
    public static int RPMA_CONN_ESTABLISHED() {
        return RPMA_CONN_ESTABLISHED;
    }
    private static final int RPMA_CONN_CLOSED = (int)1L;
    /**
     * {@snippet lang=c :
     * RPMA_CONN_CLOSED = 1
     * }
     */
    public static int RPMA_CONN_CLOSED() {
        return RPMA_CONN_CLOSED;
    }
    private static final int RPMA_CONN_LOST = (int)2L;
    /**
     * {@snippet lang=c :
     * RPMA_CONN_LOST = 2
     * }
     */
    public static int RPMA_CONN_LOST() {
        return RPMA_CONN_LOST;
    }
    private static final int RPMA_CONN_REJECTED = (int)3L;
    /**
     * {@snippet lang=c :
     * RPMA_CONN_REJECTED = 3
     * }
     */
    public static int RPMA_CONN_REJECTED() {
        return RPMA_CONN_REJECTED;
    }
    private static final int RPMA_CONN_UNREACHABLE = (int)4L;
    /**
     * {@snippet lang=c :
     * RPMA_CONN_UNREACHABLE = 4
     * }
     */
    public static int RPMA_CONN_UNREACHABLE() {
        return RPMA_CONN_UNREACHABLE;
    }
    private static final int RPMA_F_COMPLETION_ON_ERROR = (int)1L;
    /**
     * {@snippet lang=c :
     * RPMA_F_COMPLETION_ON_ERROR = 1
     * }
     */
    public static int RPMA_F_COMPLETION_ON_ERROR() {
        return RPMA_F_COMPLETION_ON_ERROR;
    }
    private static final int RPMA_F_COMPLETION_ALWAYS = (int)3L;
    /**
     * {@snippet lang=c :
     * RPMA_F_COMPLETION_ALWAYS = 3
     * }
     */
    public static int RPMA_F_COMPLETION_ALWAYS() {
        return RPMA_F_COMPLETION_ALWAYS;
    }
    private static final int RPMA_ATOMIC_WRITE_ALIGNMENT = (int)8L;
    /**
     * {@snippet lang=c :
     * RPMA_ATOMIC_WRITE_ALIGNMENT = 8
     * }
     */
    public static int RPMA_ATOMIC_WRITE_ALIGNMENT() {
        return RPMA_ATOMIC_WRITE_ALIGNMENT;
    }
    private static final int RPMA_FLUSH_TYPE_PERSISTENT = (int)0L;
    /**
     * {@snippet lang=c :
     * RPMA_FLUSH_TYPE_PERSISTENT = 0
     * }
     */
    public static int RPMA_FLUSH_TYPE_PERSISTENT() {
        return RPMA_FLUSH_TYPE_PERSISTENT;
    }
    private static final int RPMA_FLUSH_TYPE_VISIBILITY = (int)1L;
    /**
     * {@snippet lang=c :
     * RPMA_FLUSH_TYPE_VISIBILITY = 1
     * }
     */
    public static int RPMA_FLUSH_TYPE_VISIBILITY() {
        return RPMA_FLUSH_TYPE_VISIBILITY;
    }
    private static final int RPMA_LOG_DISABLED = (int)-1L;
    /**
     * {@snippet lang=c :
     * RPMA_LOG_DISABLED = -1
     * }
     */
    public static int RPMA_LOG_DISABLED() {
        return RPMA_LOG_DISABLED;
    }
    private static final int RPMA_LOG_LEVEL_FATAL = (int)0L;
    /**
     * {@snippet lang=c :
     * RPMA_LOG_LEVEL_FATAL = 0
     * }
     */
    public static int RPMA_LOG_LEVEL_FATAL() {
        return RPMA_LOG_LEVEL_FATAL;
    }
    private static final int RPMA_LOG_LEVEL_ERROR = (int)1L;
    /**
     * {@snippet lang=c :
     * RPMA_LOG_LEVEL_ERROR = 1
     * }
     */
    public static int RPMA_LOG_LEVEL_ERROR() {
        return RPMA_LOG_LEVEL_ERROR;
    }
    private static final int RPMA_LOG_LEVEL_WARNING = (int)2L;
    /**
     * {@snippet lang=c :
     * RPMA_LOG_LEVEL_WARNING = 2
     * }
     */
    public static int RPMA_LOG_LEVEL_WARNING() {
        return RPMA_LOG_LEVEL_WARNING;
    }
    private static final int RPMA_LOG_LEVEL_NOTICE = (int)3L;
    /**
     * {@snippet lang=c :
     * RPMA_LOG_LEVEL_NOTICE = 3
     * }
     */
    public static int RPMA_LOG_LEVEL_NOTICE() {
        return RPMA_LOG_LEVEL_NOTICE;
    }
    private static final int RPMA_LOG_LEVEL_INFO = (int)4L;
    /**
     * {@snippet lang=c :
     * RPMA_LOG_LEVEL_INFO = 4
     * }
     */
    public static int RPMA_LOG_LEVEL_INFO() {
        return RPMA_LOG_LEVEL_INFO;
    }
    private static final int RPMA_LOG_LEVEL_DEBUG = (int)5L;
    /**
     * {@snippet lang=c :
     * RPMA_LOG_LEVEL_DEBUG = 5
     * }
     */
    public static int RPMA_LOG_LEVEL_DEBUG() {
        return RPMA_LOG_LEVEL_DEBUG;
    }
    private static final int RPMA_LOG_THRESHOLD = (int)0L;
    /**
     * {@snippet lang=c :
     * RPMA_LOG_THRESHOLD = 0
     * }
     */
    public static int RPMA_LOG_THRESHOLD() {
        return RPMA_LOG_THRESHOLD;
    }
    private static final int RPMA_LOG_THRESHOLD_AUX = (int)1L;
    /**
     * {@snippet lang=c :
     * RPMA_LOG_THRESHOLD_AUX = 1
     * }
     */
    public static int RPMA_LOG_THRESHOLD_AUX() {
        return RPMA_LOG_THRESHOLD_AUX;
    }
    private static final int IBV_WC_SUCCESS = (int)0L;
    /**
     * {@snippet lang=c :
     * IBV_WC_SUCCESS = 0
     * }
     */
    public static int IBV_WC_SUCCESS() {
        return IBV_WC_SUCCESS;
    }
    private static final int IBV_WC_LOC_LEN_ERR = (int)1L;
    /**
     * {@snippet lang=c :
     * IBV_WC_LOC_LEN_ERR = 1
     * }
     */
    public static int IBV_WC_LOC_LEN_ERR() {
        return IBV_WC_LOC_LEN_ERR;
    }
    private static final int IBV_WC_LOC_QP_OP_ERR = (int)2L;
    /**
     * {@snippet lang=c :
     * IBV_WC_LOC_QP_OP_ERR = 2
     * }
     */
    public static int IBV_WC_LOC_QP_OP_ERR() {
        return IBV_WC_LOC_QP_OP_ERR;
    }
    private static final int IBV_WC_LOC_EEC_OP_ERR = (int)3L;
    /**
     * {@snippet lang=c :
     * IBV_WC_LOC_EEC_OP_ERR = 3
     * }
     */
    public static int IBV_WC_LOC_EEC_OP_ERR() {
        return IBV_WC_LOC_EEC_OP_ERR;
    }
    private static final int IBV_WC_LOC_PROT_ERR = (int)4L;
    /**
     * {@snippet lang=c :
     * IBV_WC_LOC_PROT_ERR = 4
     * }
     */
    public static int IBV_WC_LOC_PROT_ERR() {
        return IBV_WC_LOC_PROT_ERR;
    }
    private static final int IBV_WC_WR_FLUSH_ERR = (int)5L;
    /**
     * {@snippet lang=c :
     * IBV_WC_WR_FLUSH_ERR = 5
     * }
     */
    public static int IBV_WC_WR_FLUSH_ERR() {
        return IBV_WC_WR_FLUSH_ERR;
    }
    private static final int IBV_WC_MW_BIND_ERR = (int)6L;
    /**
     * {@snippet lang=c :
     * IBV_WC_MW_BIND_ERR = 6
     * }
     */
    public static int IBV_WC_MW_BIND_ERR() {
        return IBV_WC_MW_BIND_ERR;
    }
    private static final int IBV_WC_BAD_RESP_ERR = (int)7L;
    /**
     * {@snippet lang=c :
     * IBV_WC_BAD_RESP_ERR = 7
     * }
     */
    public static int IBV_WC_BAD_RESP_ERR() {
        return IBV_WC_BAD_RESP_ERR;
    }
    private static final int IBV_WC_LOC_ACCESS_ERR = (int)8L;
    /**
     * {@snippet lang=c :
     * IBV_WC_LOC_ACCESS_ERR = 8
     * }
     */
    public static int IBV_WC_LOC_ACCESS_ERR() {
        return IBV_WC_LOC_ACCESS_ERR;
    }
    private static final int IBV_WC_REM_INV_REQ_ERR = (int)9L;
    /**
     * {@snippet lang=c :
     * IBV_WC_REM_INV_REQ_ERR = 9
     * }
     */
    public static int IBV_WC_REM_INV_REQ_ERR() {
        return IBV_WC_REM_INV_REQ_ERR;
    }
    private static final int IBV_WC_REM_ACCESS_ERR = (int)10L;
    /**
     * {@snippet lang=c :
     * IBV_WC_REM_ACCESS_ERR = 10
     * }
     */
    public static int IBV_WC_REM_ACCESS_ERR() {
        return IBV_WC_REM_ACCESS_ERR;
    }
    private static final int IBV_WC_REM_OP_ERR = (int)11L;
    /**
     * {@snippet lang=c :
     * IBV_WC_REM_OP_ERR = 11
     * }
     */
    public static int IBV_WC_REM_OP_ERR() {
        return IBV_WC_REM_OP_ERR;
    }
    private static final int IBV_WC_RETRY_EXC_ERR = (int)12L;
    /**
     * {@snippet lang=c :
     * IBV_WC_RETRY_EXC_ERR = 12
     * }
     */
    public static int IBV_WC_RETRY_EXC_ERR() {
        return IBV_WC_RETRY_EXC_ERR;
    }
    private static final int IBV_WC_RNR_RETRY_EXC_ERR = (int)13L;
    /**
     * {@snippet lang=c :
     * IBV_WC_RNR_RETRY_EXC_ERR = 13
     * }
     */
    public static int IBV_WC_RNR_RETRY_EXC_ERR() {
        return IBV_WC_RNR_RETRY_EXC_ERR;
    }
    private static final int IBV_WC_LOC_RDD_VIOL_ERR = (int)14L;
    /**
     * {@snippet lang=c :
     * IBV_WC_LOC_RDD_VIOL_ERR = 14
     * }
     */
    public static int IBV_WC_LOC_RDD_VIOL_ERR() {
        return IBV_WC_LOC_RDD_VIOL_ERR;
    }
    private static final int IBV_WC_REM_INV_RD_REQ_ERR = (int)15L;
    /**
     * {@snippet lang=c :
     * IBV_WC_REM_INV_RD_REQ_ERR = 15
     * }
     */
    public static int IBV_WC_REM_INV_RD_REQ_ERR() {
        return IBV_WC_REM_INV_RD_REQ_ERR;
    }
    private static final int IBV_WC_REM_ABORT_ERR = (int)16L;
    /**
     * {@snippet lang=c :
     * IBV_WC_REM_ABORT_ERR = 16
     * }
     */
    public static int IBV_WC_REM_ABORT_ERR() {
        return IBV_WC_REM_ABORT_ERR;
    }
    private static final int IBV_WC_INV_EECN_ERR = (int)17L;
    /**
     * {@snippet lang=c :
     * IBV_WC_INV_EECN_ERR = 17
     * }
     */
    public static int IBV_WC_INV_EECN_ERR() {
        return IBV_WC_INV_EECN_ERR;
    }
    private static final int IBV_WC_INV_EEC_STATE_ERR = (int)18L;
    /**
     * {@snippet lang=c :
     * IBV_WC_INV_EEC_STATE_ERR = 18
     * }
     */
    public static int IBV_WC_INV_EEC_STATE_ERR() {
        return IBV_WC_INV_EEC_STATE_ERR;
    }
    private static final int IBV_WC_FATAL_ERR = (int)19L;
    /**
     * {@snippet lang=c :
     * IBV_WC_FATAL_ERR = 19
     * }
     */
    public static int IBV_WC_FATAL_ERR() {
        return IBV_WC_FATAL_ERR;
    }
    private static final int IBV_WC_RESP_TIMEOUT_ERR = (int)20L;
    /**
     * {@snippet lang=c :
     * IBV_WC_RESP_TIMEOUT_ERR = 20
     * }
     */
    public static int IBV_WC_RESP_TIMEOUT_ERR() {
        return IBV_WC_RESP_TIMEOUT_ERR;
    }
    private static final int IBV_WC_GENERAL_ERR = (int)21L;
    /**
     * {@snippet lang=c :
     * IBV_WC_GENERAL_ERR = 21
     * }
     */
    public static int IBV_WC_GENERAL_ERR() {
        return IBV_WC_GENERAL_ERR;
    }
    private static final int IBV_WC_TM_ERR = (int)22L;
    /**
     * {@snippet lang=c :
     * IBV_WC_TM_ERR = 22
     * }
     */
    public static int IBV_WC_TM_ERR() {
        return IBV_WC_TM_ERR;
    }
    private static final int IBV_WC_TM_RNDV_INCOMPLETE = (int)23L;
    /**
     * {@snippet lang=c :
     * IBV_WC_TM_RNDV_INCOMPLETE = 23
     * }
     */
    public static int IBV_WC_TM_RNDV_INCOMPLETE() {
        return IBV_WC_TM_RNDV_INCOMPLETE;
    }
    private static final int IBV_WC_SEND = (int)0L;
    /**
     * {@snippet lang=c :
     * IBV_WC_SEND = 0
     * }
     */
    public static int IBV_WC_SEND() {
        return IBV_WC_SEND;
    }
    private static final int IBV_WC_RDMA_WRITE = (int)1L;
    /**
     * {@snippet lang=c :
     * IBV_WC_RDMA_WRITE = 1
     * }
     */
    public static int IBV_WC_RDMA_WRITE() {
        return IBV_WC_RDMA_WRITE;
    }
    private static final int IBV_WC_RDMA_READ = (int)2L;
    /**
     * {@snippet lang=c :
     * IBV_WC_RDMA_READ = 2
     * }
     */
    public static int IBV_WC_RDMA_READ() {
        return IBV_WC_RDMA_READ;
    }
    private static final int IBV_WC_COMP_SWAP = (int)3L;
    /**
     * {@snippet lang=c :
     * IBV_WC_COMP_SWAP = 3
     * }
     */
    public static int IBV_WC_COMP_SWAP() {
        return IBV_WC_COMP_SWAP;
    }
    private static final int IBV_WC_FETCH_ADD = (int)4L;
    /**
     * {@snippet lang=c :
     * IBV_WC_FETCH_ADD = 4
     * }
     */
    public static int IBV_WC_FETCH_ADD() {
        return IBV_WC_FETCH_ADD;
    }
    private static final int IBV_WC_BIND_MW = (int)5L;
    /**
     * {@snippet lang=c :
     * IBV_WC_BIND_MW = 5
     * }
     */
    public static int IBV_WC_BIND_MW() {
        return IBV_WC_BIND_MW;
    }
    private static final int IBV_WC_LOCAL_INV = (int)6L;
    /**
     * {@snippet lang=c :
     * IBV_WC_LOCAL_INV = 6
     * }
     */
    public static int IBV_WC_LOCAL_INV() {
        return IBV_WC_LOCAL_INV;
    }
    private static final int IBV_WC_TSO = (int)7L;
    /**
     * {@snippet lang=c :
     * IBV_WC_TSO = 7
     * }
     */
    public static int IBV_WC_TSO() {
        return IBV_WC_TSO;
    }
    private static final int IBV_WC_ATOMIC_WRITE = (int)9L;
    /**
     * {@snippet lang=c :
     * IBV_WC_ATOMIC_WRITE = 9
     * }
     */
    public static int IBV_WC_ATOMIC_WRITE() {
        return IBV_WC_ATOMIC_WRITE;
    }
    private static final int IBV_WC_RECV = (int)128L;
    /**
     * {@snippet lang=c :
     * IBV_WC_RECV = 128
     * }
     */
    public static int IBV_WC_RECV() {
        return IBV_WC_RECV;
    }
    private static final int IBV_WC_RECV_RDMA_WITH_IMM = (int)129L;
    /**
     * {@snippet lang=c :
     * IBV_WC_RECV_RDMA_WITH_IMM = 129
     * }
     */
    public static int IBV_WC_RECV_RDMA_WITH_IMM() {
        return IBV_WC_RECV_RDMA_WITH_IMM;
    }
    private static final int IBV_WC_GRH = (int)1L;
    /**
     * {@snippet lang=c :
     * IBV_WC_GRH = 1
     * }
     */
    public static int IBV_WC_GRH() {
        return IBV_WC_GRH;
    }
    private static final int IBV_WC_WITH_IMM = (int)2L;
    /**
     * {@snippet lang=c :
     * IBV_WC_WITH_IMM = 2
     * }
     */
    public static int IBV_WC_WITH_IMM() {
        return IBV_WC_WITH_IMM;
    }
    private static final int IBV_WC_WITH_INV = (int)8L;
    /**
     * {@snippet lang=c :
     * IBV_WC_WITH_INV = 8
     * }
     */
    public static int IBV_WC_WITH_INV() {
        return IBV_WC_WITH_INV;
    }

    private static class rpma_utils_get_ibv_context {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_utils_get_ibv_context");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_utils_get_ibv_context(const char * addr, enum rpma_util_ibv_context_type type, struct ibv_context ** ibv_ctx_ptr)
     * }
     */
    public static FunctionDescriptor rpma_utils_get_ibv_context$descriptor() {
        return rpma_utils_get_ibv_context.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_utils_get_ibv_context(const char * addr, enum rpma_util_ibv_context_type type, struct ibv_context ** ibv_ctx_ptr)
     * }
     */
    public static MethodHandle rpma_utils_get_ibv_context$handle() {
        return rpma_utils_get_ibv_context.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_utils_get_ibv_context(const char * addr, enum rpma_util_ibv_context_type type, struct ibv_context ** ibv_ctx_ptr)
     * }
     */
    public static MemorySegment rpma_utils_get_ibv_context$address() {
        return rpma_utils_get_ibv_context.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_utils_get_ibv_context(const char * addr, enum rpma_util_ibv_context_type type, struct ibv_context ** ibv_ctx_ptr)
     * }
     */
    public static int rpma_utils_get_ibv_context(MemorySegment addr, int type, MemorySegment ibv_ctx_ptr) {
        var mh$ = rpma_utils_get_ibv_context.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_utils_get_ibv_context", addr, type, ibv_ctx_ptr);
            }
            return (int)mh$.invokeExact(addr, type, ibv_ctx_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_utils_ibv_context_is_odp_capable {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_utils_ibv_context_is_odp_capable");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_utils_ibv_context_is_odp_capable(struct ibv_context * ibv_ctx, int * is_odp_capable)
     * }
     */
    public static FunctionDescriptor rpma_utils_ibv_context_is_odp_capable$descriptor() {
        return rpma_utils_ibv_context_is_odp_capable.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_utils_ibv_context_is_odp_capable(struct ibv_context * ibv_ctx, int * is_odp_capable)
     * }
     */
    public static MethodHandle rpma_utils_ibv_context_is_odp_capable$handle() {
        return rpma_utils_ibv_context_is_odp_capable.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_utils_ibv_context_is_odp_capable(struct ibv_context * ibv_ctx, int * is_odp_capable)
     * }
     */
    public static MemorySegment rpma_utils_ibv_context_is_odp_capable$address() {
        return rpma_utils_ibv_context_is_odp_capable.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_utils_ibv_context_is_odp_capable(struct ibv_context * ibv_ctx, int * is_odp_capable)
     * }
     */
    public static int rpma_utils_ibv_context_is_odp_capable(MemorySegment ibv_ctx, MemorySegment is_odp_capable) {
        var mh$ = rpma_utils_ibv_context_is_odp_capable.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_utils_ibv_context_is_odp_capable", ibv_ctx, is_odp_capable);
            }
            return (int)mh$.invokeExact(ibv_ctx, is_odp_capable);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_peer_new {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_peer_new");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_peer_new(struct ibv_context * ibv_ctx, struct rpma_peer ** peer_ptr)
     * }
     */
    public static FunctionDescriptor rpma_peer_new$descriptor() {
        return rpma_peer_new.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_peer_new(struct ibv_context * ibv_ctx, struct rpma_peer ** peer_ptr)
     * }
     */
    public static MethodHandle rpma_peer_new$handle() {
        return rpma_peer_new.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_peer_new(struct ibv_context * ibv_ctx, struct rpma_peer ** peer_ptr)
     * }
     */
    public static MemorySegment rpma_peer_new$address() {
        return rpma_peer_new.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_peer_new(struct ibv_context * ibv_ctx, struct rpma_peer ** peer_ptr)
     * }
     */
    public static int rpma_peer_new(MemorySegment ibv_ctx, MemorySegment peer_ptr) {
        var mh$ = rpma_peer_new.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_peer_new", ibv_ctx, peer_ptr);
            }
            return (int)mh$.invokeExact(ibv_ctx, peer_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_peer_delete {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_peer_delete");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_peer_delete(struct rpma_peer ** peer_ptr)
     * }
     */
    public static FunctionDescriptor rpma_peer_delete$descriptor() {
        return rpma_peer_delete.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_peer_delete(struct rpma_peer ** peer_ptr)
     * }
     */
    public static MethodHandle rpma_peer_delete$handle() {
        return rpma_peer_delete.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_peer_delete(struct rpma_peer ** peer_ptr)
     * }
     */
    public static MemorySegment rpma_peer_delete$address() {
        return rpma_peer_delete.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_peer_delete(struct rpma_peer ** peer_ptr)
     * }
     */
    public static int rpma_peer_delete(MemorySegment peer_ptr) {
        var mh$ = rpma_peer_delete.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_peer_delete", peer_ptr);
            }
            return (int)mh$.invokeExact(peer_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_cfg_new {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_cfg_new");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_new(struct rpma_conn_cfg ** cfg_ptr)
     * }
     */
    public static FunctionDescriptor rpma_conn_cfg_new$descriptor() {
        return rpma_conn_cfg_new.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_new(struct rpma_conn_cfg ** cfg_ptr)
     * }
     */
    public static MethodHandle rpma_conn_cfg_new$handle() {
        return rpma_conn_cfg_new.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_new(struct rpma_conn_cfg ** cfg_ptr)
     * }
     */
    public static MemorySegment rpma_conn_cfg_new$address() {
        return rpma_conn_cfg_new.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_cfg_new(struct rpma_conn_cfg ** cfg_ptr)
     * }
     */
    public static int rpma_conn_cfg_new(MemorySegment cfg_ptr) {
        var mh$ = rpma_conn_cfg_new.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_cfg_new", cfg_ptr);
            }
            return (int)mh$.invokeExact(cfg_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_cfg_delete {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_cfg_delete");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_delete(struct rpma_conn_cfg ** cfg_ptr)
     * }
     */
    public static FunctionDescriptor rpma_conn_cfg_delete$descriptor() {
        return rpma_conn_cfg_delete.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_delete(struct rpma_conn_cfg ** cfg_ptr)
     * }
     */
    public static MethodHandle rpma_conn_cfg_delete$handle() {
        return rpma_conn_cfg_delete.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_delete(struct rpma_conn_cfg ** cfg_ptr)
     * }
     */
    public static MemorySegment rpma_conn_cfg_delete$address() {
        return rpma_conn_cfg_delete.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_cfg_delete(struct rpma_conn_cfg ** cfg_ptr)
     * }
     */
    public static int rpma_conn_cfg_delete(MemorySegment cfg_ptr) {
        var mh$ = rpma_conn_cfg_delete.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_cfg_delete", cfg_ptr);
            }
            return (int)mh$.invokeExact(cfg_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_cfg_set_timeout {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_INT
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_cfg_set_timeout");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_timeout(struct rpma_conn_cfg * cfg, int timeout_ms)
     * }
     */
    public static FunctionDescriptor rpma_conn_cfg_set_timeout$descriptor() {
        return rpma_conn_cfg_set_timeout.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_timeout(struct rpma_conn_cfg * cfg, int timeout_ms)
     * }
     */
    public static MethodHandle rpma_conn_cfg_set_timeout$handle() {
        return rpma_conn_cfg_set_timeout.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_timeout(struct rpma_conn_cfg * cfg, int timeout_ms)
     * }
     */
    public static MemorySegment rpma_conn_cfg_set_timeout$address() {
        return rpma_conn_cfg_set_timeout.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_timeout(struct rpma_conn_cfg * cfg, int timeout_ms)
     * }
     */
    public static int rpma_conn_cfg_set_timeout(MemorySegment cfg, int timeout_ms) {
        var mh$ = rpma_conn_cfg_set_timeout.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_cfg_set_timeout", cfg, timeout_ms);
            }
            return (int)mh$.invokeExact(cfg, timeout_ms);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_cfg_get_timeout {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_cfg_get_timeout");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg * cfg, int * timeout_ms)
     * }
     */
    public static FunctionDescriptor rpma_conn_cfg_get_timeout$descriptor() {
        return rpma_conn_cfg_get_timeout.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg * cfg, int * timeout_ms)
     * }
     */
    public static MethodHandle rpma_conn_cfg_get_timeout$handle() {
        return rpma_conn_cfg_get_timeout.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg * cfg, int * timeout_ms)
     * }
     */
    public static MemorySegment rpma_conn_cfg_get_timeout$address() {
        return rpma_conn_cfg_get_timeout.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg * cfg, int * timeout_ms)
     * }
     */
    public static int rpma_conn_cfg_get_timeout(MemorySegment cfg, MemorySegment timeout_ms) {
        var mh$ = rpma_conn_cfg_get_timeout.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_cfg_get_timeout", cfg, timeout_ms);
            }
            return (int)mh$.invokeExact(cfg, timeout_ms);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_cfg_set_cq_size {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_INT
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_cfg_set_cq_size");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_cq_size(struct rpma_conn_cfg * cfg, uint32_t cq_size)
     * }
     */
    public static FunctionDescriptor rpma_conn_cfg_set_cq_size$descriptor() {
        return rpma_conn_cfg_set_cq_size.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_cq_size(struct rpma_conn_cfg * cfg, uint32_t cq_size)
     * }
     */
    public static MethodHandle rpma_conn_cfg_set_cq_size$handle() {
        return rpma_conn_cfg_set_cq_size.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_cq_size(struct rpma_conn_cfg * cfg, uint32_t cq_size)
     * }
     */
    public static MemorySegment rpma_conn_cfg_set_cq_size$address() {
        return rpma_conn_cfg_set_cq_size.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_cq_size(struct rpma_conn_cfg * cfg, uint32_t cq_size)
     * }
     */
    public static int rpma_conn_cfg_set_cq_size(MemorySegment cfg, int cq_size) {
        var mh$ = rpma_conn_cfg_set_cq_size.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_cfg_set_cq_size", cfg, cq_size);
            }
            return (int)mh$.invokeExact(cfg, cq_size);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_cfg_get_cq_size {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_cfg_get_cq_size");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_cq_size(const struct rpma_conn_cfg * cfg, uint32_t * cq_size)
     * }
     */
    public static FunctionDescriptor rpma_conn_cfg_get_cq_size$descriptor() {
        return rpma_conn_cfg_get_cq_size.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_cq_size(const struct rpma_conn_cfg * cfg, uint32_t * cq_size)
     * }
     */
    public static MethodHandle rpma_conn_cfg_get_cq_size$handle() {
        return rpma_conn_cfg_get_cq_size.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_cq_size(const struct rpma_conn_cfg * cfg, uint32_t * cq_size)
     * }
     */
    public static MemorySegment rpma_conn_cfg_get_cq_size$address() {
        return rpma_conn_cfg_get_cq_size.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_cq_size(const struct rpma_conn_cfg * cfg, uint32_t * cq_size)
     * }
     */
    public static int rpma_conn_cfg_get_cq_size(MemorySegment cfg, MemorySegment cq_size) {
        var mh$ = rpma_conn_cfg_get_cq_size.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_cfg_get_cq_size", cfg, cq_size);
            }
            return (int)mh$.invokeExact(cfg, cq_size);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_cfg_set_rcq_size {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_INT
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_cfg_set_rcq_size");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_rcq_size(struct rpma_conn_cfg * cfg, uint32_t rcq_size)
     * }
     */
    public static FunctionDescriptor rpma_conn_cfg_set_rcq_size$descriptor() {
        return rpma_conn_cfg_set_rcq_size.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_rcq_size(struct rpma_conn_cfg * cfg, uint32_t rcq_size)
     * }
     */
    public static MethodHandle rpma_conn_cfg_set_rcq_size$handle() {
        return rpma_conn_cfg_set_rcq_size.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_rcq_size(struct rpma_conn_cfg * cfg, uint32_t rcq_size)
     * }
     */
    public static MemorySegment rpma_conn_cfg_set_rcq_size$address() {
        return rpma_conn_cfg_set_rcq_size.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_rcq_size(struct rpma_conn_cfg * cfg, uint32_t rcq_size)
     * }
     */
    public static int rpma_conn_cfg_set_rcq_size(MemorySegment cfg, int rcq_size) {
        var mh$ = rpma_conn_cfg_set_rcq_size.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_cfg_set_rcq_size", cfg, rcq_size);
            }
            return (int)mh$.invokeExact(cfg, rcq_size);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_cfg_get_rcq_size {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_cfg_get_rcq_size");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_rcq_size(const struct rpma_conn_cfg * cfg, uint32_t * rcq_size)
     * }
     */
    public static FunctionDescriptor rpma_conn_cfg_get_rcq_size$descriptor() {
        return rpma_conn_cfg_get_rcq_size.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_rcq_size(const struct rpma_conn_cfg * cfg, uint32_t * rcq_size)
     * }
     */
    public static MethodHandle rpma_conn_cfg_get_rcq_size$handle() {
        return rpma_conn_cfg_get_rcq_size.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_rcq_size(const struct rpma_conn_cfg * cfg, uint32_t * rcq_size)
     * }
     */
    public static MemorySegment rpma_conn_cfg_get_rcq_size$address() {
        return rpma_conn_cfg_get_rcq_size.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_rcq_size(const struct rpma_conn_cfg * cfg, uint32_t * rcq_size)
     * }
     */
    public static int rpma_conn_cfg_get_rcq_size(MemorySegment cfg, MemorySegment rcq_size) {
        var mh$ = rpma_conn_cfg_get_rcq_size.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_cfg_get_rcq_size", cfg, rcq_size);
            }
            return (int)mh$.invokeExact(cfg, rcq_size);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_cfg_set_sq_size {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_INT
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_cfg_set_sq_size");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_sq_size(struct rpma_conn_cfg * cfg, uint32_t sq_size)
     * }
     */
    public static FunctionDescriptor rpma_conn_cfg_set_sq_size$descriptor() {
        return rpma_conn_cfg_set_sq_size.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_sq_size(struct rpma_conn_cfg * cfg, uint32_t sq_size)
     * }
     */
    public static MethodHandle rpma_conn_cfg_set_sq_size$handle() {
        return rpma_conn_cfg_set_sq_size.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_sq_size(struct rpma_conn_cfg * cfg, uint32_t sq_size)
     * }
     */
    public static MemorySegment rpma_conn_cfg_set_sq_size$address() {
        return rpma_conn_cfg_set_sq_size.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_sq_size(struct rpma_conn_cfg * cfg, uint32_t sq_size)
     * }
     */
    public static int rpma_conn_cfg_set_sq_size(MemorySegment cfg, int sq_size) {
        var mh$ = rpma_conn_cfg_set_sq_size.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_cfg_set_sq_size", cfg, sq_size);
            }
            return (int)mh$.invokeExact(cfg, sq_size);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_cfg_get_sq_size {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_cfg_get_sq_size");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_sq_size(const struct rpma_conn_cfg * cfg, uint32_t * sq_size)
     * }
     */
    public static FunctionDescriptor rpma_conn_cfg_get_sq_size$descriptor() {
        return rpma_conn_cfg_get_sq_size.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_sq_size(const struct rpma_conn_cfg * cfg, uint32_t * sq_size)
     * }
     */
    public static MethodHandle rpma_conn_cfg_get_sq_size$handle() {
        return rpma_conn_cfg_get_sq_size.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_sq_size(const struct rpma_conn_cfg * cfg, uint32_t * sq_size)
     * }
     */
    public static MemorySegment rpma_conn_cfg_get_sq_size$address() {
        return rpma_conn_cfg_get_sq_size.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_sq_size(const struct rpma_conn_cfg * cfg, uint32_t * sq_size)
     * }
     */
    public static int rpma_conn_cfg_get_sq_size(MemorySegment cfg, MemorySegment sq_size) {
        var mh$ = rpma_conn_cfg_get_sq_size.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_cfg_get_sq_size", cfg, sq_size);
            }
            return (int)mh$.invokeExact(cfg, sq_size);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_cfg_set_rq_size {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_INT
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_cfg_set_rq_size");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_rq_size(struct rpma_conn_cfg * cfg, uint32_t rq_size)
     * }
     */
    public static FunctionDescriptor rpma_conn_cfg_set_rq_size$descriptor() {
        return rpma_conn_cfg_set_rq_size.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_rq_size(struct rpma_conn_cfg * cfg, uint32_t rq_size)
     * }
     */
    public static MethodHandle rpma_conn_cfg_set_rq_size$handle() {
        return rpma_conn_cfg_set_rq_size.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_rq_size(struct rpma_conn_cfg * cfg, uint32_t rq_size)
     * }
     */
    public static MemorySegment rpma_conn_cfg_set_rq_size$address() {
        return rpma_conn_cfg_set_rq_size.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_rq_size(struct rpma_conn_cfg * cfg, uint32_t rq_size)
     * }
     */
    public static int rpma_conn_cfg_set_rq_size(MemorySegment cfg, int rq_size) {
        var mh$ = rpma_conn_cfg_set_rq_size.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_cfg_set_rq_size", cfg, rq_size);
            }
            return (int)mh$.invokeExact(cfg, rq_size);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_cfg_get_rq_size {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_cfg_get_rq_size");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_rq_size(const struct rpma_conn_cfg * cfg, uint32_t * rq_size)
     * }
     */
    public static FunctionDescriptor rpma_conn_cfg_get_rq_size$descriptor() {
        return rpma_conn_cfg_get_rq_size.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_rq_size(const struct rpma_conn_cfg * cfg, uint32_t * rq_size)
     * }
     */
    public static MethodHandle rpma_conn_cfg_get_rq_size$handle() {
        return rpma_conn_cfg_get_rq_size.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_rq_size(const struct rpma_conn_cfg * cfg, uint32_t * rq_size)
     * }
     */
    public static MemorySegment rpma_conn_cfg_get_rq_size$address() {
        return rpma_conn_cfg_get_rq_size.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_rq_size(const struct rpma_conn_cfg * cfg, uint32_t * rq_size)
     * }
     */
    public static int rpma_conn_cfg_get_rq_size(MemorySegment cfg, MemorySegment rq_size) {
        var mh$ = rpma_conn_cfg_get_rq_size.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_cfg_get_rq_size", cfg, rq_size);
            }
            return (int)mh$.invokeExact(cfg, rq_size);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_cfg_set_compl_channel {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_BOOL
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_cfg_set_compl_channel");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg * cfg, _Bool shared)
     * }
     */
    public static FunctionDescriptor rpma_conn_cfg_set_compl_channel$descriptor() {
        return rpma_conn_cfg_set_compl_channel.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg * cfg, _Bool shared)
     * }
     */
    public static MethodHandle rpma_conn_cfg_set_compl_channel$handle() {
        return rpma_conn_cfg_set_compl_channel.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg * cfg, _Bool shared)
     * }
     */
    public static MemorySegment rpma_conn_cfg_set_compl_channel$address() {
        return rpma_conn_cfg_set_compl_channel.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg * cfg, _Bool shared)
     * }
     */
    public static int rpma_conn_cfg_set_compl_channel(MemorySegment cfg, boolean shared) {
        var mh$ = rpma_conn_cfg_set_compl_channel.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_cfg_set_compl_channel", cfg, shared);
            }
            return (int)mh$.invokeExact(cfg, shared);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_cfg_get_compl_channel {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_cfg_get_compl_channel");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg * cfg, _Bool * shared)
     * }
     */
    public static FunctionDescriptor rpma_conn_cfg_get_compl_channel$descriptor() {
        return rpma_conn_cfg_get_compl_channel.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg * cfg, _Bool * shared)
     * }
     */
    public static MethodHandle rpma_conn_cfg_get_compl_channel$handle() {
        return rpma_conn_cfg_get_compl_channel.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg * cfg, _Bool * shared)
     * }
     */
    public static MemorySegment rpma_conn_cfg_get_compl_channel$address() {
        return rpma_conn_cfg_get_compl_channel.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg * cfg, _Bool * shared)
     * }
     */
    public static int rpma_conn_cfg_get_compl_channel(MemorySegment cfg, MemorySegment shared) {
        var mh$ = rpma_conn_cfg_get_compl_channel.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_cfg_get_compl_channel", cfg, shared);
            }
            return (int)mh$.invokeExact(cfg, shared);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_ep_listen {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_ep_listen");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_ep_listen(struct rpma_peer * peer, const char * addr, const char * port, struct rpma_ep ** ep_ptr)
     * }
     */
    public static FunctionDescriptor rpma_ep_listen$descriptor() {
        return rpma_ep_listen.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_ep_listen(struct rpma_peer * peer, const char * addr, const char * port, struct rpma_ep ** ep_ptr)
     * }
     */
    public static MethodHandle rpma_ep_listen$handle() {
        return rpma_ep_listen.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_ep_listen(struct rpma_peer * peer, const char * addr, const char * port, struct rpma_ep ** ep_ptr)
     * }
     */
    public static MemorySegment rpma_ep_listen$address() {
        return rpma_ep_listen.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_ep_listen(struct rpma_peer * peer, const char * addr, const char * port, struct rpma_ep ** ep_ptr)
     * }
     */
    public static int rpma_ep_listen(MemorySegment peer, MemorySegment addr, MemorySegment port, MemorySegment ep_ptr) {
        var mh$ = rpma_ep_listen.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_ep_listen", peer, addr, port, ep_ptr);
            }
            return (int)mh$.invokeExact(peer, addr, port, ep_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_ep_get_fd {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_ep_get_fd");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_ep_get_fd(const struct rpma_ep * ep, int * fd)
     * }
     */
    public static FunctionDescriptor rpma_ep_get_fd$descriptor() {
        return rpma_ep_get_fd.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_ep_get_fd(const struct rpma_ep * ep, int * fd)
     * }
     */
    public static MethodHandle rpma_ep_get_fd$handle() {
        return rpma_ep_get_fd.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_ep_get_fd(const struct rpma_ep * ep, int * fd)
     * }
     */
    public static MemorySegment rpma_ep_get_fd$address() {
        return rpma_ep_get_fd.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_ep_get_fd(const struct rpma_ep * ep, int * fd)
     * }
     */
    public static int rpma_ep_get_fd(MemorySegment ep, MemorySegment fd) {
        var mh$ = rpma_ep_get_fd.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_ep_get_fd", ep, fd);
            }
            return (int)mh$.invokeExact(ep, fd);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_ep_next_conn_req {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_ep_next_conn_req");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_ep_next_conn_req(struct rpma_ep * ep, const struct rpma_conn_cfg * cfg, struct rpma_conn_req ** req_ptr)
     * }
     */
    public static FunctionDescriptor rpma_ep_next_conn_req$descriptor() {
        return rpma_ep_next_conn_req.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_ep_next_conn_req(struct rpma_ep * ep, const struct rpma_conn_cfg * cfg, struct rpma_conn_req ** req_ptr)
     * }
     */
    public static MethodHandle rpma_ep_next_conn_req$handle() {
        return rpma_ep_next_conn_req.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_ep_next_conn_req(struct rpma_ep * ep, const struct rpma_conn_cfg * cfg, struct rpma_conn_req ** req_ptr)
     * }
     */
    public static MemorySegment rpma_ep_next_conn_req$address() {
        return rpma_ep_next_conn_req.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_ep_next_conn_req(struct rpma_ep * ep, const struct rpma_conn_cfg * cfg, struct rpma_conn_req ** req_ptr)
     * }
     */
    public static int rpma_ep_next_conn_req(MemorySegment ep, MemorySegment cfg, MemorySegment req_ptr) {
        var mh$ = rpma_ep_next_conn_req.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_ep_next_conn_req", ep, cfg, req_ptr);
            }
            return (int)mh$.invokeExact(ep, cfg, req_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_ep_shutdown {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_ep_shutdown");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_ep_shutdown(struct rpma_ep ** ep_ptr)
     * }
     */
    public static FunctionDescriptor rpma_ep_shutdown$descriptor() {
        return rpma_ep_shutdown.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_ep_shutdown(struct rpma_ep ** ep_ptr)
     * }
     */
    public static MethodHandle rpma_ep_shutdown$handle() {
        return rpma_ep_shutdown.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_ep_shutdown(struct rpma_ep ** ep_ptr)
     * }
     */
    public static MemorySegment rpma_ep_shutdown$address() {
        return rpma_ep_shutdown.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_ep_shutdown(struct rpma_ep ** ep_ptr)
     * }
     */
    public static int rpma_ep_shutdown(MemorySegment ep_ptr) {
        var mh$ = rpma_ep_shutdown.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_ep_shutdown", ep_ptr);
            }
            return (int)mh$.invokeExact(ep_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_req_new {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_req_new");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_req_new(struct rpma_peer * peer, const char * addr, const char * port, const struct rpma_conn_cfg * cfg, struct rpma_conn_req ** req_ptr)
     * }
     */
    public static FunctionDescriptor rpma_conn_req_new$descriptor() {
        return rpma_conn_req_new.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_req_new(struct rpma_peer * peer, const char * addr, const char * port, const struct rpma_conn_cfg * cfg, struct rpma_conn_req ** req_ptr)
     * }
     */
    public static MethodHandle rpma_conn_req_new$handle() {
        return rpma_conn_req_new.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_req_new(struct rpma_peer * peer, const char * addr, const char * port, const struct rpma_conn_cfg * cfg, struct rpma_conn_req ** req_ptr)
     * }
     */
    public static MemorySegment rpma_conn_req_new$address() {
        return rpma_conn_req_new.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_req_new(struct rpma_peer * peer, const char * addr, const char * port, const struct rpma_conn_cfg * cfg, struct rpma_conn_req ** req_ptr)
     * }
     */
    public static int rpma_conn_req_new(MemorySegment peer, MemorySegment addr, MemorySegment port, MemorySegment cfg, MemorySegment req_ptr) {
        var mh$ = rpma_conn_req_new.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_req_new", peer, addr, port, cfg, req_ptr);
            }
            return (int)mh$.invokeExact(peer, addr, port, cfg, req_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_req_connect {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_req_connect");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_req_connect(struct rpma_conn_req ** req_ptr, const struct rpma_conn_private_data * pdata, struct rpma_conn ** conn_ptr)
     * }
     */
    public static FunctionDescriptor rpma_conn_req_connect$descriptor() {
        return rpma_conn_req_connect.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_req_connect(struct rpma_conn_req ** req_ptr, const struct rpma_conn_private_data * pdata, struct rpma_conn ** conn_ptr)
     * }
     */
    public static MethodHandle rpma_conn_req_connect$handle() {
        return rpma_conn_req_connect.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_req_connect(struct rpma_conn_req ** req_ptr, const struct rpma_conn_private_data * pdata, struct rpma_conn ** conn_ptr)
     * }
     */
    public static MemorySegment rpma_conn_req_connect$address() {
        return rpma_conn_req_connect.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_req_connect(struct rpma_conn_req ** req_ptr, const struct rpma_conn_private_data * pdata, struct rpma_conn ** conn_ptr)
     * }
     */
    public static int rpma_conn_req_connect(MemorySegment req_ptr, MemorySegment pdata, MemorySegment conn_ptr) {
        var mh$ = rpma_conn_req_connect.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_req_connect", req_ptr, pdata, conn_ptr);
            }
            return (int)mh$.invokeExact(req_ptr, pdata, conn_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_req_delete {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_req_delete");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_req_delete(struct rpma_conn_req ** req_ptr)
     * }
     */
    public static FunctionDescriptor rpma_conn_req_delete$descriptor() {
        return rpma_conn_req_delete.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_req_delete(struct rpma_conn_req ** req_ptr)
     * }
     */
    public static MethodHandle rpma_conn_req_delete$handle() {
        return rpma_conn_req_delete.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_req_delete(struct rpma_conn_req ** req_ptr)
     * }
     */
    public static MemorySegment rpma_conn_req_delete$address() {
        return rpma_conn_req_delete.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_req_delete(struct rpma_conn_req ** req_ptr)
     * }
     */
    public static int rpma_conn_req_delete(MemorySegment req_ptr) {
        var mh$ = rpma_conn_req_delete.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_req_delete", req_ptr);
            }
            return (int)mh$.invokeExact(req_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_req_get_private_data {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_req_get_private_data");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_req_get_private_data(const struct rpma_conn_req * req, struct rpma_conn_private_data * pdata)
     * }
     */
    public static FunctionDescriptor rpma_conn_req_get_private_data$descriptor() {
        return rpma_conn_req_get_private_data.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_req_get_private_data(const struct rpma_conn_req * req, struct rpma_conn_private_data * pdata)
     * }
     */
    public static MethodHandle rpma_conn_req_get_private_data$handle() {
        return rpma_conn_req_get_private_data.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_req_get_private_data(const struct rpma_conn_req * req, struct rpma_conn_private_data * pdata)
     * }
     */
    public static MemorySegment rpma_conn_req_get_private_data$address() {
        return rpma_conn_req_get_private_data.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_req_get_private_data(const struct rpma_conn_req * req, struct rpma_conn_private_data * pdata)
     * }
     */
    public static int rpma_conn_req_get_private_data(MemorySegment req, MemorySegment pdata) {
        var mh$ = rpma_conn_req_get_private_data.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_req_get_private_data", req, pdata);
            }
            return (int)mh$.invokeExact(req, pdata);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_get_event_fd {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_get_event_fd");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_get_event_fd(const struct rpma_conn * conn, int * fd)
     * }
     */
    public static FunctionDescriptor rpma_conn_get_event_fd$descriptor() {
        return rpma_conn_get_event_fd.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_get_event_fd(const struct rpma_conn * conn, int * fd)
     * }
     */
    public static MethodHandle rpma_conn_get_event_fd$handle() {
        return rpma_conn_get_event_fd.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_get_event_fd(const struct rpma_conn * conn, int * fd)
     * }
     */
    public static MemorySegment rpma_conn_get_event_fd$address() {
        return rpma_conn_get_event_fd.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_get_event_fd(const struct rpma_conn * conn, int * fd)
     * }
     */
    public static int rpma_conn_get_event_fd(MemorySegment conn, MemorySegment fd) {
        var mh$ = rpma_conn_get_event_fd.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_get_event_fd", conn, fd);
            }
            return (int)mh$.invokeExact(conn, fd);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_next_event {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_next_event");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_next_event(struct rpma_conn * conn, enum rpma_conn_event * event)
     * }
     */
    public static FunctionDescriptor rpma_conn_next_event$descriptor() {
        return rpma_conn_next_event.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_next_event(struct rpma_conn * conn, enum rpma_conn_event * event)
     * }
     */
    public static MethodHandle rpma_conn_next_event$handle() {
        return rpma_conn_next_event.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_next_event(struct rpma_conn * conn, enum rpma_conn_event * event)
     * }
     */
    public static MemorySegment rpma_conn_next_event$address() {
        return rpma_conn_next_event.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_next_event(struct rpma_conn * conn, enum rpma_conn_event * event)
     * }
     */
    public static int rpma_conn_next_event(MemorySegment conn, MemorySegment event) {
        var mh$ = rpma_conn_next_event.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_next_event", conn, event);
            }
            return (int)mh$.invokeExact(conn, event);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_get_private_data {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_get_private_data");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_get_private_data(const struct rpma_conn * conn, struct rpma_conn_private_data * pdata)
     * }
     */
    public static FunctionDescriptor rpma_conn_get_private_data$descriptor() {
        return rpma_conn_get_private_data.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_get_private_data(const struct rpma_conn * conn, struct rpma_conn_private_data * pdata)
     * }
     */
    public static MethodHandle rpma_conn_get_private_data$handle() {
        return rpma_conn_get_private_data.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_get_private_data(const struct rpma_conn * conn, struct rpma_conn_private_data * pdata)
     * }
     */
    public static MemorySegment rpma_conn_get_private_data$address() {
        return rpma_conn_get_private_data.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_get_private_data(const struct rpma_conn * conn, struct rpma_conn_private_data * pdata)
     * }
     */
    public static int rpma_conn_get_private_data(MemorySegment conn, MemorySegment pdata) {
        var mh$ = rpma_conn_get_private_data.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_get_private_data", conn, pdata);
            }
            return (int)mh$.invokeExact(conn, pdata);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_disconnect {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_disconnect");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_disconnect(struct rpma_conn * conn)
     * }
     */
    public static FunctionDescriptor rpma_conn_disconnect$descriptor() {
        return rpma_conn_disconnect.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_disconnect(struct rpma_conn * conn)
     * }
     */
    public static MethodHandle rpma_conn_disconnect$handle() {
        return rpma_conn_disconnect.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_disconnect(struct rpma_conn * conn)
     * }
     */
    public static MemorySegment rpma_conn_disconnect$address() {
        return rpma_conn_disconnect.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_disconnect(struct rpma_conn * conn)
     * }
     */
    public static int rpma_conn_disconnect(MemorySegment conn) {
        var mh$ = rpma_conn_disconnect.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_disconnect", conn);
            }
            return (int)mh$.invokeExact(conn);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_delete {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_delete");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_delete(struct rpma_conn ** conn_ptr)
     * }
     */
    public static FunctionDescriptor rpma_conn_delete$descriptor() {
        return rpma_conn_delete.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_delete(struct rpma_conn ** conn_ptr)
     * }
     */
    public static MethodHandle rpma_conn_delete$handle() {
        return rpma_conn_delete.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_delete(struct rpma_conn ** conn_ptr)
     * }
     */
    public static MemorySegment rpma_conn_delete$address() {
        return rpma_conn_delete.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_delete(struct rpma_conn ** conn_ptr)
     * }
     */
    public static int rpma_conn_delete(MemorySegment conn_ptr) {
        var mh$ = rpma_conn_delete.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_delete", conn_ptr);
            }
            return (int)mh$.invokeExact(conn_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_get_cq {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_get_cq");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_get_cq(const struct rpma_conn * conn, struct rpma_cq ** cq_ptr)
     * }
     */
    public static FunctionDescriptor rpma_conn_get_cq$descriptor() {
        return rpma_conn_get_cq.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_get_cq(const struct rpma_conn * conn, struct rpma_cq ** cq_ptr)
     * }
     */
    public static MethodHandle rpma_conn_get_cq$handle() {
        return rpma_conn_get_cq.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_get_cq(const struct rpma_conn * conn, struct rpma_cq ** cq_ptr)
     * }
     */
    public static MemorySegment rpma_conn_get_cq$address() {
        return rpma_conn_get_cq.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_get_cq(const struct rpma_conn * conn, struct rpma_cq ** cq_ptr)
     * }
     */
    public static int rpma_conn_get_cq(MemorySegment conn, MemorySegment cq_ptr) {
        var mh$ = rpma_conn_get_cq.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_get_cq", conn, cq_ptr);
            }
            return (int)mh$.invokeExact(conn, cq_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_get_rcq {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_get_rcq");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_get_rcq(const struct rpma_conn * conn, struct rpma_cq ** rcq_ptr)
     * }
     */
    public static FunctionDescriptor rpma_conn_get_rcq$descriptor() {
        return rpma_conn_get_rcq.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_get_rcq(const struct rpma_conn * conn, struct rpma_cq ** rcq_ptr)
     * }
     */
    public static MethodHandle rpma_conn_get_rcq$handle() {
        return rpma_conn_get_rcq.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_get_rcq(const struct rpma_conn * conn, struct rpma_cq ** rcq_ptr)
     * }
     */
    public static MemorySegment rpma_conn_get_rcq$address() {
        return rpma_conn_get_rcq.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_get_rcq(const struct rpma_conn * conn, struct rpma_cq ** rcq_ptr)
     * }
     */
    public static int rpma_conn_get_rcq(MemorySegment conn, MemorySegment rcq_ptr) {
        var mh$ = rpma_conn_get_rcq.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_get_rcq", conn, rcq_ptr);
            }
            return (int)mh$.invokeExact(conn, rcq_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_get_compl_fd {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_get_compl_fd");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_get_compl_fd(const struct rpma_conn * conn, int * fd)
     * }
     */
    public static FunctionDescriptor rpma_conn_get_compl_fd$descriptor() {
        return rpma_conn_get_compl_fd.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_get_compl_fd(const struct rpma_conn * conn, int * fd)
     * }
     */
    public static MethodHandle rpma_conn_get_compl_fd$handle() {
        return rpma_conn_get_compl_fd.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_get_compl_fd(const struct rpma_conn * conn, int * fd)
     * }
     */
    public static MemorySegment rpma_conn_get_compl_fd$address() {
        return rpma_conn_get_compl_fd.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_get_compl_fd(const struct rpma_conn * conn, int * fd)
     * }
     */
    public static int rpma_conn_get_compl_fd(MemorySegment conn, MemorySegment fd) {
        var mh$ = rpma_conn_get_compl_fd.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_get_compl_fd", conn, fd);
            }
            return (int)mh$.invokeExact(conn, fd);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_wait {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_wait");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_wait(struct rpma_conn * conn, int flags, struct rpma_cq ** cq, _Bool * is_rcq)
     * }
     */
    public static FunctionDescriptor rpma_conn_wait$descriptor() {
        return rpma_conn_wait.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_wait(struct rpma_conn * conn, int flags, struct rpma_cq ** cq, _Bool * is_rcq)
     * }
     */
    public static MethodHandle rpma_conn_wait$handle() {
        return rpma_conn_wait.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_wait(struct rpma_conn * conn, int flags, struct rpma_cq ** cq, _Bool * is_rcq)
     * }
     */
    public static MemorySegment rpma_conn_wait$address() {
        return rpma_conn_wait.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_wait(struct rpma_conn * conn, int flags, struct rpma_cq ** cq, _Bool * is_rcq)
     * }
     */
    public static int rpma_conn_wait(MemorySegment conn, int flags, MemorySegment cq, MemorySegment is_rcq) {
        var mh$ = rpma_conn_wait.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_wait", conn, flags, cq, is_rcq);
            }
            return (int)mh$.invokeExact(conn, flags, cq, is_rcq);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_get_qp_num {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_get_qp_num");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_get_qp_num(const struct rpma_conn * conn, uint32_t * qp_num)
     * }
     */
    public static FunctionDescriptor rpma_conn_get_qp_num$descriptor() {
        return rpma_conn_get_qp_num.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_get_qp_num(const struct rpma_conn * conn, uint32_t * qp_num)
     * }
     */
    public static MethodHandle rpma_conn_get_qp_num$handle() {
        return rpma_conn_get_qp_num.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_get_qp_num(const struct rpma_conn * conn, uint32_t * qp_num)
     * }
     */
    public static MemorySegment rpma_conn_get_qp_num$address() {
        return rpma_conn_get_qp_num.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_get_qp_num(const struct rpma_conn * conn, uint32_t * qp_num)
     * }
     */
    public static int rpma_conn_get_qp_num(MemorySegment conn, MemorySegment qp_num) {
        var mh$ = rpma_conn_get_qp_num.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_get_qp_num", conn, qp_num);
            }
            return (int)mh$.invokeExact(conn, qp_num);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_apply_remote_peer_cfg {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_apply_remote_peer_cfg");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_apply_remote_peer_cfg(struct rpma_conn * conn, const struct rpma_peer_cfg * pcfg)
     * }
     */
    public static FunctionDescriptor rpma_conn_apply_remote_peer_cfg$descriptor() {
        return rpma_conn_apply_remote_peer_cfg.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_apply_remote_peer_cfg(struct rpma_conn * conn, const struct rpma_peer_cfg * pcfg)
     * }
     */
    public static MethodHandle rpma_conn_apply_remote_peer_cfg$handle() {
        return rpma_conn_apply_remote_peer_cfg.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_apply_remote_peer_cfg(struct rpma_conn * conn, const struct rpma_peer_cfg * pcfg)
     * }
     */
    public static MemorySegment rpma_conn_apply_remote_peer_cfg$address() {
        return rpma_conn_apply_remote_peer_cfg.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_apply_remote_peer_cfg(struct rpma_conn * conn, const struct rpma_peer_cfg * pcfg)
     * }
     */
    public static int rpma_conn_apply_remote_peer_cfg(MemorySegment conn, MemorySegment pcfg) {
        var mh$ = rpma_conn_apply_remote_peer_cfg.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_apply_remote_peer_cfg", conn, pcfg);
            }
            return (int)mh$.invokeExact(conn, pcfg);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_mr_reg {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER,
            librpma_h.C_LONG,
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_mr_reg");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_mr_reg(struct rpma_peer * peer, void * ptr, size_t size, int usage, struct rpma_mr_local ** mr_ptr)
     * }
     */
    public static FunctionDescriptor rpma_mr_reg$descriptor() {
        return rpma_mr_reg.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_mr_reg(struct rpma_peer * peer, void * ptr, size_t size, int usage, struct rpma_mr_local ** mr_ptr)
     * }
     */
    public static MethodHandle rpma_mr_reg$handle() {
        return rpma_mr_reg.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_mr_reg(struct rpma_peer * peer, void * ptr, size_t size, int usage, struct rpma_mr_local ** mr_ptr)
     * }
     */
    public static MemorySegment rpma_mr_reg$address() {
        return rpma_mr_reg.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_mr_reg(struct rpma_peer * peer, void * ptr, size_t size, int usage, struct rpma_mr_local ** mr_ptr)
     * }
     */
    public static int rpma_mr_reg(MemorySegment peer, MemorySegment ptr, long size, int usage, MemorySegment mr_ptr) {
        var mh$ = rpma_mr_reg.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_mr_reg", peer, ptr, size, usage, mr_ptr);
            }
            return (int)mh$.invokeExact(peer, ptr, size, usage, mr_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_mr_dereg {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_mr_dereg");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_mr_dereg(struct rpma_mr_local ** mr_ptr)
     * }
     */
    public static FunctionDescriptor rpma_mr_dereg$descriptor() {
        return rpma_mr_dereg.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_mr_dereg(struct rpma_mr_local ** mr_ptr)
     * }
     */
    public static MethodHandle rpma_mr_dereg$handle() {
        return rpma_mr_dereg.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_mr_dereg(struct rpma_mr_local ** mr_ptr)
     * }
     */
    public static MemorySegment rpma_mr_dereg$address() {
        return rpma_mr_dereg.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_mr_dereg(struct rpma_mr_local ** mr_ptr)
     * }
     */
    public static int rpma_mr_dereg(MemorySegment mr_ptr) {
        var mh$ = rpma_mr_dereg.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_mr_dereg", mr_ptr);
            }
            return (int)mh$.invokeExact(mr_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_mr_get_descriptor {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_mr_get_descriptor");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_mr_get_descriptor(const struct rpma_mr_local * mr, void * desc)
     * }
     */
    public static FunctionDescriptor rpma_mr_get_descriptor$descriptor() {
        return rpma_mr_get_descriptor.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_mr_get_descriptor(const struct rpma_mr_local * mr, void * desc)
     * }
     */
    public static MethodHandle rpma_mr_get_descriptor$handle() {
        return rpma_mr_get_descriptor.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_mr_get_descriptor(const struct rpma_mr_local * mr, void * desc)
     * }
     */
    public static MemorySegment rpma_mr_get_descriptor$address() {
        return rpma_mr_get_descriptor.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_mr_get_descriptor(const struct rpma_mr_local * mr, void * desc)
     * }
     */
    public static int rpma_mr_get_descriptor(MemorySegment mr, MemorySegment desc) {
        var mh$ = rpma_mr_get_descriptor.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_mr_get_descriptor", mr, desc);
            }
            return (int)mh$.invokeExact(mr, desc);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_mr_get_descriptor_size {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_mr_get_descriptor_size");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_mr_get_descriptor_size(const struct rpma_mr_local * mr, size_t * desc_size)
     * }
     */
    public static FunctionDescriptor rpma_mr_get_descriptor_size$descriptor() {
        return rpma_mr_get_descriptor_size.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_mr_get_descriptor_size(const struct rpma_mr_local * mr, size_t * desc_size)
     * }
     */
    public static MethodHandle rpma_mr_get_descriptor_size$handle() {
        return rpma_mr_get_descriptor_size.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_mr_get_descriptor_size(const struct rpma_mr_local * mr, size_t * desc_size)
     * }
     */
    public static MemorySegment rpma_mr_get_descriptor_size$address() {
        return rpma_mr_get_descriptor_size.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_mr_get_descriptor_size(const struct rpma_mr_local * mr, size_t * desc_size)
     * }
     */
    public static int rpma_mr_get_descriptor_size(MemorySegment mr, MemorySegment desc_size) {
        var mh$ = rpma_mr_get_descriptor_size.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_mr_get_descriptor_size", mr, desc_size);
            }
            return (int)mh$.invokeExact(mr, desc_size);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_mr_get_size {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_mr_get_size");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_mr_get_size(const struct rpma_mr_local * mr, size_t * size)
     * }
     */
    public static FunctionDescriptor rpma_mr_get_size$descriptor() {
        return rpma_mr_get_size.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_mr_get_size(const struct rpma_mr_local * mr, size_t * size)
     * }
     */
    public static MethodHandle rpma_mr_get_size$handle() {
        return rpma_mr_get_size.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_mr_get_size(const struct rpma_mr_local * mr, size_t * size)
     * }
     */
    public static MemorySegment rpma_mr_get_size$address() {
        return rpma_mr_get_size.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_mr_get_size(const struct rpma_mr_local * mr, size_t * size)
     * }
     */
    public static int rpma_mr_get_size(MemorySegment mr, MemorySegment size) {
        var mh$ = rpma_mr_get_size.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_mr_get_size", mr, size);
            }
            return (int)mh$.invokeExact(mr, size);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_mr_remote_from_descriptor {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_LONG,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_mr_remote_from_descriptor");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_mr_remote_from_descriptor(const void * desc, size_t desc_size, struct rpma_mr_remote ** mr_ptr)
     * }
     */
    public static FunctionDescriptor rpma_mr_remote_from_descriptor$descriptor() {
        return rpma_mr_remote_from_descriptor.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_mr_remote_from_descriptor(const void * desc, size_t desc_size, struct rpma_mr_remote ** mr_ptr)
     * }
     */
    public static MethodHandle rpma_mr_remote_from_descriptor$handle() {
        return rpma_mr_remote_from_descriptor.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_mr_remote_from_descriptor(const void * desc, size_t desc_size, struct rpma_mr_remote ** mr_ptr)
     * }
     */
    public static MemorySegment rpma_mr_remote_from_descriptor$address() {
        return rpma_mr_remote_from_descriptor.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_mr_remote_from_descriptor(const void * desc, size_t desc_size, struct rpma_mr_remote ** mr_ptr)
     * }
     */
    public static int rpma_mr_remote_from_descriptor(MemorySegment desc, long desc_size, MemorySegment mr_ptr) {
        var mh$ = rpma_mr_remote_from_descriptor.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_mr_remote_from_descriptor", desc, desc_size, mr_ptr);
            }
            return (int)mh$.invokeExact(desc, desc_size, mr_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_mr_remote_get_size {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_mr_remote_get_size");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_mr_remote_get_size(const struct rpma_mr_remote * mr, size_t * size)
     * }
     */
    public static FunctionDescriptor rpma_mr_remote_get_size$descriptor() {
        return rpma_mr_remote_get_size.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_mr_remote_get_size(const struct rpma_mr_remote * mr, size_t * size)
     * }
     */
    public static MethodHandle rpma_mr_remote_get_size$handle() {
        return rpma_mr_remote_get_size.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_mr_remote_get_size(const struct rpma_mr_remote * mr, size_t * size)
     * }
     */
    public static MemorySegment rpma_mr_remote_get_size$address() {
        return rpma_mr_remote_get_size.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_mr_remote_get_size(const struct rpma_mr_remote * mr, size_t * size)
     * }
     */
    public static int rpma_mr_remote_get_size(MemorySegment mr, MemorySegment size) {
        var mh$ = rpma_mr_remote_get_size.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_mr_remote_get_size", mr, size);
            }
            return (int)mh$.invokeExact(mr, size);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_mr_remote_get_flush_type {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_mr_remote_get_flush_type");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_mr_remote_get_flush_type(const struct rpma_mr_remote * mr, int * flush_type)
     * }
     */
    public static FunctionDescriptor rpma_mr_remote_get_flush_type$descriptor() {
        return rpma_mr_remote_get_flush_type.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_mr_remote_get_flush_type(const struct rpma_mr_remote * mr, int * flush_type)
     * }
     */
    public static MethodHandle rpma_mr_remote_get_flush_type$handle() {
        return rpma_mr_remote_get_flush_type.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_mr_remote_get_flush_type(const struct rpma_mr_remote * mr, int * flush_type)
     * }
     */
    public static MemorySegment rpma_mr_remote_get_flush_type$address() {
        return rpma_mr_remote_get_flush_type.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_mr_remote_get_flush_type(const struct rpma_mr_remote * mr, int * flush_type)
     * }
     */
    public static int rpma_mr_remote_get_flush_type(MemorySegment mr, MemorySegment flush_type) {
        var mh$ = rpma_mr_remote_get_flush_type.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_mr_remote_get_flush_type", mr, flush_type);
            }
            return (int)mh$.invokeExact(mr, flush_type);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_mr_remote_delete {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_mr_remote_delete");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_mr_remote_delete(struct rpma_mr_remote ** mr_ptr)
     * }
     */
    public static FunctionDescriptor rpma_mr_remote_delete$descriptor() {
        return rpma_mr_remote_delete.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_mr_remote_delete(struct rpma_mr_remote ** mr_ptr)
     * }
     */
    public static MethodHandle rpma_mr_remote_delete$handle() {
        return rpma_mr_remote_delete.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_mr_remote_delete(struct rpma_mr_remote ** mr_ptr)
     * }
     */
    public static MemorySegment rpma_mr_remote_delete$address() {
        return rpma_mr_remote_delete.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_mr_remote_delete(struct rpma_mr_remote ** mr_ptr)
     * }
     */
    public static int rpma_mr_remote_delete(MemorySegment mr_ptr) {
        var mh$ = rpma_mr_remote_delete.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_mr_remote_delete", mr_ptr);
            }
            return (int)mh$.invokeExact(mr_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_peer_cfg_new {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_peer_cfg_new");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_new(struct rpma_peer_cfg ** pcfg_ptr)
     * }
     */
    public static FunctionDescriptor rpma_peer_cfg_new$descriptor() {
        return rpma_peer_cfg_new.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_new(struct rpma_peer_cfg ** pcfg_ptr)
     * }
     */
    public static MethodHandle rpma_peer_cfg_new$handle() {
        return rpma_peer_cfg_new.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_new(struct rpma_peer_cfg ** pcfg_ptr)
     * }
     */
    public static MemorySegment rpma_peer_cfg_new$address() {
        return rpma_peer_cfg_new.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_peer_cfg_new(struct rpma_peer_cfg ** pcfg_ptr)
     * }
     */
    public static int rpma_peer_cfg_new(MemorySegment pcfg_ptr) {
        var mh$ = rpma_peer_cfg_new.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_peer_cfg_new", pcfg_ptr);
            }
            return (int)mh$.invokeExact(pcfg_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_peer_cfg_delete {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_peer_cfg_delete");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_delete(struct rpma_peer_cfg ** pcfg_ptr)
     * }
     */
    public static FunctionDescriptor rpma_peer_cfg_delete$descriptor() {
        return rpma_peer_cfg_delete.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_delete(struct rpma_peer_cfg ** pcfg_ptr)
     * }
     */
    public static MethodHandle rpma_peer_cfg_delete$handle() {
        return rpma_peer_cfg_delete.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_delete(struct rpma_peer_cfg ** pcfg_ptr)
     * }
     */
    public static MemorySegment rpma_peer_cfg_delete$address() {
        return rpma_peer_cfg_delete.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_peer_cfg_delete(struct rpma_peer_cfg ** pcfg_ptr)
     * }
     */
    public static int rpma_peer_cfg_delete(MemorySegment pcfg_ptr) {
        var mh$ = rpma_peer_cfg_delete.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_peer_cfg_delete", pcfg_ptr);
            }
            return (int)mh$.invokeExact(pcfg_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_peer_cfg_set_direct_write_to_pmem {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_BOOL
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_peer_cfg_set_direct_write_to_pmem");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_set_direct_write_to_pmem(struct rpma_peer_cfg * pcfg, _Bool supported)
     * }
     */
    public static FunctionDescriptor rpma_peer_cfg_set_direct_write_to_pmem$descriptor() {
        return rpma_peer_cfg_set_direct_write_to_pmem.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_set_direct_write_to_pmem(struct rpma_peer_cfg * pcfg, _Bool supported)
     * }
     */
    public static MethodHandle rpma_peer_cfg_set_direct_write_to_pmem$handle() {
        return rpma_peer_cfg_set_direct_write_to_pmem.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_set_direct_write_to_pmem(struct rpma_peer_cfg * pcfg, _Bool supported)
     * }
     */
    public static MemorySegment rpma_peer_cfg_set_direct_write_to_pmem$address() {
        return rpma_peer_cfg_set_direct_write_to_pmem.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_peer_cfg_set_direct_write_to_pmem(struct rpma_peer_cfg * pcfg, _Bool supported)
     * }
     */
    public static int rpma_peer_cfg_set_direct_write_to_pmem(MemorySegment pcfg, boolean supported) {
        var mh$ = rpma_peer_cfg_set_direct_write_to_pmem.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_peer_cfg_set_direct_write_to_pmem", pcfg, supported);
            }
            return (int)mh$.invokeExact(pcfg, supported);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_peer_cfg_get_direct_write_to_pmem {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_peer_cfg_get_direct_write_to_pmem");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_get_direct_write_to_pmem(const struct rpma_peer_cfg * pcfg, _Bool * supported)
     * }
     */
    public static FunctionDescriptor rpma_peer_cfg_get_direct_write_to_pmem$descriptor() {
        return rpma_peer_cfg_get_direct_write_to_pmem.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_get_direct_write_to_pmem(const struct rpma_peer_cfg * pcfg, _Bool * supported)
     * }
     */
    public static MethodHandle rpma_peer_cfg_get_direct_write_to_pmem$handle() {
        return rpma_peer_cfg_get_direct_write_to_pmem.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_get_direct_write_to_pmem(const struct rpma_peer_cfg * pcfg, _Bool * supported)
     * }
     */
    public static MemorySegment rpma_peer_cfg_get_direct_write_to_pmem$address() {
        return rpma_peer_cfg_get_direct_write_to_pmem.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_peer_cfg_get_direct_write_to_pmem(const struct rpma_peer_cfg * pcfg, _Bool * supported)
     * }
     */
    public static int rpma_peer_cfg_get_direct_write_to_pmem(MemorySegment pcfg, MemorySegment supported) {
        var mh$ = rpma_peer_cfg_get_direct_write_to_pmem.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_peer_cfg_get_direct_write_to_pmem", pcfg, supported);
            }
            return (int)mh$.invokeExact(pcfg, supported);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_peer_cfg_get_descriptor {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_peer_cfg_get_descriptor");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_get_descriptor(const struct rpma_peer_cfg * pcfg, void * desc)
     * }
     */
    public static FunctionDescriptor rpma_peer_cfg_get_descriptor$descriptor() {
        return rpma_peer_cfg_get_descriptor.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_get_descriptor(const struct rpma_peer_cfg * pcfg, void * desc)
     * }
     */
    public static MethodHandle rpma_peer_cfg_get_descriptor$handle() {
        return rpma_peer_cfg_get_descriptor.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_get_descriptor(const struct rpma_peer_cfg * pcfg, void * desc)
     * }
     */
    public static MemorySegment rpma_peer_cfg_get_descriptor$address() {
        return rpma_peer_cfg_get_descriptor.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_peer_cfg_get_descriptor(const struct rpma_peer_cfg * pcfg, void * desc)
     * }
     */
    public static int rpma_peer_cfg_get_descriptor(MemorySegment pcfg, MemorySegment desc) {
        var mh$ = rpma_peer_cfg_get_descriptor.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_peer_cfg_get_descriptor", pcfg, desc);
            }
            return (int)mh$.invokeExact(pcfg, desc);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_peer_cfg_get_descriptor_size {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_peer_cfg_get_descriptor_size");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_get_descriptor_size(const struct rpma_peer_cfg * pcfg, size_t * desc_size)
     * }
     */
    public static FunctionDescriptor rpma_peer_cfg_get_descriptor_size$descriptor() {
        return rpma_peer_cfg_get_descriptor_size.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_get_descriptor_size(const struct rpma_peer_cfg * pcfg, size_t * desc_size)
     * }
     */
    public static MethodHandle rpma_peer_cfg_get_descriptor_size$handle() {
        return rpma_peer_cfg_get_descriptor_size.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_get_descriptor_size(const struct rpma_peer_cfg * pcfg, size_t * desc_size)
     * }
     */
    public static MemorySegment rpma_peer_cfg_get_descriptor_size$address() {
        return rpma_peer_cfg_get_descriptor_size.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_peer_cfg_get_descriptor_size(const struct rpma_peer_cfg * pcfg, size_t * desc_size)
     * }
     */
    public static int rpma_peer_cfg_get_descriptor_size(MemorySegment pcfg, MemorySegment desc_size) {
        var mh$ = rpma_peer_cfg_get_descriptor_size.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_peer_cfg_get_descriptor_size", pcfg, desc_size);
            }
            return (int)mh$.invokeExact(pcfg, desc_size);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_peer_cfg_from_descriptor {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_LONG,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_peer_cfg_from_descriptor");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_from_descriptor(const void * desc, size_t desc_size, struct rpma_peer_cfg ** pcfg_ptr)
     * }
     */
    public static FunctionDescriptor rpma_peer_cfg_from_descriptor$descriptor() {
        return rpma_peer_cfg_from_descriptor.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_from_descriptor(const void * desc, size_t desc_size, struct rpma_peer_cfg ** pcfg_ptr)
     * }
     */
    public static MethodHandle rpma_peer_cfg_from_descriptor$handle() {
        return rpma_peer_cfg_from_descriptor.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_peer_cfg_from_descriptor(const void * desc, size_t desc_size, struct rpma_peer_cfg ** pcfg_ptr)
     * }
     */
    public static MemorySegment rpma_peer_cfg_from_descriptor$address() {
        return rpma_peer_cfg_from_descriptor.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_peer_cfg_from_descriptor(const void * desc, size_t desc_size, struct rpma_peer_cfg ** pcfg_ptr)
     * }
     */
    public static int rpma_peer_cfg_from_descriptor(MemorySegment desc, long desc_size, MemorySegment pcfg_ptr) {
        var mh$ = rpma_peer_cfg_from_descriptor.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_peer_cfg_from_descriptor", desc, desc_size, pcfg_ptr);
            }
            return (int)mh$.invokeExact(desc, desc_size, pcfg_ptr);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_read {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER,
            librpma_h.C_LONG,
            librpma_h.C_POINTER,
            librpma_h.C_LONG,
            librpma_h.C_LONG,
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_read");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_read(struct rpma_conn * conn, struct rpma_mr_local * dst, size_t dst_offset, const struct rpma_mr_remote * src, size_t src_offset, size_t len, int flags, const void * op_context)
     * }
     */
    public static FunctionDescriptor rpma_read$descriptor() {
        return rpma_read.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_read(struct rpma_conn * conn, struct rpma_mr_local * dst, size_t dst_offset, const struct rpma_mr_remote * src, size_t src_offset, size_t len, int flags, const void * op_context)
     * }
     */
    public static MethodHandle rpma_read$handle() {
        return rpma_read.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_read(struct rpma_conn * conn, struct rpma_mr_local * dst, size_t dst_offset, const struct rpma_mr_remote * src, size_t src_offset, size_t len, int flags, const void * op_context)
     * }
     */
    public static MemorySegment rpma_read$address() {
        return rpma_read.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_read(struct rpma_conn * conn, struct rpma_mr_local * dst, size_t dst_offset, const struct rpma_mr_remote * src, size_t src_offset, size_t len, int flags, const void * op_context)
     * }
     */
    public static int rpma_read(MemorySegment conn, MemorySegment dst, long dst_offset, MemorySegment src, long src_offset, long len, int flags, MemorySegment op_context) {
        var mh$ = rpma_read.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_read", conn, dst, dst_offset, src, src_offset, len, flags, op_context);
            }
            return (int)mh$.invokeExact(conn, dst, dst_offset, src, src_offset, len, flags, op_context);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_write {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER,
            librpma_h.C_LONG,
            librpma_h.C_POINTER,
            librpma_h.C_LONG,
            librpma_h.C_LONG,
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_write");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_write(struct rpma_conn * conn, struct rpma_mr_remote * dst, size_t dst_offset, const struct rpma_mr_local * src, size_t src_offset, size_t len, int flags, const void * op_context)
     * }
     */
    public static FunctionDescriptor rpma_write$descriptor() {
        return rpma_write.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_write(struct rpma_conn * conn, struct rpma_mr_remote * dst, size_t dst_offset, const struct rpma_mr_local * src, size_t src_offset, size_t len, int flags, const void * op_context)
     * }
     */
    public static MethodHandle rpma_write$handle() {
        return rpma_write.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_write(struct rpma_conn * conn, struct rpma_mr_remote * dst, size_t dst_offset, const struct rpma_mr_local * src, size_t src_offset, size_t len, int flags, const void * op_context)
     * }
     */
    public static MemorySegment rpma_write$address() {
        return rpma_write.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_write(struct rpma_conn * conn, struct rpma_mr_remote * dst, size_t dst_offset, const struct rpma_mr_local * src, size_t src_offset, size_t len, int flags, const void * op_context)
     * }
     */
    public static int rpma_write(MemorySegment conn, MemorySegment dst, long dst_offset, MemorySegment src, long src_offset, long len, int flags, MemorySegment op_context) {
        var mh$ = rpma_write.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_write", conn, dst, dst_offset, src, src_offset, len, flags, op_context);
            }
            return (int)mh$.invokeExact(conn, dst, dst_offset, src, src_offset, len, flags, op_context);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_write_with_imm {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER,
            librpma_h.C_LONG,
            librpma_h.C_POINTER,
            librpma_h.C_LONG,
            librpma_h.C_LONG,
            librpma_h.C_INT,
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_write_with_imm");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_write_with_imm(struct rpma_conn * conn, struct rpma_mr_remote * dst, size_t dst_offset, const struct rpma_mr_local * src, size_t src_offset, size_t len, int flags, uint32_t imm, const void * op_context)
     * }
     */
    public static FunctionDescriptor rpma_write_with_imm$descriptor() {
        return rpma_write_with_imm.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_write_with_imm(struct rpma_conn * conn, struct rpma_mr_remote * dst, size_t dst_offset, const struct rpma_mr_local * src, size_t src_offset, size_t len, int flags, uint32_t imm, const void * op_context)
     * }
     */
    public static MethodHandle rpma_write_with_imm$handle() {
        return rpma_write_with_imm.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_write_with_imm(struct rpma_conn * conn, struct rpma_mr_remote * dst, size_t dst_offset, const struct rpma_mr_local * src, size_t src_offset, size_t len, int flags, uint32_t imm, const void * op_context)
     * }
     */
    public static MemorySegment rpma_write_with_imm$address() {
        return rpma_write_with_imm.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_write_with_imm(struct rpma_conn * conn, struct rpma_mr_remote * dst, size_t dst_offset, const struct rpma_mr_local * src, size_t src_offset, size_t len, int flags, uint32_t imm, const void * op_context)
     * }
     */
    public static int rpma_write_with_imm(MemorySegment conn, MemorySegment dst, long dst_offset, MemorySegment src, long src_offset, long len, int flags, int imm, MemorySegment op_context) {
        var mh$ = rpma_write_with_imm.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_write_with_imm", conn, dst, dst_offset, src, src_offset, len, flags, imm, op_context);
            }
            return (int)mh$.invokeExact(conn, dst, dst_offset, src, src_offset, len, flags, imm, op_context);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_atomic_write {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER,
            librpma_h.C_LONG,
            librpma_h.C_POINTER,
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_atomic_write");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_atomic_write(struct rpma_conn * conn, struct rpma_mr_remote * dst, size_t dst_offset, const char src, int flags, const void * op_context)
     * }
     */
    public static FunctionDescriptor rpma_atomic_write$descriptor() {
        return rpma_atomic_write.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_atomic_write(struct rpma_conn * conn, struct rpma_mr_remote * dst, size_t dst_offset, const char src, int flags, const void * op_context)
     * }
     */
    public static MethodHandle rpma_atomic_write$handle() {
        return rpma_atomic_write.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_atomic_write(struct rpma_conn * conn, struct rpma_mr_remote * dst, size_t dst_offset, const char src, int flags, const void * op_context)
     * }
     */
    public static MemorySegment rpma_atomic_write$address() {
        return rpma_atomic_write.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_atomic_write(struct rpma_conn * conn, struct rpma_mr_remote * dst, size_t dst_offset, const char src, int flags, const void * op_context)
     * }
     */
    public static int rpma_atomic_write(MemorySegment conn, MemorySegment dst, long dst_offset, MemorySegment src, int flags, MemorySegment op_context) {
        var mh$ = rpma_atomic_write.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_atomic_write", conn, dst, dst_offset, src, flags, op_context);
            }
            return (int)mh$.invokeExact(conn, dst, dst_offset, src, flags, op_context);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_flush {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER,
            librpma_h.C_LONG,
            librpma_h.C_LONG,
            librpma_h.C_INT,
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_flush");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_flush(struct rpma_conn * conn, struct rpma_mr_remote * dst, size_t dst_offset, size_t len, enum rpma_flush_type type, int flags, const void * op_context)
     * }
     */
    public static FunctionDescriptor rpma_flush$descriptor() {
        return rpma_flush.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_flush(struct rpma_conn * conn, struct rpma_mr_remote * dst, size_t dst_offset, size_t len, enum rpma_flush_type type, int flags, const void * op_context)
     * }
     */
    public static MethodHandle rpma_flush$handle() {
        return rpma_flush.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_flush(struct rpma_conn * conn, struct rpma_mr_remote * dst, size_t dst_offset, size_t len, enum rpma_flush_type type, int flags, const void * op_context)
     * }
     */
    public static MemorySegment rpma_flush$address() {
        return rpma_flush.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_flush(struct rpma_conn * conn, struct rpma_mr_remote * dst, size_t dst_offset, size_t len, enum rpma_flush_type type, int flags, const void * op_context)
     * }
     */
    public static int rpma_flush(MemorySegment conn, MemorySegment dst, long dst_offset, long len, int type, int flags, MemorySegment op_context) {
        var mh$ = rpma_flush.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_flush", conn, dst, dst_offset, len, type, flags, op_context);
            }
            return (int)mh$.invokeExact(conn, dst, dst_offset, len, type, flags, op_context);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_send {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER,
            librpma_h.C_LONG,
            librpma_h.C_LONG,
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_send");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_send(struct rpma_conn * conn, const struct rpma_mr_local * src, size_t offset, size_t len, int flags, const void * op_context)
     * }
     */
    public static FunctionDescriptor rpma_send$descriptor() {
        return rpma_send.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_send(struct rpma_conn * conn, const struct rpma_mr_local * src, size_t offset, size_t len, int flags, const void * op_context)
     * }
     */
    public static MethodHandle rpma_send$handle() {
        return rpma_send.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_send(struct rpma_conn * conn, const struct rpma_mr_local * src, size_t offset, size_t len, int flags, const void * op_context)
     * }
     */
    public static MemorySegment rpma_send$address() {
        return rpma_send.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_send(struct rpma_conn * conn, const struct rpma_mr_local * src, size_t offset, size_t len, int flags, const void * op_context)
     * }
     */
    public static int rpma_send(MemorySegment conn, MemorySegment src, long offset, long len, int flags, MemorySegment op_context) {
        var mh$ = rpma_send.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_send", conn, src, offset, len, flags, op_context);
            }
            return (int)mh$.invokeExact(conn, src, offset, len, flags, op_context);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_send_with_imm {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER,
            librpma_h.C_LONG,
            librpma_h.C_LONG,
            librpma_h.C_INT,
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_send_with_imm");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_send_with_imm(struct rpma_conn * conn, const struct rpma_mr_local * src, size_t offset, size_t len, int flags, uint32_t imm, const void * op_context)
     * }
     */
    public static FunctionDescriptor rpma_send_with_imm$descriptor() {
        return rpma_send_with_imm.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_send_with_imm(struct rpma_conn * conn, const struct rpma_mr_local * src, size_t offset, size_t len, int flags, uint32_t imm, const void * op_context)
     * }
     */
    public static MethodHandle rpma_send_with_imm$handle() {
        return rpma_send_with_imm.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_send_with_imm(struct rpma_conn * conn, const struct rpma_mr_local * src, size_t offset, size_t len, int flags, uint32_t imm, const void * op_context)
     * }
     */
    public static MemorySegment rpma_send_with_imm$address() {
        return rpma_send_with_imm.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_send_with_imm(struct rpma_conn * conn, const struct rpma_mr_local * src, size_t offset, size_t len, int flags, uint32_t imm, const void * op_context)
     * }
     */
    public static int rpma_send_with_imm(MemorySegment conn, MemorySegment src, long offset, long len, int flags, int imm, MemorySegment op_context) {
        var mh$ = rpma_send_with_imm.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_send_with_imm", conn, src, offset, len, flags, imm, op_context);
            }
            return (int)mh$.invokeExact(conn, src, offset, len, flags, imm, op_context);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_recv {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER,
            librpma_h.C_LONG,
            librpma_h.C_LONG,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_recv");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_recv(struct rpma_conn * conn, struct rpma_mr_local * dst, size_t offset, size_t len, const void * op_context)
     * }
     */
    public static FunctionDescriptor rpma_recv$descriptor() {
        return rpma_recv.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_recv(struct rpma_conn * conn, struct rpma_mr_local * dst, size_t offset, size_t len, const void * op_context)
     * }
     */
    public static MethodHandle rpma_recv$handle() {
        return rpma_recv.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_recv(struct rpma_conn * conn, struct rpma_mr_local * dst, size_t offset, size_t len, const void * op_context)
     * }
     */
    public static MemorySegment rpma_recv$address() {
        return rpma_recv.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_recv(struct rpma_conn * conn, struct rpma_mr_local * dst, size_t offset, size_t len, const void * op_context)
     * }
     */
    public static int rpma_recv(MemorySegment conn, MemorySegment dst, long offset, long len, MemorySegment op_context) {
        var mh$ = rpma_recv.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_recv", conn, dst, offset, len, op_context);
            }
            return (int)mh$.invokeExact(conn, dst, offset, len, op_context);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_conn_req_recv {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER,
            librpma_h.C_LONG,
            librpma_h.C_LONG,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_conn_req_recv");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_conn_req_recv(struct rpma_conn_req * req, struct rpma_mr_local * dst, size_t offset, size_t len, const void * op_context)
     * }
     */
    public static FunctionDescriptor rpma_conn_req_recv$descriptor() {
        return rpma_conn_req_recv.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_conn_req_recv(struct rpma_conn_req * req, struct rpma_mr_local * dst, size_t offset, size_t len, const void * op_context)
     * }
     */
    public static MethodHandle rpma_conn_req_recv$handle() {
        return rpma_conn_req_recv.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_conn_req_recv(struct rpma_conn_req * req, struct rpma_mr_local * dst, size_t offset, size_t len, const void * op_context)
     * }
     */
    public static MemorySegment rpma_conn_req_recv$address() {
        return rpma_conn_req_recv.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_conn_req_recv(struct rpma_conn_req * req, struct rpma_mr_local * dst, size_t offset, size_t len, const void * op_context)
     * }
     */
    public static int rpma_conn_req_recv(MemorySegment req, MemorySegment dst, long offset, long len, MemorySegment op_context) {
        var mh$ = rpma_conn_req_recv.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_conn_req_recv", req, dst, offset, len, op_context);
            }
            return (int)mh$.invokeExact(req, dst, offset, len, op_context);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_cq_get_fd {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_cq_get_fd");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_cq_get_fd(const struct rpma_cq * cq, int * fd)
     * }
     */
    public static FunctionDescriptor rpma_cq_get_fd$descriptor() {
        return rpma_cq_get_fd.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_cq_get_fd(const struct rpma_cq * cq, int * fd)
     * }
     */
    public static MethodHandle rpma_cq_get_fd$handle() {
        return rpma_cq_get_fd.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_cq_get_fd(const struct rpma_cq * cq, int * fd)
     * }
     */
    public static MemorySegment rpma_cq_get_fd$address() {
        return rpma_cq_get_fd.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_cq_get_fd(const struct rpma_cq * cq, int * fd)
     * }
     */
    public static int rpma_cq_get_fd(MemorySegment cq, MemorySegment fd) {
        var mh$ = rpma_cq_get_fd.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_cq_get_fd", cq, fd);
            }
            return (int)mh$.invokeExact(cq, fd);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_cq_wait {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_cq_wait");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_cq_wait(struct rpma_cq * cq)
     * }
     */
    public static FunctionDescriptor rpma_cq_wait$descriptor() {
        return rpma_cq_wait.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_cq_wait(struct rpma_cq * cq)
     * }
     */
    public static MethodHandle rpma_cq_wait$handle() {
        return rpma_cq_wait.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_cq_wait(struct rpma_cq * cq)
     * }
     */
    public static MemorySegment rpma_cq_wait$address() {
        return rpma_cq_wait.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_cq_wait(struct rpma_cq * cq)
     * }
     */
    public static int rpma_cq_wait(MemorySegment cq) {
        var mh$ = rpma_cq_wait.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_cq_wait", cq);
            }
            return (int)mh$.invokeExact(cq);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_cq_get_wc {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_INT,
            librpma_h.C_POINTER,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_cq_get_wc");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_cq_get_wc(struct rpma_cq * cq, int num_entries, struct ibv_wc * wc, int * num_entries_got)
     * }
     */
    public static FunctionDescriptor rpma_cq_get_wc$descriptor() {
        return rpma_cq_get_wc.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_cq_get_wc(struct rpma_cq * cq, int num_entries, struct ibv_wc * wc, int * num_entries_got)
     * }
     */
    public static MethodHandle rpma_cq_get_wc$handle() {
        return rpma_cq_get_wc.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_cq_get_wc(struct rpma_cq * cq, int num_entries, struct ibv_wc * wc, int * num_entries_got)
     * }
     */
    public static MemorySegment rpma_cq_get_wc$address() {
        return rpma_cq_get_wc.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_cq_get_wc(struct rpma_cq * cq, int num_entries, struct ibv_wc * wc, int * num_entries_got)
     * }
     */
    public static int rpma_cq_get_wc(MemorySegment cq, int num_entries, MemorySegment wc, MemorySegment num_entries_got) {
        var mh$ = rpma_cq_get_wc.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_cq_get_wc", cq, num_entries, wc, num_entries_got);
            }
            return (int)mh$.invokeExact(cq, num_entries, wc, num_entries_got);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_log_set_function {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_log_set_function");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_log_set_function(rpma_log_function * log_function)
     * }
     */
    public static FunctionDescriptor rpma_log_set_function$descriptor() {
        return rpma_log_set_function.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_log_set_function(rpma_log_function * log_function)
     * }
     */
    public static MethodHandle rpma_log_set_function$handle() {
        return rpma_log_set_function.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_log_set_function(rpma_log_function * log_function)
     * }
     */
    public static MemorySegment rpma_log_set_function$address() {
        return rpma_log_set_function.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_log_set_function(rpma_log_function * log_function)
     * }
     */
    public static int rpma_log_set_function(MemorySegment log_function) {
        var mh$ = rpma_log_set_function.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_log_set_function", log_function);
            }
            return (int)mh$.invokeExact(log_function);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_log_set_threshold {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_INT,
            librpma_h.C_INT
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_log_set_threshold");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_log_set_threshold(enum rpma_log_threshold threshold, enum rpma_log_level level)
     * }
     */
    public static FunctionDescriptor rpma_log_set_threshold$descriptor() {
        return rpma_log_set_threshold.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_log_set_threshold(enum rpma_log_threshold threshold, enum rpma_log_level level)
     * }
     */
    public static MethodHandle rpma_log_set_threshold$handle() {
        return rpma_log_set_threshold.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_log_set_threshold(enum rpma_log_threshold threshold, enum rpma_log_level level)
     * }
     */
    public static MemorySegment rpma_log_set_threshold$address() {
        return rpma_log_set_threshold.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_log_set_threshold(enum rpma_log_threshold threshold, enum rpma_log_level level)
     * }
     */
    public static int rpma_log_set_threshold(int threshold, int level) {
        var mh$ = rpma_log_set_threshold.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_log_set_threshold", threshold, level);
            }
            return (int)mh$.invokeExact(threshold, level);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_log_get_threshold {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_log_get_threshold");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rpma_log_get_threshold(enum rpma_log_threshold threshold, enum rpma_log_level * level)
     * }
     */
    public static FunctionDescriptor rpma_log_get_threshold$descriptor() {
        return rpma_log_get_threshold.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rpma_log_get_threshold(enum rpma_log_threshold threshold, enum rpma_log_level * level)
     * }
     */
    public static MethodHandle rpma_log_get_threshold$handle() {
        return rpma_log_get_threshold.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rpma_log_get_threshold(enum rpma_log_threshold threshold, enum rpma_log_level * level)
     * }
     */
    public static MemorySegment rpma_log_get_threshold$address() {
        return rpma_log_get_threshold.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rpma_log_get_threshold(enum rpma_log_threshold threshold, enum rpma_log_level * level)
     * }
     */
    public static int rpma_log_get_threshold(int threshold, MemorySegment level) {
        var mh$ = rpma_log_get_threshold.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_log_get_threshold", threshold, level);
            }
            return (int)mh$.invokeExact(threshold, level);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_err_2str {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_POINTER,
            librpma_h.C_INT
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_err_2str");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * const char *rpma_err_2str(int ret)
     * }
     */
    public static FunctionDescriptor rpma_err_2str$descriptor() {
        return rpma_err_2str.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * const char *rpma_err_2str(int ret)
     * }
     */
    public static MethodHandle rpma_err_2str$handle() {
        return rpma_err_2str.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * const char *rpma_err_2str(int ret)
     * }
     */
    public static MemorySegment rpma_err_2str$address() {
        return rpma_err_2str.ADDR;
    }

    /**
     * {@snippet lang=c :
     * const char *rpma_err_2str(int ret)
     * }
     */
    public static MemorySegment rpma_err_2str(int ret) {
        var mh$ = rpma_err_2str.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_err_2str", ret);
            }
            return (MemorySegment)mh$.invokeExact(ret);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rpma_utils_conn_event_2str {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_POINTER,
            librpma_h.C_INT
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rpma_utils_conn_event_2str");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * const char *rpma_utils_conn_event_2str(enum rpma_conn_event conn_event)
     * }
     */
    public static FunctionDescriptor rpma_utils_conn_event_2str$descriptor() {
        return rpma_utils_conn_event_2str.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * const char *rpma_utils_conn_event_2str(enum rpma_conn_event conn_event)
     * }
     */
    public static MethodHandle rpma_utils_conn_event_2str$handle() {
        return rpma_utils_conn_event_2str.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * const char *rpma_utils_conn_event_2str(enum rpma_conn_event conn_event)
     * }
     */
    public static MemorySegment rpma_utils_conn_event_2str$address() {
        return rpma_utils_conn_event_2str.ADDR;
    }

    /**
     * {@snippet lang=c :
     * const char *rpma_utils_conn_event_2str(enum rpma_conn_event conn_event)
     * }
     */
    public static MemorySegment rpma_utils_conn_event_2str(int conn_event) {
        var mh$ = rpma_utils_conn_event_2str.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rpma_utils_conn_event_2str", conn_event);
            }
            return (MemorySegment)mh$.invokeExact(conn_event);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }

    private static class rdma_destroy_id {
        public static final FunctionDescriptor DESC = FunctionDescriptor.of(
            librpma_h.C_INT,
            librpma_h.C_POINTER
        );

        public static final MemorySegment ADDR = librpma_h.findOrThrow("rdma_destroy_id");

        public static final MethodHandle HANDLE = Linker.nativeLinker().downcallHandle(ADDR, DESC);
    }

    /**
     * Function descriptor for:
     * {@snippet lang=c :
     * int rdma_destroy_id(struct rdma_cm_id *id)
     * }
     */
    public static FunctionDescriptor rdma_destroy_id$descriptor() {
        return rdma_destroy_id.DESC;
    }

    /**
     * Downcall method handle for:
     * {@snippet lang=c :
     * int rdma_destroy_id(struct rdma_cm_id *id)
     * }
     */
    public static MethodHandle rdma_destroy_id$handle() {
        return rdma_destroy_id.HANDLE;
    }

    /**
     * Address for:
     * {@snippet lang=c :
     * int rdma_destroy_id(struct rdma_cm_id *id)
     * }
     */
    public static MemorySegment rdma_destroy_id$address() {
        return rdma_destroy_id.ADDR;
    }

    /**
     * {@snippet lang=c :
     * int rdma_destroy_id(struct rdma_cm_id *id)
     * }
     */
    public static int rdma_destroy_id(MemorySegment id) {
        var mh$ = rdma_destroy_id.HANDLE;
        try {
            if (TRACE_DOWNCALLS) {
                traceDowncall("rdma_destroy_id", id);
            }
            return (int)mh$.invokeExact(id);
        } catch (Error | RuntimeException ex) {
           throw ex;
        } catch (Throwable ex$) {
           throw new AssertionError("should not reach here", ex$);
        }
    }
}
