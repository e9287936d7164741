/*
 * The user's SSH key: default path, generation through ssh-keygen
 * (fork/execvp, no shell), the OpenSSH permission rule, key-type
 * detection from the openssh-key-v1 header (its public half is never
 * encrypted) or the PEM armour, and the gcloud metadata entry.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "buf.h"
#include "fsutil.h"
#include "knownhosts.h"
#include "sshkey.h"
#include "util.h"
#include "xmalloc.h"

#define SSHKEY_MAX_FILE (256 << 10)
#define OPENSSH_BEGIN "-----BEGIN OPENSSH PRIVATE KEY-----"
#define OPENSSH_END "-----END OPENSSH PRIVATE KEY-----"
#define OPENSSH_MAGIC "openssh-key-v1"

#define RSA_MSG                                                                \
	"ssh key '%s' is an RSA key: libssh2 1.10 can only sign with "         \
	"ssh-rsa (SHA-1), which OpenSSH 8.8 and later refuse; use an "         \
	"ed25519 key (ssh-keygen -t ed25519 -f FILE)"

void
sshkey_wipe(void *p, size_t n)
{
	if (p != NULL && n > 0)
		explicit_bzero(p, n);
}

int
sshkey_nodump(void)
{
	return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : -1;
}

char *
sshkey_default_path(void)
{
	const char *home = getenv("HOME");

	if (home == NULL || home[0] == '\0')
		return NULL;
	return xasprintf("%s/.ssh/google_compute_engine", home);
}

/* Run ssh-keygen for a new ed25519 key at path (and path.pub). */
static int
run_keygen(const char *path, const char *comment, struct tpu_err *err)
{
	pid_t pid;
	int status;

	if ((pid = fork()) == -1)
		return tpu_error(err, TPU_E_IO, "cannot run ssh-keygen: %s",
		    strerror(errno));
	if (pid == 0) {
		const char *argv[] = { "ssh-keygen", "-q", "-t", "ed25519",
			"-N", "", "-C", comment, "-f", path, NULL };
		int fd = open("/dev/null", O_RDWR);

		if (fd != -1) {
			dup2(fd, 0);
			dup2(fd, 1);
		}
		umask(077);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return tpu_error(err, TPU_E_IO,
		    "ssh-keygen failed to create '%s' (status %d)", path,
		    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}

/*
 * The key is made under a temp name and linked into place: link(2) fails
 * when path exists, so of several first uses at once exactly one wins,
 * and the others (TPU_E_CONFLICT) use its key; path is never seen half
 * written, nor with another process's .pub.
 */
int
sshkey_generate(const char *path, const char *comment, struct tpu_err *err)
{
	struct stat st;
	char *dir = NULL, *slash, *tmp = NULL, *tmppub = NULL, *pub = NULL;
	unsigned char rnd[6];
	int rc = 0;

	if (lstat(path, &st) == 0)
		return tpu_error(err, TPU_E_CONFLICT,
		    "cannot generate ssh key '%s': file exists", path);
	dir = xstrdup(path);
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if (lstat(dir, &st) != 0 &&
		    (rc = fsutil_mkdir_private(dir, err)) != 0 &&
		    !(lstat(dir, &st) == 0 && S_ISDIR(st.st_mode)))
			goto out;
		rc = 0;
	}
	if (RAND_bytes(rnd, sizeof rnd) != 1) {
		rc = tpu_error(err, TPU_E_INTERNAL, "no random bytes");
		goto out;
	}
	tmp = xasprintf("%s.keygen-%ld-%02x%02x%02x%02x%02x%02x", path,
	    (long)getpid(), rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
	tmppub = xasprintf("%s.pub", tmp);
	pub = xasprintf("%s.pub", path);
	if ((rc = run_keygen(tmp, comment, err)) != 0)
		goto out;
	if (chmod(tmp, 0600) != 0) {
		rc = tpu_error(err, TPU_E_IO, "cannot chmod '%s': %s", tmp,
		    strerror(errno));
		goto out;
	}
	if (link(tmp, path) != 0) {
		if (errno == EEXIST)
			rc = tpu_error(err, TPU_E_CONFLICT,
			    "cannot generate ssh key '%s': file exists", path);
		else
			rc = tpu_error(err, TPU_E_IO, "cannot link '%s': %s",
			    path, strerror(errno));
		goto out;
	}
	/* ours now: its .pub replaces any other (a loader may have derived
	 * the same line from the private key meanwhile) */
	if (rename(tmppub, pub) != 0)
		rc = tpu_error(err, TPU_E_IO, "cannot rename '%s': %s", tmppub,
		    strerror(errno));
out:
	if (tmp != NULL) {
		unlink(tmp);
		unlink(tmppub);
	}
	free(tmp);
	free(tmppub);
	free(pub);
	free(dir);
	return rc;
}

static uint32_t
get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* Read an SSH string at *off in [0, len); 0 or -1. */
static int
get_string(const unsigned char *p, size_t len, size_t *off,
    const unsigned char **s, size_t *slen)
{
	uint32_t n;

	if (len - *off < 4)
		return -1;
	n = get_u32(p + *off);
	*off += 4;
	if (len - *off < n)
		return -1;
	*s = p + *off;
	*slen = n;
	*off += n;
	return 0;
}

/*
 * Parse the openssh-key-v1 armour in text: the public blob (copied, as a
 * "type base64" line) and whether the private part is encrypted.
 */
static int
parse_openssh(const char *path, const char *text, char **publine,
    int *encrypted, struct tpu_err *err)
{
	const char *b, *e;
	struct buf b64;
	unsigned char *raw = NULL;
	const unsigned char *s;
	size_t off, slen, i;
	char *enc = NULL;
	struct knownhosts_key key;
	int n, rc = 0;

	buf_init(&b64, SSHKEY_MAX_FILE);
	memset(&key, 0, sizeof key);
	b = strstr(text, OPENSSH_BEGIN) + strlen(OPENSSH_BEGIN);
	if ((e = strstr(b, OPENSSH_END)) == NULL)
		goto bad;
	for (; b < e; b++)
		if (*b != '\n' && *b != '\r' && *b != ' ' && *b != '\t')
			buf_append(&b64, b, 1);
	if (b64.len == 0 || b64.len % 4 != 0)
		goto bad;
	raw = xmalloc(b64.len / 4 * 3 + 1);
	if ((n = EVP_DecodeBlock(
	         raw, (const unsigned char *)b64.data, (int)b64.len)) < 0)
		goto bad;
	for (i = b64.len; i > 0 && b64.data[i - 1] == '='; i--)
		n--;
	off = sizeof OPENSSH_MAGIC; /* includes the NUL */
	if ((size_t)n < off || memcmp(raw, OPENSSH_MAGIC, off) != 0)
		goto bad;
	if (get_string(raw, (size_t)n, &off, &s, &slen) != 0) /* cipher */
		goto bad;
	*encrypted = !(slen == 4 && memcmp(s, "none", 4) == 0);
	if (get_string(raw, (size_t)n, &off, &s, &slen) != 0 || /* kdf */
	    get_string(raw, (size_t)n, &off, &s, &slen) != 0 || /* kdfopts */
	    (size_t)n - off < 4 || get_u32(raw + off) != 1)
		goto bad;
	off += 4;
	if (get_string(raw, (size_t)n, &off, &s, &slen) != 0)
		goto bad;
	enc = tpu_b64_encode(s, slen, 0);
	/* reuse the known_hosts parser to read and check the type */
	if (get_string(s, slen, &(size_t){ 0 }, &s, &slen) != 0 || slen > 40)
		goto bad;
	*publine = xasprintf("%.*s %s", (int)slen, (const char *)s, enc);
	if (knownhosts_parse_key(*publine, strlen(*publine), &key, err) != 0) {
		free(*publine);
		*publine = NULL;
		goto bad;
	}
	goto out;
bad:
	rc = tpu_error(err, TPU_E_INVALID,
	    "ssh key '%s': malformed OpenSSH private key", path);
out:
	knownhosts_key_release(&key);
	if (raw != NULL) {
		sshkey_wipe(raw, b64.len / 4 * 3);
		free(raw);
	}
	free(enc);
	buf_release_secret(&b64);
	return rc;
}

/* First line of the .pub file as "type base64"; NULL when absent. */
static int
read_pub(const char *pubpath, char **publine, struct tpu_err *err)
{
	struct buf b;
	struct knownhosts_key key;
	char *enc = NULL;
	size_t nl;
	int rc;

	*publine = NULL;
	buf_init(&b, SSHKEY_MAX_FILE);
	memset(&key, 0, sizeof key);
	if ((rc = fsutil_read_file(pubpath, 0, &b, NULL, err)) != 0)
		goto out;
	nl = strcspn(b.data, "\n");
	/* a CR inside the line, or a second key line, is refused */
	if (memchr(b.data, '\r', b.len) != NULL ||
	    (nl < b.len && strspn(b.data + nl, "\n") != b.len - nl)) {
		rc = tpu_error(err, TPU_E_INVALID,
		    "public key '%s' contains CR or more than one line",
		    pubpath);
		goto out;
	}
	if ((rc = knownhosts_parse_key(b.data, nl, &key, err)) != 0) {
		tpu_error_prefix(err, "public key '%s'", pubpath);
		goto out;
	}
	enc = tpu_b64_encode(key.blob, key.len, 0);
	*publine = xasprintf("%s %s", key.type, enc);
out:
	free(enc);
	knownhosts_key_release(&key);
	buf_release(&b);
	return rc;
}

static int
type_supported(const char *type)
{
	return strcmp(type, "ssh-ed25519") == 0 ||
	       strcmp(type, "ecdsa-sha2-nistp256") == 0 ||
	       strcmp(type, "ecdsa-sha2-nistp384") == 0 ||
	       strcmp(type, "ecdsa-sha2-nistp521") == 0;
}

int
sshkey_load(
    struct sshkey *key, const char *path, int flags, struct tpu_err *err)
{
	struct stat st;
	struct buf b;
	char *pubfile = NULL, *sp;
	int rc = 0;

	memset(key, 0, sizeof *key);
	buf_init(&b, SSHKEY_MAX_FILE);
	if (stat(path, &st) != 0) {
		if (errno != ENOENT) {
			rc = tpu_error(err, TPU_E_IO, "ssh key '%s': %s", path,
			    strerror(errno));
			goto out;
		}
		if (!(flags & SSHKEY_F_GENERATE)) {
			rc = tpu_error(err, TPU_E_NOTFOUND,
			    "ssh key '%s' not found", path);
			goto out;
		}
		/* TPU_E_CONFLICT: another first use won the race: its key */
		if ((rc = sshkey_generate(path, "tpuctl", err)) != 0 &&
		    rc != TPU_E_CONFLICT)
			goto out;
		rc = 0;
		if (stat(path, &st) != 0) {
			rc = tpu_error(err, TPU_E_IO, "ssh key '%s': %s", path,
			    strerror(errno));
			goto out;
		}
	}
	if (!S_ISREG(st.st_mode)) {
		rc = tpu_error(err, TPU_E_INVALID,
		    "ssh key '%s' is not a regular file", path);
		goto out;
	}
	if ((st.st_mode & 077) != 0) {
		rc = tpu_error(err, TPU_E_PERMISSION,
		    "permissions %04o for ssh key '%s' are too open: a private "
		    "key must not be accessible by group or others "
		    "(chmod 600 '%s')",
		    (unsigned)(st.st_mode & 07777), path, path);
		goto out;
	}
	if ((rc = fsutil_read_file(path, 0, &b, NULL, err)) != 0)
		goto out;
	key->path = xstrdup(path);
	key->pubpath = xasprintf("%s.pub", path);
	if (strstr(b.data, "-----BEGIN RSA PRIVATE KEY-----") != NULL) {
		rc = tpu_error(err, TPU_E_INVALID, RSA_MSG, path);
		goto out;
	}
	if (strstr(b.data, OPENSSH_BEGIN) != NULL) {
		if ((rc = parse_openssh(path, b.data, &key->publine,
		         &key->encrypted, err)) != 0)
			goto out;
		if ((rc = read_pub(key->pubpath, &pubfile, err)) ==
		    TPU_E_NOTFOUND) {
			char *line = xasprintf("%s tpuctl\n", key->publine);

			rc = fsutil_write_atomic(
			    key->pubpath, line, strlen(line), 0644, err);
			free(line);
			if (rc != 0)
				goto out;
		} else if (rc != 0)
			goto out;
		else if (strcmp(pubfile, key->publine) != 0) {
			rc = tpu_error(err, TPU_E_INVALID,
			    "public key '%s' does not match private key '%s'",
			    key->pubpath, path);
			goto out;
		}
	} else if (strstr(b.data, "-----BEGIN EC PRIVATE KEY-----") != NULL ||
	           strstr(b.data, "-----BEGIN PRIVATE KEY-----") != NULL ||
	           strstr(b.data, "-----BEGIN ENCRYPTED PRIVATE KEY-----") !=
	               NULL) {
		/* PEM: the type comes from the .pub file beside it */
		key->encrypted = strstr(b.data, "ENCRYPTED") != NULL;
		if ((rc = read_pub(key->pubpath, &key->publine, err)) != 0) {
			if (rc == TPU_E_NOTFOUND)
				rc = tpu_error(err, TPU_E_NOTFOUND,
				    "ssh key '%s' is in PEM format and '%s' is "
				    "missing: cannot tell its public key",
				    path, key->pubpath);
			goto out;
		}
	} else {
		rc = tpu_error(err, TPU_E_INVALID,
		    "'%s' is not an OpenSSH or PEM private key", path);
		goto out;
	}
	sp = strchr(key->publine, ' ');
	snprintf(key->type, sizeof key->type, "%.*s", (int)(sp - key->publine),
	    key->publine);
	if (strcmp(key->type, "ssh-rsa") == 0) {
		rc = tpu_error(err, TPU_E_INVALID, RSA_MSG, path);
		goto out;
	}
	if (!type_supported(key->type)) {
		rc = tpu_error(err, TPU_E_INVALID,
		    "ssh key '%s' has unsupported type '%s': use ssh-ed25519 "
		    "(or ecdsa-sha2-nistp256/384/521)",
		    path, key->type);
		goto out;
	}
out:
	free(pubfile);
	buf_release_secret(&b);
	if (rc != 0)
		sshkey_release(key);
	return rc;
}

void
sshkey_set_passphrase(struct sshkey *key, const char *pass)
{
	xfree_secret(key->passphrase);
	key->passphrase = NULL;
	if (pass != NULL) {
		sshkey_nodump();
		key->passphrase = xstrdup(pass);
	}
}

void
sshkey_release(struct sshkey *key)
{
	free(key->path);
	free(key->pubpath);
	free(key->publine);
	xfree_secret(key->passphrase);
	memset(key, 0, sizeof *key);
}

int
sshkey_validate_user(const char *user, struct tpu_err *err)
{
	size_t len = strlen(user);

	if (strpbrk(user, "\r\n") != NULL)
		return tpu_error(
		    err, TPU_E_INVALID, "invalid user name: contains CR or LF");
	if (len == 0 || len > 32 || user[0] == '-' ||
	    strspn(user, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	                 "0123456789_.-") != len)
		return tpu_error(err, TPU_E_INVALID,
		    "invalid user name '%.64s': expected 1 to 32 characters of "
		    "[A-Za-z0-9_.-], not starting with '-'",
		    user);
	return 0;
}

int
sshkey_metadata_entry(
    const struct sshkey *key, const char *user, char **out, struct tpu_err *err)
{
	int rc;

	*out = NULL;
	if ((rc = sshkey_validate_user(user, err)) != 0)
		return rc;
	if (key->publine == NULL || strpbrk(key->publine, "\r\n") != NULL)
		return tpu_error(
		    err, TPU_E_INVALID, "public key contains CR or LF");
	*out = xasprintf("%s:%s %s", user, key->publine, user);
	return 0;
}

int
sshkey_metadata_entry_expiring(const struct sshkey *key, const char *user,
    long long expire, char **out, struct tpu_err *err)
{
	time_t t = (time_t)expire;
	struct tm tm;
	char when[32];
	int rc;

	if (expire <= 0)
		return sshkey_metadata_entry(key, user, out, err);
	*out = NULL;
	if ((rc = sshkey_validate_user(user, err)) != 0)
		return rc;
	if (key->publine == NULL || strpbrk(key->publine, "\r\n") != NULL)
		return tpu_error(
		    err, TPU_E_INVALID, "public key contains CR or LF");
	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S+0000", &tm) == 0)
		return tpu_error(err, TPU_E_INVALID,
		    "key expiration %lld is out of range", expire);
	/* gcloud's form (ssh_utils.py), the JSON without spaces */
	*out = xasprintf("%s:%s google-ssh "
	                 "{\"userName\":\"%s\",\"expireOn\":\"%s\"}",
	    user, key->publine, user, when);
	return 0;
}
