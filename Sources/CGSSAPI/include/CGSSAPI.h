// The system GSSAPI (MIT krb5's libgssapi_krb5), loaded on first use with dlopen instead of linked.
//
// Only Negotiate (SPNEGO with Kerberos) logins need it, so `mtls` starts without it, and the build
// needs no krb5 headers: this target declares the few types and functions of RFC 2744's C binding
// it calls (their layout is the standard's, unchanged since GSS-API v2), wraps them in calls that
// take plain buffers, and copies every result into memory the caller frees with `free`.
#ifndef MTLS_CGSSAPI_H
#define MTLS_CGSSAPI_H

#include <stddef.h>
#include <stdint.h>

#pragma clang assume_nonnull begin

/// An opaque GSSAPI security context (gss_ctx_id_t) or credential (gss_cred_id_t).
typedef struct mtls_gss_opaque mtls_gss_opaque;

/// The result of one call: GSSAPI's major and minor status and, on failure, the text of both
/// (gss_display_status, joined with "; ", malloc'ed).
typedef struct {
    uint32_t major;
    uint32_t minor;
    char *_Nullable text;
} mtls_gss_status;

// Major status bits (RFC 2744 §3.9.1).
enum {
    MTLS_GSS_S_COMPLETE = 0,
    MTLS_GSS_S_CONTINUE_NEEDED = 1,
    MTLS_GSS_S_BAD_MECH = 1u << 16,
    MTLS_GSS_S_BAD_NAME = 2u << 16,
    MTLS_GSS_S_BAD_BINDINGS = 4u << 16,
    MTLS_GSS_S_DEFECTIVE_TOKEN = 9u << 16,
    MTLS_GSS_S_DEFECTIVE_CREDENTIAL = 10u << 16,
    MTLS_GSS_S_CREDENTIALS_EXPIRED = 11u << 16,
    MTLS_GSS_S_NO_CRED = 7u << 16,
    MTLS_GSS_S_FAILURE = 13u << 16,
    MTLS_GSS_S_UNAVAILABLE = 16u << 16,
    MTLS_GSS_ERROR_MASK = 0xffff0000u,
};

// Context flags (RFC 2744 §3.9.2 and gss_init_sec_context).
enum {
    MTLS_GSS_C_DELEG_FLAG = 1,
    MTLS_GSS_C_MUTUAL_FLAG = 2,
    MTLS_GSS_C_REPLAY_FLAG = 4,
    MTLS_GSS_C_SEQUENCE_FLAG = 8,
};

/// Loads libgssapi_krb5 once per process (thread-safe). NULL when ready, or why not.
const char *_Nullable mtls_gss_load(void);

/// Acquires initiator credentials: from the credentials cache (`ccache` NULL: KRB5CCNAME or the
/// default; else a cache name such as FILE:/tmp/krb5cc_1000) when `password` is NULL, or a fresh
/// TGT for `principal` with `password` (gss_acquire_cred_with_password, nothing stored).
/// `principal` NULL with a cache takes the cache's default principal. On success *cred is set and
/// *lifetime holds the seconds left (0xffffffff: indefinite).
mtls_gss_status mtls_gss_acquire(const char *_Nullable principal, const uint8_t *_Nullable password, size_t password_length, const char *_Nullable ccache,
                                 mtls_gss_opaque *_Nullable *_Nonnull cred, uint32_t *lifetime);

/// The display name of a credential's principal (malloc'ed), or NULL.
char *_Nullable mtls_gss_cred_name(mtls_gss_opaque *cred);

/// One step of gss_init_sec_context with SPNEGO (1.3.6.1.5.5.2) for the host-based service
/// `service` (`HTTP@host`). `input` is NULL on the first step. `bindings` (may be NULL) is the
/// application data of the channel bindings (`tls-server-end-point:` + hash). The output token, if
/// any, is malloc'ed into *output / *output_length; *ret_flags holds the flags granted.
mtls_gss_status mtls_gss_init(mtls_gss_opaque *_Nullable cred, mtls_gss_opaque *_Nullable *_Nonnull context, const char *service, uint32_t flags,
                              const uint8_t *_Nullable bindings, size_t bindings_length, const uint8_t *_Nullable input, size_t input_length,
                              uint8_t *_Nullable *_Nonnull output, size_t *output_length, uint32_t *ret_flags);

/// The message of a com_err code (MIT's error_message, from libcom_err, which libgssapi_krb5
/// loads): the text krb5 itself gives that code in this process's locale. NULL when not loaded.
const char *_Nullable mtls_krb5_error_message(int32_t code);

/// Deletes a context (NULL is fine).
void mtls_gss_delete_context(mtls_gss_opaque *_Nullable context);

/// Releases a credential (NULL is fine).
void mtls_gss_release_cred(mtls_gss_opaque *_Nullable cred);

#pragma clang assume_nonnull end

#endif
