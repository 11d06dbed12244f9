/* Makes a benchmark PKI: a root, one intermediate and N leaves (ECDSA P-256 or RSA-2048).
 *
 *   corpus OUTDIR ec|rsa N [RSA_KEY_POOL]
 *
 * Writes OUTDIR/root.pem, int.pem, leaves/leaf-NNNNN.pem (certificate only), der/leaf-NNNNN.der,
 * leaves.list and der.list (one path a line), server.pem (localhost + 127.0.0.1 leaf, then the
 * intermediate), server.key, client.pem/client.key/chain.pem (for PKCS#12). Every certificate is
 * valid from 2025-01-01 to 2035-01-01 and passes the Web PKI profile of `mtls verify`.
 * RSA leaves share a pool of RSA_KEY_POOL keys (default 16): RSA key generation would otherwise take
 * minutes, and neither parsing, verifying nor pinning depends on keys being distinct.
 */
#include "common.h"
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

static EVP_PKEY *new_key(int rsa) {
    EVP_PKEY *key = rsa ? EVP_RSA_gen(2048) : EVP_EC_gen("P-256");
    if (!key) die("key generation failed");
    return key;
}

static void add_ext(X509 *cert, X509 *issuer, int nid, const char *value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!ext) die("extension %d=%s", nid, value);
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
}

static X509 *make_cert(const char *cn, EVP_PKEY *key, X509 *issuer, EVP_PKEY *issuer_key, int kind, const char *san) {
    /* kind: 0 root, 1 intermediate, 2 leaf */
    X509 *cert = X509_new();
    X509_set_version(cert, 2);
    unsigned char serial[16];
    RAND_bytes(serial, sizeof serial);
    serial[0] &= 0x7F;
    serial[0] |= 0x01;
    BIGNUM *bn = BN_bin2bn(serial, sizeof serial, NULL);
    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert));
    BN_free(bn);
    ASN1_TIME_set_string_X509(X509_getm_notBefore(cert), "20250101000000Z");
    ASN1_TIME_set_string_X509(X509_getm_notAfter(cert), "20350101000000Z");
    X509_NAME *name = X509_NAME_new();
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"mtls bench", -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_subject_name(cert, name);
    X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name);
    X509_NAME_free(name);
    X509_set_pubkey(cert, key);
    X509 *ctx_issuer = issuer ? issuer : cert;
    add_ext(cert, ctx_issuer, NID_subject_key_identifier, "hash");
    if (kind != 0) add_ext(cert, ctx_issuer, NID_authority_key_identifier, "keyid:always");
    if (kind == 0) {
        add_ext(cert, ctx_issuer, NID_basic_constraints, "critical,CA:TRUE");
        add_ext(cert, ctx_issuer, NID_key_usage, "critical,keyCertSign,cRLSign");
    } else if (kind == 1) {
        add_ext(cert, ctx_issuer, NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
        add_ext(cert, ctx_issuer, NID_key_usage, "critical,keyCertSign,cRLSign");
    } else {
        add_ext(cert, ctx_issuer, NID_basic_constraints, "critical,CA:FALSE");
        add_ext(cert, ctx_issuer, NID_key_usage,
                EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA ? "critical,digitalSignature,keyEncipherment" : "critical,digitalSignature");
        add_ext(cert, ctx_issuer, NID_ext_key_usage, "serverAuth,clientAuth");
        add_ext(cert, ctx_issuer, NID_subject_alt_name, san);
    }
    if (!X509_sign(cert, issuer_key ? issuer_key : key, EVP_sha256())) die("signing %s", cn);
    return cert;
}

static void write_pem(const char *path, X509 *cert, X509 *also) {
    FILE *f = fopen(path, "w");
    if (!f) die("cannot write %s", path);
    PEM_write_X509(f, cert);
    if (also) PEM_write_X509(f, also);
    fclose(f);
}

static void write_key(const char *path, EVP_PKEY *key) {
    FILE *f = fopen(path, "w");
    if (!f) die("cannot write %s", path);
    PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
    fclose(f);
}

int main(int argc, char **argv) {
    if (argc < 4) die("usage: corpus OUTDIR ec|rsa N [RSA_KEY_POOL]");
    const char *dir = argv[1];
    int rsa = strcmp(argv[2], "rsa") == 0;
    int n = atoi(argv[3]);
    int pool = argc > 4 ? atoi(argv[4]) : 16;
    char path[4096];
    snprintf(path, sizeof path, "%s/leaves", dir);
    mkdir(dir, 0755);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/der", dir);
    mkdir(path, 0755);

    EVP_PKEY *root_key = new_key(rsa), *int_key = new_key(rsa);
    X509 *root = make_cert(rsa ? "mtls bench RSA root" : "mtls bench ECDSA root", root_key, NULL, NULL, 0, NULL);
    X509 *inter = make_cert(rsa ? "mtls bench RSA intermediate" : "mtls bench ECDSA intermediate", int_key, root, root_key, 1, NULL);
    snprintf(path, sizeof path, "%s/root.pem", dir);
    write_pem(path, root, NULL);
    snprintf(path, sizeof path, "%s/int.pem", dir);
    write_pem(path, inter, NULL);
    snprintf(path, sizeof path, "%s/chain.pem", dir);
    write_pem(path, inter, root);

    EVP_PKEY **keys = calloc(pool > 0 ? pool : 1, sizeof(EVP_PKEY *));
    if (rsa)
        for (int i = 0; i < pool; i++) keys[i] = new_key(1);

    char list_path[4096], der_list_path[4096];
    snprintf(list_path, sizeof list_path, "%s/leaves.list", dir);
    snprintf(der_list_path, sizeof der_list_path, "%s/der.list", dir);
    FILE *list = fopen(list_path, "w"), *der_list = fopen(der_list_path, "w");
    for (int i = 1; i <= n; i++) {
        char cn[128], san[256];
        snprintf(cn, sizeof cn, "leaf-%05d.bench.test", i);
        snprintf(san, sizeof san, "DNS:%s,DNS:bench.test", cn);
        EVP_PKEY *key = rsa ? keys[i % pool] : new_key(0);
        X509 *leaf = make_cert(cn, key, inter, int_key, 2, san);
        snprintf(path, sizeof path, "%s/leaves/leaf-%05d.pem", dir, i);
        write_pem(path, leaf, NULL);
        fprintf(list, "%s\n", path);
        snprintf(path, sizeof path, "%s/der/leaf-%05d.der", dir, i);
        FILE *f = fopen(path, "wb");
        i2d_X509_fp(f, leaf);
        fclose(f);
        fprintf(der_list, "%s\n", path);
        if (i == 1) {
            snprintf(path, sizeof path, "%s/client.pem", dir);
            write_pem(path, leaf, NULL);
            snprintf(path, sizeof path, "%s/client.key", dir);
            write_key(path, key);
        }
        X509_free(leaf);
        if (!rsa) EVP_PKEY_free(key);
    }
    fclose(list);
    fclose(der_list);

    EVP_PKEY *server_key = new_key(rsa);
    X509 *server = make_cert("localhost", server_key, inter, int_key, 2, "DNS:localhost,IP:127.0.0.1");
    snprintf(path, sizeof path, "%s/server.pem", dir);
    write_pem(path, server, inter);
    snprintf(path, sizeof path, "%s/server.key", dir);
    write_key(path, server_key);
    return 0;
}
