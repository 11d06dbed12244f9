// SwiftPM needs a source file in a C target; the module is the header.
#include "CFloorOpenSSL.h"
