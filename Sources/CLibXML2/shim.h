// libxml2's HTML parser and tree API (Debian: libxml2-dev; pkg-config libxml-2.0).
#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
