/*
 * Unit tests for src/compat.c against the shipped config/compat.json:
 * every refusal (no TPU backend, unknown framework or version, wrong
 * generation or runtime, TensorFlow without a TensorFlow runtime, Python
 * too old) is one line naming the reason and the nearest working choice,
 * and the matrix is consistent with the catalog.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "catalog.h"
#include "compat.h"
#include "json.h"
#include "xmalloc.h"

static struct compat c;

static void
setup(void)
{
	struct tpu_err err;
	const char *src = getenv("TPUCTL_TEST_SRCDIR");
	char dir[4096];

	snprintf(dir, sizeof dir, "%s/config", src != NULL ? src : ".");
	tpu_err_init(&err);
	ck_assert_msg(compat_load(&c, dir, &err) == 0, "%s", err.msg);
}

static void
teardown(void)
{
	compat_release(&c);
}

static void
refused(const char *fw, const char *ver, const char *gen, const char *rt,
    const char *want1, const char *want2)
{
	struct compat_choice ch;
	struct tpu_err err;

	tpu_err_init(&err);
	ck_assert_int_eq(
	    compat_resolve(&c, fw, ver, gen, rt, &ch, &err), TPU_E_USAGE);
	ck_assert_msg(
	    strstr(err.msg, want1) != NULL, "'%s' lacks '%s'", err.msg, want1);
	ck_assert_msg(want2 == NULL || strstr(err.msg, want2) != NULL,
	    "'%s' lacks '%s'", err.msg, want2);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
}

START_TEST(no_tpu_backend)
{
	refused("mxnet", NULL, "v4", "tpu-ubuntu2204-base",
	    "cannot run on a TPU", "use jax, pytorch or tensorflow");
	refused("chainer", NULL, "v4", "tpu-ubuntu2204-base", "CUDA", NULL);
	refused("cntk", "2.7", "v4", "tpu-ubuntu2204-base", "cntk", NULL);
	refused("foo", NULL, "v4", "tpu-ubuntu2204-base",
	    "unknown framework 'foo'", "use jax, pytorch or tensorflow");
}
END_TEST

START_TEST(unknown_versions)
{
	struct tpu_err err;

	/* above every known version: the newest below */
	refused("jax", "9.9", "v4", "tpu-ubuntu2204-base",
	    "jax 9.9 is not in tpuctl's compatibility matrix",
	    "--version 0.6.1");
	/* between: the newest below */
	refused("jax", "0.5.0", "v4", "tpu-ubuntu2204-base", "--version 0.4.34",
	    "known: 0.6.1, 0.4.34");
	/* below every known version: the oldest above */
	refused("pytorch", "1.13", "v4", "tpu-ubuntu2204-base",
	    "--version 2.6.0", NULL);
	tpu_err_init(&err);
	ck_assert_int_eq(compat_check_framework(&c, "jax", "0.4.34", &err), 0);
	ck_assert_int_eq(compat_check_framework(&c, "jax", NULL, &err), 0);
}
END_TEST

START_TEST(resolve_newest)
{
	struct compat_choice ch;
	struct tpu_err err;
	const cJSON *r;

	tpu_err_init(&err);
	ck_assert_int_eq(compat_resolve(&c, "jax", NULL, "v4",
	                     "tpu-ubuntu2204-base", &ch, &err),
	    0);
	ck_assert_str_eq(ch.version, "0.6.1");
	ck_assert_str_eq(ch.runtime_python, "3.10");
	r = cJSON_GetArrayItem(ch.requirements, 0);
	ck_assert_str_eq(r->valuestring, "jax[tpu]==0.6.1");
	ck_assert_str_eq(json_opt_string(ch.packages, "libtpu", ""), "0.0.15");
	ck_assert_int_eq(compat_resolve(&c, "jax", "0.4.34", "v5p",
	                     "v2-alpha-tpuv5", &ch, &err),
	    0);
	ck_assert_str_eq(cJSON_GetArrayItem(ch.find_links, 0)->valuestring,
	    "https://storage.googleapis.com/jax-releases/libtpu_releases.html");
	ck_assert_int_eq(compat_resolve(&c, "pytorch", "2.6.0", "v5litepod",
	                     "v2-alpha-tpuv5-lite", &ch, &err),
	    0);
	ck_assert_int_eq(compat_resolve(&c, "tensorflow", NULL, "v4",
	                     "tpu-vm-tf-2.16.1-pod-pjrt", &ch, &err),
	    0);
	ck_assert_str_eq(ch.version, "2.16.1");
}
END_TEST

