/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78).  The hardware
 * path uses the SSE4.2 crc32 instruction 8 bytes per step, chosen at run
 * time with __builtin_cpu_supports(); the portable path is slicing-by-8.
 * The instruction's latency is three times its issue rate, so long inputs
 * run three independent chains over adjacent blocks and join them with
 * table-driven shifts (multiplications by x^(8 CRC32C_BLK) and
 * x^(16 CRC32C_BLK) mod P): about three times the speed of one chain.
 * crc32c_combine() uses the x^(8n) mod P method of zlib's crc32_combine.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "util.h"

#define CRC32C_POLY 0x82f63b78u
#define CRC32C_BLK 4096 /* bytes per chain and stripe (three stripes) */

static uint32_t crc32c_table[8][256];
/* crc32c_shift[k][j][i]: (i << 8j) * x^(8 (k + 1) CRC32C_BLK) mod P */
static uint32_t crc32c_shift[2][4][256];
static int crc32c_hw;
static pthread_once_t crc32c_once = PTHREAD_ONCE_INIT;

static uint32_t crc32c_multmodp(uint32_t, uint32_t);
static uint32_t crc32c_xpow8n(uint64_t);

static void
crc32c_init(void)
{
	uint32_t c, x;
	int i, j, k;

	for (i = 0; i < 256; i++) {
		c = (uint32_t)i;
		for (j = 0; j < 8; j++)
			c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
		crc32c_table[0][i] = c;
	}
	for (i = 0; i < 256; i++) {
		c = crc32c_table[0][i];
		for (j = 1; j < 8; j++) {
			c = crc32c_table[0][c & 0xff] ^ (c >> 8);
			crc32c_table[j][i] = c;
		}
	}
	for (k = 0; k < 2; k++) {
		x = crc32c_xpow8n((uint64_t)(k + 1) * CRC32C_BLK);
		for (j = 0; j < 4; j++)
			for (i = 0; i < 256; i++)
				crc32c_shift[k][j][i] =
				    crc32c_multmodp(x, (uint32_t)i << (8 * j));
	}
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	crc32c_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#else
	crc32c_hw = 0;
#endif
}

int
crc32c_have_hw(void)
{
	pthread_once(&crc32c_once, crc32c_init);
	return crc32c_hw;
}

static uint64_t
crc32c_load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

uint32_t
crc32c_update_sw(uint32_t crc, const void *data, size_t len)
{
	const unsigned char *p = data;
	uint32_t c = ~crc;
	uint64_t w;

	pthread_once(&crc32c_once, crc32c_init);
	while (len > 0 && ((uintptr_t)p & 7) != 0) {
		c = crc32c_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
		len--;
	}
	while (len >= 8) {
		/* Little-endian load: the low byte is the first byte. */
		w = crc32c_load64(p);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		w = __builtin_bswap64(w);
#endif
		w ^= c;
		c = crc32c_table[7][w & 0xff] ^
		    crc32c_table[6][(w >> 8) & 0xff] ^
		    crc32c_table[5][(w >> 16) & 0xff] ^
		    crc32c_table[4][(w >> 24) & 0xff] ^
		    crc32c_table[3][(w >> 32) & 0xff] ^
		    crc32c_table[2][(w >> 40) & 0xff] ^
		    crc32c_table[1][(w >> 48) & 0xff] ^
		    crc32c_table[0][(w >> 56) & 0xff];
		p += 8;
		len -= 8;
	}
	while (len > 0) {
		c = crc32c_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
		len--;
	}
	return ~c;
}

