// libxml2's HTML parser and tree API (Debian: libxml2-dev; pkg-config libxml-2.0).
#include <libxml/xmlversion.h>
// Debian builds libxml2 with ICU, whose <unicode/ucnv.h> would clash with the ICU headers that
// Foundation ships. Only xmlCharEncodingHandler's private fields depend on it, and Swift never
// touches that struct, so the ICU part of the headers is left out.
#undef LIBXML_ICU_ENABLED
#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
