/* The C limit for chain verification: the same OpenSSL, called directly, in one process.
 *
 *   c_verify MODE ROOT.pem INT.pem DER_LIST UNIX_TIME HOST
 *
 * MODE oneshot: parse root, intermediate and leaf from DER and build the store for every chain;
 *      leaf:    root and intermediate parsed once, the leaf parsed from DER for every chain;
 *      noparse: everything parsed before the clock starts, only X509_verify_cert is timed.
 * Same checks as `mtls verify --host HOST --at TIME`: purpose sslserver, X509_V_FLAG_X509_STRICT,
 * the host name against the SAN dNSNames only. Prints RESULT rate=chains/s n= ok=.
 */
#include "common.h"
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

static unsigned char *pem_to_der(const char *path, int *len) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open %s", path);
    X509 *x = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    if (!x) die("no certificate in %s", path);
    unsigned char *der = NULL;
    *len = i2d_X509(x, &der);
    X509_free(x);
    return der;
}

static X509 *parse(const unsigned char *der, int len) {
    const unsigned char *p = der;
    X509 *x = d2i_X509(NULL, &p, len);
    if (!x) die("d2i_X509 failed");
    return x;
}

static int verify(X509_STORE *store, X509 *leaf, STACK_OF(X509) *untrusted, time_t at, const char *host) {
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    X509_STORE_CTX_init(ctx, store, leaf, untrusted);
    X509_VERIFY_PARAM *param = X509_STORE_CTX_get0_param(ctx);
    X509_VERIFY_PARAM_set_flags(param, X509_V_FLAG_X509_STRICT);
    X509_VERIFY_PARAM_set_time(param, at);
    X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_SERVER);
    X509_VERIFY_PARAM_set_auth_level(param, 2);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    X509_VERIFY_PARAM_set1_host(param, host, 0);
    int ok = X509_verify_cert(ctx) == 1;
    X509_STORE_CTX_free(ctx);
    return ok;
}

int main(int argc, char **argv) {
    if (argc < 7) die("usage: c_verify oneshot|leaf|noparse ROOT INT DER_LIST UNIX_TIME HOST");
    const char *mode = argv[1], *host = argv[6];
    time_t at = (time_t)atoll(argv[5]);
    int root_len, int_len, n;
    unsigned char *root_der = pem_to_der(argv[2], &root_len), *int_der = pem_to_der(argv[3], &int_len);
    char **paths = read_list(argv[4], &n);
    unsigned char **leaves = malloc(sizeof(unsigned char *) * n);
    size_t *lengths = malloc(sizeof(size_t) * n);
    for (int i = 0; i < n; i++) leaves[i] = read_file(paths[i], &lengths[i]);
    int ok = 0;
    double start, elapsed;
    if (strcmp(mode, "oneshot") == 0) {
        start = now_seconds();
        for (int i = 0; i < n; i++) {
            X509 *root = parse(root_der, root_len), *inter = parse(int_der, int_len), *leaf = parse(leaves[i], (int)lengths[i]);
            X509_STORE *store = X509_STORE_new();
            X509_STORE_add_cert(store, root);
            STACK_OF(X509) *untrusted = sk_X509_new_null();
            sk_X509_push(untrusted, inter);
            ok += verify(store, leaf, untrusted, at, host);
            sk_X509_free(untrusted);
            X509_STORE_free(store);
            X509_free(root);
            X509_free(inter);
            X509_free(leaf);
        }
        elapsed = now_seconds() - start;
    } else {
        X509 *root = parse(root_der, root_len), *inter = parse(int_der, int_len);
        X509_STORE *store = X509_STORE_new();
        X509_STORE_add_cert(store, root);
        STACK_OF(X509) *untrusted = sk_X509_new_null();
        sk_X509_push(untrusted, inter);
        if (strcmp(mode, "leaf") == 0) {
            start = now_seconds();
            for (int i = 0; i < n; i++) {
                X509 *leaf = parse(leaves[i], (int)lengths[i]);
                ok += verify(store, leaf, untrusted, at, host);
                X509_free(leaf);
            }
            elapsed = now_seconds() - start;
        } else if (strcmp(mode, "noparse") == 0) {
            X509 **parsed = malloc(sizeof(X509 *) * n);
            for (int i = 0; i < n; i++) parsed[i] = parse(leaves[i], (int)lengths[i]);
            start = now_seconds();
            for (int i = 0; i < n; i++) ok += verify(store, parsed[i], untrusted, at, host);
            elapsed = now_seconds() - start;
        } else {
            die("unknown mode %s", mode);
        }
    }
    if (ok != n) die("%d of %d chains verified", ok, n);
    result_line("rate=%.1f n=%d ok=%d seconds=%.4f", n / elapsed, n, ok, elapsed);
    return 0;
}
