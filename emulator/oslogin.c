/*
 * The Cloud OS Login API (oslogin.googleapis.com v1), as much as an SSH
 * client uses: POST /v1/users/EMAIL:importSshPublicKey (body
 * {"key", "expirationTimeUsec"?}, query projectId) and GET
 * /v1/users/EMAIL/loginProfile, both answering a LoginProfile
 * {"name", "posixAccounts": [...], "sshPublicKeys": {FP: {...}}}.  A
 * caller may only act on its own account (the token's principal), else
 * 403 PERMISSION_DENIED as Google answers.  Keys are kept per user in
 * memory (a restart forgets them), fingerprint = hex SHA-256 of the key
 * line (64 hex digits, the shape of Google's; whether Google hashes
 * exactly this text is not checked); importing a key again replaces its
 * expiry and adds nothing.
 *
 * POSIX usernames, as Google derives them: a service account's is "sa_"
 * and its numeric id (here 21 digits derived from the email with
 * CRC-32C, stable across restarts, since the emulator's auth module keeps
 * its unique id to itself); a user's is the email with every character
 * other than [A-Za-z0-9] replaced by '_', cut at 32 characters.  Not
 * root, the profile names the emulator's own account instead: its
 * workers' sshd cannot log anyone else in.  The workers of a node
 * created with enable-oslogin=TRUE (fleet.c) know the emulator's service
 * account's user (a line in their /etc/passwd, namespace mode only).
 *
 * Workers: GET /_oslogin/authorizedKeys?username=U (no token: what the
 * AuthorizedKeysCommand of an OS Login worker asks, on loopback) answers
 * the unexpired key lines of the user whose POSIX username is U, one a
 * line, or an empty body.
 */
#include <sys/types.h>

#include <ctype.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "crc32c.h"
#include "emu.h"
#include "util.h"
#include "xmalloc.h"

#define OSL_PREFIX "/v1/users/"
#define OSL_IMPORT ":importSshPublicKey"
#define OSL_PROFILE "/loginProfile"

struct osl_key {
	char *key; /* "ssh-ed25519 AAAA... comment" */
	char fp[65];
	long long expire_usec; /* 0: never */
};

struct osl_user {
	char *email;
	char *username;
	struct osl_key *keys;
	size_t nkeys;
};

static int
osl_endswith(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Guarded by emu->lock (handlers run with it held). */
static struct osl_user *osl_users;
static size_t osl_nusers;

void
emu_oslogin_username(const char *email, char *out, size_t len)
{
	const char *at = strrchr(email, '@');
	size_t i, k;

	if (at != NULL && osl_endswith(at, ".gserviceaccount.com")) {
		uint32_t a = crc32c_update(0, email, strlen(email));
		uint32_t b = crc32c_update(a, "\nsa", 3);
		unsigned long long v =
		    ((unsigned long long)a << 32 | b) % 900000000000000000ULL +
		    100000000000000000ULL;

		/* 18 digits, then 3 more from b: 21 as Google's ids have */
		snprintf(out, len, "sa_%llu%03u", v, (unsigned)(b % 1000));
		return;
	}
	for (i = k = 0; email[i] != '\0' && k < 32 && k + 1 < len; i++)
		out[k++] = isalnum((unsigned char)email[i]) ? email[i] : '_';
	out[k] = '\0';
}

void
emu_oslogin_sa_user(struct emu *e, char *out, size_t len)
{
	char *email =
	    xasprintf("emu-sa@%s.iam.gserviceaccount.com", e->project);

	emu_oslogin_username(email, out, len);
	free(email);
}

unsigned
emu_oslogin_uid(const char *username)
{
	/* Google's OS Login uids are large; keep them in one range */
	return 1000000000u +
	       crc32c_update(0, username, strlen(username)) % 1000000000u;
}

/*
 * The username a profile names.  Not root, the emulator's workers can
 * only log in as its own account (sshd cannot switch users): the
 * profile names that account then.
 */
static char *
osl_posix_name(const char *email)
{
	char name[64];

	if (geteuid() != 0) {
		struct passwd pw, *pwp = NULL;
		char buf[4096];

		if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &pwp) == 0 &&
		    pwp != NULL)
			return xstrdup(pw.pw_name);
	}
	emu_oslogin_username(email, name, sizeof(name));
	return xstrdup(name);
}

