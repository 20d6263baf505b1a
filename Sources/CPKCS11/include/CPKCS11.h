#ifndef C_COFFER_PKCS11_H
#define C_COFFER_PKCS11_H

/* The PKCS #11 (Cryptoki) types and function list, with the standard's own names (CK_ULONG,
   CK_FUNCTION_LIST…). pkcs11.h is p11-kit's edition of the OASIS header, vendored as its notice allows
   (see README.md). Coffer calls no function of it directly: a token's module is loaded with dlopen and
   reached through the CK_FUNCTION_LIST that its C_GetFunctionList returns. */
#define CRYPTOKI_COMPAT 1
#include "pkcs11.h"

#endif
