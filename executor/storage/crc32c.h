// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as used by iSCSI/ext4/leveldb:
// Crc32c("123456789") == 0xE3069283. Uses the SSE4.2 crc32 instruction when the CPU has
// it, else a slice-by-8 table implementation; both give identical results.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zinf {

// Extends `crc` (the value returned for the preceding bytes; 0 to start) over data.
uint32_t Crc32c(const void* data, size_t n, uint32_t crc = 0);
uint32_t Crc32cSoftware(const void* data, size_t n, uint32_t crc = 0);
bool Crc32cHardwareAvailable();

}  // namespace zinf
