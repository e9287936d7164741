/*
 * CRC-32C (Castagnoli), the checksum Cloud Storage keeps for every object:
 * SSE4.2 instructions when the CPU has them, a slicing-by-8 table
 * otherwise; crc32c_combine() for composite objects; and the base64 text
 * of the big-endian value, as GCS sends it in "crc32c" and X-Goog-Hash.
 */
#ifndef TPUCTL_CRC32C_H
#define TPUCTL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* "AAAAAA==" plus the terminator. */
#define CRC32C_B64LEN 9

/*
 * Continue crc (0 to start; the value a previous call returned) over len
 * bytes.  Picks the hardware path when available.
 */
uint32_t crc32c_update(uint32_t crc, const void *, size_t len);

/* The table implementation, always available (for tests). */
uint32_t crc32c_update_sw(uint32_t crc, const void *, size_t len);

/*
 * The SSE4.2 implementation; call it only when crc32c_have_hw() is 1
 * (it falls back to the table otherwise).
 */
uint32_t crc32c_update_hw(uint32_t crc, const void *, size_t len);
int crc32c_have_hw(void);

/*
 * The CRC of A followed by B, from crc(A), crc(B) and the length of B:
 * how a composite object's crc32c follows from its components'.
 */
uint32_t crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2);

/* The base64 of the 4 big-endian bytes into out (CRC32C_B64LEN bytes). */
void crc32c_base64(uint32_t, char *out);

/* Parse that form back; 0, or -1 when s is not 8 base64 chars of 4 bytes. */
int crc32c_parse_base64(const char *s, uint32_t *);

#endif
