/*
 * Tests for src/knownhosts.c: aliases, key parsing and fingerprints
 * (checked against ssh-keygen -l), replace/save/load with 0600/0700
 * whatever the umask, a recreated node getting new entries while the old
 * ones stay, foreign lines kept verbatim, and match/mismatch/unknown.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "knownhosts.h"
#include "sshd_harness.h"
#include "util.h"
#include "xmalloc.h"

static char base[64];
static char *k1, *k2, *k3; /* "ssh-ed25519 AAAA..." lines */

static void
setup(void)
{
	char *p;

	snprintf(base, sizeof base, "/tmp/check_knownhosts.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base));
	p = xasprintf("%s/a", base);
	ck_assert_int_eq(harness_keygen(p, "ed25519", ""), 0);
	k1 = harness_publine(p);
	free(p);
	p = xasprintf("%s/b", base);
	ck_assert_int_eq(harness_keygen(p, "ed25519", ""), 0);
	k2 = harness_publine(p);
	free(p);
	p = xasprintf("%s/c", base);
	ck_assert_int_eq(harness_keygen(p, "ecdsa", ""), 0);
	k3 = harness_publine(p);
	free(p);
}

static void
teardown(void)
{
	harness_rmrf(base);
	free(k1);
	free(k2);
	free(k3);
}

START_TEST(test_alias)
{
	struct tpu_err err;
	char *a;

	ck_assert_int_eq(knownhosts_alias("1234567890", 3, &a, &err), 0);
	ck_assert_str_eq(a, "tpu.1234567890-3");
	free(a);
	ck_assert_int_eq(knownhosts_alias("", 0, &a, &err), TPU_E_INVALID);
	ck_assert_int_eq(knownhosts_alias("a b", 0, &a, &err), TPU_E_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "'a b'"));
	ck_assert_int_eq(knownhosts_alias("x,y", 0, &a, &err), TPU_E_INVALID);
	ck_assert_int_eq(knownhosts_alias("x", -1, &a, &err), TPU_E_INVALID);
	ck_assert_ptr_null(a);
}
END_TEST

START_TEST(test_parse_key_and_fingerprint)
{
	struct knownhosts_key key;
	struct tpu_err err;
	char fp[KNOWNHOSTS_FP_LEN], *p, *out, *enc, *line;
	const char *argv[4];

	ck_assert_int_eq(knownhosts_parse_key(k1, strlen(k1), &key, &err), 0);
	ck_assert_str_eq(key.type, "ssh-ed25519");
	ck_assert_uint_eq(key.len, 51);
	enc = tpu_b64_encode(key.blob, key.len, 0);
	line = xasprintf("ssh-ed25519 %s", enc);
	ck_assert_str_eq(line, k1);
	knownhosts_fingerprint(key.blob, key.len, fp);
	/* ssh-keygen -lf agrees */
	p = xasprintf("%s/a.pub", base);
	out = xasprintf("%s/fp", base);
	{
		char *sh = xasprintf("ssh-keygen -lf %s > %s", p, out);

		argv[0] = "sh";
		argv[1] = "-c";
		argv[2] = sh;
		argv[3] = NULL;
		ck_assert_int_eq(harness_run(argv), 0);
		free(sh);
	}
	{
		char *d = harness_slurp(out, NULL);

		ck_assert_ptr_nonnull(strstr(d, fp));
		free(d);
	}
	knownhosts_key_release(&key);
	free(p);
	free(out);
	free(enc);
	free(line);

	/* bad input */
	ck_assert_int_eq(
	    knownhosts_parse_key("ssh-ed25519", 11, &key, &err), TPU_E_INVALID);
	ck_assert_int_eq(
	    knownhosts_parse_key("ssh-ed25519 !!!!", 16, &key, &err),
	    TPU_E_INVALID);
	/* the blob says ssh-ed25519, the line says ssh-rsa */
	line = xasprintf("ssh-rsa %s", strchr(k1, ' ') + 1);
	ck_assert_int_eq(knownhosts_parse_key(line, strlen(line), &key, &err),
	    TPU_E_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "not of type 'ssh-rsa'"));
	free(line);
	line = xasprintf("%s\nx", k1);
	ck_assert_int_eq(knownhosts_parse_key(line, strlen(line), &key, &err),
	    TPU_E_INVALID);
	free(line);
}
END_TEST

