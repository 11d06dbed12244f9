#include "COpenSSLShims.h"

void mtls_OPENSSL_free(void *ptr) { OPENSSL_free(ptr); }

STACK_OF(X509) *mtls_sk_X509_new_null(void) { return sk_X509_new_null(); }
int mtls_sk_X509_push(STACK_OF(X509) *sk, X509 *x) { return sk_X509_push(sk, x); }
int mtls_sk_X509_num(const STACK_OF(X509) *sk) { return sk == NULL ? 0 : sk_X509_num(sk); }
X509 *mtls_sk_X509_value(const STACK_OF(X509) *sk, int i) { return sk_X509_value(sk, i); }
void mtls_sk_X509_free(STACK_OF(X509) *sk) { sk_X509_free(sk); }
void mtls_sk_X509_pop_free(STACK_OF(X509) *sk) { sk_X509_pop_free(sk, X509_free); }

STACK_OF(X509_CRL) *mtls_sk_X509_CRL_new_null(void) { return sk_X509_CRL_new_null(); }
int mtls_sk_X509_CRL_push(STACK_OF(X509_CRL) *sk, X509_CRL *x) { return sk_X509_CRL_push(sk, x); }
void mtls_sk_X509_CRL_free(STACK_OF(X509_CRL) *sk) { sk_X509_CRL_free(sk); }
int mtls_sk_X509_REVOKED_num(const STACK_OF(X509_REVOKED) *sk) { return sk == NULL ? 0 : sk_X509_REVOKED_num(sk); }
X509_REVOKED *mtls_sk_X509_REVOKED_value(const STACK_OF(X509_REVOKED) *sk, int i) { return sk_X509_REVOKED_value(sk, i); }

int mtls_sk_X509_NAME_num(const STACK_OF(X509_NAME) *sk) { return sk == NULL ? 0 : sk_X509_NAME_num(sk); }
X509_NAME *mtls_sk_X509_NAME_value(const STACK_OF(X509_NAME) *sk, int i) { return sk_X509_NAME_value(sk, i); }
STACK_OF(X509_NAME) *mtls_sk_X509_NAME_new_null(void) { return sk_X509_NAME_new_null(); }
int mtls_sk_X509_NAME_push(STACK_OF(X509_NAME) *sk, X509_NAME *x) { return sk_X509_NAME_push(sk, x); }
void mtls_sk_X509_NAME_pop_free(STACK_OF(X509_NAME) *sk) { sk_X509_NAME_pop_free(sk, X509_NAME_free); }

int mtls_sk_GENERAL_NAME_num(const GENERAL_NAMES *sk) { return sk == NULL ? 0 : sk_GENERAL_NAME_num(sk); }
GENERAL_NAME *mtls_sk_GENERAL_NAME_value(const GENERAL_NAMES *sk, int i) { return sk_GENERAL_NAME_value(sk, i); }
void mtls_GENERAL_NAMES_free(GENERAL_NAMES *names) { GENERAL_NAMES_free(names); }

int mtls_sk_ASN1_OBJECT_num(const STACK_OF(ASN1_OBJECT) *sk) { return sk == NULL ? 0 : sk_ASN1_OBJECT_num(sk); }
ASN1_OBJECT *mtls_sk_ASN1_OBJECT_value(const STACK_OF(ASN1_OBJECT) *sk, int i) { return sk_ASN1_OBJECT_value(sk, i); }
void mtls_EXTENDED_KEY_USAGE_free(EXTENDED_KEY_USAGE *eku) { EXTENDED_KEY_USAGE_free(eku); }

int mtls_sk_PKCS7_num(const STACK_OF(PKCS7) *sk) { return sk == NULL ? 0 : sk_PKCS7_num(sk); }
PKCS7 *mtls_sk_PKCS7_value(const STACK_OF(PKCS7) *sk, int i) { return sk_PKCS7_value(sk, i); }
void mtls_sk_PKCS7_pop_free(STACK_OF(PKCS7) *sk) { sk_PKCS7_pop_free(sk, PKCS7_free); }
int mtls_sk_PKCS12_SAFEBAG_num(const STACK_OF(PKCS12_SAFEBAG) *sk) { return sk == NULL ? 0 : sk_PKCS12_SAFEBAG_num(sk); }
PKCS12_SAFEBAG *mtls_sk_PKCS12_SAFEBAG_value(const STACK_OF(PKCS12_SAFEBAG) *sk, int i) { return sk_PKCS12_SAFEBAG_value(sk, i); }
void mtls_sk_PKCS12_SAFEBAG_pop_free(STACK_OF(PKCS12_SAFEBAG) *sk) { sk_PKCS12_SAFEBAG_pop_free(sk, PKCS12_SAFEBAG_free); }
int mtls_PKCS7_type_is_data(const PKCS7 *p7) { return PKCS7_type_is_data(p7); }
int mtls_PKCS7_type_is_encrypted(const PKCS7 *p7) { return PKCS7_type_is_encrypted(p7); }
const X509_ALGOR *mtls_PKCS7_encrypted_algorithm(const PKCS7 *p7) {
    return (p7->d.encrypted != NULL && p7->d.encrypted->enc_data != NULL) ? p7->d.encrypted->enc_data->algorithm : NULL;
}
int mtls_PKCS7_type_nid(const PKCS7 *p7) { return OBJ_obj2nid(p7->type); }
int mtls_PKCS7_encrypted_content_present(const PKCS7 *p7) {
    return p7->d.encrypted != NULL && p7->d.encrypted->enc_data != NULL && p7->d.encrypted->enc_data->enc_data != NULL;
}