static struct osl_user *
osl_user(const char *email, int create)
{
	struct osl_user *u;
	size_t i;

	for (i = 0; i < osl_nusers; i++)
		if (strcmp(osl_users[i].email, email) == 0)
			return &osl_users[i];
	if (!create)
		return NULL;
	osl_users = xreallocarray(osl_users, osl_nusers + 1, sizeof(*u));
	u = &osl_users[osl_nusers++];
	memset(u, 0, sizeof(*u));
	u->email = xstrdup(email);
	u->username = osl_posix_name(email);
	return u;
}

/* "type base64 [comment]" with a type OpenSSH knows; 1 if it is. */
int
emu_oslogin_key_ok(const char *key)
{
	static const char *const types[] = { "ssh-ed25519 ", "ssh-rsa ",
		"ecdsa-sha2-nistp256 ", "ecdsa-sha2-nistp384 ",
		"ecdsa-sha2-nistp521 ", "sk-ssh-ed25519@openssh.com " };
	const char *p = NULL;
	size_t i, n;

	if (strchr(key, '\n') != NULL || strchr(key, '\r') != NULL)
		return 0;
	for (i = 0; i < nitems(types) && p == NULL; i++)
		if (tpu_startswith(key, types[i]))
			p = key + strlen(types[i]);
	if (p == NULL)
		return 0;
	n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	              "0123456789+/=");
	return n >= 16 && (p[n] == '\0' || p[n] == ' ');
}

static cJSON *
osl_profile(struct emu *e, const struct osl_user *u, const char *project)
{
	cJSON *o = cJSON_CreateObject(), *accts, *a, *keys;
	char buf[256];
	unsigned uid = emu_oslogin_uid(u->username);
	size_t i;

	cJSON_AddStringToObject(o, "name", u->email);
	accts = cJSON_AddArrayToObject(o, "posixAccounts");
	a = cJSON_CreateObject();
	cJSON_AddBoolToObject(a, "primary", 1);
	cJSON_AddStringToObject(a, "username", u->username);
	snprintf(buf, sizeof(buf), "%u", uid);
	cJSON_AddStringToObject(a, "uid", buf);
	cJSON_AddStringToObject(a, "gid", buf);
	snprintf(buf, sizeof(buf), "/home/%s", u->username);
	cJSON_AddStringToObject(a, "homeDirectory", buf);
	cJSON_AddStringToObject(a, "shell", "/bin/bash");
	cJSON_AddStringToObject(a, "gecos", "");
	cJSON_AddStringToObject(a, "systemId", "");
	cJSON_AddStringToObject(
	    a, "accountId", project != NULL ? project : e->project);
	cJSON_AddStringToObject(a, "operatingSystemType", "LINUX");
	snprintf(buf, sizeof(buf), "users/%s/projects/%s", u->email,
	    project != NULL ? project : e->project);
	cJSON_AddStringToObject(a, "name", buf);
	cJSON_AddItemToArray(accts, a);
	keys = cJSON_AddObjectToObject(o, "sshPublicKeys");
	for (i = 0; i < u->nkeys; i++) {
		cJSON *k = cJSON_AddObjectToObject(keys, u->keys[i].fp);

		cJSON_AddStringToObject(k, "key", u->keys[i].key);
		if (u->keys[i].expire_usec > 0) {
			snprintf(
			    buf, sizeof(buf), "%lld", u->keys[i].expire_usec);
			cJSON_AddStringToObject(k, "expirationTimeUsec", buf);
		}
		cJSON_AddStringToObject(k, "fingerprint", u->keys[i].fp);
		snprintf(buf, sizeof(buf), "users/%s/sshPublicKeys/%s",
		    u->email, u->keys[i].fp);
		cJSON_AddStringToObject(k, "name", buf);
	}
	return o;
}

