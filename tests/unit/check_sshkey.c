/*
 * Tests for src/sshkey.c: generation when missing (ed25519, 0600, .pub),
 * the OpenSSH permission rule, RSA keys refused with a clear message
 * (OpenSSH and PEM formats), encrypted keys detected, .pub written when
 * missing and checked when present, the gcloud metadata entry, CR/LF in
 * user names, and the wipe helper (S14).
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "sshd_harness.h"
#include "sshkey.h"
#include "xmalloc.h"

static char base[64];

static void
setup(void)
{
	snprintf(base, sizeof base, "/tmp/check_sshkey.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base));
}

static void
teardown(void)
{
	harness_rmrf(base);
}

START_TEST(test_generate_when_missing)
{
	struct sshkey key;
	struct tpu_err err;
	struct stat st;
	char *path, *pub, *entry;

	path = xasprintf("%s/new/.ssh/google_compute_engine", base);
	ck_assert_int_eq(sshkey_load(&key, path, 0, &err), TPU_E_NOTFOUND);
	ck_assert_ptr_nonnull(strstr(err.msg, "not found"));
	umask(0);
	ck_assert_int_eq(sshkey_load(&key, path, SSHKEY_F_GENERATE, &err), 0);
	umask(022);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	*strrchr(path, '/') = '\0';
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	ck_assert_str_eq(key.type, "ssh-ed25519");
	ck_assert_int_eq(key.encrypted, 0);
	ck_assert(
	    strncmp(key.publine, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5", 32) == 0);
	pub = harness_publine(key.path);
	ck_assert_str_eq(pub, key.publine);
	ck_assert_int_eq(sshkey_metadata_entry(&key, "alice", &entry, &err), 0);
	{
		char *want = xasprintf("alice:%s alice", key.publine);

		ck_assert_str_eq(entry, want);
		free(want);
	}
	free(entry);
	ck_assert_int_eq(sshkey_generate(key.path, "x", &err), TPU_E_CONFLICT);
	sshkey_release(&key);
	free(pub);
	free(path);
}
END_TEST

/* issue 19 defect 4: first uses started at once in a fresh HOME all get
 * one and the same key (a loser of the race uses the winner's) */
#define RACERS 8
START_TEST(test_generate_race)
{
	char *path = xasprintf("%s/race/.ssh/google_compute_engine", base);
	char *dir = xasprintf("%s/race/.ssh", base);
	char pubs[RACERS][256];
	int go[2], out[RACERS][2], i, round;

	for (round = 0; round < 3; round++) {
		harness_rmrf(dir);
		ck_assert_int_eq(pipe(go), 0);
		for (i = 0; i < RACERS; i++) {
			pid_t pid;

			ck_assert_int_eq(pipe(out[i]), 0);
			pid = fork();
			ck_assert_int_ge(pid, 0);
			if (pid == 0) {
				struct sshkey key;
				struct tpu_err err;
				char c;
				int rc;

				close(go[1]);
				close(out[i][0]);
				/* all start when the parent closes go */
				(void)read(go[0], &c, 1);
				tpu_err_init(&err);
				rc = sshkey_load(
				    &key, path, SSHKEY_F_GENERATE, &err);
				if (rc != 0) {
					dprintf(out[i][1], "ERR %s", err.msg);
					_exit(1);
				}
				dprintf(out[i][1], "%s", key.publine);
				sshkey_release(&key);
				_exit(0);
			}
			close(out[i][1]);
		}
		close(go[0]);
		close(go[1]);
		for (i = 0; i < RACERS; i++) {
			ssize_t n =
			    read(out[i][0], pubs[i], sizeof pubs[i] - 1);

			pubs[i][n > 0 ? n : 0] = '\0';
			close(out[i][0]);
		}
		for (i = 0; i < RACERS; i++) {
			int status;

			ck_assert_int_gt(wait(&status), 0);
		}
		for (i = 0; i < RACERS; i++) {
			ck_assert_msg(strncmp(pubs[i], "ssh-ed25519 ", 12) == 0,
			    "racer %d of round %d: '%s'", i, round, pubs[i]);
			ck_assert_str_eq(pubs[i], pubs[0]);
		}
		{
			char *pub = harness_publine(path);
			struct sshkey key;
			struct tpu_err err;
			DIR *d;
			struct dirent *de;
			int n = 0;

			ck_assert_str_eq(pub, pubs[0]);
			free(pub);
			ck_assert_int_eq(sshkey_load(&key, path, 0, &err), 0);
			ck_assert_str_eq(key.publine, pubs[0]);
			sshkey_release(&key);
			/* the key, its .pub, and no temp file */
			ck_assert_ptr_nonnull(d = opendir(dir));
			while ((de = readdir(d)) != NULL)
				if (de->d_name[0] != '.')
					n++;
			closedir(d);
			ck_assert_int_eq(n, 2);
		}
	}
	free(path);
	free(dir);
}
END_TEST