long mtls_BIO_get_mem_data(BIO *bio, char **pp) { return BIO_get_mem_data(bio, pp); }
long mtls_BIO_set_nbio(BIO *bio, long nonBlocking) { return BIO_set_nbio(bio, nonBlocking); }

long mtls_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) { return SSL_CTX_set_min_proto_version(ctx, version); }
long mtls_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) { return SSL_CTX_set_max_proto_version(ctx, version); }
long mtls_SSL_set_tlsext_host_name(SSL *ssl, const char *name) { return SSL_set_tlsext_host_name(ssl, name); }
long mtls_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_session_cache_mode(ctx, mode); }
long mtls_SSL_get_secure_renegotiation_support(SSL *ssl) { return SSL_get_secure_renegotiation_support(ssl); }
long mtls_SSL_request_ocsp_status(SSL *ssl) { return SSL_set_tlsext_status_type(ssl, TLSEXT_STATUSTYPE_ocsp); }
long mtls_SSL_get_ocsp_response(SSL *ssl, const unsigned char **response) {
    unsigned char *bytes = NULL;
    long length = SSL_get_tlsext_status_ocsp_resp(ssl, &bytes);
    *response = bytes;
    return length;
}
long mtls_SSL_CTX_set1_groups_list(SSL_CTX *ctx, const char *list) { return SSL_CTX_set1_groups_list(ctx, list); }
long mtls_SSL_num_renegotiations(SSL *ssl) { return SSL_num_renegotiations(ssl); }
long mtls_SSL_set_mode(SSL *ssl, long mode) { return SSL_set_mode(ssl, mode); }
long mtls_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
long mtls_SSL_CTX_set_options(SSL_CTX *ctx, long options) { return (long)SSL_CTX_set_options(ctx, (uint64_t)options); }
int mtls_SSL_get_peer_tmp_key(SSL *ssl, EVP_PKEY **key) { return (int)SSL_get_peer_tmp_key(ssl, key); }
long mtls_SSL_CTX_add_extra_chain_cert(SSL_CTX *ctx, X509 *x509) { return SSL_CTX_add_extra_chain_cert(ctx, x509); }
int mtls_SSL_CTX_set_tlsext_servername_callback(SSL_CTX *ctx, int (*cb)(SSL *, int *, void *)) { return (int)SSL_CTX_set_tlsext_servername_callback(ctx, cb); }
long mtls_SSL_get0_chain_certs(SSL *ssl, STACK_OF(X509) **chain) { return SSL_get0_chain_certs(ssl, chain); }
long mtls_SSL_set1_chain(SSL *ssl, STACK_OF(X509) *chain) { return SSL_set1_chain(ssl, chain); }
long mtls_SSL_CTX_set1_chain(SSL_CTX *ctx, STACK_OF(X509) *chain) { return SSL_CTX_set1_chain(ctx, chain); }

int mtls_X509_EXTENSION_decodes(X509_EXTENSION *ext) {
    const X509V3_EXT_METHOD *method = X509V3_EXT_get(ext);
    if (method == NULL) return -1;
    void *decoded = X509V3_EXT_d2i(ext);
    if (decoded == NULL) {
        ERR_clear_error();
        return 0;
    }
    if (method->it != NULL) {
        ASN1_item_free((ASN1_VALUE *)decoded, ASN1_ITEM_ptr(method->it));
    } else if (method->ext_free != NULL) {
        method->ext_free(decoded);
    }
    return 1;
}

int mtls_OBJ_obj2txt(char *buf, int len, const ASN1_OBJECT *obj, int noName) { return OBJ_obj2txt(buf, len, obj, noName); }

unsigned long mtls_ERR_get_error_all(const char **file, int *line, const char **func, const char **data, int *flags) {
    return ERR_get_error_all(file, line, func, data, flags);
}

int mtls_EVP_PKEY_get_bits(const EVP_PKEY *pkey) { return EVP_PKEY_get_bits(pkey); }

unsigned long mtls_XN_FLAG_RFC2253(void) { return XN_FLAG_RFC2253; }
int mtls_EVP_PKEY_KEYPAIR(void) { return EVP_PKEY_KEYPAIR; }

uint64_t mtls_SSL_OP_LEGACY_SERVER_CONNECT(void) { return SSL_OP_LEGACY_SERVER_CONNECT; }
uint64_t mtls_SSL_OP_ALLOW_UNSAFE_LEGACY_RENEGOTIATION(void) { return SSL_OP_ALLOW_UNSAFE_LEGACY_RENEGOTIATION; }
uint64_t mtls_SSL_OP_NO_RENEGOTIATION(void) { return SSL_OP_NO_RENEGOTIATION; }
uint64_t mtls_SSL_OP_NO_TICKET(void) { return SSL_OP_NO_TICKET; }
uint64_t mtls_SSL_OP_ALLOW_CLIENT_RENEGOTIATION(void) { return SSL_OP_ALLOW_CLIENT_RENEGOTIATION; }
long mtls_SSL_CTX_set_read_ahead(SSL_CTX *ctx, long on) { return SSL_CTX_set_read_ahead(ctx, on); }
uint64_t mtls_SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION(void) { return SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION; }

// The first OPENSSL_init_crypto of the process decides whether OpenSSL registers its atexit
// cleanup; later calls (config loading, libssl's) add their own options but cannot take that back,
// and OpenSSL does not say whether it was first.
int mtls_openssl_init_without_exit_cleanup(void) { return OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL); }
