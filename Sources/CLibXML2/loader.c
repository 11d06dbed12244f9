#include "CLibXML2.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

typedef mtls_xmlDoc *(*ReadMemory)(const char *, int, const char *, const char *, int);
typedef void (*FreeDoc)(mtls_xmlDoc *);
typedef void (*InitParser)(void);

static ReadMemory readMemory;
static FreeDoc freeDoc;
static const char *failure = "libxml2 is not loaded";
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    // The sonames of libxml2 2.x before and after 2.14, then the development link, then macOS.
    static const char *const names[] = {"libxml2.so.2", "libxml2.so.16", "libxml2.so", "libxml2.2.dylib"};
    void *handle = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && handle == NULL; i++) handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        failure = "libxml2 could not be loaded (libxml2.so.2 or libxml2.so.16); install it (Debian: apt-get install libxml2)";
        return;
    }
    readMemory = (ReadMemory)dlsym(handle, "htmlReadMemory");
    freeDoc = (FreeDoc)dlsym(handle, "xmlFreeDoc");
    InitParser initParser = (InitParser)dlsym(handle, "xmlInitParser");
    if (readMemory == NULL || freeDoc == NULL || initParser == NULL) {
        readMemory = NULL;
        failure = "the libxml2 found lacks htmlReadMemory, xmlFreeDoc or xmlInitParser";
        return;
    }
    initParser();
    failure = NULL;
}

const char *mtls_xml_load(void) {
    pthread_once(&once, load);
    return failure;
}

mtls_xmlDoc *mtls_htmlReadMemory(const char *buffer, int size, const char *url, const char *encoding, int options) {
    if (mtls_xml_load() != NULL) return NULL;
    return readMemory(buffer, size, url, encoding, options);
}

void mtls_xmlFreeDoc(mtls_xmlDoc *document) {
    if (freeDoc != NULL) freeDoc(document);
}