static int
osl_import(struct emu *e, struct emu_req *r, const char *email)
{
	cJSON *body, *out, *jk, *jx;
	struct osl_user *u;
	long long expire = 0;
	char fp[65], *end;
	size_t i;

	if (strcmp(r->method, "POST") != 0)
		return emu_reply_error(r, 405, "INVALID_ARGUMENT",
		    "Method %s not allowed on importSshPublicKey", r->method);
	if ((body = emu_body_json(e, r)) == NULL)
		return 0;
	jk = cJSON_GetObjectItemCaseSensitive(body, "key");
	jx = cJSON_GetObjectItemCaseSensitive(body, "expirationTimeUsec");
	if (!cJSON_IsString(jk) || !emu_oslogin_key_ok(jk->valuestring)) {
		cJSON_Delete(body);
		return emu_reply_error(r, 400, "INVALID_ARGUMENT",
		    "Invalid SSH public key: key must be an OpenSSH public "
		    "key line (type base64 [comment])");
	}
	if (jx != NULL) {
		const char *s = cJSON_IsString(jx) ? jx->valuestring : "";

		expire = strtoll(s, &end, 10);
		if (*s == '\0' || *end != '\0' || expire <= 0) {
			cJSON_Delete(body);
			return emu_reply_error(r, 400, "INVALID_ARGUMENT",
			    "Invalid value at 'ssh_public_key."
			    "expiration_time_usec' (TYPE_INT64)");
		}
	}
	u = osl_user(email, 1);
	emu_sha256_hex(jk->valuestring, fp);
	for (i = 0; i < u->nkeys; i++)
		if (strcmp(u->keys[i].fp, fp) == 0)
			break;
	if (i == u->nkeys) {
		u->keys =
		    xreallocarray(u->keys, u->nkeys + 1, sizeof(*u->keys));
		u->keys[i].key = xstrdup(jk->valuestring);
		snprintf(u->keys[i].fp, sizeof(u->keys[i].fp), "%s", fp);
		u->nkeys++;
	}
	u->keys[i].expire_usec = expire;
	cJSON_Delete(body);
	out = cJSON_CreateObject();
	cJSON_AddItemToObject(
	    out, "loginProfile", osl_profile(e, u, emu_query(r, "projectId")));
	return emu_reply_json(r, 200, out);
}

static int
emu_oslogin_api(struct emu *e, struct emu_req *r)
{
	const char *p = r->path + strlen(OSL_PREFIX);
	size_t n = strlen(p);
	char *email;
	int rc;

	if (n > strlen(OSL_IMPORT) && osl_endswith(p, OSL_IMPORT))
		n -= strlen(OSL_IMPORT);
	else if (n > strlen(OSL_PROFILE) && osl_endswith(p, OSL_PROFILE))
		n -= strlen(OSL_PROFILE);
	else
		return emu_reply_error(
		    r, 404, "NOT_FOUND", "Requested entity was not found.");
	email = xstrndup(p, n);
	if (strchr(email, '/') != NULL || strchr(email, '@') == NULL) {
		rc = emu_reply_error(
		    r, 404, "NOT_FOUND", "Requested entity was not found.");
	} else if (r->principal == NULL || strcmp(r->principal, email) != 0) {
		rc = emu_reply_error(r, 403, "PERMISSION_DENIED",
		    "The caller does not have permission");
	} else if (osl_endswith(p, OSL_IMPORT)) {
		rc = osl_import(e, r, email);
	} else if (strcmp(r->method, "GET") != 0) {
		rc = emu_reply_error(r, 405, "INVALID_ARGUMENT",
		    "Method %s not allowed on loginProfile", r->method);
	} else {
		rc = emu_reply_json(r, 200,
		    osl_profile(
		        e, osl_user(email, 1), emu_query(r, "projectId")));
	}
	free(email);
	return rc;
}

static int
emu_oslogin_keys(struct emu *e, struct emu_req *r)
{
	const char *name = emu_query(r, "username");
	long long now = emu_wall_ms() * 1000;
	struct buf out;
	size_t i, k;
	int rc;

	(void)e;
	if (strcmp(r->path, "/_oslogin/authorizedKeys") != 0)
		return emu_reply_error(r, 404, "NOT_FOUND", "No such path");
	if (name == NULL || *name == '\0')
		return emu_reply_error(
		    r, 400, "INVALID_ARGUMENT", "username is required");
	buf_init(&out, BUF_NOCAP);
	for (i = 0; i < osl_nusers; i++) {
		if (strcmp(osl_users[i].username, name) != 0)
			continue;
		for (k = 0; k < osl_users[i].nkeys; k++) {
			const struct osl_key *key = &osl_users[i].keys[k];

			if (key->expire_usec > 0 && key->expire_usec <= now)
				continue;
			buf_puts(&out, key->key);
			buf_puts(&out, "\n");
		}
	}
	rc = emu_reply_data(
	    r, 200, "text/plain", out.len ? out.data : "", out.len);
	buf_release(&out);
	return rc;
}

const struct emu_route oslogin_routes[] = {
	{ OSL_PREFIX, EMU_R_AUTH, emu_oslogin_api, NULL, NULL },
	{ "/_oslogin/", 0, emu_oslogin_keys, NULL, NULL },
	{ NULL, 0, NULL, NULL, NULL },
};
