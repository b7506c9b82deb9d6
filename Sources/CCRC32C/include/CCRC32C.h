#ifndef MSGLOG_CCRC32C_H
#define MSGLOG_CCRC32C_H

#include <stddef.h>
#include <stdint.h>

/// Continues a CRC-32C (Castagnoli) over `count` bytes with the CPU's CRC32
/// instruction (SSE4.2 on x86-64, the CRC extension on AArch64). Returns
/// the updated checksum in the same pre/post-inverted form as the table
/// version, so the two can be mixed. Only call it when
/// msglog_crc32c_hardware_available() is nonzero.
uint32_t msglog_crc32c_hardware(uint32_t crc, const void *bytes, size_t count);

/// Whether this CPU has the instruction; decided once, at run time, so one
/// binary runs on every machine.
int msglog_crc32c_hardware_available(void);

/// msglog_crc32c_hardware_available(), decided when the program starts:
/// read by every checksum, where a Swift lazy global would be a call.
extern int msglog_crc32c_has_hardware;

static inline int msglog_crc32c_uses_hardware(void) { return msglog_crc32c_has_hardware; }

#endif
