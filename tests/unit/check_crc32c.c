/*
 * Unit tests for src/crc32c.c: known vectors (RFC 3720, the GCS samples),
 * hardware path == table path on every length and alignment, combine ==
 * the CRC of the concatenation, and the base64 form GCS uses.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "crc32c.h"

START_TEST(known_vectors)
{
	unsigned char zeros[32], ones[32], inc[32];
	const char *s = "123456789";
	int i;

	memset(zeros, 0, sizeof(zeros));
	memset(ones, 0xff, sizeof(ones));
	for (i = 0; i < 32; i++)
		inc[i] = (unsigned char)i;
	/* RFC 3720 B.4 */
	ck_assert_uint_eq(crc32c_update(0, zeros, 32), 0x8A9136AA);
	ck_assert_uint_eq(crc32c_update(0, ones, 32), 0x62A8AB43);
	ck_assert_uint_eq(crc32c_update(0, inc, 32), 0x46DD794E);
	ck_assert_uint_eq(crc32c_update(0, s, 9), 0xE3069283);
	ck_assert_uint_eq(crc32c_update_sw(0, zeros, 32), 0x8A9136AA);
	ck_assert_uint_eq(crc32c_update_sw(0, s, 9), 0xE3069283);
	ck_assert_uint_eq(crc32c_update(0, "", 0), 0);
}
END_TEST

START_TEST(gcs_sample_object)
{
	/* The 1 MiB object of the recorded GCS resumable upload. */
	char *p = malloc(1 << 20), b64[CRC32C_B64LEN];
	int i;

	ck_assert_ptr_nonnull(p);
	for (i = 0; i < (1 << 20); i += 4)
		memcpy(p + i, "7123", 4);
	ck_assert_uint_eq(crc32c_update(0, p, 1 << 20), 0x9bf92fe2);
	crc32c_base64(crc32c_update(0, p, 1 << 20), b64);
	ck_assert_str_eq(b64, "m/kv4g==");
	free(p);
}
END_TEST

START_TEST(hw_equals_table)
{
	unsigned char buf[300 + 16];
	size_t len, off;
	uint32_t a, b;

	srand(1234);
	for (len = 0; len < sizeof(buf); len++)
		buf[len] = (unsigned char)rand();
	for (off = 0; off < 8; off++)
		for (len = 0; len <= 300; len++) {
			a = crc32c_update_hw(0, buf + off, len);
			b = crc32c_update_sw(0, buf + off, len);
			ck_assert_msg(a == b, "len %zu off %zu: %08x != %08x",
			    len, off, a, b);
			/* Continuing from a non-zero crc agrees too. */
			a = crc32c_update_hw(0x12345678, buf + off, len);
			b = crc32c_update_sw(0x12345678, buf + off, len);
			ck_assert_uint_eq(a, b);
		}
}
END_TEST

/* Lengths around the three-chain stripes (3 x 4096 bytes) of the
   hardware path, at every alignment: the joined chains agree with the
   table. */
START_TEST(hw_stripes_equal_table)
{
	static const size_t lens[] = { 12287, 12288, 12289, 12295, 12296, 24575,
		24576, 24583, 36864, 40000, 65536 + 3 };
	unsigned char *buf;
	size_t i, off, n = 65536 + 16;
	uint32_t a, b;

	buf = malloc(n);
	ck_assert_ptr_nonnull(buf);
	srand(99);
	for (i = 0; i < n; i++)
		buf[i] = (unsigned char)rand();
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (off = 0; off < 8; off++) {
			a = crc32c_update_hw(0xdeadbeef, buf + off, lens[i]);
			b = crc32c_update_sw(0xdeadbeef, buf + off, lens[i]);
			ck_assert_msg(a == b, "len %zu off %zu: %08x != %08x",
			    lens[i], off, a, b);
		}
	free(buf);
}
END_TEST

START_TEST(incremental_equals_oneshot)
{
	unsigned char buf[1000];
	size_t i, cut;
	uint32_t whole, c;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	whole = crc32c_update(0, buf, sizeof(buf));
	for (cut = 0; cut <= sizeof(buf); cut += 37) {
		c = crc32c_update(0, buf, cut);
		c = crc32c_update(c, buf + cut, sizeof(buf) - cut);
		ck_assert_uint_eq(c, whole);
	}
}
END_TEST

