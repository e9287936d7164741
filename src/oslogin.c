/*
 * Cloud OS Login API client: see oslogin.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "endpoint.h"
#include "http.h"
#include "json.h"
#include "oslogin.h"
#include "xmalloc.h"

/* A login profile reply is small; anything larger is not one. */
#define OSLOGIN_MAX_REPLY (1 << 20)

int
oslogin_enabled(const char *value)
{
	return value != NULL && strcasecmp(value, "true") == 0;
}

int
oslogin_parse_username(
    const char *body, size_t len, char **user, struct tpu_err *err)
{
	cJSON *j;
	const cJSON *prof, *accts, *a, *pick = NULL;
	const char *name;
	int n = 0;

	*user = NULL;
	if ((j = json_parse(body, len, "OS Login reply", err)) == NULL)
		return err->code;
	prof = cJSON_GetObjectItemCaseSensitive(j, "loginProfile");
	if (prof == NULL)
		prof = j;
	accts = cJSON_GetObjectItemCaseSensitive(prof, "posixAccounts");
	cJSON_ArrayForEach(a, accts)
	{
		n++;
		if (json_opt_bool(a, "primary", 0) && pick == NULL)
			pick = a;
	}
	if (pick == NULL && n == 1)
		pick = cJSON_GetArrayItem(accts, 0);
	name = pick != NULL ? json_opt_string(pick, "username", NULL) : NULL;
	if (name == NULL || *name == '\0' ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                 "0123456789._-") != strlen(name) ||
	    name[0] == '-') {
		const char *why =
		    n == 0 ? "no POSIX account"
		    : name == NULL || *name == '\0'
		        ? "no primary POSIX account with a username"
		        : "a username that is not a POSIX user name";

		/* why is static: the tree can go first */
		cJSON_Delete(j);
		return tpu_error(err, TPU_E_API,
		    "OS Login reply has %s (loginProfile.posixAccounts[]."
		    "username, primary)",
		    why);
	}
	*user = xstrdup(name);
	cJSON_Delete(j);
	return 0;
}

int
oslogin_import(struct http *h, const char *base, const char *email,
    const char *project, const char *key, int64_t expire_usec, char **user,
    struct tpu_err *err)
{
	struct http_request req;
	struct http_response resp;
	cJSON *body;
	char *text, *rel, *url;
	int rc;

	*user = NULL;
	if (email == NULL || *email == '\0' || strchr(email, '@') == NULL ||
	    strspn(email, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                  "0123456789@._+-") != strlen(email))
		return tpu_error(err, TPU_E_USAGE,
		    "account '%s' is not an email address (OS Login needs "
		    "the account's email)",
		    email != NULL ? email : "");
	body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "key", key);
	if (expire_usec > 0) {
		char v[32];

		snprintf(v, sizeof v, "%lld", (long long)expire_usec);
		cJSON_AddStringToObject(body, "expirationTimeUsec", v);
	}
	text = json_print(body, 0);
	cJSON_Delete(body);
	rel = xasprintf("v1/users/%s:importSshPublicKey%s%s", email,
	    project != NULL ? "?projectId=" : "",
	    project != NULL ? project : "");
	url = endpoint_join(base, rel);
	memset(&req, 0, sizeof req);
	req.method = "POST";
	req.url = url;
	req.body = text;
	req.body_len = strlen(text);
	req.content_type = "application/json";
	/* the same key imported twice is the same profile: safe to retry */
	req.flags = HTTP_F_IDEMPOTENT;
	req.max_response = OSLOGIN_MAX_REPLY;
	http_response_init(&resp);
	rc = http_request(h, &req, &resp, err);
	if (rc == 0 && !resp.dry_run)
		rc = oslogin_parse_username(
		    resp.body.data, resp.body.len, user, err);
	http_response_release(&resp);
	cJSON_free(text);
	free(rel);
	free(url);
	return rc;
}
