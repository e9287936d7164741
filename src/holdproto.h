/*
 * The wire protocol between a tpuctl command and the per-user connection
 * holder of issue 18 (the warm pool), over a Unix stream socket.
 *
 * Every message is one frame:
 *
 *	u32 length (big-endian) of what follows, 1..HOLDPROTO_FRAME_MAX
 *	u8  type (enum holdproto_type)
 *	    payload: a sequence of fields, each either
 *	      u32 (big-endian), or
 *	      string: u32 length (at most the rest of the frame) + bytes
 *
 * A frame's payload must be consumed exactly by its type's decoder (no
 * trailing bytes); strings may hold any byte (output chunks) but the
 * decoders of text fields (hosts, users, keys, commands) refuse a NUL.
 * Everything from the socket is untrusted input: lengths are checked
 * against the bytes present and the caps below before anything is
 * allocated, so a hostile or broken peer costs at most one frame of
 * memory.
 *
 * Conversation (client C, holder H):
 *	C: HELLO (version, slice key, node id, identity)
 *	H: HELLO (version, node id and identity it holds) or ERROR and close
 *	C: RUN (targets with their full command lines)
 *	H: OUT ... (on_output calls of any worker, any stream), DONE per worker,
 *	   END after the last DONE; PING between them (keepalive)
 *	C: LIST or STOP instead of RUN: H answers INFO lines / END.
 */
#ifndef TPUCTL_HOLDPROTO_H
#define TPUCTL_HOLDPROTO_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

#define HOLDPROTO_VERSION 3
/* Largest frame (type + payload): a RUN of 4,096 workers with their
 * pinned keys fits; an output chunk is far smaller. */
#define HOLDPROTO_FRAME_MAX (16u << 20)
#define HOLDPROTO_TARGETS_MAX 4096u
#define HOLDPROTO_KEYS_MAX 16u

enum holdproto_type {
	HOLDPROTO_HELLO = 1,
	HOLDPROTO_RUN = 2,
	HOLDPROTO_OUT = 3,
	HOLDPROTO_DONE = 4,
	HOLDPROTO_END = 5,
	HOLDPROTO_LIST = 6,
	HOLDPROTO_INFO = 7,
	HOLDPROTO_STOP = 8,
	HOLDPROTO_ERROR = 9,
	HOLDPROTO_PING = 10, /* no payload: the holder is alive */
};

/*
 * While a RUN goes on the holder sends a PING every
 * HOLDPROTO_KEEPALIVE_MS; a client that gets no frame at all for
 * HOLDPROTO_DEADLINE_MS takes the holder for lost (stopped or hung):
 * the command fails as when the holder dies mid-run.
 */
#define HOLDPROTO_KEEPALIVE_MS 1000
#define HOLDPROTO_DEADLINE_MS 10000

/* A frame inside a receive buffer (payload points into it). */
struct holdproto_frame {
	int type;
	const unsigned char *payload;
	size_t len;
};

/*
 * Find the first frame in data[0..n): 1 with *f and *used (its total
 * size) set; 0 when more bytes are needed; TPU_E_API with err set when
 * the bytes cannot be a frame (length 0 or over HOLDPROTO_FRAME_MAX, an
 * unknown type).
 */
int holdproto_frame_next(const void *data, size_t n, struct holdproto_frame *f,
    size_t *used, struct tpu_err *);

/* Field writers: start a frame of a type, append fields, finish (which
 * writes the length).  Fails (-1) only past the buf's cap. */
void holdproto_begin(struct buf *, int type, size_t *start);
void holdproto_put_u32(struct buf *, uint32_t);
void holdproto_put_str(struct buf *, const char *, size_t len);
void holdproto_put_cstr(struct buf *, const char *);
int holdproto_end(struct buf *, size_t start);

/* A reading cursor over a payload. */
struct holdproto_rd {
	const unsigned char *p;
	size_t left;
};

