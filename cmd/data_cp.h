/*
 * "tpuctl data cp" and "tpuctl data sync" (defined in cmd/data_cp.c, run
 * from the children table of cmd/data.c).  The usage strings below are the
 * man page SYNOPSIS lines of man/tpuctl-data.1.
 *
 * data cp [-r] [--no-clobber] [--content-type type] [--parallel n]
 *         [--progress auto|none|jsonl] source ... destination
 *   Copy local files to gs://, gs:// objects to local files, or gs:// to
 *   gs:// (a server-side rewrite).  The destination is a "directory" (a
 *   prefix) when there are several sources, with -r, or when it ends in
 *   '/' (or is an existing local directory, or gs://bucket).
 *   -r, --recursive      copy directories (local) and prefixes (gs://)
 *                        as trees, keeping the last source component.
 *   --no-clobber         never replace: uploads and copies carry
 *                        ifGenerationMatch=0 and an existing object fails
 *                        with exit 4 (HTTP 412); an existing local file
 *                        fails with exit 4 before anything is fetched.
 *   --content-type type  the Content-Type of uploaded objects (default:
 *                        by file extension, else application/octet-stream).
 *   --parallel n         files in flight at once (1-64, default 8); a
 *                        single large file uses n parts or slices instead
 *                        (uploads >= 256 MiB: parallel composite; downloads
 *                        >= 64 MiB: parallel ranged slices).
 *   --progress mode      auto (a bar with throughput and ETA on stderr
 *                        when it is a terminal; default), none, or jsonl
 *                        (one JSON object per line on stderr: "progress"
 *                        events twice a second and a final "done").
 *
 * data sync [--delete] [--parallel n] [--progress auto|none|jsonl]
 *           source destination
 *   Make destination hold what source holds: one side is a local
 *   directory, the other gs://bucket[/prefix].  Files whose size and
 *   crc32c already match are skipped.  With the global --dry-run the plan
 *   is printed (one "upload|download|delete PATH" line each) and nothing
 *   changes.
 *   --delete             also delete what exists only at the destination
 *                        (objects by exact generation; local files).
 *
 * Exit status: 0 when every file was copied; the first failure's code
 * otherwise (2 usage, 4 not found or --no-clobber, 5 transient, 6
 * checksum mismatch, 1 local I/O such as ENOSPC); every failure is named
 * on stderr.
 */
#ifndef TPUCTL_DATA_CP_H
#define TPUCTL_DATA_CP_H

#include "ctx.h"
#include "err.h"

#define DATA_CP_USAGE                                                          \
	"data cp [-r] [--no-clobber] [--content-type type] [--parallel n] "    \
	"[--progress auto|none|jsonl] source ... destination"
#define DATA_MV_USAGE                                                          \
	"data mv [-r] [--no-clobber] [--content-type type] [--parallel n] "    \
	"[--progress auto|none|jsonl] source ... destination"
#define DATA_SYNC_USAGE                                                        \
	"data sync [--delete] [--parallel n] [--progress auto|none|jsonl] "    \
	"source destination"

int cmd_data_cp(struct tpu_ctx *, int argc, char **argv, struct tpu_err *);
/* "data mv": cp, then each source removed once every copy succeeded. */
int cmd_data_mv(struct tpu_ctx *, int argc, char **argv, struct tpu_err *);
int cmd_data_sync(struct tpu_ctx *, int argc, char **argv, struct tpu_err *);

#endif
