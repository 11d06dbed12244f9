#include "CGSSAPI.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// RFC 2744's C types, declared here so the build needs no krb5 headers.
typedef uint32_t OM_uint32;
typedef struct { size_t length; void *value; } gss_buffer_desc;
typedef struct { OM_uint32 length; void *elements; } gss_OID_desc;
typedef struct { size_t count; gss_OID_desc *elements; } gss_OID_set_desc;
typedef struct {
    OM_uint32 initiator_addrtype;
    gss_buffer_desc initiator_address;
    OM_uint32 acceptor_addrtype;
    gss_buffer_desc acceptor_address;
    gss_buffer_desc application_data;
} gss_channel_bindings_desc;
typedef struct { const char *key; const char *value; } gss_key_value_element_desc;
typedef struct { OM_uint32 count; gss_key_value_element_desc *elements; } gss_key_value_set_desc;
typedef void *gss_name_t;
typedef void *gss_ctx_id_t;
typedef void *gss_cred_id_t;

enum { GSS_C_GSS_CODE = 1, GSS_C_MECH_CODE = 2, GSS_C_INITIATE = 1 };

static gss_OID_desc spnego = {6, "\x2b\x06\x01\x05\x05\x02"};
static gss_OID_desc userName = {10, "\x2a\x86\x48\x86\xf7\x12\x01\x02\x01\x01"};
static gss_OID_desc hostBasedService = {10, "\x2a\x86\x48\x86\xf7\x12\x01\x02\x01\x04"};
static gss_OID_set_desc spnegoSet = {1, &spnego};

static OM_uint32 (*importName)(OM_uint32 *, gss_buffer_desc *, gss_OID_desc *, gss_name_t *);
static OM_uint32 (*releaseName)(OM_uint32 *, gss_name_t *);
static OM_uint32 (*releaseBuffer)(OM_uint32 *, gss_buffer_desc *);
static OM_uint32 (*displayStatus)(OM_uint32 *, OM_uint32, int, gss_OID_desc *, OM_uint32 *, gss_buffer_desc *);
static OM_uint32 (*displayName)(OM_uint32 *, gss_name_t, gss_buffer_desc *, gss_OID_desc **);
static OM_uint32 (*acquireCred)(OM_uint32 *, gss_name_t, OM_uint32, gss_OID_set_desc *, int, gss_cred_id_t *, void **, OM_uint32 *);
static OM_uint32 (*acquireCredFrom)(OM_uint32 *, gss_name_t, OM_uint32, gss_OID_set_desc *, int, gss_key_value_set_desc *, gss_cred_id_t *, void **, OM_uint32 *);
static OM_uint32 (*acquireCredWithPassword)(OM_uint32 *, gss_name_t, gss_buffer_desc *, OM_uint32, gss_OID_set_desc *, int, gss_cred_id_t *, void **, OM_uint32 *);
static OM_uint32 (*inquireCred)(OM_uint32 *, gss_cred_id_t, gss_name_t *, OM_uint32 *, int *, void **);
static OM_uint32 (*releaseCred)(OM_uint32 *, gss_cred_id_t *);
static OM_uint32 (*initSecContext)(OM_uint32 *, gss_cred_id_t, gss_ctx_id_t *, gss_name_t, gss_OID_desc *, OM_uint32, OM_uint32, gss_channel_bindings_desc *,
                                   gss_buffer_desc *, gss_OID_desc **, gss_buffer_desc *, OM_uint32 *, OM_uint32 *);
static OM_uint32 (*deleteSecContext)(OM_uint32 *, gss_ctx_id_t *, gss_buffer_desc *);

static const char *(*errorMessage)(long);

static const char *failure = "libgssapi_krb5 is not loaded";
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    static const char *const names[] = {"libgssapi_krb5.so.2", "libgssapi_krb5.so", "libgssapi_krb5.2.2.dylib"};
    void *handle = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && handle == NULL; i++) handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        failure = "MIT Kerberos' GSSAPI library (libgssapi_krb5.so.2) could not be loaded; install it (Debian: apt-get install libgssapi-krb5-2 krb5-user)";
        return;
    }
