/*
 * Service base URLs and the URL scheme rule.  See endpoint.h.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "config.h"
#include "endpoint.h"
#include "redact.h"
#include "xmalloc.h"

static const struct {
	const char *key;
	const char *env;
	const char *dflt;
	int is_base;
} services[] = {
	[ENDPOINT_TPU] = { "api_endpoint_overrides/tpu",
	    "CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU",
	    "https://tpu.googleapis.com/", 1 },
	[ENDPOINT_STORAGE] = { "api_endpoint_overrides/storage",
	    "STORAGE_EMULATOR_HOST", "https://storage.googleapis.com/", 1 },
	[ENDPOINT_OAUTH2_TOKEN] = { "api_endpoint_overrides/oauth2",
	    "CLOUDSDK_API_ENDPOINT_OVERRIDES_OAUTH2",
	    "https://oauth2.googleapis.com/token", 0 },
	[ENDPOINT_IAMCREDENTIALS] = { "api_endpoint_overrides/iamcredentials",
	    "CLOUDSDK_API_ENDPOINT_OVERRIDES_IAMCREDENTIALS",
	    "https://iamcredentials.googleapis.com/", 1 },
	[ENDPOINT_OSLOGIN] = { "api_endpoint_overrides/oslogin",
	    "CLOUDSDK_API_ENDPOINT_OVERRIDES_OSLOGIN",
	    "https://oslogin.googleapis.com/", 1 },
	[ENDPOINT_COMPUTE] = { "api_endpoint_overrides/compute",
	    "CLOUDSDK_API_ENDPOINT_OVERRIDES_COMPUTE",
	    "https://compute.googleapis.com/compute/v1/", 1 },
};

/* The host of url (lowercase, no brackets), or NULL. Caller frees. */
static char *
url_host(const char *url)
{
	CURLU *u = curl_url();
	char *h = NULL, *r = NULL;

	if (u == NULL)
		return NULL;
	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &h, 0) == CURLUE_OK) {
		size_t n = strlen(h);

		if (n >= 2 && h[0] == '[' && h[n - 1] == ']')
			r = xstrndup(h + 1, n - 2);
		else
			r = xstrdup(h);
		curl_free(h);
	}
	curl_url_cleanup(u);
	return r;
}

int
endpoint_is_loopback(const char *url)
{
	char *h = url_host(url);
	int r = 0;

	if (h == NULL)
		return 0;
	if (strcasecmp(h, "localhost") == 0 || strcmp(h, "::1") == 0)
		r = 1;
	else if (strncmp(h, "127.", 4) == 0 &&
	         strspn(h, "0123456789.") == strlen(h))
		r = 1;
	free(h);
	return r;
}

static int check_url(const char *url, const char *shown, int allow_http_any,
    struct tpu_err *err);

int
endpoint_check_url(const char *url, int allow_http_any, struct tpu_err *err)
{
	char *shown = redact_str(url);
	int rc;

	rc = check_url(url, shown, allow_http_any, err);
	free(shown);
	return rc;
}

static int
check_url(
    const char *url, const char *shown, int allow_http_any, struct tpu_err *err)
{
	char *h;

	if (strncasecmp(url, "https://", 8) == 0) {
		if ((h = url_host(url)) == NULL || *h == '\0') {
			free(h);
			return tpu_error(err, TPU_E_USAGE,
			    "invalid URL '%s': no host", shown);
		}
		free(h);
		return 0;
	}
	if (strncasecmp(url, "http://", 7) == 0) {
		if ((h = url_host(url)) == NULL || *h == '\0') {
			free(h);
			return tpu_error(err, TPU_E_USAGE,
			    "invalid URL '%s': no host", shown);
		}
		free(h);
		if (allow_http_any || endpoint_is_loopback(url))
			return 0;
		return tpu_error(err, TPU_E_USAGE,
		    "refusing URL '%s': plain http is allowed only to loopback "
		    "hosts (127.0.0.0/8, ::1, localhost); use https",
		    shown);
	}
	return tpu_error(err, TPU_E_USAGE,
	    "refusing URL '%s': only https (or http to a loopback host) is "
	    "allowed",
	    shown);
}

/* An override as a URL: host:port alone means http://host:port. */
static char *
as_url(const char *v)
{
	return strstr(v, "://") == NULL ? xasprintf("http://%s", v)
	                                : xstrdup(v);
}

char *
endpoint_base(
    const struct config *cfg, enum endpoint_service svc, struct tpu_err *err)
{
	const char *v = NULL, *what;
	char *r;
	size_t n;

	if ((unsigned)svc >= sizeof services / sizeof services[0]) {
		tpu_error(err, TPU_E_INTERNAL, "unknown service %d", (int)svc);
		return NULL;
	}
	if (cfg != NULL)
		v = config_get(cfg, services[svc].key);
	what = services[svc].key;
	if (v == NULL || *v == '\0') {
		v = getenv(services[svc].env);
		what = services[svc].env;
	}
	if (v == NULL || *v == '\0')
		return xstrdup(services[svc].dflt);
	r = as_url(v);
	n = strlen(r);
	if (services[svc].is_base && (n == 0 || r[n - 1] != '/')) {
		char *t = xasprintf("%s/", r);

		free(r);
		r = t;
	}
	if (endpoint_check_url(r, 0, err) != 0) {
		tpu_error_prefix(err, "%s", what);
		free(r);
		return NULL;
	}
	return r;
}

int
endpoint_check_value(const char *value, struct tpu_err *err)
{
	char *r = as_url(value);
	int rc = endpoint_check_url(r, 0, err);

	free(r);
	return rc;
}

char *
endpoint_join(const char *base, const char *path)
{
	size_t n = strlen(base);

	while (*path == '/')
		path++;
	if (n > 0 && base[n - 1] == '/')
		return xasprintf("%s%s", base, path);
	return xasprintf("%s/%s", base, path);
}

char *
endpoint_origin(const char *url)
{
	const char *p = strstr(url, "://");
	size_t n;

	if (p == NULL)
		return NULL;
	p += 3;
	n = strcspn(p, "/?#");
	return xstrndup(url, (size_t)(p - url) + n);
}
