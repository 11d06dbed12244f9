/* The C limit for HTTPS/1.1 GETs: OpenSSL's libssl on a blocking socket, nothing else.
 *
 *   c_https keepalive|full|resumed|download PORT CAFILE PATH N [OUTFILE]
 *
 * keepalive: one connection, N GETs of PATH; full: N connections, one GET each (Connection: close),
 * no session offered; resumed: N connections, each offering the previous connection's session;
 * download: one GET of PATH, the body written to OUTFILE. The server (localhost:PORT) is checked
 * against CAFILE with the host name "localhost", as every client of the benchmark does.
 * Prints RESULT rate=requests/s (or mb_s=MB/s for download) n= resumed=.
 */
#include "common.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

static int tcp_connect(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) die("connect: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static SSL *tls_connect(SSL_CTX *ctx, int port, SSL_SESSION *session) {
    SSL *ssl = SSL_new(ctx);
    SSL_set_fd(ssl, tcp_connect(port));
    SSL_set_tlsext_host_name(ssl, "localhost");
    SSL_set1_host(ssl, "localhost");
    if (session) SSL_set_session(ssl, session);
    if (SSL_connect(ssl) != 1) die("handshake failed");
    return ssl;
}

static void tls_close(SSL *ssl) {
    int fd = SSL_get_fd(ssl);
    SSL_shutdown(ssl);
    SSL_free(ssl);
    close(fd);
}

/* Sends one GET and reads the response (Content-Length bodies); body bytes go to out_fd when >= 0.
 * Returns the body length. */
static long long get(SSL *ssl, const char *path, int close_after, int out_fd) {
    char request[512];
    int len = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: localhost\r\nUser-Agent: c-limit\r\nAccept: */*\r\n%s\r\n", path,
                       close_after ? "Connection: close\r\n" : "");
    if (SSL_write(ssl, request, len) != len) die("write failed");
    static char buf[65536];
    size_t have = 0;
    char *head_end = NULL;
    while (!head_end) {
        int n = SSL_read(ssl, buf + have, (int)(sizeof buf - have - 1));
        if (n <= 0) die("read failed before the response head");
        have += (size_t)n;
        buf[have] = 0;
        head_end = strstr(buf, "\r\n\r\n");
    }
    if (strncmp(buf, "HTTP/1.1 200", 12) != 0) die("status: %.40s", buf);
    char *cl = strcasestr(buf, "\r\ncontent-length:");
    if (!cl || cl > head_end) die("no Content-Length");
    long long body = atoll(cl + 17), got = (long long)(buf + have - (head_end + 4));
    if (out_fd >= 0 && got > 0 && write(out_fd, head_end + 4, (size_t)got) != got) die("write");
    while (got < body) {
        int n = SSL_read(ssl, buf, (int)sizeof buf);
        if (n <= 0) die("read failed in the body");
        if (out_fd >= 0 && write(out_fd, buf, (size_t)n) != n) die("write");
        got += n;
    }
    return body;
}

int main(int argc, char **argv) {
    if (argc < 6) die("usage: c_https keepalive|full|resumed|download PORT CAFILE PATH N [OUTFILE]");
    const char *mode = argv[1], *path = argv[4];
    int port = atoi(argv[2]), n = atoi(argv[5]);
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (SSL_CTX_load_verify_locations(ctx, argv[3], NULL) != 1) die("CA file");
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    int resumed = 0;
    double start = now_seconds(), elapsed;
    if (strcmp(mode, "keepalive") == 0) {
        SSL *ssl = tls_connect(ctx, port, NULL);
        for (int i = 0; i < n; i++) get(ssl, path, 0, -1);
        tls_close(ssl);
        elapsed = now_seconds() - start;
        result_line("rate=%.1f n=%d seconds=%.4f", n / elapsed, n, elapsed);
    } else if (strcmp(mode, "full") == 0 || strcmp(mode, "resumed") == 0) {
        int resume = strcmp(mode, "resumed") == 0;
        SSL_SESSION *session = NULL;
        for (int i = 0; i < n; i++) {
            SSL *ssl = tls_connect(ctx, port, resume ? session : NULL);
            resumed += SSL_session_reused(ssl);
            get(ssl, path, 1, -1);
            if (resume) {
                /* TLS 1.3 tickets arrive after the handshake: take the session after the response. */
                SSL_SESSION_free(session);
                session = SSL_get1_session(ssl);
            }
            tls_close(ssl);
        }
        elapsed = now_seconds() - start;
        result_line("rate=%.1f n=%d resumed=%d seconds=%.4f", n / elapsed, n, resumed, elapsed);
    } else if (strcmp(mode, "download") == 0) {
        if (argc < 7) die("download needs OUTFILE");
        int fd = open(argv[6], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) die("cannot create %s", argv[6]);
        SSL *ssl = tls_connect(ctx, port, NULL);
        long long bytes = get(ssl, path, 1, fd);
        tls_close(ssl);
        close(fd);
        elapsed = now_seconds() - start;
        result_line("mb_s=%.1f bytes=%lld seconds=%.4f", bytes / elapsed / 1e6, bytes, elapsed);
    } else {
        die("unknown mode %s", mode);
    }
    SSL_CTX_free(ctx);
    return 0;
}
