#ifndef CBUILDINFO_H
#define CBUILDINFO_H

/// The git commit BuildInfoPlugin recorded for this build, or NULL when the build has none.
const char *mtls_build_commit(void);

#endif
