#include "CCofferBuildInfo.h"

#ifndef COFFER_COMMIT
#define COFFER_COMMIT "unknown"
#endif

const char *coffer_build_commit(void) { return COFFER_COMMIT; }