START_TEST(runtime_refusals)
{
	/* TensorFlow on a base runtime, on v5p's runtime */
	refused("tensorflow", NULL, "v4", "tpu-ubuntu2204-base",
	    "runtime tpu-ubuntu2204-base has no TensorFlow support",
	    "--version tpu-vm-tf-2.16.1-pjrt");
	refused("tensorflow", "2.16.1", "v5p", "v2-alpha-tpuv5",
	    "no tensorflow version of tpuctl's matrix supports v5p",
	    "supports v2, v3, v4 only");
	/* a TensorFlow version that does not match the runtime's */
	refused("tensorflow", "2.15.0", "v4", "tpu-vm-tf-2.16.1-pjrt",
	    "tensorflow 2.15.0 is not known to work on v4 with runtime "
	    "tpu-vm-tf-2.16.1-pjrt",
	    "--version 2.16.1");
	/* jax on a TensorFlow runtime */
	refused("jax", NULL, "v4", "tpu-vm-tf-2.16.1-pjrt",
	    "not known to work with runtime tpu-vm-tf-2.16.1-pjrt",
	    "tpu-ubuntu2204-base");
	refused("jax", NULL, "v6e", "tpu-vm-cos-stable",
	    "runtime version 'tpu-vm-cos-stable' is not in", NULL);
}
END_TEST

START_TEST(python_too_old)
{
	/* tpu-vm-base is Ubuntu 20.04, Python 3.8; jax needs 3.10 */
	refused("jax", NULL, "v4", "tpu-vm-base", "needs Python >= 3.10",
	    "runtime tpu-vm-base has Python 3.8: use a node with runtime "
	    "tpu-ubuntu2204-base");
	refused("jax", "0.4.34", "v5p", "tpu-vm-v4-base",
	    "needs Python >= 3.10", "v2-alpha-tpuv5");
}
END_TEST

START_TEST(python_ok_for_pytorch)
{
	struct compat_choice ch;
	struct tpu_err err;

	/* torch_xla 2.6 accepts Python 3.8 */
	tpu_err_init(&err);
	ck_assert_int_eq(
	    compat_resolve(&c, "pytorch", NULL, "v4", "tpu-vm-base", &ch, &err),
	    0);
	ck_assert_str_eq(ch.version, "2.6.0");
}
END_TEST

START_TEST(version_cmp)
{
	ck_assert_int_gt(compat_version_cmp("3.10", "3.8"), 0);
	ck_assert_int_lt(compat_version_cmp("0.4.34", "0.6.1"), 0);
	ck_assert_int_eq(compat_version_cmp("2.16.1", "2.16.1"), 0);
	ck_assert_int_lt(compat_version_cmp("2.16", "2.16.1"), 0);
	ck_assert_int_gt(compat_version_cmp("10", "9.9"), 0);
}
END_TEST

START_TEST(rows)
{
	struct tpu_err err;
	cJSON *out = NULL, *all = NULL;

	tpu_err_init(&err);
	ck_assert_int_eq(compat_rows(&c, "jax", &out, &err), 0);
	/* 2 versions x 6 generations x 6 runtimes */
	ck_assert_int_eq(cJSON_GetArraySize(out), 72);
	ck_assert_str_eq(
	    json_opt_string(cJSON_GetArrayItem(out, 0), "runtimePython", ""),
	    "3.10");
	ck_assert_int_eq(compat_rows(&c, "all", &all, &err), 0);
	ck_assert_int_gt(cJSON_GetArraySize(all), cJSON_GetArraySize(out));
	cJSON_Delete(out);
	cJSON_Delete(all);
	ck_assert_int_eq(compat_rows(&c, "mxnet", &out, &err), TPU_E_USAGE);
	ck_assert_ptr_null(out);
}
END_TEST