/* v * x^(8 (k + 1) CRC32C_BLK) mod P, for a raw (unconditioned) crc v */
static uint32_t
crc32c_shift_blk(int k, uint32_t v)
{
	return crc32c_shift[k][0][v & 0xff] ^
	       crc32c_shift[k][1][(v >> 8) & 0xff] ^
	       crc32c_shift[k][2][(v >> 16) & 0xff] ^
	       crc32c_shift[k][3][v >> 24];
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t
crc32c_sse42(uint32_t crc, const unsigned char *p, size_t len)
{
	uint64_t c = (uint32_t)~crc, b, d;
	size_t i;

	while (len > 0 && ((uintptr_t)p & 7) != 0) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	/* The raw crc is linear: crc(s, A B) = s x^(8|AB|) + crc(0, A B),
	   so chains over the three blocks of a stripe, the second and third
	   started from zero, join by shifting the first two. */
	while (len >= 3 * CRC32C_BLK) {
		b = 0;
		d = 0;
		for (i = 0; i < CRC32C_BLK; i += 8) {
			c = __builtin_ia32_crc32di(c, crc32c_load64(p + i));
			b = __builtin_ia32_crc32di(
			    b, crc32c_load64(p + CRC32C_BLK + i));
			d = __builtin_ia32_crc32di(
			    d, crc32c_load64(p + 2 * CRC32C_BLK + i));
		}
		c = crc32c_shift_blk(1, (uint32_t)c) ^
		    crc32c_shift_blk(0, (uint32_t)b) ^ (uint32_t)d;
		p += 3 * CRC32C_BLK;
		len -= 3 * CRC32C_BLK;
	}
	while (len >= 8) {
		c = __builtin_ia32_crc32di(c, crc32c_load64(p));
		p += 8;
		len -= 8;
	}
	while (len > 0) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	return ~(uint32_t)c;
}
#endif

uint32_t
crc32c_update_hw(uint32_t crc, const void *data, size_t len)
{
#if defined(__x86_64__)
	if (crc32c_have_hw())
		return crc32c_sse42(crc, data, len);
#endif
	return crc32c_update_sw(crc, data, len);
}

uint32_t
crc32c_update(uint32_t crc, const void *data, size_t len)
{
	return crc32c_update_hw(crc, data, len);
}

/* a * b mod P, both reflected polynomials (bit 31 is x^0). */
static uint32_t
crc32c_multmodp(uint32_t a, uint32_t b)
{
	uint32_t m = (uint32_t)1 << 31, p = 0;

	for (;;) {
		if (a & m) {
			p ^= b;
			if ((a & (m - 1)) == 0)
				break;
		}
		m >>= 1;
		b = (b & 1) ? (b >> 1) ^ CRC32C_POLY : b >> 1;
	}
	return p;
}

/* x^(8 n) mod P */
static uint32_t
crc32c_xpow8n(uint64_t n)
{
	uint32_t p = (uint32_t)1 << 31;  /* x^0 */
	uint32_t sq = (uint32_t)1 << 30; /* x^1 */
	int i;

	for (i = 0; i < 3; i++)
		sq = crc32c_multmodp(sq, sq); /* x^8 */
	while (n != 0) {
		if (n & 1)
			p = crc32c_multmodp(sq, p);
		sq = crc32c_multmodp(sq, sq);
		n >>= 1;
	}
	return p;
}

uint32_t
crc32c_combine(uint32_t crc1, uint32_t crc2, uint64_t len2)
{
	/* Shift crc1 by 8 * len2 bits: multiply by x^(8 len2) mod P. */
	return crc32c_multmodp(crc32c_xpow8n(len2), crc1) ^ crc2;
}

void
crc32c_base64(uint32_t crc, char *out)
{
	unsigned char b[4];

	b[0] = (unsigned char)(crc >> 24);
	b[1] = (unsigned char)(crc >> 16);
	b[2] = (unsigned char)(crc >> 8);
	b[3] = (unsigned char)crc;
	tpu_b64_encode_to(out, b, sizeof b, 0);
}

int
crc32c_parse_base64(const char *s, uint32_t *out)
{
	unsigned char *b;
	size_t n;

	if (strlen(s) != 8 || s[6] != '=' || s[7] != '=')
		return -1;
	if ((b = tpu_b64_decode(s, 8, &n, 0)) == NULL)
		return -1; /* a bad character, or non-canonical trailing bits */
	if (n != 4) {
		free(b);
		return -1;
	}
	*out = ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) |
	       ((uint32_t)b[2] << 8) | (uint32_t)b[3];
	free(b);
	return 0;
}