void holdproto_rd_init(struct holdproto_rd *, const struct holdproto_frame *);
/* 0, or -1 when the payload has no such field left. */
int holdproto_get_u32(struct holdproto_rd *, uint32_t *);
/* The string's bytes point into the frame (not terminated). */
int holdproto_get_str(struct holdproto_rd *, const char **, size_t *);
/* A text field as a new NUL-terminated string (free it): -1 when it is
 * missing, longer than max, or holds a NUL. */
int holdproto_get_text(struct holdproto_rd *, size_t max, char **);

/* HELLO, both ways. */
struct holdproto_hello {
	uint32_t version;
	char *slice;   /* "project/zone/node", the pool's key */
	char *node_id; /* the node's id when the client read it, or "" */
	/* What the sessions authenticate with (holder_identity), or "":
	 * a client of another identity does not use the held sessions. */
	char *identity;
};

/* One worker of a RUN. */
struct holdproto_target {
	uint32_t worker;
	char *host;
	uint32_t port;
	char *user;
	char **hostkeys; /* pinned "type base64 [comment]" lines */
	size_t nhostkeys;
	char *command; /* the full command line (sshpool_command_line) */
};

struct holdproto_run {
	uint32_t flags;      /* SSHPOOL_F_* the holder honours */
	uint32_t timeout_ms; /* per worker, from exec; 0: none */
	uint32_t fanout;
	struct holdproto_target *targets;
	size_t ntargets;
};

/*
 * Output of worker idx (index into the RUN) on stream 1 or 2, exactly as
 * the holder's sshpool_run gave it to its on_output: a line or a piece
 * of one (SSHPOOL_F_LINES) or a raw chunk, with on_output's flags
 * (SSHPOOL_OUT_EOL), so that the client feeds the same calls to the
 * same rendering as a cold run and no line is split twice.
 */
struct holdproto_out {
	uint32_t idx;
	uint32_t stream;
	uint32_t flags;   /* SSHPOOL_OUT_EOL or 0 */
	const char *data; /* into the frame */
	size_t len;
};

/* The end of worker idx: the fields of struct sshpool_result. */
struct holdproto_done {
	uint32_t idx;
	uint32_t status;     /* enum sshpool_status */
	int32_t exit_status; /* -1 when none */
	char signal[32];     /* "" or "KILL" */
	uint32_t duration_ms;
	uint32_t auth_attempts;
	char hostkey_fp[64];
	char msg[512];
};

void holdproto_put_hello(struct buf *, const struct holdproto_hello *);
void holdproto_put_run(struct buf *, const struct holdproto_run *);
void holdproto_put_out(struct buf *, uint32_t idx, uint32_t stream,
    uint32_t flags, const char *data, size_t len);
void holdproto_put_done(struct buf *, const struct holdproto_done *);
/* END (rc, a negative enum tpu_errc or 0), ERROR (a message), INFO (a
 * line of `ssh-pool list`): one field each. */
void holdproto_put_end(struct buf *, int32_t rc);
void holdproto_put_text(struct buf *, int type, const char *text);

/*
 * Decoders: 0 with the struct filled (release it), or TPU_E_API with
 * err naming what is wrong; on error nothing is left allocated.  A
 * decoder refuses a frame of another type.
 */
int holdproto_get_hello(
    const struct holdproto_frame *, struct holdproto_hello *, struct tpu_err *);
int holdproto_get_run(
    const struct holdproto_frame *, struct holdproto_run *, struct tpu_err *);
int holdproto_get_out(
    const struct holdproto_frame *, struct holdproto_out *, struct tpu_err *);
int holdproto_get_done(
    const struct holdproto_frame *, struct holdproto_done *, struct tpu_err *);
int holdproto_get_end(
    const struct holdproto_frame *, int32_t *rc, struct tpu_err *);
/* ERROR, INFO: *text is the caller's to free. */
int holdproto_get_textmsg(
    const struct holdproto_frame *, int type, char **text, struct tpu_err *);

void holdproto_hello_release(struct holdproto_hello *);
void holdproto_run_release(struct holdproto_run *);

#endif
