/*
 * The Cloud Storage transfer engine, on the primitives of gcs.h:
 *
 * Uploads (RELIABILITY.md R6, C1-C12)
 *   - size <= GCSX_MULTIPART_MAX (8 MiB): one multipart request carrying
 *     crc32c and md5 in the metadata, so the server verifies both; the
 *     body is streamed from the file, never buffered whole.
 *   - larger: a resumable session, PUTs of GCSX_CHUNK (64 MiB; the
 *     environment's TPUCTL_GCS_CHUNK_SIZE for tests and benchmarks; a
 *     multiple of 256 KiB) streamed from disk with pread: few requests
 *     (each costs a round trip and a commit on the server), and a
 *     failure re-sends at most one chunk.  After a dropped
 *     connection or a 5xx the session is queried (PUT "Content-Range:
 *     bytes * /N", 308 + Range) and the upload resumes at the persisted
 *     offset; the attempt counter restarts whenever the offset moved (R3).
 *     A 0600 tracker file (GCSX tracker dir, keyed by the source path and
 *     the destination) holds the session URL, size, mtime and crc32c, so a
 *     killed upload resumes when rerun if all three still match (C10); it
 *     is removed once the object exists.  The crc32c of the file goes into
 *     the session metadata, so the server checks it too (no md5: a second
 *     pass over the file at a third of the link speed).
 *   - size >= GCSX_COMPOSITE_MIN (256 MiB) and parallel > 1: up to
 *     2 * parallel parts, at most 32 (each but the last a multiple of 256
 *     KiB), parallel at once, uploaded as temporary
 *     objects "<name>.tpuctl-part-<id>-<i>", composed into the destination,
 *     whose crc32c must equal crc32c_combine() of the local parts (C12; a
 *     mismatch deletes the object with ifGenerationMatch and fails with
 *     TPU_E_INTEGRITY).  The tracker (version 2) records the plan, the
 *     crc32c of each part, each part's session and, once uploaded, its
 *     generation: a rerun with size, mtime and crc32c unchanged re-sends
 *     no part whose object still has that generation, size and crc32c,
 *     and resumes the sessions of the others.  The parts are deleted
 *     after the compose, or after a failure a rerun cannot mend (a
 *     permanent error, no tracker); after a transient failure or an
 *     interruption they are kept with the tracker.
 *   Every finished object's crc32c is compared with the local one (C1).
 *
 * Downloads (R7, C3-C5, C13-C15)
 *   - written to "DEST.tpuctl-tmp" (0600 until complete), fsynced, renamed
 *     over DEST, the directory fsynced; on any failure the temp file is
 *     removed and an existing DEST is untouched.
 *   - pinned to the generation seen by the caller's stat; a dropped stream
 *     resumes with "Range: bytes=<seen>-" on that generation.
 *   - objects >= GCSX_SLICE_MIN (64 MiB) with parallel > 1 are fetched in
 *     parallel ranged slices, written in place with pwrite.
 *   - crc32c verified (combined over the slices; md5 when the object has
 *     no crc32c): a mismatch is TPU_E_INTEGRITY.  A local write error
 *     (ENOSPC) is never retried (TPU_E_IO naming strerror).
 *
 * Every function is safe to call from several threads as long as each
 * thread uses its own struct gcs (gcs_clone); the parallel parts and
 * slices clone the handle they are given.
 */
#ifndef TPUCTL_GCSXFER_H
#define TPUCTL_GCSXFER_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

struct gcs;        /* gcs.h: one handle per thread */
struct gcs_object; /* gcs.h: a parsed object resource */

#define GCSX_QUANTUM (256 * 1024)               /* resumable unit */
#define GCSX_MULTIPART_MAX ((int64_t)8 << 20)   /* <=: multipart */
#define GCSX_CHUNK ((int64_t)64 << 20)          /* resumable PUT */
#define GCSX_COMPOSITE_MIN ((int64_t)256 << 20) /* >=: parallel parts */
#define GCSX_SLICE_MIN ((int64_t)64 << 20)      /* >=: sliced download */
#define GCSX_MAX_PARTS 32                       /* one compose call */
#define GCSX_TMP_SUFFIX ".tpuctl-tmp"
#define GCSX_TRACKER_TEMP_AGE 300 /* s: a tracker's temp older is stale */

/*
 * Bytes moved (delta, may be negative after a rewind): called from worker
 * threads, so the callee locks.
 */
typedef void (*gcsx_progress_fn)(void *arg, int64_t delta);

struct gcsx_opts {
	const char *content_type;    /* uploads; NULL: by file extension */
	int64_t if_generation_match; /* uploads/copies: -1 none, 0 new only */
	int parallel;                /* parts or slices at once; <= 1: one */
	const char *tracker_dir;     /* NULL: gcsx_tracker_dir() */
	int no_tracker;              /* do not read or write trackers */
	gcsx_progress_fn progress;
	void *progress_arg;
	/* thresholds, 0 for the defaults above (tests lower them) */
	int64_t multipart_max, chunk, composite_min, slice_min;
};

void gcsx_opts_init(struct gcsx_opts *);

/*
 * Upload the regular file path to gs://bucket/name.  out (may be NULL)
 * receives the object.  Errors: TPU_E_IO for local trouble,
 * TPU_E_INTEGRITY for a checksum mismatch, TPU_E_PRECONDITION when
 * if_generation_match failed (412), the API's code otherwise.
 */
