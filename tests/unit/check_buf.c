/*
 * Unit tests for src/buf.c: appending, the hard cap, formatting,
 * detaching and wiping.
 */
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "buf.h"

START_TEST(append_and_terminate)
{
	struct buf b;

	buf_init(&b, BUF_NOCAP);
	ck_assert_ptr_nonnull(b.data);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_str_eq(b.data, "");
	ck_assert_int_eq(buf_append(&b, "ab\0cd", 5), 0);
	ck_assert_uint_eq(b.len, 5);
	ck_assert_int_eq(memcmp(b.data, "ab\0cd", 6), 0);
	ck_assert_int_eq(buf_puts(&b, "ef"), 0);
	ck_assert_uint_eq(b.len, 7);
	ck_assert_int_eq(b.data[7], '\0');
	ck_assert_int_eq(buf_append(&b, NULL, 0), 0);
	ck_assert_uint_eq(b.len, 7);
	buf_clear(&b);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_str_eq(b.data, "");
	buf_release(&b);
	ck_assert_ptr_null(b.data);
}
END_TEST

START_TEST(grows)
{
	struct buf b;
	char chunk[1000];
	size_t i;

	memset(chunk, 'x', sizeof chunk);
	buf_init(&b, BUF_NOCAP);
	for (i = 0; i < 1000; i++)
		ck_assert_int_eq(buf_append(&b, chunk, sizeof chunk), 0);
	ck_assert_uint_eq(b.len, 1000000);
	ck_assert_uint_gt(b.size, b.len);
	ck_assert_int_eq(b.data[b.len], '\0');
	buf_release(&b);
}
END_TEST

START_TEST(cap_enforced)
{
	struct buf b;

	buf_init(&b, 10);
	ck_assert_int_eq(buf_puts(&b, "0123456789"), 0);
	ck_assert_int_eq(buf_puts(&b, "a"), -1);
	ck_assert_uint_eq(b.len, 10);
	ck_assert_str_eq(b.data, "0123456789");
	buf_clear(&b);
	ck_assert_int_eq(buf_puts(&b, "01234"), 0);
	ck_assert_int_eq(buf_append(&b, "0123456", 6), -1);
	ck_assert_str_eq(b.data, "01234");
	ck_assert_int_eq(buf_printf(&b, "%s", "abcdef"), -1);
	ck_assert_str_eq(b.data, "01234");
	ck_assert_int_eq(buf_printf(&b, "%d", 56789), 0);
	ck_assert_str_eq(b.data, "0123456789");
	/* Sizes near SIZE_MAX do not wrap around the cap check. */
	ck_assert_int_eq(buf_append(&b, "x", (size_t)-1), -1);
	buf_release(&b);
}
END_TEST

START_TEST(printf_formats)
{
	struct buf b;
	char big[5000];

	buf_init(&b, BUF_NOCAP);
	ck_assert_int_eq(buf_printf(&b, "%s=%d;", "a", 1), 0);
	ck_assert_int_eq(buf_printf(&b, "%05.1f", 2.25), 0);
	ck_assert_str_eq(b.data, "a=1;002.2");
	memset(big, 'y', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	ck_assert_int_eq(buf_printf(&b, "%s", big), 0);
	ck_assert_uint_eq(b.len, 9 + sizeof big - 1);
	buf_release(&b);
}
END_TEST

START_TEST(detach)
{
	struct buf b;
	size_t len = 0;
	char *p;

	buf_init(&b, BUF_NOCAP);
	buf_puts(&b, "hello");
	p = buf_detach(&b, &len);
	ck_assert_str_eq(p, "hello");
	ck_assert_uint_eq(len, 5);
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.len, 0);
	free(p);
	buf_release(&b); /* released already: a no-op */
	buf_init(&b, 4);
	p = buf_detach(&b, NULL);
	ck_assert_str_eq(p, "");
	free(p);
}
END_TEST

START_TEST(release_secret)
{
	struct buf b;

	buf_init(&b, BUF_NOCAP);
	buf_puts(&b, "ya29.secret");
	buf_release_secret(&b);
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.len, 0);
	buf_release_secret(&b);
}
END_TEST

static Suite *
buf_suite(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("buf");

	tcase_add_test(tc, append_and_terminate);
	tcase_add_test(tc, grows);
	tcase_add_test(tc, cap_enforced);
	tcase_add_test(tc, printf_formats);
	tcase_add_test(tc, detach);
	tcase_add_test(tc, release_secret);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(buf_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
