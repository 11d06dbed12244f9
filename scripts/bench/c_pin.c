/* The C limit for SPKI SHA-256 pins of certificate files.
 *
 *   c_pin walk|x509 LIST [mem]
 *
 * walk: PEM (or DER) → DER walk Certificate → TBSCertificate → SubjectPublicKeyInfo (no X509 parse)
 *       → SHA-256 → base64; x509: d2i_X509 + i2d_X509_PUBKEY → SHA-256 → base64 (what OpenSSL
 *       tools do). One "sha256/B64" line a file on stdout. With "mem", the files are read before
 *       the clock starts, so the rate is the pinning alone; without it, reading is timed too.
 * Prints RESULT rate=pins/s n=.
 */
#include "common.h"
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

/* One DER element header at p (end e): tag, content start, content end. 0 on malformed input. */
static int element(const unsigned char *p, const unsigned char *e, unsigned char *tag, const unsigned char **content, const unsigned char **end) {
    if (e - p < 2) return 0;
    *tag = p[0];
    size_t len = p[1];
    p += 2;
    if (len & 0x80) {
        int count = len & 0x7F;
        if (count < 1 || count > 4 || e - p < count) return 0;
        len = 0;
        for (int i = 0; i < count; i++) len = (len << 8) | *p++;
    }
    if ((size_t)(e - p) < len) return 0;
    *content = p;
    *end = p + len;
    return 1;
}

/* The SPKI element of a DER certificate. */
static int spki_range(const unsigned char *der, size_t len, const unsigned char **start, size_t *spki_len) {
    const unsigned char *e = der + len, *c, *end;
    unsigned char tag;
    if (!element(der, e, &tag, &c, &end) || tag != 0x30) return 0;             /* Certificate */
    if (!element(c, end, &tag, &c, &end) || tag != 0x30) return 0;             /* TBSCertificate */
    const unsigned char *cursor = c, *limit = end, *ic, *ie;
    if (!element(cursor, limit, &tag, &ic, &ie)) return 0;
    if (tag == 0xA0) cursor = ie;                                              /* [0] version */
    for (int i = 0; i < 5; i++) {                                              /* serial … subject */
        if (!element(cursor, limit, &tag, &ic, &ie)) return 0;
        cursor = ie;
    }
    if (!element(cursor, limit, &tag, &ic, &ie) || tag != 0x30) return 0;
    *start = cursor;
    *spki_len = (size_t)(ie - cursor);
    return 1;
}

/* PEM → DER: the base64 between the BEGIN and END lines. Returns the DER length. */
static int pem_decode(const unsigned char *pem, size_t len, unsigned char *out) {
    const char *begin = memmem(pem, len, "-----BEGIN CERTIFICATE-----", 27);
    if (!begin) return -1;
    const char *body = memchr(begin, '\n', len - ((const unsigned char *)begin - pem));
    if (!body) return -1;
    body++;
    const char *endm = memmem(body, len - ((const unsigned char *)body - pem), "-----END", 8);
    if (!endm) return -1;
    EVP_ENCODE_CTX *ctx = EVP_ENCODE_CTX_new();
    int n = 0, total = 0;
    EVP_DecodeInit(ctx);
    if (EVP_DecodeUpdate(ctx, out, &n, (const unsigned char *)body, (int)(endm - body)) < 0) return -1;
    total = n;
    if (EVP_DecodeFinal(ctx, out + total, &n) < 0) return -1;
    total += n;
    EVP_ENCODE_CTX_free(ctx);
    return total;
}

static void pin(const unsigned char *bytes, size_t len, int walk, char *line) {
    unsigned char der[16384], digest[32];
    const unsigned char *d = bytes;
    int der_len = (int)len;
    if (len > 0 && bytes[0] != 0x30) {
        der_len = pem_decode(bytes, len, der);
        if (der_len <= 0) die("not PEM");
        d = der;
    }
    if (walk) {
        const unsigned char *spki;
        size_t spki_len;
        if (!spki_range(d, (size_t)der_len, &spki, &spki_len)) die("not a certificate");
        SHA256(spki, spki_len, digest);
    } else {
        const unsigned char *p = d;
        X509 *x = d2i_X509(NULL, &p, der_len);
        if (!x) die("d2i_X509");
        unsigned char *spki = NULL;
        int spki_len = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(x), &spki);
        SHA256(spki, (size_t)spki_len, digest);
        OPENSSL_free(spki);
        X509_free(x);
    }
    memcpy(line, "sha256/", 7);
    int b = EVP_EncodeBlock((unsigned char *)line + 7, digest, 32);
    line[7 + b] = '\n';
    line[8 + b] = 0;
}

int main(int argc, char **argv) {
    if (argc < 3) die("usage: c_pin walk|x509 LIST [mem]");
    int walk = strcmp(argv[1], "walk") == 0, n;
    int mem = argc > 3 && strcmp(argv[3], "mem") == 0;
    char **paths = read_list(argv[2], &n);
    unsigned char **files = NULL;
    size_t *lengths = malloc(sizeof(size_t) * n);
    if (mem) {
        files = malloc(sizeof(unsigned char *) * n);
        for (int i = 0; i < n; i++) files[i] = read_file(paths[i], &lengths[i]);
    }
    static char out[1 << 20];
    setvbuf(stdout, out, _IOFBF, sizeof out);
    char line[128];
    double start = now_seconds();
    for (int i = 0; i < n; i++) {
        if (mem) {
            pin(files[i], lengths[i], walk, line);
        } else {
            size_t len;
            unsigned char *bytes = read_file(paths[i], &len);
            pin(bytes, len, walk, line);
            free(bytes);
        }
        fputs(line, stdout);
    }
    fflush(stdout);
    double elapsed = now_seconds() - start;
    result_line("rate=%.1f n=%d seconds=%.5f", n / elapsed, n, elapsed);
    return 0;
}
