package io.cqflux.core.fabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cqflux.core.Capability;
import io.cqflux.core.CompletionRecord;
import io.cqflux.core.CompletionStatus;
import io.cqflux.core.ConnectionEvent;
import io.cqflux.core.FabricErrno;
import io.cqflux.core.FlushType;
import io.cqflux.core.Opcode;
import io.cqflux.core.RegionAccess;
import io.cqflux.core.UnsupportedCapabilityException;
import io.cqflux.core.spi.LocalRegion;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.core.spi.TransportFixture;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

/** Fabric/tcp specifics: provider capabilities, the EAVAIL error path, what tcp does with flags. */
class FabricTransportTest extends TransportFixture {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    @Override
    protected Transport openTransport() {
        return Fabric.open("tcp", LOOPBACK);
    }

    @Override
    protected InetSocketAddress listenAddress() {
        return new InetSocketAddress(LOOPBACK, 0);
    }

    @Test
    void tcp_capabilities_haveNoAtomicWriteButPersistentFlush() {
        assertEquals("fabric/tcp", client.name());
        assertFalse(client.capabilities().contains(Capability.ATOMIC_WRITE));
        // tcp advertises FI_RMA_PMEM and cq_data_size 8
        assertEquals(EnumSet.of(Capability.RMA, Capability.MESSAGES, Capability.WRITE_WITH_IMMEDIATE,
                Capability.SEND_WITH_IMMEDIATE, Capability.FLUSH_VISIBILITY, Capability.FLUSH_PERSISTENT),
                client.capabilities());
        assertEquals(FabricTransport.PRIVATE_DATA_BOUND, client.maxConnectPrivateData());
    }

    @Test
    void atomicWrite_onTcp_isRefusedUpFrontNamingProviderAndCapability() {
        LocalRegion target = region(server, 64, RegionAccess.WRITE_DST);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        UnsupportedCapabilityException e = assertThrows(UnsupportedCapabilityException.class,
                () -> p.client().atomicWrite(remote, 0, 42, 1, true));
        assertEquals("fabric/tcp", e.provider());
        assertEquals(Capability.ATOMIC_WRITE, e.capability());
        assertTrue(e.getMessage().contains("fabric/tcp") && e.getMessage().contains("ATOMIC_WRITE"), e.getMessage());
    }

    @Test
    void listener_cmDataSize_coversThePrivateDataBound() {
        FabricListener l = (FabricListener) closeLater(server.listen(listenAddress(), config()));
        long size = l.cmDataSize();
        System.out.println("FACT tcp FI_OPT_CM_DATA_SIZE " + size);
        assertTrue(size >= FabricTransport.PRIVATE_DATA_BOUND, "FI_OPT_CM_DATA_SIZE " + size);
        assertTrue(l.address().getPort() > 0);
    }

    @Test
    void badKey_errorEntryCarriesLibfabricDetails() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        target.close();
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        post("write", () -> p.client().write(remote, 0, src, 0, 64, 7, true));
        CompletionRecord c = await(p.clientSide(), 7);
        pump.until("LOST", DEADLINE, () -> p.clientSide().events.contains(ConnectionEvent.LOST));
        System.out.println("FACT tcp bad key -> " + c + " providerErrno=" + c.providerErrno()
                + " events=" + p.clientSide().events + " server events=" + p.serverSide().events);
        assertFalse(c.isSuccess());
        assertTrue(c.fabricErrno() == FabricErrno.ECANCELED.code() || c.fabricErrno() == FabricErrno.ENOTCONN.code(),
                c::toString);
        assertEquals(c.fabricErrno() == FabricErrno.ECANCELED.code() ? CompletionStatus.WR_FLUSH_ERR
                : CompletionStatus.RETRY_EXC_ERR, c.status());
        assertFalse(c.errorText().isEmpty(), "fi_cq_strerror text");
        assertFalse(c.errorText().startsWith(FabricCompletionQueue.SYNTHESIZED), "a native error entry: " + c);
        // after the loss nothing can be posted any more
        assertThrows(IllegalStateException.class, () -> p.client().write(remote, 0, src, 0, 8, 8, true));
    }

    @Test
    void writeWithImmediate_onTcp_doesNotConsumeAPostedReceive() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST, RegionAccess.RECV);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC, RegionAccess.SEND);
        post("receive", () -> p.server().receive(target, 1024, 64, 500));
        post("write with immediate", () -> p.client().writeWithImmediate(remote, 0, src, 0, 8, 0x7f000001, 1, true));
        await(p.clientSide(), 1);
        pump.until("the target's completion", DEADLINE, () -> !p.serverSide().completions.isEmpty());
        CompletionRecord t = p.serverSide().completions.remove(0);
        System.out.println("FACT tcp writedata at target: " + t + " flags=0x" + Long.toHexString(t.flags()));
        assertEquals(Opcode.RECEIVE_WRITE_WITH_IMMEDIATE, t.opcode());
        assertEquals(0x7f000001, t.immediate());
        assertEquals(FabricFacts.TCP_WRITEDATA_CONSUMES_RECEIVE ? 500L : 0L, t.context(), t::toString);
        // the posted receive is still there: a send fills it
        src.segment().set(ValueLayout.JAVA_INT, 0, 0x01020304);
        post("send", () -> p.client().send(src, 0, 4, 2, true));
        CompletionRecord r = await(p.serverSide(), 500);
        assertEquals(Opcode.RECEIVE, r.opcode());
        assertEquals(4, r.byteLength());
    }

    @Test
    void persistentFlush_commitCompleteWithFence_isAcceptedByTcp() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST, RegionAccess.FLUSH_TYPE_PERSISTENT);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        assertEquals(EnumSet.of(FlushType.PERSISTENT, FlushType.VISIBILITY), remote.flushTypes());
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        src.segment().set(ValueLayout.JAVA_LONG, 0, 77);
        post("write", () -> p.client().write(remote, 0, src, 0, 8, 1, false));
        post("flush", () -> p.client().flush(remote, 0, 8, FlushType.PERSISTENT, 2, true));
        CompletionRecord f = await(p.clientSide(), 2);
        assertTrue(f.isSuccess(), f::toString);
        assertEquals(Opcode.FLUSH, f.opcode());
        assertEquals(77, target.segment().get(ValueLayout.JAVA_LONG, 0));
    }

    @Test
    void transmitCompletion_writeStillArrives() {
        LocalRegion target = region(server, 4096, RegionAccess.WRITE_DST);
        Pair p = connect(new byte[0], target.descriptor());
        RemoteRegion remote = closeLater(client.remoteRegion(p.acceptData()));
        assertEquals(io.cqflux.core.CompletionLevel.DELIVERY, p.client().config().writeCompletion());
        LocalRegion src = region(client, 4096, RegionAccess.WRITE_SRC);
        src.segment().set(ValueLayout.JAVA_LONG, 8, 5);
        post("write", () -> p.client().write(remote, 8, src, 8, 8, 3, true));
        assertTrue(await(p.clientSide(), 3).isSuccess());
        assertEquals(5, target.segment().get(ValueLayout.JAVA_LONG, 8));
    }
}
