/*
 * "tpuctl data": Cloud Storage staging.  cmd/data.c holds the children
 * table and ls, rm, mb, stat and cat; cp and sync are defined in
 * cmd/data_cp.c (declared, with their usage strings, in cmd/data_cp.h).
 */
#ifndef TPUCTL_DATA_H
#define TPUCTL_DATA_H

#include "ctx.h"
#include "data_cp.h"
#include "err.h"

/* Parallel deletes of "data rm -r" (handles in flight). */
#define DATA_RM_PARALLEL 8

#endif
