// One-line forwarders for OpenSSL macros that Swift cannot import. No logic lives here.
#ifndef MTLS_COPENSSL_SHIMS_H
#define MTLS_COPENSSL_SHIMS_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <openssl/pkcs12.h>
#include <openssl/pkcs7.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/objects.h>

#if defined(__linux__)
// The I/O engine's own system calls (MTLSHTTP's Engine.swift), which the Swift Glibc module
// leaves out: here because this is the C module MTLSHTTP already imports.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif

#pragma clang assume_nonnull begin

// Memory
void mtls_OPENSSL_free(void *_Nullable ptr);
/// Makes every block OpenSSL frees (and every block a growing realloc gives up) be overwritten
/// first. Works only before OpenSSL's first allocation: 1 when installed, 0 when too late.
int mtls_install_wiping_allocator(void);
/// 1 when this process wipes every block OpenSSL frees (mtls_install_wiping_allocator succeeded).
int mtls_openssl_wipes_freed_memory(void);

// Process
/// Initialises OpenSSL without the handler that frees its global tables at exit
/// (OPENSSL_INIT_NO_ATEXIT). Has that effect only as the process's first OpenSSL initialisation;
/// returns OPENSSL_init_crypto's result.
int mtls_openssl_init_without_exit_cleanup(void);

// Stacks of X509
STACK_OF(X509) *_Nullable mtls_sk_X509_new_null(void);
int mtls_sk_X509_push(STACK_OF(X509) *sk, X509 *x);
int mtls_sk_X509_num(const STACK_OF(X509) *_Nullable sk);
X509 *_Nullable mtls_sk_X509_value(const STACK_OF(X509) *sk, int i);
void mtls_sk_X509_free(STACK_OF(X509) *_Nullable sk);
void mtls_sk_X509_pop_free(STACK_OF(X509) *_Nullable sk);

// Stacks of X509_CRL
STACK_OF(X509_CRL) *_Nullable mtls_sk_X509_CRL_new_null(void);
int mtls_sk_X509_CRL_push(STACK_OF(X509_CRL) *sk, X509_CRL *x);
void mtls_sk_X509_CRL_free(STACK_OF(X509_CRL) *_Nullable sk);
// Stacks of X509_REVOKED (a CRL's entries)
int mtls_sk_X509_REVOKED_num(const STACK_OF(X509_REVOKED) *_Nullable sk);
X509_REVOKED *_Nullable mtls_sk_X509_REVOKED_value(const STACK_OF(X509_REVOKED) *sk, int i);

// Stacks of X509_NAME (client CA lists)
int mtls_sk_X509_NAME_num(const STACK_OF(X509_NAME) *_Nullable sk);
X509_NAME *_Nullable mtls_sk_X509_NAME_value(const STACK_OF(X509_NAME) *sk, int i);
STACK_OF(X509_NAME) *_Nullable mtls_sk_X509_NAME_new_null(void);
int mtls_sk_X509_NAME_push(STACK_OF(X509_NAME) *sk, X509_NAME *x);
void mtls_sk_X509_NAME_pop_free(STACK_OF(X509_NAME) *_Nullable sk);

// General names
int mtls_sk_GENERAL_NAME_num(const GENERAL_NAMES *_Nullable sk);
GENERAL_NAME *_Nullable mtls_sk_GENERAL_NAME_value(const GENERAL_NAMES *sk, int i);
void mtls_GENERAL_NAMES_free(GENERAL_NAMES *_Nullable names);

// Extended key usage (a stack of ASN1_OBJECT)
int mtls_sk_ASN1_OBJECT_num(const STACK_OF(ASN1_OBJECT) *_Nullable sk);
ASN1_OBJECT *_Nullable mtls_sk_ASN1_OBJECT_value(const STACK_OF(ASN1_OBJECT) *sk, int i);
void mtls_EXTENDED_KEY_USAGE_free(EXTENDED_KEY_USAGE *_Nullable eku);

// 1 when OpenSSL knows the extension's type and decodes its value, 0 when it knows the type but
// cannot decode the value, -1 when it does not know the type.
int mtls_X509_EXTENSION_decodes(X509_EXTENSION *ext);

