// CRC-32C with the processor's CRC32 instruction, eight bytes per step.
// Compiled for the instruction set extension only inside these functions
// (a target attribute), so the rest of the binary stays baseline x86-64;
// msglog_crc32c_hardware_available() checks the CPU before it is used.
#include "CCRC32C.h"

#include <string.h>

int msglog_crc32c_has_hardware = 0;

__attribute__((constructor)) static void msglog_crc32c_decide(void) {
  msglog_crc32c_has_hardware = msglog_crc32c_hardware_available();
}

#if defined(__x86_64__)
#include <cpuid.h>

__attribute__((target("sse4.2")))
uint32_t msglog_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
  const unsigned char *p = bytes;
  uint64_t c = ~crc;
  while (count >= 8) {
    uint64_t word;
    memcpy(&word, p, 8);
    c = __builtin_ia32_crc32di(c, word);
    p += 8;
    count -= 8;
  }
  // The last 0-7 bytes in at most three steps (4, 2, 1): records are
  // short, and a byte at a time was a third of the work on them.
  uint32_t c32 = (uint32_t)c;
  if (count & 4) {
    uint32_t word;
    memcpy(&word, p, 4);
    c32 = __builtin_ia32_crc32si(c32, word);
    p += 4;
  }
  if (count & 2) {
    uint16_t half;
    memcpy(&half, p, 2);
    c32 = __builtin_ia32_crc32hi(c32, half);
    p += 2;
  }
  if (count & 1) c32 = __builtin_ia32_crc32qi(c32, *p);
  return ~c32;
}

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <sys/platform/x86.h>
#endif

int msglog_crc32c_hardware_available(void) {
#ifdef CPU_FEATURE_ACTIVE
  // What glibc found at start: every process asks at start (a static
  // binary too), and `cpuid` is dear under a hypervisor (it leaves the
  // guest): about 1 % of `msglog --version` here.
  return CPU_FEATURE_ACTIVE(SSE4_2);
#else
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
  return (ecx & bit_SSE4_2) != 0;
#endif
}

#elif defined(__aarch64__) && defined(__linux__)
#include <arm_acle.h>
#include <sys/auxv.h>
#include <asm/hwcap.h>

__attribute__((target("crc")))
uint32_t msglog_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
  const unsigned char *p = bytes;
  uint32_t c = ~crc;
  while (count >= 8) {
    uint64_t word;
    memcpy(&word, p, 8);
    c = __crc32cd(c, word);
    p += 8;
    count -= 8;
  }
  if (count & 4) {
    uint32_t word;
    memcpy(&word, p, 4);
    c = __crc32cw(c, word);
    p += 4;
  }
  if (count & 2) {
    uint16_t half;
    memcpy(&half, p, 2);
    c = __crc32ch(c, half);
    p += 2;
  }
  if (count & 1) c = __crc32cb(c, *p);
  return ~c;
}

int msglog_crc32c_hardware_available(void) { return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0; }

#else
uint32_t msglog_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
  (void)bytes;
  (void)count;
  return crc;
}

int msglog_crc32c_hardware_available(void) { return 0; }
#endif
