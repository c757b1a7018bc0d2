package io.cqflux.samples.webflux;

import static io.cqflux.samples.webflux.Services.atPeer;
import static io.cqflux.samples.webflux.Services.get;
import static io.cqflux.samples.webflux.Services.port;
import static io.cqflux.samples.webflux.Services.post;
import static io.cqflux.samples.webflux.Services.send;
import static io.cqflux.samples.webflux.Services.start;
import static io.cqflux.samples.webflux.Services.uri;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cqflux.spring.boot.CqfluxPropertyException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * What a client (or an operator) can get wrong, against the whole service over the real
 * fabric/tcp transport on loopback: every refusal is a 4xx whose body names the value and the
 * bound, comes before anything is read or posted, and nothing unbounded is buffered; records come
 * back as the opaque bytes they are; a configuration that cannot work is refused at start.
 * Most tests share one service with 1024 slots of 1024 bytes (a record holds 1000 bytes).
 */
class RecordsServiceHostileInputTest {
    private static ConfigurableApplicationContext shared;

    /**
     * The default service, started once and shared by the tests that only send requests. Its
     * {@code records.timeout} is raised from 2 s: these tests check what an input gets, not the
     * deadline ({@code TimeoutTest} does), and a write may wait longer for a CPU on a loaded host.
     * It stays below the client's own request timeout ({@code Services.send}), so that the
     * service's deadline answers first.
     */
    static synchronized ConfigurableApplicationContext shared() {
        if (shared == null) {
            shared = start("--records.timeout=15s");
        }
        return shared;
    }

    /** Closes the shared service, so that a test can start one of its own (one at a time). */
    static synchronized void closeShared() {
        if (shared != null) {
            ConfigurableApplicationContext c = shared;
            shared = null;
            c.close();
        }
    }

    @AfterAll
    static void down() {
        closeShared();
    }

    // ------------------------------------------------------------------ ids

    @Test
    void idOutsideTheStorage_400BodyNamesTheIdAndTheBound() throws Exception {
        HttpResponse<String> r = post(shared(), "/records/1024", new byte[] { 1 });
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(r.body()).as("the 400's body should say which id and which bound")
                .contains("record id 1024 is outside [0, 1024)");
    }

    @Test
    void malformedIds_are400_neverA5xx_andNothingIsWritten() throws Exception {
        StoragePeer storage = shared().getBean(StoragePeer.class);
        long before = storage.verify().stored();
        for (String id : List.of("abc", "-1", "99999999999999999999", "1.5", "%20", "-9223372036854775808", "+5")) {
            HttpResponse<String> w = post(shared(), "/records/" + id, new byte[] { 1 });
            assertThat(w.statusCode()).as("POST /records/%s: %s", id, w.body()).isEqualTo(400);
            assertThat(w.body()).as("POST /records/%s", id).contains("[0, 1024)");
            HttpResponse<byte[]> g = get(shared(), "/records/" + id);
            assertThat(g.statusCode()).as("GET /records/%s", id).isEqualTo(400);
            assertThat(new String(g.body(), StandardCharsets.UTF_8)).doesNotContain("at io.cqflux", "Exception");
        }
        assertThat(storage.verify().stored()).isEqualTo(before);
    }

    /** {@code /records/0x10} is not an id of the API: Spring's number conversion would decode it as hex, record 16. */
    @Test
    void hexId_isRefused_notAliasedToAnotherRecord() throws Exception {
        HttpResponse<String> r = post(shared(), "/records/0x10", "via hex".getBytes(StandardCharsets.UTF_8));
        assertThat(r.statusCode()).as("POST /records/0x10 answered Location %s", r.headers().firstValue("Location"))
                .isEqualTo(400);
        assertThat(r.body()).contains("'0x10' is not a decimal number in [0, 1024)");
        assertThat(get(shared(), "/records/16").statusCode()).isEqualTo(404);
        assertThat(get(shared(), "/baseline/0x10").statusCode()).isEqualTo(400);
    }

