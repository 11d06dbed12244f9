// libxml2's HTML parser, loaded on first use with dlopen instead of linked.
//
// Linking libxml2 makes every process load it and, on Debian, ICU and liblzma with it, at
// start-up of every `mtls` command, although only login flows
// (HTML forms, SAML POST binding) and charset sniffing parse HTML. This target declares the
// part of libxml2's public ABI those use — three functions and the leading fields of the tree
// structures — and loads the library when the first document is parsed.
//
// The structures below are the leading members of libxml2's `struct _xmlNode`, `struct _xmlAttr`
// and `struct _xmlDoc` (libxml/tree.h), whose layout has been part of the public ABI since
// libxml2 2.0; the constants are those of libxml/HTMLparser.h and libxml/tree.h.
#ifndef MTLS_CLIBXML2_H
#define MTLS_CLIBXML2_H

#pragma clang assume_nonnull begin

typedef unsigned char mtls_xmlChar;
typedef struct mtls_xmlNode mtls_xmlNode;
typedef struct mtls_xmlAttr mtls_xmlAttr;

struct mtls_xmlNode {
    void *_Nullable _private;
    int type;  // xmlElementType
    const mtls_xmlChar *_Nullable name;
    mtls_xmlNode *_Nullable children;
    mtls_xmlNode *_Nullable last;
    mtls_xmlNode *_Nullable parent;
    mtls_xmlNode *_Nullable next;
    mtls_xmlNode *_Nullable prev;
    void *_Nullable doc;
    void *_Nullable ns;
    mtls_xmlChar *_Nullable content;
    mtls_xmlAttr *_Nullable properties;
};

struct mtls_xmlAttr {
    void *_Nullable _private;
    int type;
    const mtls_xmlChar *_Nullable name;
    mtls_xmlNode *_Nullable children;
    mtls_xmlNode *_Nullable last;
    mtls_xmlNode *_Nullable parent;
    mtls_xmlAttr *_Nullable next;
};

typedef struct mtls_xmlDoc {
    void *_Nullable _private;
    int type;
    char *_Nullable name;
    mtls_xmlNode *_Nullable children;
} mtls_xmlDoc;

// xmlElementType
enum { MTLS_XML_ELEMENT_NODE = 1, MTLS_XML_TEXT_NODE = 3, MTLS_XML_CDATA_SECTION_NODE = 4 };

// htmlParserOption
enum {
    MTLS_HTML_PARSE_RECOVER = 1 << 0,
    MTLS_HTML_PARSE_NOERROR = 1 << 5,
    MTLS_HTML_PARSE_NOWARNING = 1 << 6,
    MTLS_HTML_PARSE_NOBLANKS = 1 << 8,
    MTLS_HTML_PARSE_NONET = 1 << 11,
    MTLS_HTML_PARSE_IGNORE_ENC = 1 << 21,
};

/// Loads libxml2 and calls xmlInitParser, once per process (thread-safe). Returns NULL when the
/// parser is ready, or why it is not.
const char *_Nullable mtls_xml_load(void);

/// htmlReadMemory; NULL when libxml2 is not loaded (call mtls_xml_load first) or parsing failed.
mtls_xmlDoc *_Nullable mtls_htmlReadMemory(const char *buffer, int size, const char *_Nullable url, const char *_Nullable encoding, int options);

/// xmlFreeDoc.
void mtls_xmlFreeDoc(mtls_xmlDoc *document);

#pragma clang assume_nonnull end

#endif
