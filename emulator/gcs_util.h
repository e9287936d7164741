/*
 * Pure helpers of the emulator's Cloud Storage module (gcs.c): request
 * path and header parsing (multipart/related bodies, Content-Range, Range,
 * X-Goog-Hash), percent-decoding and the etag form.  No I/O and no emulator
 * state, so unit tests and the fuzz target can drive them directly.  The
 * prefix is gcsemu_ to stay clear of the client's gcs_ in libtpuctl.
 */
#ifndef TPUCTL_GCS_UTIL_H
#define TPUCTL_GCS_UTIL_H

#include <stddef.h>
#include <stdint.h>

enum gcsemu_api {
	GCSEMU_API_JSON,     /* /storage/v1/..., or bare /b/... */
	GCSEMU_API_UPLOAD,   /* /upload/storage/v1/... */
	GCSEMU_API_DOWNLOAD, /* /download/storage/v1/... */
};

enum gcsemu_kind {
	GCSEMU_P_BUCKETS, /* /b */
	GCSEMU_P_BUCKET,  /* /b/B */
	GCSEMU_P_OBJECTS, /* /b/B/o */
	GCSEMU_P_OBJECT,  /* /b/B/o/N */
	GCSEMU_P_COMPOSE, /* /b/B/o/N/compose (POST) */
	GCSEMU_P_REWRITE, /* /b/B/o/N/rewriteTo/b/DB/o/DN */
	GCSEMU_P_COPY,    /* /b/B/o/N/copyTo/b/DB/o/DN */
};

struct gcsemu_path {
	enum gcsemu_api api;
	enum gcsemu_kind kind;
	char *bucket;  /* NULL for BUCKETS */
	char *object;  /* decoded name, for OBJECT and up */
	char *dbucket; /* REWRITE/COPY destination */
	char *dobject;
};

/*
 * Parse a raw request URL (query allowed, ignored) into the API and the
 * resource.  Object names are percent-decoded segment by segment, so
 * "a%2Fb" and "a/b" both name "a/b".  0, or -1 when the path is not a
 * Cloud Storage resource path (or has a bad escape or a NUL).
 */
int gcsemu_path_parse(
    const char *raw_url, const char *method, struct gcsemu_path *);
void gcsemu_path_release(struct gcsemu_path *);

/*
 * Percent-decode len bytes of s; NULL on a bad escape or a decoded NUL.
 * The caller frees the result.
 */
char *gcsemu_pct_decode(const char *s, size_t len);

/*
 * Percent-encode s as one URL path segment or query value: everything
 * but RFC 3986's unreserved characters (A-Z a-z 0-9 - . _ ~), '/'
 * included, as GCS writes object names in selfLink and mediaLink.  The
 * caller frees the result.
 */
char *gcsemu_pct_encode(const char *s);

/*
 * The boundary of a "multipart/related; boundary=X" (or boundary="X")
 * Content-Type into out; 0, or -1 when missing, empty or too long.
 */
int gcsemu_mp_boundary(const char *ctype, char *out, size_t outlen);

struct gcsemu_mp {
	size_t json_off, json_len; /* the metadata part */
	size_t data_off, data_len; /* the media part */
	char data_ctype[256];      /* its Content-Type, "" if none */
};

/*
 * Split a multipart/related upload body (JSON part, then data part) with
 * CRLF or bare LF line ends.  The data part ends at the last closing
 * delimiter, so data containing the boundary text is still safe.  0, or
 * -1 when the body does not have that shape.
 */
int gcsemu_mp_parse(
    const char *buf, size_t len, const char *boundary, struct gcsemu_mp *);

struct gcsemu_crange {
	int has_range;        /* 0 for status queries (bytes STAR/total) */
	uint64_t first, last; /* inclusive */
	int open_end;         /* "bytes 0-STAR/STAR": ends with the body */
	int total_known;
	uint64_t total;
};

/*
 * Parse a resumable-upload Content-Range: "bytes a-b/total", "bytes
 * a-b/STAR", "bytes STAR/total", "bytes STAR/STAR", "bytes a-STAR/STAR",
 * where STAR is a literal asterisk.  0 or -1.
 */
int gcsemu_crange_parse(const char *, struct gcsemu_crange *);

/*
 * A download Range header against an object of size bytes: 0 with *off,
 * *len set; 1 when it should be ignored (malformed, multiple ranges: serve
 * the whole object); -1 when unsatisfiable (416).
 */
int gcsemu_range_parse(
    const char *, uint64_t size, uint64_t *off, uint64_t *len);

/*
 * X-Goog-Hash: "crc32c=...,md5=..." in any order; each out gets its value
 * or "".  0, or -1 when malformed or a value is too long.
 */
int gcsemu_goog_hash_parse(
    const char *, char *crc, size_t crclen, char *md5, size_t md5len);

/* The etag GCS sends: base64 of {1: generation, 2: metageneration}. */
void gcsemu_etag(int64_t gen, int64_t metagen, char *out, size_t outlen);

/* 1 if s is exactly n lowercase hex digits. */
int gcsemu_is_hex(const char *s, size_t n);

#endif