START_TEST(test_permissions)
{
	struct sshkey key;
	struct tpu_err err;
	char *path;

	path = xasprintf("%s/k", base);
	ck_assert_int_eq(harness_keygen(path, "ed25519", ""), 0);
	ck_assert_int_eq(chmod(path, 0644), 0);
	ck_assert_int_eq(sshkey_load(&key, path, 0, &err), TPU_E_PERMISSION);
	ck_assert_ptr_nonnull(strstr(err.msg, "permissions 0644"));
	ck_assert_ptr_nonnull(strstr(err.msg, "too open"));
	ck_assert_ptr_null(key.path);
	ck_assert_int_eq(chmod(path, 0640), 0);
	ck_assert_int_eq(sshkey_load(&key, path, 0, &err), TPU_E_PERMISSION);
	ck_assert_int_eq(chmod(path, 0400), 0);
	ck_assert_int_eq(sshkey_load(&key, path, 0, &err), 0);
	sshkey_release(&key);
	free(path);
}
END_TEST

START_TEST(test_rsa_refused)
{
	struct sshkey key;
	struct tpu_err err;
	char *path;
	const char *pem[] = { "ssh-keygen", "-q", "-t", "rsa", "-b", "2048",
		"-m", "PEM", "-N", "", "-f", NULL, NULL };

	path = xasprintf("%s/rsa", base);
	ck_assert_int_eq(harness_keygen(path, "rsa", ""), 0);
	ck_assert_int_eq(sshkey_load(&key, path, 0, &err), TPU_E_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "is an RSA key"));
	ck_assert_ptr_nonnull(strstr(err.msg, "ed25519"));
	free(path);
	path = xasprintf("%s/rsapem", base);
	pem[11] = path;
	ck_assert_int_eq(harness_run(pem), 0);
	ck_assert_int_eq(sshkey_load(&key, path, 0, &err), TPU_E_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "is an RSA key"));
	free(path);
}
END_TEST

START_TEST(test_encrypted_and_ecdsa)
{
	struct sshkey key;
	struct tpu_err err;
	char *path;

	path = xasprintf("%s/enc", base);
	ck_assert_int_eq(harness_keygen(path, "ed25519", "pass word"), 0);
	ck_assert_int_eq(sshkey_load(&key, path, 0, &err), 0);
	ck_assert_int_eq(key.encrypted, 1);
	ck_assert_str_eq(key.type, "ssh-ed25519");
	sshkey_set_passphrase(&key, "pass word");
	ck_assert_str_eq(key.passphrase, "pass word");
	ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
	sshkey_release(&key);
	ck_assert_ptr_null(key.passphrase);
	free(path);
	path = xasprintf("%s/ec", base);
	ck_assert_int_eq(harness_keygen(path, "ecdsa", ""), 0);
	ck_assert_int_eq(sshkey_load(&key, path, 0, &err), 0);
	ck_assert_str_eq(key.type, "ecdsa-sha2-nistp256");
	sshkey_release(&key);
	free(path);
}
END_TEST

START_TEST(test_pub_missing_or_wrong)
{
	struct sshkey key;
	struct tpu_err err;
	char *a, *apub, *b, *bpub, *want;

	a = xasprintf("%s/a", base);
	b = xasprintf("%s/b", base);
	apub = xasprintf("%s.pub", a);
	bpub = xasprintf("%s.pub", b);
	ck_assert_int_eq(harness_keygen(a, "ed25519", ""), 0);
	ck_assert_int_eq(harness_keygen(b, "ed25519", ""), 0);
	want = harness_publine(a);
	/* missing .pub: rebuilt from the private key's public half */
	ck_assert_int_eq(unlink(apub), 0);
	ck_assert_int_eq(sshkey_load(&key, a, 0, &err), 0);
	ck_assert_str_eq(key.publine, want);
	sshkey_release(&key);
	free(want);
	want = harness_publine(a);
	ck_assert_ptr_nonnull(want);
	/* a .pub of another key */
	ck_assert_int_eq(rename(bpub, apub), 0);
	ck_assert_int_eq(sshkey_load(&key, a, 0, &err), TPU_E_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "does not match"));
	/* a .pub with two lines (metadata injection) */
	{
		char *two = xasprintf("%s\n%s\n", want, want);

		ck_assert_int_eq(harness_write(apub, two, 0644), 0);
		ck_assert_int_eq(sshkey_load(&key, a, 0, &err), TPU_E_INVALID);
		free(two);
	}
	/* not a key at all */
	ck_assert_int_eq(harness_write(b, "hello\n", 0600), 0);
	ck_assert_int_eq(sshkey_load(&key, b, 0, &err), TPU_E_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "not an OpenSSH or PEM"));
	free(a);
	free(b);
	free(apub);
	free(bpub);
	free(want);
}
END_TEST