#define SYMBOL(var, name) *(void **)&var = dlsym(handle, name)
    SYMBOL(importName, "gss_import_name");
    SYMBOL(releaseName, "gss_release_name");
    SYMBOL(releaseBuffer, "gss_release_buffer");
    SYMBOL(displayStatus, "gss_display_status");
    SYMBOL(displayName, "gss_display_name");
    SYMBOL(acquireCred, "gss_acquire_cred");
    SYMBOL(acquireCredFrom, "gss_acquire_cred_from");
    SYMBOL(acquireCredWithPassword, "gss_acquire_cred_with_password");
    SYMBOL(inquireCred, "gss_inquire_cred");
    SYMBOL(releaseCred, "gss_release_cred");
    SYMBOL(initSecContext, "gss_init_sec_context");
    SYMBOL(deleteSecContext, "gss_delete_sec_context");
    // libcom_err is a dependency of libgssapi_krb5: dlsym on the handle searches it too. Optional.
    SYMBOL(errorMessage, "error_message");
#undef SYMBOL
    if (!importName || !releaseName || !releaseBuffer || !displayStatus || !displayName || !acquireCred || !acquireCredFrom || !acquireCredWithPassword ||
        !inquireCred || !releaseCred || !initSecContext || !deleteSecContext) {
        failure = "the libgssapi_krb5 found lacks gss_acquire_cred_from or gss_acquire_cred_with_password (MIT krb5 1.11 or later is needed)";
        return;
    }
    failure = NULL;
}

const char *mtls_gss_load(void) {
    pthread_once(&once, load);
    return failure;
}

// Appends every message of one status value (gss_display_status is iterated with message_context).
static void appendStatus(char **text, size_t *length, OM_uint32 value, int type) {
    OM_uint32 context = 0, minor = 0;
    do {
        gss_buffer_desc message = {0, NULL};
        if (displayStatus(&minor, value, type, NULL, &context, &message) & MTLS_GSS_ERROR_MASK) return;
        if (message.length > 0) {
            char *grown = realloc(*text, *length + message.length + 3);
            if (grown == NULL) {
                releaseBuffer(&minor, &message);
                return;
            }
            *text = grown;
            if (*length > 0) {
                memcpy(*text + *length, "; ", 2);
                *length += 2;
            }
            memcpy(*text + *length, message.value, message.length);
            *length += message.length;
            (*text)[*length] = 0;
        }
        releaseBuffer(&minor, &message);
    } while (context != 0);
}

static mtls_gss_status status(OM_uint32 major, OM_uint32 minor) {
    mtls_gss_status result = {major, minor, NULL};
    if ((major & MTLS_GSS_ERROR_MASK) == 0) return result;
    size_t length = 0;
    appendStatus(&result.text, &length, major, GSS_C_GSS_CODE);
    if (minor != 0) appendStatus(&result.text, &length, minor, GSS_C_MECH_CODE);
    return result;
}

static mtls_gss_status notLoaded(void) {
    mtls_gss_status result = {MTLS_GSS_S_UNAVAILABLE, 0, strdup(failure)};
    return result;
}

mtls_gss_status mtls_gss_acquire(const char *principal, const uint8_t *password, size_t password_length, const char *ccache, mtls_gss_opaque **cred, uint32_t *lifetime) {
    *cred = NULL;
    *lifetime = 0;
    if (mtls_gss_load() != NULL) return notLoaded();
    OM_uint32 minor = 0, major;
    gss_name_t name = NULL;
    if (principal != NULL) {
        gss_buffer_desc buffer = {strlen(principal), (void *)principal};
        major = importName(&minor, &buffer, &userName, &name);
        if (major & MTLS_GSS_ERROR_MASK) return status(major, minor);
    }
    gss_cred_id_t handle = NULL;
    if (password != NULL) {
        gss_buffer_desc secret = {password_length, (void *)password};
        major = acquireCredWithPassword(&minor, name, &secret, 0, &spnegoSet, GSS_C_INITIATE, &handle, NULL, lifetime);
    } else if (ccache != NULL) {
        gss_key_value_element_desc element = {"ccache", ccache};
        gss_key_value_set_desc store = {1, &element};
        major = acquireCredFrom(&minor, name, 0, &spnegoSet, GSS_C_INITIATE, &store, &handle, NULL, lifetime);
    } else {
        major = acquireCred(&minor, name, 0, &spnegoSet, GSS_C_INITIATE, &handle, NULL, lifetime);
    }
    OM_uint32 ignored;
    if (name != NULL) releaseName(&ignored, &name);
    if (major & MTLS_GSS_ERROR_MASK) return status(major, minor);
    *cred = (mtls_gss_opaque *)handle;
    return status(major, minor);
}

