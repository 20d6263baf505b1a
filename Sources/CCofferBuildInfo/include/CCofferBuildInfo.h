#ifndef CCOFFER_BUILD_INFO_H
#define CCOFFER_BUILD_INFO_H

/// The commit `coffer` was built from (12 hex digits, "-modified" when the work tree had changes), or
/// "unknown" outside a git checkout. Package.swift passes it to this file alone, so a new commit
/// recompiles one C file and relinks, nothing else.
const char *coffer_build_commit(void);

#endif