START_TEST(test_users)
{
	struct sshkey key;
	struct tpu_err err;
	char *out;

	memset(&key, 0, sizeof key);
	key.publine = xstrdup("ssh-ed25519 AAAAC3Nz");
	ck_assert_int_eq(sshkey_validate_user("alice", &err), 0);
	ck_assert_int_eq(sshkey_validate_user("a.b_c-1", &err), 0);
	ck_assert_int_eq(sshkey_validate_user("", &err), TPU_E_INVALID);
	ck_assert_int_eq(sshkey_validate_user("-x", &err), TPU_E_INVALID);
	ck_assert_int_eq(sshkey_validate_user("a:b", &err), TPU_E_INVALID);
	ck_assert_int_eq(sshkey_validate_user("a b", &err), TPU_E_INVALID);
	ck_assert_int_eq(sshkey_metadata_entry(&key, "bob\nroot", &out, &err),
	    TPU_E_INVALID);
	ck_assert_str_eq(err.msg, "invalid user name: contains CR or LF");
	ck_assert_ptr_null(out);
	ck_assert_int_eq(
	    sshkey_metadata_entry(&key, "bob\r", &out, &err), TPU_E_INVALID);
	/* gcloud's expiring form: 2017-08-29T18:52:51Z = 1504032771 */
	ck_assert_int_eq(
	    sshkey_metadata_entry_expiring(&key, "bob", 1504032771, &out, &err),
	    0);
	ck_assert_str_eq(out, "bob:ssh-ed25519 AAAAC3Nz google-ssh "
	                      "{\"userName\":\"bob\",\"expireOn\":"
	                      "\"2017-08-29T18:52:51+0000\"}");
	free(out);
	ck_assert_int_eq(
	    sshkey_metadata_entry_expiring(&key, "bob", 0, &out, &err), 0);
	ck_assert_str_eq(out, "bob:ssh-ed25519 AAAAC3Nz bob");
	free(out);
	ck_assert_int_eq(
	    sshkey_metadata_entry_expiring(&key, "b b", 1504032771, &out, &err),
	    TPU_E_INVALID);
	free(key.publine);
	key.publine = xstrdup("ssh-ed25519 AAAA\nroot:ssh-ed25519 BBBB");
	ck_assert_int_eq(
	    sshkey_metadata_entry(&key, "bob", &out, &err), TPU_E_INVALID);
	sshkey_release(&key);
}
END_TEST

START_TEST(test_wipe)
{
	char secret[32];
	size_t i;

	memset(secret, 'S', sizeof secret);
	sshkey_wipe(secret, sizeof secret);
	for (i = 0; i < sizeof secret; i++)
		ck_assert_int_eq(secret[i], 0);
	sshkey_wipe(NULL, 5); /* NULL-safe */
}
END_TEST

START_TEST(test_default_path)
{
	char *p;

	setenv("HOME", "/home/u", 1);
	p = sshkey_default_path();
	ck_assert_str_eq(p, "/home/u/.ssh/google_compute_engine");
	free(p);
	unsetenv("HOME");
	ck_assert_ptr_null(sshkey_default_path());
}
END_TEST

static Suite *
sshkey_suite(void)
{
	Suite *s = suite_create("sshkey");
	TCase *tc = tcase_create("key");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_generate_when_missing);
	tcase_add_test(tc, test_generate_race);
	tcase_add_test(tc, test_permissions);
	tcase_add_test(tc, test_rsa_refused);
	tcase_add_test(tc, test_encrypted_and_ecdsa);
	tcase_add_test(tc, test_pub_missing_or_wrong);
	tcase_add_test(tc, test_users);
	tcase_add_test(tc, test_wipe);
	tcase_add_test(tc, test_default_path);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(sshkey_suite());
	int nf;

	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf == 0 ? 0 : 1;
}