char *mtls_gss_cred_name(mtls_gss_opaque *cred) {
    if (mtls_gss_load() != NULL) return NULL;
    OM_uint32 minor = 0;
    gss_name_t name = NULL;
    // First without the name: for expired credentials MIT's mechglue gets the mechanism's name and
    // then returns GSS_S_CREDENTIALS_EXPIRED without releasing it or handing it out (a leak in
    // the library, LeakSanitizer in KerberosNegotiateTests.testExpiredTicket). Without an output
    // name nothing is allocated; the name is asked for only of credentials with time left.
    OM_uint32 lifetime = 0;
    if ((inquireCred(&minor, (gss_cred_id_t)cred, NULL, &lifetime, NULL, NULL) & MTLS_GSS_ERROR_MASK) || lifetime == 0) return NULL;
    if (inquireCred(&minor, (gss_cred_id_t)cred, &name, NULL, NULL, NULL) & MTLS_GSS_ERROR_MASK) {
        if (name != NULL) releaseName(&minor, &name);
        return NULL;
    }
    gss_buffer_desc buffer = {0, NULL};
    char *result = NULL;
    if ((displayName(&minor, name, &buffer, NULL) & MTLS_GSS_ERROR_MASK) == 0) {
        result = strndup(buffer.value, buffer.length);
        releaseBuffer(&minor, &buffer);
    }
    releaseName(&minor, &name);
    return result;
}

mtls_gss_status mtls_gss_init(mtls_gss_opaque *cred, mtls_gss_opaque **context, const char *service, uint32_t flags, const uint8_t *bindings, size_t bindings_length,
                              const uint8_t *input, size_t input_length, uint8_t **output, size_t *output_length, uint32_t *ret_flags) {
    *output = NULL;
    *output_length = 0;
    *ret_flags = 0;
    if (mtls_gss_load() != NULL) return notLoaded();
    OM_uint32 minor = 0, major, ignored;
    gss_name_t target = NULL;
    gss_buffer_desc serviceBuffer = {strlen(service), (void *)service};
    major = importName(&minor, &serviceBuffer, &hostBasedService, &target);
    if (major & MTLS_GSS_ERROR_MASK) return status(major, minor);
    gss_channel_bindings_desc channel;
    memset(&channel, 0, sizeof channel);
    channel.application_data.length = bindings_length;
    channel.application_data.value = (void *)bindings;
    gss_buffer_desc in = {input_length, (void *)input};
    gss_buffer_desc out = {0, NULL};
    gss_ctx_id_t handle = (gss_ctx_id_t)*context;
    major = initSecContext(&minor, (gss_cred_id_t)cred, &handle, target, &spnego, flags, 0, bindings != NULL ? &channel : NULL, input != NULL ? &in : NULL, NULL, &out,
                           ret_flags, NULL);
    *context = (mtls_gss_opaque *)handle;
    releaseName(&ignored, &target);
    if (out.length > 0) {
        *output = malloc(out.length);
        if (*output != NULL) {
            memcpy(*output, out.value, out.length);
            *output_length = out.length;
        }
    }
    releaseBuffer(&ignored, &out);
    return status(major, minor);
}

void mtls_gss_delete_context(mtls_gss_opaque *context) {
    if (context == NULL || mtls_gss_load() != NULL) return;
    OM_uint32 minor;
    gss_ctx_id_t handle = (gss_ctx_id_t)context;
    deleteSecContext(&minor, &handle, NULL);
}

void mtls_gss_release_cred(mtls_gss_opaque *cred) {
    if (cred == NULL || mtls_gss_load() != NULL) return;
    OM_uint32 minor;
    gss_cred_id_t handle = (gss_cred_id_t)cred;
    releaseCred(&minor, &handle);
}

const char *mtls_krb5_error_message(int32_t code) {
    if (mtls_gss_load() != NULL || errorMessage == NULL) return NULL;
    return errorMessage((long)code);
}
