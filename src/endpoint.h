/*
 * Base URLs of the Google services tpuctl talks to, with the ecosystem's
 * override conventions, and the rule for which URLs may be used at all:
 * https everywhere, plain http only for loopback hosts (the emulator) and
 * for the GCE metadata server.
 *
 *   service          default                              override key
 *   tpu              https://tpu.googleapis.com/ api_endpoint_overrides/tpu
 *   storage          https://storage.googleapis.com/
 * api_endpoint_overrides/storage oauth2 token
 * https://oauth2.googleapis.com/token  api_endpoint_overrides/oauth2
 *   iamcredentials   https://iamcredentials.googleapis.com/
 *                                                         api_endpoint_overrides/iamcredentials
 *   oslogin          https://oslogin.googleapis.com/
 *                                                         api_endpoint_overrides/oslogin
 *   compute          https://compute.googleapis.com/compute/v1/
 *                                                         api_endpoint_overrides/compute
 *     (gcloud's override value holds the API's path, compute/v1/, too)
 *
 * The config module fills the tpu key from CLOUDSDK_API_ENDPOINT_OVERRIDES_TPU
 * and the storage key from STORAGE_EMULATOR_HOST; when it has no value the
 * environment variables are read here as well.  A storage value without a
 * scheme ("127.0.0.1:9023") gets "http://".
 */
#ifndef TPUCTL_ENDPOINT_H
#define TPUCTL_ENDPOINT_H

#include "err.h"

struct config;

enum endpoint_service {
	ENDPOINT_TPU,
	ENDPOINT_STORAGE,
	ENDPOINT_OAUTH2_TOKEN,
	ENDPOINT_IAMCREDENTIALS,
	ENDPOINT_OSLOGIN,
	ENDPOINT_COMPUTE,
};

/*
 * The base URL for a service (ending in '/', except the token URL which
 * is a full URL), checked with endpoint_check_url.  cfg may be NULL (the
 * defaults and the environment).  Returns a string the caller frees, or
 * NULL with err set (TPU_E_USAGE naming the key and the value).
 */
char *endpoint_base(
    const struct config *, enum endpoint_service, struct tpu_err *);

/*
 * Check that url may be used: https, or http to a loopback host
 * (127.0.0.0/8, ::1, localhost).  allow_http_any allows plain http to any
 * host (only for the metadata server).  Returns 0 or TPU_E_USAGE naming
 * the URL and the rule.
 */
int endpoint_check_url(const char *url, int allow_http_any, struct tpu_err *);

/*
 * Check an api_endpoint_overrides/... value (or its environment variable)
 * with the rule endpoint_base applies when it is used: "host:port" is
 * http://host:port, then endpoint_check_url.  config set and the config
 * file loader call it, so a value that could never be used is refused
 * where it is given.  0 or TPU_E_USAGE naming the value and the rule.
 */
int endpoint_check_value(const char *value, struct tpu_err *);

/* 1 if the URL's host is a loopback address or "localhost". */
int endpoint_is_loopback(const char *url);

/*
 * Join a base ending in '/' and a relative path ("v2/projects/..."): a
 * leading '/' on path is dropped.  Returns a string the caller frees.
 */
char *endpoint_join(const char *base, const char *path);

/* "https://host:port" of a URL (no trailing slash), or NULL. Caller frees. */
char *endpoint_origin(const char *url);

#endif