START_TEST(test_replace_save_load)
{
	struct knownhosts kh, kh2;
	struct knownhosts_key pk;
	struct tpu_err err;
	struct stat st;
	const char *keys[2];
	char *path, *dir, *text, **lines;
	const struct knownhosts_key *found[4];
	size_t n;

	dir = xasprintf("%s/cfg/tpuctl", base);
	path = xasprintf("%s/known_hosts", dir);
	umask(0);
	knownhosts_init(&kh, path);
	ck_assert_int_eq(knownhosts_load(&kh, &err), 0); /* missing: empty */
	ck_assert_uint_eq(kh.n, 0);
	keys[0] = k1;
	keys[1] = k3;
	ck_assert_int_eq(
	    knownhosts_replace(&kh, "tpu.111-0", keys, 2, &err), 0);
	keys[0] = k2;
	ck_assert_int_eq(
	    knownhosts_replace(&kh, "tpu.111-1", keys, 1, &err), 0);
	ck_assert_int_eq(knownhosts_save(&kh, &err), 0);
	umask(022);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);

	/* the file is plain OpenSSH known_hosts */
	text = harness_slurp(path, NULL);
	{
		char *want = xasprintf("tpu.111-0 %s " KNOWNHOSTS_MARK "\n"
		                       "tpu.111-0 %s " KNOWNHOSTS_MARK "\n"
		                       "tpu.111-1 %s " KNOWNHOSTS_MARK "\n",
		    k1, k3, k2);

		ck_assert_str_eq(text, want);
		free(want);
	}
	free(text);

	/* load, check */
	knownhosts_init(&kh2, path);
	ck_assert_int_eq(knownhosts_load(&kh2, &err), 0);
	ck_assert_uint_eq(knownhosts_lookup(&kh2, "tpu.111-0", found, 4), 2);
	ck_assert_uint_eq(knownhosts_lookup(&kh2, "tpu.111-1", found, 4), 1);
	ck_assert_uint_eq(knownhosts_pinned(&kh2, "tpu.111-0"), 2);
	ck_assert_uint_eq(knownhosts_pinned(&kh2, "tpu.222-0"), 0);
	ck_assert_int_eq(knownhosts_parse_key(k2, strlen(k2), &pk, &err), 0);
	{
		struct knownhosts_key two[2];
		size_t best = 9;

		knownhosts_lookup(&kh2, "tpu.111-0", found, 4);
		two[0] = *found[0];
		two[1] = *found[1];
		/* k1 (ed25519) and k3 (ecdsa) pinned, k2 (ed25519) shown */
		ck_assert_int_eq(knownhosts_match(two, 2, &pk, &best), 0);
		ck_assert_uint_eq(best, 0);
		ck_assert_int_eq(knownhosts_match(two + 1, 1, &pk, &best), 0);
		ck_assert_uint_eq(best, 0);
		ck_assert_int_eq(knownhosts_match(two, 0, &pk, &best), 0);
		knownhosts_lookup(&kh2, "tpu.111-1", found, 4);
		two[1] = *found[0];
		ck_assert_int_eq(knownhosts_match(two, 2, &pk, &best), 1);
		ck_assert_int_eq(knownhosts_match(two + 1, 1, &pk, NULL), 1);
	}
	knownhosts_key_release(&pk);

	/* node recreated (new id): new entries, old ones untouched */
	keys[0] = k2;
	ck_assert_int_eq(
	    knownhosts_replace(&kh2, "tpu.222-0", keys, 1, &err), 0);
	ck_assert_int_eq(knownhosts_save(&kh2, &err), 0);
	knownhosts_release(&kh2);
	knownhosts_init(&kh2, path);
	ck_assert_int_eq(knownhosts_load(&kh2, &err), 0);
	lines = knownhosts_lines(&kh2, "tpu.111-0", &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(lines[0], k1);
	ck_assert_str_eq(lines[1], k3);
	ck_assert_ptr_null(lines[2]);
	knownhosts_lines_free(lines);
	lines = knownhosts_lines(&kh2, "tpu.222-0", &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(lines[0], k2);
	knownhosts_lines_free(lines);

	/* replacing an alias drops only its lines */
	keys[0] = k3;
	ck_assert_int_eq(
	    knownhosts_replace(&kh2, "tpu.111-0", keys, 1, &err), 0);
	ck_assert_uint_eq(knownhosts_lookup(&kh2, "tpu.111-0", found, 4), 1);
	ck_assert_str_eq(found[0]->type, "ecdsa-sha2-nistp256");
	ck_assert_uint_eq(knownhosts_lookup(&kh2, "tpu.111-1", found, 4), 1);
	/* a bad line leaves everything unchanged */
	keys[0] = k1;
	keys[1] = "ssh-ed25519 AAAA";
	ck_assert_int_eq(knownhosts_replace(&kh2, "tpu.111-1", keys, 2, &err),
	    TPU_E_INVALID);
	ck_assert_uint_eq(knownhosts_lookup(&kh2, "tpu.111-1", found, 4), 1);
	ck_assert_int_eq(
	    knownhosts_replace(&kh2, "a b", keys, 1, &err), TPU_E_INVALID);
	knownhosts_release(&kh2);
	knownhosts_release(&kh);
	free(path);
	free(dir);
}
END_TEST

START_TEST(test_foreign_lines)
{
	struct knownhosts kh;
	const struct knownhosts_key *found[4];
	const char *keys[1] = { NULL };
	struct tpu_err err;
	char *text, *path;

	path = xasprintf("%s/kh", base);
	text = xasprintf("# comment\n"
	                 "|1|abc=|def= %s\n"
	                 "@cert-authority * %s\n"
	                 "host1,tpu.9-0 %s\r\n"
	                 "garbage line\n"
	                 "\n"
	                 "tpu.9-0 ssh-ed25519 !!!\n"
	                 "tpu.9-1 %s\n",
	    k1, k1, k2, k2);
	ck_assert_int_eq(harness_write(path, text, 0600), 0);
	knownhosts_init(&kh, path);
	ck_assert_int_eq(knownhosts_load(&kh, &err), 0);
	ck_assert_uint_eq(knownhosts_lookup(&kh, "tpu.9-0", found, 4), 1);
	/* issue 19 defect 11: lines tpuctl did not pin (several hosts, no
	 * KNOWNHOSTS_MARK) are no pinned key of a worker */
	ck_assert_uint_eq(knownhosts_pinned(&kh, "tpu.9-0"), 0);
	ck_assert_uint_eq(knownhosts_pinned(&kh, "tpu.9-1"), 0);
	{
		size_t n = 9;
		char **l = knownhosts_lines(&kh, "tpu.9-1", &n);

		ck_assert_uint_eq(n, 0);
		knownhosts_lines_free(l);
		l = knownhosts_lines(&kh, "tpu.9-0", &n);
		ck_assert_uint_eq(n, 0);
		knownhosts_lines_free(l);
	}
	/* pinning the worker drops the appended line */
	keys[0] = k3;
	ck_assert_int_eq(knownhosts_replace(&kh, "tpu.9-1", keys, 1, &err), 0);
	ck_assert_uint_eq(knownhosts_pinned(&kh, "tpu.9-1"), 1);
	ck_assert_uint_eq(knownhosts_lookup(&kh, "tpu.9-1", found, 4), 1);
	ck_assert_str_eq(found[0]->type, "ecdsa-sha2-nistp256");
	ck_assert_uint_eq(knownhosts_lookup(&kh, "host1", found, 4), 1);
	ck_assert_uint_eq(knownhosts_lookup(&kh, "*", found, 4), 0);
	ck_assert_uint_eq(knownhosts_lookup(&kh, "tpu.9", found, 4), 0);
	/* replacing another alias keeps every foreign line verbatim */
	keys[0] = k3;
	ck_assert_int_eq(knownhosts_replace(&kh, "tpu.10-0", keys, 1, &err), 0);
	ck_assert_int_eq(knownhosts_save(&kh, &err), 0);
	knownhosts_release(&kh);
	{
		char *d = harness_slurp(path, NULL);
		char *want = xasprintf("# comment\n"
		                       "|1|abc=|def= %s\n"
		                       "@cert-authority * %s\n"
		                       "host1,tpu.9-0 %s\n"
		                       "garbage line\n"
		                       "\n"
		                       "tpu.9-0 ssh-ed25519 !!!\n"
		                       "tpu.9-1 %s " KNOWNHOSTS_MARK "\n"
		                       "tpu.10-0 %s " KNOWNHOSTS_MARK "\n",
		    k1, k1, k2, k3, k3);

		ck_assert_str_eq(d, want);
		free(d);
		free(want);
	}
	/* a symlink at the path is refused */
	{
		char *l = xasprintf("%s/link", base);

		ck_assert_int_eq(symlink(path, l), 0);
		knownhosts_init(&kh, l);
		ck_assert_int_ne(knownhosts_load(&kh, &err), 0);
		ck_assert_int_ne(knownhosts_save(&kh, &err), 0);
		knownhosts_release(&kh);
		free(l);
	}
	free(text);
	free(path);
}
END_TEST

/* issue 19 defect 11: StrictModes for the file and its directories */
START_TEST(test_strict_modes)
{
	struct knownhosts kh;
	struct tpu_err err;
	char *home = xasprintf("%s/h", base);
	char *cfg = xasprintf("%s/h/.config", base);
	char *dir = xasprintf("%s/h/.config/tpuctl", base);
	char *path = xasprintf("%s/known_hosts", dir);
	FILE *fp;

	umask(022);
	ck_assert_int_eq(mkdir(home, 0700), 0);
	ck_assert_int_eq(mkdir(cfg, 0755), 0);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_ptr_nonnull(fp = fopen(path, "w"));
	fprintf(fp, "tpu.1-0 %s\n", k1);
	fclose(fp);
	setenv("HOME", home, 1);
	ck_assert_int_eq(chmod(path, 0644), 0);
	knownhosts_init(&kh, path);
	ck_assert_int_eq(knownhosts_load(&kh, &err), 0);
	ck_assert_uint_eq(kh.n, 1);
	knownhosts_release(&kh);
	/* a group- or world-writable file */
	ck_assert_int_eq(chmod(path, 0666), 0);
	knownhosts_init(&kh, path);
	ck_assert_int_eq(knownhosts_load(&kh, &err), TPU_E_PERMISSION);
	ck_assert_ptr_nonnull(strstr(err.msg, "writable by group or others"));
	ck_assert_ptr_nonnull(strstr(err.msg, "mode 0666"));
	knownhosts_release(&kh);
	ck_assert_int_eq(chmod(path, 0620), 0);
	knownhosts_init(&kh, path);
	ck_assert_int_eq(knownhosts_load(&kh, &err), TPU_E_PERMISSION);
	knownhosts_release(&kh);
	ck_assert_int_eq(chmod(path, 0600), 0);
	/* its directory, a parent under HOME, HOME itself */
	ck_assert_int_eq(chmod(dir, 0777), 0);
	knownhosts_init(&kh, path);
	ck_assert_int_eq(knownhosts_load(&kh, &err), TPU_E_PERMISSION);
	ck_assert_ptr_nonnull(strstr(err.msg, "directory"));
	knownhosts_release(&kh);
	ck_assert_int_eq(chmod(dir, 0700), 0);
	ck_assert_int_eq(chmod(cfg, 0775), 0);
	knownhosts_init(&kh, path);
	ck_assert_int_eq(knownhosts_load(&kh, &err), TPU_E_PERMISSION);
	ck_assert_ptr_nonnull(strstr(err.msg, cfg));
	knownhosts_release(&kh);
	ck_assert_int_eq(chmod(cfg, 0755), 0);
	ck_assert_int_eq(chmod(home, 0757), 0);
	knownhosts_init(&kh, path);
	ck_assert_int_eq(knownhosts_load(&kh, &err), TPU_E_PERMISSION);
	knownhosts_release(&kh);
	ck_assert_int_eq(chmod(home, 0700), 0);
	/* above HOME is not looked at (base's parent is /tmp, 1777) */
	knownhosts_init(&kh, path);
	ck_assert_int_eq(knownhosts_load(&kh, &err), 0);
	knownhosts_release(&kh);
	/* a missing file in a writable directory is refused too */
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(chmod(dir, 0770), 0);
	knownhosts_init(&kh, path);
	ck_assert_int_eq(knownhosts_load(&kh, &err), TPU_E_PERMISSION);
	knownhosts_release(&kh);
	ck_assert_int_eq(chmod(dir, 0700), 0);
	free(home);
	free(cfg);
	free(dir);
	free(path);
}
END_TEST

START_TEST(test_default_path)
{
	char *p;

	setenv("XDG_CONFIG_HOME", "/x/cfg", 1);
	p = knownhosts_default_path();
	ck_assert_str_eq(p, "/x/cfg/tpuctl/known_hosts");
	free(p);
	unsetenv("XDG_CONFIG_HOME");
	setenv("HOME", "/h", 1);
	p = knownhosts_default_path();
	ck_assert_str_eq(p, "/h/.config/tpuctl/known_hosts");
	free(p);
	unsetenv("HOME");
	ck_assert_ptr_null(knownhosts_default_path());
}
END_TEST

static Suite *
knownhosts_suite(void)
{
	Suite *s = suite_create("knownhosts");
	TCase *tc = tcase_create("file");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_alias);
	tcase_add_test(tc, test_parse_key_and_fingerprint);
	tcase_add_test(tc, test_replace_save_load);
	tcase_add_test(tc, test_foreign_lines);
	tcase_add_test(tc, test_strict_modes);
	tcase_add_test(tc, test_default_path);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(knownhosts_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}