    /** {@code /records/017} is another spelling of record 17: refused, so that each record has one URI. */
    @Test
    void idWithALeadingZero_isRefused_notAliasedToAnotherRecord() throws Exception {
        HttpResponse<String> r = post(shared(), "/records/017", "via a leading zero".getBytes(StandardCharsets.UTF_8));
        assertThat(r.statusCode()).as("POST /records/017 answered Location %s", r.headers().firstValue("Location"))
                .isEqualTo(400);
        assertThat(r.body()).contains("'017' has a leading zero; ids in [0, 1024) are written without");
        assertThat(get(shared(), "/records/17").statusCode()).isEqualTo(404);
        assertThat(get(shared(), "/baseline/00").statusCode()).isEqualTo(400);
        assertThat(get(shared(), "/baseline/0").statusCode()).isEqualTo(200);
    }

    /** An error's detail echoes the request's id: it is JSON whatever the reader accepts, never a page. */
    @Test
    void refusalsAreProblemJson_evenForABrowser() throws Exception {
        HttpResponse<String> r = send(HttpRequest.newBuilder(uri(shared(), "/records/%3Cscript%3E"))
                .header("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8").GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(r.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
        assertThat(r.body()).contains("<script>' is not a decimal number");
    }

    // ------------------------------------------------------------------ bodies

    @Test
    void recordLargerThanASlot_413BodyNamesTheBound() throws Exception {
        HttpResponse<String> r = post(shared(), "/records/3", new byte[1001]);
        assertThat(r.statusCode()).isEqualTo(413);
        assertThat(r.body()).as("the 413's body should name the size and the bound").contains("1000")
                .contains("1001");
        assertThat(post(shared(), "/records/3", new byte[1000]).statusCode()).isEqualTo(201);
    }

    @Test
    void emptyBodyAndOddContentTypes_areStoredAsGivenAndReadBack() throws Exception {
        assertThat(post(shared(), "/records/20", new byte[0]).statusCode()).isEqualTo(201);
        HttpResponse<byte[]> g = get(shared(), "/records/20");
        assertThat(g.statusCode()).isEqualTo(200);
        assertThat(g.body()).isEmpty();
        HttpResponse<String> j = send(HttpRequest.newBuilder(uri(shared(), "/records/21"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{not json"))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(j.statusCode()).isEqualTo(201);
        assertThat(get(shared(), "/records/21").body()).isEqualTo("{not json".getBytes(StandardCharsets.UTF_8));
    }

    /**
     * A record is opaque bytes, stored whatever the request's content type, and served back as
     * such: were its type whatever the reader accepts, a browser (Accept: text/html) would get a
     * stored {@code <script>} as an HTML page of the service's origin.
     */
    @Test
    void recordsAreServedAsOctetStream_notAsWhateverTheReaderAccepts() throws Exception {
        byte[] html = "<script>alert(document.cookie)</script>".getBytes(StandardCharsets.UTF_8);
        assertThat(post(shared(), "/records/40", html).statusCode()).isEqualTo(201);
        for (String accept : List.of("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "*/*",
                "text/html")) {
            for (String path : List.of("/records/40", "/baseline/40")) {
                HttpResponse<byte[]> r = send(HttpRequest.newBuilder(uri(shared(), path))
                        .header("Accept", accept).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
                assertThat(r.statusCode()).as("GET %s, Accept: %s", path, accept).isEqualTo(200);
                assertThat(r.headers().firstValue("Content-Type")).as("GET %s, Accept: %s", path, accept)
                        .hasValue("application/octet-stream");
                assertThat(r.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
            }
        }
        assertThat(get(shared(), "/records/40").body()).isEqualTo(html);
    }

    /**
     * A client announces a 1 GiB body and sends 1 KiB of it. The bound (1000 bytes) is known from
     * the headers: the 413 comes at once, not after the service has buffered the body it asked for.
     */
    @Test
    void hugeContentLength_isRefusedFromTheHeaders_notBufferedFirst() throws Exception {
        String answer = rawPost("/records/30", "Content-Length: 1073741824\r\n", new byte[1024]);
        assertThat(answer).startsWith("HTTP/1.1 413").contains("1073741824").contains("1000");
    }

    /** The id is checked before the body is read: a bad id with a huge body is a 400 at once. */
    @Test
    void badIdWithAHugeBody_is400BeforeTheBodyIsRead() throws Exception {
        for (String path : List.of("/records/0x10", "/records/5000")) {
            String answer = rawPost(path, "Content-Length: 1073741824\r\n", new byte[1024]);
            assertThat(answer).as(path).startsWith("HTTP/1.1 400");
        }
    }

    /** Same, but 32 MiB really sent (chunked, no Content-Length): cut off past the bound, not joined in the heap. */
    @Test
    void chunkedBodyFarBeyondASlot_isCutOffEarly_notJoinedInTheHeap() throws Exception {
        try (Socket s = new Socket("127.0.0.1", port(shared()))) {
            s.setSoTimeout(5_000);
            // SO_TIMEOUT bounds reads only: a server that neither reads nor closes would block a
            // write here for ever once the loopback buffers are full. A watchdog closes the socket.
            java.util.concurrent.atomic.AtomicBoolean stalled = new java.util.concurrent.atomic.AtomicBoolean();
            Thread watchdog = Thread.ofVirtual().start(() -> {
                try {
                    Thread.sleep(30_000);
                    stalled.set(true);
                    s.close();
                } catch (InterruptedException | IOException done) {
                    // the test ended first
                }
            });
            try {
                sendChunkedFarBeyondASlot(s);
            } finally {
                watchdog.interrupt();
            }
            assertThat(stalled.get()).as("the service neither read nor closed the connection for 30 s").isFalse();
        }
        assertThat(get(shared(), "/records/31").statusCode()).isEqualTo(404);
    }

    private static void sendChunkedFarBeyondASlot(Socket s) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(("POST /records/31 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        byte[] chunk = new byte[64 * 1024];
        int sent = 0;
        boolean answeredEarly = false;
        try {
            for (; sent < 512; sent++) {
                out.write((Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(chunk);
                out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                if (s.getInputStream().available() > 0) {
                    answeredEarly = true;
                    break;
                }
            }
            out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
        } catch (IOException closedByServer) {
            answeredEarly = true;
        }
        assertThat(answeredEarly).as("the service refused the body before %d KiB of it (a record holds 1000 bytes)",
                sent * 64).isTrue();
        assertThat(answer(s.getInputStream())).startsWith("HTTP/1.1 413").contains("at most 1000 bytes");
    }

    /** POSTs {@code body} with these headers over a socket of its own; {@return the answer, status line first} */
    private static String rawPost(String path, String headers, byte[] body) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port(shared()))) {
            s.setSoTimeout(5_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n" + headers
                    + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            try {
                return answer(s.getInputStream());
            } catch (SocketTimeoutException e) {
                return "no answer within 5 s: the service waits for (and buffers) the whole body";
            }
        }
    }

    /** {@return an HTTP/1.1 answer with a Content-Length: status line, headers and body} */
    private static String answer(InputStream in) throws IOException {
        StringBuilder all = new StringBuilder();
        int length = 0;
        for (String line = line(in); !line.isEmpty(); line = line(in)) {
            all.append(line).append('\n');
            if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        return all.append('\n').append(new String(in.readNBytes(length), StandardCharsets.UTF_8)).toString();
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) != -1 && b != '\n') {
            line.write(b);
        }
        return line.toString(StandardCharsets.US_ASCII).trim();
    }

    // ------------------------------------------------------------------ read-after-write

    @Test
    void every201_meansTheExactBytesAreAtThePeer() throws Exception {
        StoragePeer storage = shared().getBean(StoragePeer.class);
        Random rnd = new Random(42);
        for (int i = 0; i < 200; i++) {
            int id = 100 + i;
            byte[] body = new byte[rnd.nextInt(1001)];
            rnd.nextBytes(body);
            HttpResponse<String> r = post(shared(), "/records/" + id, body);
            assertThat(r.statusCode()).isEqualTo(201);
            // Right after the 201, in the peer's own memory: no read by the service in between.
            assertThat(atPeer(storage.memory(), id, 1024)).as("record %d at the peer", id).isEqualTo(body);
        }
    }

    // ------------------------------------------------------------------ configuration

    /**
     * A {@code GET} reads a whole slot through one registered buffer: a {@code records.slot-size}
     * over {@code cqflux.buffer-pool.buffer-size} (4 KiB in application.properties) would start,
     * take a 201, then answer every GET 500. It is refused at start, naming both; a slot as large
     * as a buffer is served.
     */
    @Test
    void slotSizeAboveTheBufferSize_isRefusedAtStart_andASlotOfABufferIsServed() throws Exception {
        closeShared();
        assertThatThrownBy(() -> start("--records.slot-size=8192")).rootCause()
                .isInstanceOf(CqfluxPropertyException.class)
                .hasMessageContaining("records.slot-size=8192")
                .hasMessageContaining("cqflux.buffer-pool.buffer-size is 4096");
        ConfigurableApplicationContext ctx = start("--records.slot-size=4096");
        try {
            byte[] full = new byte[4096 - RecordFormat.HEADER];
            new Random(7).nextBytes(full);
            assertThat(post(ctx, "/records/1", full).statusCode()).isEqualTo(201);
            HttpResponse<byte[]> g = get(ctx, "/records/1");
            assertThat(g.statusCode()).isEqualTo(200);
            assertThat(g.body()).isEqualTo(full);
            assertThat(post(ctx, "/records/2", new byte[full.length + 1]).statusCode()).isEqualTo(413);
        } finally {
            ctx.close();
        }
    }

    /**
     * The README's remote setup with a StorageMain of fewer slots (256) than the service's
     * {@code records.slots} (65,536): an id the peer's region does not hold is a 400 naming the
     * bound the peer allows, refused before it is posted (not the library's refusal as a 500), and
     * the connection keeps working. The mismatch is logged once, when the peer comes up.
     */
    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void serviceSlotsBeyondThePeersRegion_idOutsideThePeerIs400NamingItsBound(CapturedOutput output) throws Exception {
        closeShared();
        StoragePeer remote = new StoragePeer(new InetSocketAddress(InetAddress.getLoopbackAddress(), FreePort.next()),
                "fabric", 256, 1024);
        remote.start();
        ConfigurableApplicationContext ctx = null;
        try {
            ctx = start("--records.embedded-storage=false", "--records.slots=65536",
                    "--cqflux.peers.store.port=" + remote.address().getPort());
            HttpResponse<String> r = post(ctx, "/records/300", new byte[] { 1 });
            assertThat(r.statusCode()).as("POST /records/300 beyond the peer's 256 slots: %s", r.body()).isEqualTo(400);
            assertThat(r.body()).contains("record id 300 is outside [0, 256)");
            HttpResponse<byte[]> g = get(ctx, "/records/65535");
            assertThat(g.statusCode()).isEqualTo(400);
            assertThat(new String(g.body(), StandardCharsets.UTF_8)).contains("record id 65535 is outside [0, 256)");
            assertThat(remote.verify().stored()).isZero();
            assertThat(post(ctx, "/records/255", new byte[] { 2 }).statusCode()).isEqualTo(201);
            assertThat(post(ctx, "/records/1", new byte[] { 1 }).statusCode()).isEqualTo(201);
            assertThat(get(ctx, "/records/255").body()).isEqualTo(new byte[] { 2 });
            assertThat(output.getOut().split("256 slots of 1024 bytes, fewer than records.slots=65536", -1))
                    .as("the mismatch logged once: %s", output.getOut()).hasSize(2);
        } finally {
            if (ctx != null) {
                ctx.close();
            }
            remote.close();
        }
    }
}