START_TEST(matrix_consistent)
{
	const cJSON *fw =
	    cJSON_GetObjectItemCaseSensitive(c.root, "frameworks");
	const cJSON *rts = cJSON_GetObjectItemCaseSensitive(c.root, "runtimes");
	const cJSON *f, *e, *x;
	size_t i;

	/* every matrix runtime is one the catalog knows, with a source */
	cJSON_ArrayForEach(x, rts)
	{
		int known = 0;
		const char *r;

		for (i = 0; (r = catalog_runtime_at(i)) != NULL; i++)
			known |= strcmp(r, x->string) == 0;
		ck_assert_msg(
		    known, "runtime %s not in the catalog", x->string);
		ck_assert_str_ne(json_opt_string(x, "source", ""), "");
	}
	cJSON_ArrayForEach(f, fw)
	{
		cJSON_ArrayForEach(e, f)
		{
			ck_assert_str_ne(json_opt_string(e, "source", ""), "");
			ck_assert_int_gt(
			    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
			        e, "requirements")),
			    0);
			cJSON_ArrayForEach(
			    x, cJSON_GetObjectItemCaseSensitive(e, "runtimes"))
			    ck_assert_msg(
			        cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(
			            rts, x->valuestring)),
			        "%s: runtime %s has no row", f->string,
			        x->valuestring);
			cJSON_ArrayForEach(x,
			    cJSON_GetObjectItemCaseSensitive(e, "generations"))
			    ck_assert_ptr_nonnull(
			        catalog_gen_find(x->valuestring));
		}
	}
}
END_TEST

START_TEST(malformed)
{
	struct compat m;
	struct tpu_err err;

	tpu_err_init(&err);
	ck_assert_int_eq(
	    compat_load_text(&m, "{\"frameworks\": {}}", &err), TPU_E_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "compat.json"));
	ck_assert_int_eq(compat_load_text(&m, "{nope", &err), TPU_E_INVALID);
	ck_assert_int_eq(compat_load(&m, "/nonexistent", &err), TPU_E_NOTFOUND);
}
END_TEST

/* The recipe run on a worker: the framework's part, then the common
 * body, for every framework; a missing part is an error naming it. */
START_TEST(recipe_parts)
{
	static const char *const fws[] = { "jax", "pytorch", "tensorflow" };
	struct tpu_err err;
	char *r, *name, *body;
	size_t i;

	for (i = 0; i < 3; i++) {
		tpu_err_init(&err);
		ck_assert_msg(
		    compat_recipe(&c, fws[i], &r, &err) == 0, "%s", err.msg);
		name = xasprintf("\nname=%s\n", fws[i]);
		ck_assert_msg(strstr(r, name) != NULL, "%s: no name", fws[i]);
		body = strstr(r, "\nset -eu\n");
		ck_assert_msg(body != NULL && body > strstr(r, name),
		    "%s: the common body does not follow its part", fws[i]);
		ck_assert_ptr_nonnull(strstr(body, "pip install failed"));
		ck_assert_int_eq(r[strlen(r) - 1], '\n');
		free(name);
		free(r);
	}
	tpu_err_init(&err);
	ck_assert_int_eq(compat_recipe(&c, "nosuch", &r, &err), TPU_E_NOTFOUND);
	ck_assert_ptr_null(r);
	ck_assert_ptr_nonnull(strstr(err.msg, "recipes/nosuch.sh"));
}
END_TEST

static Suite *
compat_suite(void)
{
	Suite *s = suite_create("compat");
	TCase *tc;

	tc = tcase_create("refusals");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, no_tpu_backend);
	tcase_add_test(tc, unknown_versions);
	tcase_add_test(tc, runtime_refusals);
	tcase_add_test(tc, python_too_old);
	suite_add_tcase(s, tc);
	tc = tcase_create("lookup");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, resolve_newest);
	tcase_add_test(tc, python_ok_for_pytorch);
	tcase_add_test(tc, rows);
	tcase_add_test(tc, matrix_consistent);
	tcase_add_test(tc, version_cmp);
	tcase_add_test(tc, malformed);
	tcase_add_test(tc, recipe_parts);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(compat_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
