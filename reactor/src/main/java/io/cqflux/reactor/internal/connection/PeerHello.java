package io.cqflux.reactor.internal.connection;

import io.cqflux.core.spi.Connection;
import io.cqflux.core.spi.RemoteRegion;
import io.cqflux.core.spi.Transport;
import io.cqflux.reactor.AcceptOptions;
import io.cqflux.reactor.ConnectOptions;
import io.cqflux.reactor.PeerRegion;
import io.cqflux.reactor.internal.resources.ApiAccess;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * What one side tells the other in the connection's private data (the client in its request,
 * the server in its accept): the descriptors of the regions it exposes, its transport's
 * handshake ({@link Transport#handshake()}) and its control words ({@link PeerControl}).
 *
 * <pre>
 *   'C' 'Q' version count                 4 bytes
 *   count x (u16 big-endian length, descriptor bytes)
 *   version 2 and 3: u8 length, the transport's handshake bytes
 *   version 3 and 4: u8 length, the transport's raw descriptor of the control words (0: none)
 *   version 4:       u8 length, the client's credentials for the server's authenticator
 *   then, if it fits: the side's receive buffer size, u16 or u32 big-endian (see below)
 *   then, if it fits too and a flag is set: u8 flags (see below)
 *   then, with flag bit 1 and if it fits: u8 length, the connection's parameters
 * </pre>
 *
 * <p><b>Connection parameters.</b> Bit 1 ({@link #CONNECTION_PARAMETERS}): the connection's own
 * parameters follow ({@link Transport#connectWithHello}; fabric/tcp: the tag by which a completion
 * queue this side's connection shares routes the peer's writes with immediate), given to the
 * peer's connection with {@link Connection#applyPeerParameters(byte[])}. They trail everything an
 * older peer reads, which ignores them (as it ignores unknown flag bits), and a hello that has no
 * room for them leaves them out, where the connection then does not share its queue. A server
 * shares an accepted connection's queue only with a client that told its own parameters, which
 * so reads the server's.
 *
 * <p><b>Flags.</b> Bit 0 ({@link #CONTROL_READABLE}): this side's control words are registered for
 * remote reading, so the peer's keep-alive may probe them by RDMA read. A peer from before the
 * keep-alive registered them for writing only: on rpma its descriptor is refused with read
 * access (the usage byte bounds it), on fabric the probe's read fails and ends the connection.
 * So the peer's words are addressed with read access, and the keep-alive runs, only when its hello
 * sets this bit; otherwise that connection has no keep-alive. The flags trail the receive buffer
 * size (written as 0, "not told", where the size is not told), so that an older peer ignores them
 * as it ignores any trailing byte; RDMA CM's zero padding reads as no flags. Where there is no
 * room for them (a connect that exposes a region on rpma fills 54 of 56 bytes) they are left out
 * and the peer does not probe this side; this side's own keep-alive is unaffected.
 *
 * <p>Version 4 is sent only by a client that has credentials to present, so that a hello without
 * them stays readable by a peer that knows version 3 only.
 *
 * <p><b>Refusal.</b> A server that refuses an authenticated client for a reason it wants the
 * client to read sends a refusal instead of a hello ({@link #encodeRefusal}):
 * {@code 'C' 'X' u8 length, reason (UTF-8)}: as the private data of its reject where the
 * transport carries that to the client (fabric, tcp and verbs: {@code fi_reject(3)}), else of an accept it
 * ends at once (rpma: librpma's reject carries none). The client's decoder turns it into a
 * {@link Refused} exception naming the reason. Nothing of the server's is registered for such a
 * client.
 *
 * <p>The receive buffer size trails the version 3 hello, so that a peer that does not know it
 * ignores it as the trailing bytes it always ignored. Up to 32,767 bytes it is a u16; above, a
 * u32 with its top bit set. Where the private data has no room for it (a connect that exposes a
 * region on rpma fills 54 of 56 bytes: room for the u16 only) it is left out, and the peer
 * checks nothing. 0, which is what the zero padding of an older peer's hello reads, is "not
 * told".</p>
 *
 * <p>Versions 1 (no handshake) and 2 (no control words) still decode. Parsed with bounds checks,
 * the magic first: anything that is not a hello (nothing at all, zero padding, a foreign peer's
 * format) and malformed bytes are an {@link IllegalArgumentException}, never a crash and never
 * "no regions". Trailing bytes are ignored, because transports pass private data verbatim and
 * RDMA CM pads it ({@code rdma_get_cm_event(3)}).
 *
 * <p>Size: the transport's private-data limits bound it. On rpma (56 bytes in a connect, 196 in
 * an accept) one region costs 2 + 24 bytes, the peer configuration 1 + 1 and the control words'
 * raw descriptor 1 + 21: a connect carries one exposed region (54 bytes), an accept six.
 *
 * @param regions the exposed regions' descriptors, in order
 * @param handshake the transport's handshake bytes, possibly empty
 * @param control the raw descriptor of the control words, or empty when the side has none
 * @param parameters the connection's own parameters, or {@code null} when not told
 */
public record PeerHello(List<byte[]> regions, byte[] handshake, byte[] control, int receiveBufferSize,
                        byte[] credentials, boolean controlReadable, byte[] parameters) {
    private static final ApiAccess API = ApiAccess.get();

    private static final byte M0 = 'C';
    private static final byte M1 = 'Q';
    /** Regions only (before the handshake existed). */
    public static final byte V1 = 1;
    /** Regions, then the transport's handshake. */
    public static final byte V2 = 2;
    /** Regions, the transport's handshake, then the control words. */
    public static final byte V3 = 3;
    /** Version 3, then the client's credentials. */
    public static final byte V4 = 4;
    private static final int HEADER = 4;
    /** Flag: the control words may be read remotely (the keep-alive's probe). */
    public static final int CONTROL_READABLE = 0x01;
    /** Flag: the connection's parameters follow the flags (see the class comment). */
    public static final int CONNECTION_PARAMETERS = 0x02;
    /** The second magic byte of a refusal ({@link #encodeRefusal}). */
    private static final byte REFUSED = 'X';
    /** The bytes of a refusal with an empty reason: the smallest private data that carries one. */
    public static final int MIN_REFUSAL = 3;
    /** The longest reason a refusal carries, in bytes; a longer one is cut. */
    private static final int MAX_REASON = 200;

    /** Copies the list; the arrays are owned by the record from here on. */
    public PeerHello {
        regions = List.copyOf(regions);
        if (handshake == null || control == null || credentials == null) {
            throw new IllegalArgumentException("handshake, control descriptor or credentials is null");
        }
        if (receiveBufferSize < 0) {
            throw new IllegalArgumentException("receive buffer size " + receiveBufferSize + " is negative");
        }
        if (parameters != null && parameters.length > 255) {
            throw new IllegalArgumentException("connection parameters of " + parameters.length + " bytes exceed 255");
        }
    }

    /** A hello without connection parameters (null: not told). */
    public PeerHello(List<byte[]> regions, byte[] handshake, byte[] control, int receiveBufferSize,
                     byte[] credentials, boolean controlReadable) {
        this(regions, handshake, control, receiveBufferSize, credentials, controlReadable, null);
    }

    /** A hello whose control words (if any) are remotely readable, as this version registers them. */
    public PeerHello(List<byte[]> regions, byte[] handshake, byte[] control, int receiveBufferSize,
                     byte[] credentials) {
        this(regions, handshake, control, receiveBufferSize, credentials, true);
    }

    /** A hello without credentials. */
    public PeerHello(List<byte[]> regions, byte[] handshake, byte[] control, int receiveBufferSize) {
        this(regions, handshake, control, receiveBufferSize, new byte[0]);
    }

    /** A hello that does not tell its receive buffer size. */
    public PeerHello(List<byte[]> regions, byte[] handshake, byte[] control) {
        this(regions, handshake, control, 0);
    }

    /** {@return the bytes the trailer takes for a receive buffer size (see the class comment)} */
    private static int bufferSizeBytes(int size) {
        return size <= 0x7FFF ? 2 : 4;
    }

    /**
     * Encodes this side's hello, as version 3, or 4 with credentials; no regions, no handshake,
     * no control words and no credentials encode to nothing.
     *
     * @param max the transport's private-data limit for this direction
     * @return the bytes
     * @throws IllegalArgumentException when they do not fit {@code max} or a part is too large
     */
    public byte[] encode(int max) {
        if (regions.size() > 255) {
            throw new IllegalArgumentException(regions.size() + " exposed regions exceed the maximum 255");
        }
        if (handshake.length > 255 || control.length > 255) {
            throw new IllegalArgumentException("transport handshake of " + handshake.length + " bytes or control"
                    + " descriptor of " + control.length + " bytes exceeds 255");
        }
        if (credentials.length > 255) {
            throw new IllegalArgumentException("credentials of " + credentials.length + " bytes exceed 255");
        }
        if (regions.isEmpty() && handshake.length == 0 && control.length == 0 && credentials.length == 0
                && (parameters == null || parameters.length == 0)) {
            return new byte[0];
        }
        int size = HEADER + 1 + handshake.length + 1 + control.length
                + (credentials.length > 0 ? 1 + credentials.length : 0);
        for (byte[] d : regions) {
            if (d.length > 0xFFFF) {
                throw new IllegalArgumentException("region descriptor of " + d.length + " bytes exceeds 65535");
            }
            size += 2 + d.length;
        }
        if (size > max) {
            throw new IllegalArgumentException("the descriptors of " + regions.size() + " exposed regions, the "
                    + handshake.length + "-byte transport handshake, the " + control.length + "-byte control"
                    + " descriptor and " + credentials.length + " bytes of credentials need " + size
                    + " bytes of private data, above the transport's maximum " + max
                    + ": expose fewer regions" + (credentials.length > 0 ? " or send shorter credentials" : ""));
        }
        int buf = bufferSizeBytes(receiveBufferSize);
        boolean readable = control.length > 0 && controlReadable;
        boolean params = parametersFit(size, max);
        boolean flags = (readable || params) && size + buf + 1 <= max;
        int trailer = flags ? buf + 1 + (params ? 1 + parameters.length : 0)
                : receiveBufferSize > 0 && size + buf <= max ? buf : 0;
        ByteBuffer b = ByteBuffer.allocate(size + trailer);
        b.put(M0).put(M1).put(credentials.length > 0 ? V4 : V3).put((byte) regions.size());
        for (byte[] d : regions) {
            b.putShort((short) d.length).put(d);
        }
        b.put((byte) handshake.length).put(handshake);
        b.put((byte) control.length).put(control);
        if (credentials.length > 0) {
            b.put((byte) credentials.length).put(credentials);
        }
        if (trailer > 0 && buf == 2) {
            b.putShort((short) receiveBufferSize);
        } else if (trailer > 0) {
            b.putInt(0x8000_0000 | receiveBufferSize);
        }
        if (flags) {
            b.put((byte) ((readable ? CONTROL_READABLE : 0) | (params ? CONNECTION_PARAMETERS : 0)));
        }
        if (params) {
            b.put((byte) parameters.length).put(parameters);
        }
        return b.array();
    }

    /** {@return the size of what precedes the trailer (see the class comment)} */
    private int coreSize() {
        int size = HEADER + 1 + handshake.length + 1 + control.length
                + (credentials.length > 0 ? 1 + credentials.length : 0);
        for (byte[] d : regions) {
            size += 2 + d.length;
        }
        return size;
    }

    /** {@return whether non-empty parameters fit behind a core of {@code size} bytes within {@code max}} */
    private boolean parametersFit(int size, int max) {
        return parameters != null && parameters.length > 0
                && size + bufferSizeBytes(receiveBufferSize) + 1 + 1 + parameters.length <= max;
    }

    /**
     * {@return whether {@link #encode(int)} carries the connection's parameters within {@code max}:
     * only then may the connection share a queue that needs its peer to know them}
     */
    public boolean carriesParameters(int max) {
        return parametersFit(coreSize(), max);
    }

    /**
     * This side's hello for a transport: the descriptors, the transport's handshake and the
     * control words, encoded.
     *
     * @param t the transport
     * @param descriptors the exposed regions' descriptors
     * @param control this side's control words
     * @param receiveBufferSize this side's receive buffer size, told to the peer where it fits
     * @param max the private-data limit ({@link Transport#maxConnectPrivateData()} or
     *     {@link Transport#maxAcceptPrivateData()})
     * @return the private data
     */
    public static byte[] encode(Transport t, List<byte[]> descriptors, PeerControl control, int receiveBufferSize,
                         int max) {
        return encode(t, descriptors, control, receiveBufferSize, new byte[0], max);
    }

    /**
     * This side's hello with credentials for the server's authenticator (a client's).
     *
     * @param credentials the bytes, empty for none
     * @see #encode(Transport, List, PeerControl, int, int)
     */
    public static byte[] encode(Transport t, List<byte[]> descriptors, PeerControl control, int receiveBufferSize,
                                byte[] credentials, int max) {
        return of(t, null, descriptors, control, receiveBufferSize, credentials).encode(max);
    }

    /**
     * This side's hello with the connection's own parameters ({@link Transport#connectWithHello}),
     * not yet encoded.
     *
     * @param parameters the connection's parameters, or {@code null} (none)
     * @see #encode(Transport, List, PeerControl, int, byte[], int)
     */
    public static PeerHello of(Transport t, byte[] parameters, List<byte[]> descriptors, PeerControl control,
                               int receiveBufferSize, byte[] credentials) {
        return new PeerHello(descriptors, t.handshake(), control.descriptor(), receiveBufferSize, credentials, true,
                parameters);
    }

    /**
     * A server's refusal of a client, in place of its hello (see the class comment).
     *
     * @param reason why, for the client's error; cut to 200 bytes of UTF-8
     * @param max the transport's accept private-data limit
     * @return the bytes
     */
    public static byte[] encodeRefusal(String reason, int max) {
        byte[] r = reason.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        int len = Math.min(r.length, Math.min(MAX_REASON, max - 3));
        // Cut at a character's start, so that the client's strict decoding reads what was kept.
        while (len > 0 && len < r.length && (r[len] & 0xC0) == 0x80) {
            len--;
        }
        ByteBuffer b = ByteBuffer.allocate(3 + len);
        b.put(M0).put(REFUSED).put((byte) len).put(r, 0, len);
        return b.array();
    }

    /** A server refused this client: its reason, as the server gave it. */
    public static final class Refused extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        private final String reason;

        Refused(String reason) {
            super("refused by the server: " + reason);
            this.reason = reason;
        }

        /** {@return the server's reason} */
        public String reason() {
            return reason;
        }
    }

    /**
     * Decodes a peer's hello (version 1 to 4; a refusal is a {@link Refused}). The magic is checked before anything else is
     * read: private data that does not start with it is not a cqflux hello and fails, whatever
     * it holds, so that a peer not written with cqflux (librpma's {@code struct common_data}, a
     * greeting string) or one that sent nothing is never taken for a peer that exposes nothing.
     * One older format is recognised by its magic too: the hello behind the 1-byte length frame
     * that the rpma transport used to add ({@code n 'C' 'Q' version ...}, {@code n} at most 55).
     *
     * @param data the peer's private data as the transport delivered it (possibly zero-padded)
     * @return the hello
     * @throws IllegalArgumentException on data that is not a cqflux hello or is malformed, naming
     *     the offset and the bound
     */
    public static PeerHello decode(byte[] data) {
        List<byte[]> out = new ArrayList<>();
        if (data == null || data.length == 0 || isZero(data)) {
            throw new IllegalArgumentException("the peer sent no cqflux hello (" + (data == null ? 0 : data.length)
                    + " bytes of private data, all zero): it is not a cqflux peer; to talk to it, connect or bind"
                    + " with raw private data (ConnectOptions.rawPrivateData, AcceptOptions.rawPrivateData)");
        }
        if (data.length >= HEADER + 1 && data[0] != M0 && data[1] == M0 && data[2] == M1
                && (data[0] & 0xFF) >= HEADER && (data[0] & 0xFF) <= data.length - 1) {
            // The previous rpma wire format: a length byte, then the hello.
            data = java.util.Arrays.copyOfRange(data, 1, 1 + (data[0] & 0xFF));
        }
        if (data.length >= 3 && data[0] == M0 && data[1] == REFUSED) {
            // Only a refusal's exact framing counts as one: its length within the data, nothing
            // after it but a transport's zero padding (rdma_get_cm_event(3)), and UTF-8 text.
            // Anything else (a foreign peer's bytes that happen to start so) is no hello at all.
            int len = data[2] & 0xFF;
            boolean framed = 3 + len <= data.length;
            for (int i = 3 + len; framed && i < data.length; i++) {
                framed = data[i] == 0;
            }
            String reason = null;
            if (framed) {
                try {
                    reason = java.nio.charset.StandardCharsets.UTF_8.newDecoder()
                            .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                            .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
                            .decode(ByteBuffer.wrap(data, 3, len)).toString();
                } catch (java.nio.charset.CharacterCodingException e) {
                    reason = null;
                }
            }
            if (reason == null) {
                throw new IllegalArgumentException("peer private data of " + data.length + " bytes starts as a refusal"
                        + " (0x4358 \"CX\") but is not one: its length byte says " + len + " bytes of UTF-8 text");
            }
            throw new Refused(reason);
        }
        if (data.length < HEADER || data[0] != M0 || data[1] != M1) {
            throw new IllegalArgumentException("peer private data of " + data.length + " bytes is not a cqflux hello"
                    + " (bad magic 0x" + hex(data, 0) + hex(data, 1) + " at offset 0, expected 0x4351 \"CQ\"): it is"
                    + " not a cqflux peer; to talk to it, connect or bind with raw private data"
                    + " (ConnectOptions.rawPrivateData, AcceptOptions.rawPrivateData)");
        }
        byte version = data[2];
        if (version != V1 && version != V2 && version != V3 && version != V4) {
            throw new IllegalArgumentException("hello version " + version + " is not one of the supported "
                    + V1 + ", " + V2 + ", " + V3 + " and " + V4);
        }
        int count = data[3] & 0xFF;
        int pos = HEADER;
        for (int i = 0; i < count; i++) {
            if (pos + 2 > data.length) {
                throw new IllegalArgumentException("hello truncated at region " + i + " of " + count
                        + " (offset " + pos + " of " + data.length + ")");
            }
            int len = ((data[pos] & 0xFF) << 8) | (data[pos + 1] & 0xFF);
            pos += 2;
            if (len > data.length - pos) {
                throw new IllegalArgumentException("region " + i + " descriptor length " + len + " exceeds the "
                        + (data.length - pos) + " bytes left");
            }
            byte[] d = new byte[len];
            System.arraycopy(data, pos, d, 0, len);
            out.add(d);
            pos += len;
        }
        if (version == V1) {
            return new PeerHello(out, new byte[0], new byte[0]);
        }
        if (pos >= data.length) {
            throw new IllegalArgumentException("hello truncated before the transport handshake's length (offset "
                    + pos + " of " + data.length + ")");
        }
        int len = data[pos] & 0xFF;
        pos++;
        if (len > data.length - pos) {
            throw new IllegalArgumentException("transport handshake length " + len + " exceeds the "
                    + (data.length - pos) + " bytes left");
        }
        byte[] h = new byte[len];
        System.arraycopy(data, pos, h, 0, len);
        pos += len;
        if (version == V2) {
            return new PeerHello(out, h, new byte[0]);
        }
        if (pos >= data.length) {
            throw new IllegalArgumentException("hello truncated before the control descriptor's length (offset "
                    + pos + " of " + data.length + ")");
        }
        int clen = data[pos] & 0xFF;
        pos++;
        if (clen > data.length - pos) {
            throw new IllegalArgumentException("control descriptor length " + clen + " exceeds the "
                    + (data.length - pos) + " bytes left");
        }
        byte[] c = new byte[clen];
        System.arraycopy(data, pos, c, 0, clen);
        pos += clen;
        byte[] cred = new byte[0];
        if (version == V4) {
            cred = lengthPrefixed(data, pos, "credentials");
            pos += 1 + cred.length;
        }
        int size = 0;
        int flags = 0;
        byte[] params = null;
        if (pos + 2 <= data.length) {
            if ((data[pos] & 0x80) == 0) {
                size = ((data[pos] & 0xFF) << 8) | (data[pos + 1] & 0xFF);
                pos += 2;
            } else if (pos + 4 <= data.length) {
                size = ByteBuffer.wrap(data, pos, 4).getInt() & 0x7FFF_FFFF;
                pos += 4;
            } else {
                pos = data.length;
            }
            if (pos < data.length) {
                flags = data[pos] & 0xFF;
                pos++;
            }
            if ((flags & CONNECTION_PARAMETERS) != 0) {
                params = lengthPrefixed(data, pos, "connection parameters");
            }
        }
        return new PeerHello(out, h, c, size, cred, c.length > 0 && (flags & CONTROL_READABLE) != 0, params);
    }

    /**
     * {@return the bytes of the u8-length-prefixed field at {@code pos}}
     *
     * @throws IllegalArgumentException when the length or the bytes run past the data, naming the
     *     field, the offset and the bound
     */
    private static byte[] lengthPrefixed(byte[] data, int pos, String what) {
        if (pos >= data.length) {
            throw new IllegalArgumentException("hello truncated before the " + what + "' length (offset " + pos
                    + " of " + data.length + ")");
        }
        int len = data[pos] & 0xFF;
        if (len > data.length - pos - 1) {
            throw new IllegalArgumentException(what + " length " + len + " exceeds the " + (data.length - pos - 1)
                    + " bytes left");
        }
        return java.util.Arrays.copyOfRange(data, pos + 1, pos + 1 + len);
    }

    private static boolean isZero(byte[] data) {
        for (byte x : data) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    private static String hex(byte[] d, int i) {
        return i < d.length ? String.format("%02x", d[i] & 0xFF) : "";
    }

    /**
     * Takes in the peer's hello on an established connection: decodes its private data, applies
     * its handshake to the connection ({@link Connection#applyPeerHandshake(byte[])}, before
     * anything is posted), links its control words and parses its regions. Loop thread.
     *
     * @param t the transport
     * @param c the connection, just established
     * @param control this side's control words, linked to the peer's here
     * @return the peer's regions, in the order it exposed them, and its receive buffer size
     * @throws IllegalArgumentException when the private data, the handshake or a descriptor is
     *     malformed; regions parsed before the failure are closed again
     */
    public static Accepted accept(Transport t, Connection c, PeerControl control) {
        PeerHello hello = decode(c.peerPrivateData());
        c.applyPeerHandshake(hello.handshake());
        c.applyPeerParameters(hello.parameters() == null ? new byte[0] : hello.parameters());
        List<PeerRegion> peers = new ArrayList<>();
        try {
            if (hello.control().length > 0) {
                // Read access only where the peer said its words allow it (see Flags above).
                control.peer(t.remoteRegion(hello.control(), hello.controlReadable()
                        ? PeerControl.PEER_ACCESS : PeerControl.PEER_WRITE_ONLY), hello.controlReadable());
            }
            for (byte[] d : hello.regions()) {
                RemoteRegion r = t.remoteRegion(d);
                peers.add(API.newPeerRegion(r, peers.size()));
            }
        } catch (RuntimeException e) {
            for (PeerRegion p : peers) {
                try {
                    API.nativeRegion(p).close();
                } catch (RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
        return new Accepted(List.copyOf(peers), hello.receiveBufferSize());
    }

    /**
     * What {@link #accept} took in from the peer's hello.
     *
     * @param regions the peer's regions, in the order it exposed them
     * @param receiveBufferSize the peer's receive buffer size; 0 where it did not tell it
     */
    public record Accepted(List<PeerRegion> regions, int receiveBufferSize) {
    }
}