START_TEST(combine_equals_concatenation)
{
	unsigned char buf[4096];
	size_t i, cut;
	uint32_t whole, c1, c2;

	srand(99);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)rand();
	whole = crc32c_update(0, buf, sizeof(buf));
	for (cut = 0; cut <= sizeof(buf); cut += 61) {
		c1 = crc32c_update(0, buf, cut);
		c2 = crc32c_update(0, buf + cut, sizeof(buf) - cut);
		ck_assert_uint_eq(
		    crc32c_combine(c1, c2, sizeof(buf) - cut), whole);
	}
	/* Empty second part leaves crc1 alone. */
	ck_assert_uint_eq(crc32c_combine(0xdeadbeef, 0, 0), 0xdeadbeef);
	/* The composite of the GCS compose sample: "aaaaaaaaaa" twice. */
	c1 = crc32c_update(0, "aaaaaaaaaa", 10);
	{
		char b64[CRC32C_B64LEN];

		crc32c_base64(c1, b64);
		ck_assert_str_eq(b64, "5yZkMA==");
		crc32c_base64(crc32c_combine(c1, c1, 10), b64);
		ck_assert_str_eq(b64, "gAyT5Q==");
	}
}
END_TEST

START_TEST(combine_large_lengths)
{
	/* 3 parts of 5 GiB each are never materialised: check algebra. */
	unsigned char buf[64];
	uint32_t a, b, c, ab, bc;

	memset(buf, 'x', sizeof(buf));
	a = crc32c_update(0, buf, 10);
	b = crc32c_update(0, buf, 20);
	c = crc32c_update(0, buf, 30);
	ab = crc32c_combine(a, b, 20);
	bc = crc32c_combine(b, c, 30);
	ck_assert_uint_eq(crc32c_combine(ab, c, 30), crc32c_combine(a, bc, 50));
	ck_assert_uint_eq(crc32c_combine(ab, c, 30), crc32c_update(0, buf, 60));
	/* Lengths past 4 GiB do not overflow (no crash, stable result). */
	ck_assert_uint_eq(crc32c_combine(a, b, (uint64_t)5 << 30),
	    crc32c_combine(a, b, (uint64_t)5 << 30));
}
END_TEST

START_TEST(base64_form)
{
	char b64[CRC32C_B64LEN];
	uint32_t v;

	crc32c_base64(0, b64);
	ck_assert_str_eq(b64, "AAAAAA==");
	crc32c_base64(0xE3069283, b64);
	ck_assert_str_eq(b64, "4waSgw==");
	ck_assert_int_eq(crc32c_parse_base64("4waSgw==", &v), 0);
	ck_assert_uint_eq(v, 0xE3069283);
	ck_assert_int_eq(crc32c_parse_base64("m/kv4g==", &v), 0);
	ck_assert_uint_eq(v, 0x9bf92fe2);
	ck_assert_int_eq(crc32c_parse_base64("AAAAAA==", &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(crc32c_parse_base64("", &v), -1);
	ck_assert_int_eq(crc32c_parse_base64("4waSgw=", &v), -1);
	ck_assert_int_eq(crc32c_parse_base64("4waSgw===", &v), -1);
	ck_assert_int_eq(crc32c_parse_base64("4wa*gw==", &v), -1);
	ck_assert_int_eq(crc32c_parse_base64("4waSgx==", &v), -1);
	ck_assert_int_eq(crc32c_parse_base64("4waSgwAA", &v), -1);
}
END_TEST

static Suite *
crc32c_suite(void)
{
	Suite *s = suite_create("crc32c");
	TCase *tc;

	tc = tcase_create("vectors");
	tcase_add_test(tc, known_vectors);
	tcase_add_test(tc, gcs_sample_object);
	suite_add_tcase(s, tc);
	tc = tcase_create("paths");
	tcase_add_test(tc, hw_equals_table);
	tcase_add_test(tc, hw_stripes_equal_table);
	tcase_add_test(tc, incremental_equals_oneshot);
	suite_add_tcase(s, tc);
	tc = tcase_create("combine");
	tcase_add_test(tc, combine_equals_concatenation);
	tcase_add_test(tc, combine_large_lengths);
	suite_add_tcase(s, tc);
	tc = tcase_create("base64");
	tcase_add_test(tc, base64_form);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(crc32c_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