// PKCS#12 internals
int mtls_sk_PKCS7_num(const STACK_OF(PKCS7) *_Nullable sk);
PKCS7 *_Nullable mtls_sk_PKCS7_value(const STACK_OF(PKCS7) *sk, int i);
void mtls_sk_PKCS7_pop_free(STACK_OF(PKCS7) *_Nullable sk);
int mtls_sk_PKCS12_SAFEBAG_num(const STACK_OF(PKCS12_SAFEBAG) *_Nullable sk);
PKCS12_SAFEBAG *_Nullable mtls_sk_PKCS12_SAFEBAG_value(const STACK_OF(PKCS12_SAFEBAG) *sk, int i);
void mtls_sk_PKCS12_SAFEBAG_pop_free(STACK_OF(PKCS12_SAFEBAG) *_Nullable sk);
int mtls_PKCS7_type_is_data(const PKCS7 *p7);
int mtls_PKCS7_type_is_encrypted(const PKCS7 *p7);
const X509_ALGOR *_Nullable mtls_PKCS7_encrypted_algorithm(const PKCS7 *p7);
/// The NID of a ContentInfo's content type (NID_pkcs7_enveloped for a public-key encrypted safe).
int mtls_PKCS7_type_nid(const PKCS7 *p7);
/// 1 when an encryptedData ContentInfo carries its encrypted content (it is OPTIONAL in PKCS #7).
int mtls_PKCS7_encrypted_content_present(const PKCS7 *p7);

// BIO
long mtls_BIO_get_mem_data(BIO *bio, char *_Nullable *_Nonnull pp);
long mtls_BIO_set_nbio(BIO *bio, long nonBlocking);

// SSL
long mtls_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);
long mtls_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version);
long mtls_SSL_set_tlsext_host_name(SSL *ssl, const char *name);
long mtls_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode);
long mtls_SSL_get_secure_renegotiation_support(SSL *ssl);
/* OCSP stapling (macros): ask for the server's status, and read what it stapled (length, or -1). */
long mtls_SSL_request_ocsp_status(SSL *ssl);
long mtls_SSL_get_ocsp_response(SSL *ssl, const unsigned char *_Nullable *_Nonnull response);
long mtls_SSL_CTX_set1_groups_list(SSL_CTX *ctx, const char *list);
long mtls_SSL_num_renegotiations(SSL *ssl);
long mtls_SSL_set_mode(SSL *ssl, long mode);
long mtls_SSL_CTX_set_mode(SSL_CTX *ctx, long mode);
long mtls_SSL_CTX_set_options(SSL_CTX *ctx, long options);
int mtls_SSL_get_peer_tmp_key(SSL *ssl, EVP_PKEY *_Nullable *_Nonnull key);
long mtls_SSL_CTX_add_extra_chain_cert(SSL_CTX *ctx, X509 *x509);
int mtls_SSL_CTX_set_tlsext_servername_callback(SSL_CTX *ctx, int (*_Nullable cb)(SSL *, int *, void *));
long mtls_SSL_get0_chain_certs(SSL *ssl, STACK_OF(X509) *_Nullable *_Nonnull chain);
long mtls_SSL_set1_chain(SSL *ssl, STACK_OF(X509) *_Nullable chain);
long mtls_SSL_CTX_set1_chain(SSL_CTX *ctx, STACK_OF(X509) *_Nullable chain);

// Objects
int mtls_OBJ_obj2txt(char *buf, int len, const ASN1_OBJECT *obj, int noName);

// ERR
unsigned long mtls_ERR_get_error_all(const char *_Nullable *_Nullable file, int *_Nullable line, const char *_Nullable *_Nullable func, const char *_Nullable *_Nullable data, int *_Nullable flags);

// Constants built from macros
unsigned long mtls_XN_FLAG_RFC2253(void);
int mtls_EVP_PKEY_KEYPAIR(void);

// SSL_OP_* bits (built with a macro Swift cannot import)
uint64_t mtls_SSL_OP_LEGACY_SERVER_CONNECT(void);
uint64_t mtls_SSL_OP_ALLOW_UNSAFE_LEGACY_RENEGOTIATION(void);
uint64_t mtls_SSL_OP_NO_RENEGOTIATION(void);
uint64_t mtls_SSL_OP_NO_TICKET(void);
uint64_t mtls_SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION(void);
uint64_t mtls_SSL_OP_ALLOW_CLIENT_RENEGOTIATION(void);
long mtls_SSL_CTX_set_read_ahead(SSL_CTX *ctx, long on);

// EVP
int mtls_EVP_PKEY_get_bits(const EVP_PKEY *pkey);

// Temporary files removed on SIGINT/SIGTERM/SIGHUP (cleanup.c)
int mtls_cleanup_register(const char *path);
void mtls_cleanup_unregister(const char *path);
void mtls_cleanup_install(void);

#pragma clang assume_nonnull end
#endif
