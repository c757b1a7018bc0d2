package io.cqflux.transport.rpma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class PrivateDataTest {

    @Test
    void unframe_ofZeroPaddedBuffer_returnsExactlyWhatWasSent() {
        byte[] sent = {1, 2, 3};
        byte[] received = Arrays.copyOf(PrivateData.frame(sent), PrivateData.ACCEPT_CAPACITY); // rdma_cm pads with zeros
        assertArrayEquals(sent, PrivateData.unframe(received));
    }

    @Test
    void frame_ofNullOrEmpty_isOneLengthByte_soLibrpmaNeverSeesEmptyData() {
        assertArrayEquals(new byte[] {0}, PrivateData.frame(null));
        assertArrayEquals(new byte[0], PrivateData.unframe(Arrays.copyOf(PrivateData.frame(new byte[0]), 56)));
    }

    @Test
    void unframe_ofUnframedPeerData_returnsItUnchanged() {
        byte[] raw = {(byte) 200, 1, 2};
        assertArrayEquals(raw, PrivateData.unframe(raw));
    }
}
