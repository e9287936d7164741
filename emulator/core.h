/*
 * Internals shared by the emulator core's files (core.c, core_tls.c) and
 * its main.c: starting and stopping the server, the fault list, TLS
 * material.  Modules use emu.h only.
 */
#ifndef TPUCTL_EMU_CORE_H
#define TPUCTL_EMU_CORE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "emu.h"

struct core_server;

/*
 * Serve on listen_fd (bound and listening); with tls_key/tls_cert (PEM
 * strings) over HTTPS.  Also starts the 100 ms tpu_tick() thread unless
 * no_ticker.  NULL with errbuf set on failure.
 */
struct core_server *core_server_start(struct emu *, int listen_fd,
    const char *tls_key, const char *tls_cert, int no_ticker, char *errbuf,
    size_t errlen);
/* Stop accepting, wait for the connection threads, join the ticker. */
void core_server_stop(struct emu *, struct core_server *);

/* Faults (lock held): add from {"method","path","spec","count"}. */
int core_fault_add(struct emu *, const cJSON *, char *errbuf, size_t errlen);
void core_faults_clear(struct emu *);
void core_faults_load(struct emu *);
cJSON *core_faults_json(struct emu *);

/*
 * Make sure DIR/ca.pem, DIR/ca-key.pem, DIR/server.pem and
 * DIR/server-key.pem exist (keys 0600), generating them with OpenSSL on
 * first use, and load the server key and chain as PEM strings (the caller
 * frees).  0, or -1 with errbuf set.
 */
int core_tls_material(
    struct emu *, char **key_pem, char **cert_pem, char *errbuf, size_t errlen);

#endif
