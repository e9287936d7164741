/*
 * TLS material for "serve --tls": a private CA and a server certificate
 * for 127.0.0.1, ::1 and localhost, made with OpenSSL library calls on
 * first use and kept under the state dir so clients can keep trusting
 * DIR/ca.pem across restarts.  Keys are written 0600.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "core.h"
#include "emu.h"
#include "xmalloc.h"

/* PEM text of a key or certificate; the caller frees. */
static char *
bio_text(BIO *b)
{
	char *p = NULL, *s;
	long n = BIO_get_mem_data(b, &p);

	s = xmalloc((size_t)n + 1);
	memcpy(s, p, (size_t)n);
	s[n] = '\0';
	return s;
}

static char *
key_pem(EVP_PKEY *k)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *s = NULL;

	if (b != NULL &&
	    PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) == 1)
		s = bio_text(b);
	BIO_free(b);
	return s;
}

static char *
cert_pem(X509 *x)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *s = NULL;

	if (b != NULL && PEM_write_bio_X509(b, x) == 1)
		s = bio_text(b);
	BIO_free(b);
	return s;
}

static int
add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (ext == NULL)
		return -1;
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok == 1 ? 0 : -1;
}

/* A certificate for key, signed by ca_key (self-signed when ca == NULL). */
static X509 *
make_cert(EVP_PKEY *key, const char *cn, X509 *ca, EVP_PKEY *ca_key, int is_ca)
{
	X509 *x = X509_new();
	X509_NAME *name;
	BIGNUM *bn = BN_new();
	int ok = 0;

	if (x == NULL || bn == NULL)
		goto out;
	if (X509_set_version(x, 2) != 1 || BN_rand(bn, 120, 0, 0) != 1 ||
	    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) == NULL)
		goto out;
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), 10L * 365 * 86400);
	if (X509_set_pubkey(x, key) != 1)
		goto out;
	name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
	    (const unsigned char *)"tpuctl-emulator", -1, -1, 0);
	X509_NAME_add_entry_by_txt(
	    name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	if (X509_set_issuer_name(
	        x, ca != NULL ? X509_get_subject_name(ca) : name) != 1)
		goto out;
	if (is_ca) {
		if (add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE") ||
		    add_ext(
		        x, x, NID_key_usage, "critical,keyCertSign,cRLSign") ||
		    add_ext(x, x, NID_subject_key_identifier, "hash"))
			goto out;
	} else {
		if (add_ext(
		        x, ca, NID_basic_constraints, "critical,CA:FALSE") ||
		    add_ext(x, ca, NID_key_usage,
		        "critical,digitalSignature,keyEncipherment") ||
		    add_ext(x, ca, NID_ext_key_usage, "serverAuth") ||
		    add_ext(x, ca, NID_subject_alt_name,
		        "IP:127.0.0.1,IP:::1,DNS:localhost") ||
		    add_ext(
		        x, ca, NID_authority_key_identifier, "keyid:always"))
			goto out;
	}
	if (X509_sign(x, ca_key, EVP_sha256()) == 0)
		goto out;
	ok = 1;
out:
	BN_free(bn);
	if (!ok) {
		X509_free(x);
		return NULL;
	}
	return x;
}

static int
save(struct emu *e, const char *name, const char *text, int mode)
{
	char *path = emu_state_path(e, "%s", name);
	int rc = emu_write_file(path, text, strlen(text), mode);

	free(path);
	return rc;
}

static int
generate(struct emu *e, char *errbuf, size_t errlen)
{
	EVP_PKEY *cak = NULL, *srvk = NULL;
	X509 *ca = NULL, *srv = NULL;
	char *s1 = NULL, *s2 = NULL, *s3 = NULL, *s4 = NULL;
	int rc = -1;

	cak = EVP_EC_gen("P-256");
	srvk = EVP_EC_gen("P-256");
	if (cak == NULL || srvk == NULL)
		goto out;
	ca = make_cert(cak, "tpuctl-emulator CA", NULL, cak, 1);
	if (ca == NULL)
		goto out;
	srv = make_cert(srvk, "127.0.0.1", ca, cak, 0);
	if (srv == NULL)
		goto out;
	s1 = key_pem(cak);
	s2 = cert_pem(ca);
	s3 = key_pem(srvk);
	s4 = cert_pem(srv);
	if (s1 == NULL || s2 == NULL || s3 == NULL || s4 == NULL)
		goto out;
	/* The keys first: ca.pem appearing means the set is complete. */
	if (save(e, "ca-key.pem", s1, 0600) ||
	    save(e, "server-key.pem", s3, 0600) ||
	    save(e, "server.pem", s4, 0644) || save(e, "ca.pem", s2, 0644)) {
		snprintf(errbuf, errlen, "cannot write TLS files under '%s'",
		    e->state_dir);
		goto out_quiet;
	}
	rc = 0;
	goto out_quiet;
out:
	snprintf(errbuf, errlen, "cannot generate the TLS certificates");
out_quiet:
	if (s1 != NULL)
		OPENSSL_cleanse(s1, strlen(s1));
	if (s3 != NULL)
		OPENSSL_cleanse(s3, strlen(s3));
	free(s1);
	free(s2);
	free(s3);
	free(s4);
	X509_free(ca);
	X509_free(srv);
	EVP_PKEY_free(cak);
	EVP_PKEY_free(srvk);
	return rc;
}

int
core_tls_material(
    struct emu *e, char **keyp, char **certp, char *errbuf, size_t errlen)
{
	char *ca = emu_state_path(e, "ca.pem");
	char *kp = emu_state_path(e, "server-key.pem");
	char *cp = emu_state_path(e, "server.pem");
	int rc = -1;

	*keyp = NULL;
	*certp = NULL;
	if ((access(ca, R_OK) != 0 || access(kp, R_OK) != 0 ||
	        access(cp, R_OK) != 0) &&
	    generate(e, errbuf, errlen) != 0)
		goto out;
	*keyp = emu_read_file(kp, NULL);
	*certp = emu_read_file(cp, NULL);
	if (*keyp == NULL || *certp == NULL) {
		snprintf(errbuf, errlen, "cannot read '%s' or '%s'", kp, cp);
		xfree_secret(*keyp);
		free(*certp);
		*keyp = *certp = NULL;
		goto out;
	}
	rc = 0;
out:
	free(ca);
	free(kp);
	free(cp);
	return rc;
}