int gcsx_upload(struct gcs *, const char *path, const char *bucket,
    const char *name, const struct gcsx_opts *, struct gcs_object *out,
    struct tpu_err *);

/*
 * Download obj (bucket, name, generation, size and checksums from a
 * gcs_stat or gcs_list) to dest: into dest GCSX_TMP_SUFFIX, verified,
 * fsynced and renamed over dest.  A dest that exists and is not a regular
 * file (a device, a FIFO, a symbolic link such as /dev/stdout) is written
 * in place in one stream instead, never replaced.  A write error is
 * TPU_E_IO.
 */
int gcsx_download(struct gcs *, const struct gcs_object *obj, const char *dest,
    const struct gcsx_opts *, struct tpu_err *);

/* crc32c (and size) of a whole file, read in 1 MiB blocks. */
int gcsx_file_crc32c(
    const char *path, uint32_t *crc, int64_t *size, struct tpu_err *);

/* The content type for a file name by extension, else
 * "application/octet-stream". */
const char *gcsx_guess_type(const char *name);

/* --- separable logic (unit-tested) ------------------------------------ */

/*
 * The offset to resume at from a 308 reply's Range header: "bytes=0-N"
 * gives N+1, an absent header (NULL) gives 0 (C7: nothing persisted).
 * -1 for anything else (not starting at 0, garbage, overflow).
 */
int64_t gcsx_parse_range(const char *hdr);

/* "bytes START-END/TOTAL" of a Content-Range reply header: 0 or -1. */
int gcsx_parse_content_range(
    const char *hdr, int64_t *start, int64_t *end, int64_t *total);

struct gcsx_part {
	int64_t off, len;
};

/*
 * Split size bytes into at most maxparts parts of at least min_part
 * bytes, every part but the last a multiple of GCSX_QUANTUM.  Returns the
 * count (>= 1; one part of 0 bytes for an empty file) written to parts
 * (room for maxparts).
 */
size_t gcsx_plan_parts(
    int64_t size, int64_t min_part, size_t maxparts, struct gcsx_part *parts);

/*
 * Streams of a sliced download of one file: --parallel, at most
 * GCSX_MAX_PARTS, and at most one per CPU (two on a single CPU).  Every
 * stream writes into the same file, and past one writer a CPU the
 * streams mostly contend for the file's lock (measured: 8 streams on 2
 * CPUs are slower than 2).
 */
size_t gcsx_slice_streams(int parallel, long ncpu);

/* crc32c of the concatenation of n parts, from their crcs and lengths. */
uint32_t gcsx_combine(const uint32_t *crcs, const struct gcsx_part *, size_t n);

/* What a tracker file holds. */
struct gcsx_tracker {
	char *src;     /* absolute source path */
	char *dst;     /* "gs://bucket/name" */
	char *session; /* resumable session URL */
	int64_t size;  /* of the source when the session began */
	int64_t mtime_ns;
	uint32_t crc32c;
};

void gcsx_tracker_release(struct gcsx_tracker *);
/* JSON text of t into out. */
int gcsx_tracker_format(const struct gcsx_tracker *, struct buf *out);
/*
 * Parse a tracker; every field must be present and well formed, and the
 * session URL must start with base + "/upload/storage/v1/b/" (a tracker
 * never sends the token elsewhere).  0 or TPU_E_INVALID.
 */
int gcsx_tracker_parse(const char *text, size_t len, const char *base,
    struct gcsx_tracker *, struct tpu_err *);
/* 1 when t was written for this source state and destination. */
int gcsx_tracker_matches(const struct gcsx_tracker *, const char *src,
    const char *dst, int64_t size, int64_t mtime_ns, uint32_t crc);
/*
 * The tracker directory: $TPUCTL_CACHE_DIR/uploads, else
 * $XDG_CACHE_HOME/tpuctl/uploads, else ~/.cache/tpuctl/uploads.  Caller
 * frees.
 */
char *gcsx_tracker_dir(void);
/* dir + "/" + hex sha256 of src "\n" dst + ".json".  Caller frees. */
char *gcsx_tracker_path(const char *dir, const char *src, const char *dst);

/* What a composite upload's tracker holds (version 2). */
struct gcsx_ctracker {
	char *src, *dst;
	int64_t size, mtime_ns;
	uint32_t crc32c; /* of the whole source */
	char id[17];     /* the parts' name tag: 16 hex digits */
	size_t n;
	struct gcsx_part parts[GCSX_MAX_PARTS];
	uint32_t crcs[GCSX_MAX_PARTS];
	int64_t gens[GCSX_MAX_PARTS];   /* > 0: the part object, uploaded */
	char *sessions[GCSX_MAX_PARTS]; /* the part's session, or NULL */
};

void gcsx_ctracker_release(struct gcsx_ctracker *);
int gcsx_ctracker_format(const struct gcsx_ctracker *, struct buf *out);
/*
 * Parse a version 2 tracker: fields well formed, the parts tile the file
 * (in order, 256 KiB multiples but the last, at most GCSX_MAX_PARTS),
 * session URLs under base + "/upload/storage/v1/b/".  0 or TPU_E_INVALID.
 */
int gcsx_ctracker_parse(const char *text, size_t len, const char *base,
    struct gcsx_ctracker *, struct tpu_err *);
/* "NAME.tpuctl-part-ID-I", a temporary part object.  Caller frees. */
char *gcsx_part_name(const char *name, const char *id, size_t i);

#endif
