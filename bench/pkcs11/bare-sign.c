/* The floor for signing through a PKCS #11 token: C_SignInit + C_Sign in a loop, nothing else, on the
   key that Coffer's benchmark uses. bench/compare-pkcs11.py builds and runs it beside
   `coffer speed -k pkcs11:…` to measure what Coffer's layer adds.

   usage: bare-sign MODULE TOKEN-LABEL KEY-LABEL PIN SECONDS
   prints: signs/s and CPU seconds per signature */
#define CRYPTOKI_COMPAT 1
#include "../../Sources/CPKCS11/include/pkcs11.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static CK_FUNCTION_LIST_PTR f;

static void check(CK_RV rv, const char *what) {
    if (rv != CKR_OK) { fprintf(stderr, "%s failed: 0x%lx\n", what, (unsigned long)rv); exit(1); }
}

static double now(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 6) { fprintf(stderr, "usage: %s MODULE TOKEN KEY PIN SECONDS\n", argv[0]); return 2; }
    void *module = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!module) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    CK_RV (*get)(CK_FUNCTION_LIST_PTR_PTR) = (CK_RV (*)(CK_FUNCTION_LIST_PTR_PTR))dlsym(module, "C_GetFunctionList");
    check(get(&f), "C_GetFunctionList");
    CK_C_INITIALIZE_ARGS args = { 0 };
    args.flags = CKF_OS_LOCKING_OK;
    check(f->C_Initialize(&args), "C_Initialize");
    CK_SLOT_ID slots[64];
    CK_ULONG count = 64;
    check(f->C_GetSlotList(CK_TRUE, slots, &count), "C_GetSlotList");
    CK_SLOT_ID slot = (CK_SLOT_ID)-1;
    for (CK_ULONG i = 0; i < count; i++) {
        CK_TOKEN_INFO info;
        check(f->C_GetTokenInfo(slots[i], &info), "C_GetTokenInfo");
        char label[33];
        memcpy(label, info.label, 32);
        label[32] = 0;
        for (int j = 31; j >= 0 && label[j] == ' '; j--) label[j] = 0;
        if (strcmp(label, argv[2]) == 0) slot = slots[i];
    }
    if (slot == (CK_SLOT_ID)-1) { fprintf(stderr, "no token %s\n", argv[2]); return 1; }
    CK_SESSION_HANDLE session;
    check(f->C_OpenSession(slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL, &session), "C_OpenSession");
    check(f->C_Login(session, CKU_USER, (CK_UTF8CHAR_PTR)argv[4], strlen(argv[4])), "C_Login");
    CK_OBJECT_CLASS class = CKO_PRIVATE_KEY;
    CK_ATTRIBUTE template[] = {
        { CKA_CLASS, &class, sizeof class },
        { CKA_LABEL, argv[3], strlen(argv[3]) },
    };
    check(f->C_FindObjectsInit(session, template, 2), "C_FindObjectsInit");
    CK_OBJECT_HANDLE key;
    CK_ULONG found = 0;
    check(f->C_FindObjects(session, &key, 1, &found), "C_FindObjects");
    check(f->C_FindObjectsFinal(session), "C_FindObjectsFinal");
    if (found != 1) { fprintf(stderr, "no key %s\n", argv[3]); return 1; }
    CK_KEY_TYPE type;
    CK_ATTRIBUTE typeAttribute = { CKA_KEY_TYPE, &type, sizeof type };
    check(f->C_GetAttributeValue(session, key, &typeAttribute, 1), "C_GetAttributeValue");

    /* What Coffer signs for a SHA-256 digest: the digest itself (ECDSA) or its DigestInfo (RSA). */
    unsigned char input[51] = { 0x30, 0x31, 0x30, 0x0D, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20 };
    memset(input + 19, 0x5A, 32);
    CK_MECHANISM mechanism = { type == CKK_EC ? CKM_ECDSA : CKM_RSA_PKCS, NULL, 0 };
    unsigned char *message = type == CKK_EC ? input + 19 : input;
    CK_ULONG length = type == CKK_EC ? 32 : 51;
    unsigned char signature[1024];
    double seconds = atof(argv[5]);
    long operations = 0;
    double start = now(CLOCK_MONOTONIC), cpu = now(CLOCK_PROCESS_CPUTIME_ID);
    while (now(CLOCK_MONOTONIC) - start < seconds) {
        CK_ULONG size = sizeof signature;
        check(f->C_SignInit(session, &mechanism, key), "C_SignInit");
        check(f->C_Sign(session, message, length, signature, &size), "C_Sign");
        operations++;
    }
    double wall = now(CLOCK_MONOTONIC) - start;
    cpu = now(CLOCK_PROCESS_CPUTIME_ID) - cpu;
    printf("%.1f %.2f\n", operations / wall, cpu / operations * 1e6);
    f->C_Finalize(NULL);
    return 0;
}
