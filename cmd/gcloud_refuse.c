/*
 * gcloud's flags and commands (../shared/gcloud/help-*.txt) that tpuctl
 * does not implement: each is refused with one line saying why, never
 * with "unknown option" (t012 reads the help texts and checks every flag).
 * Remove a row when the flag is implemented.
 */
#include <string.h>

#include "cmd.h"
#include "util.h"

/*
 * Flags whose fields the discovery documents tpuctl and its emulator are
 * built from (tpu.v2 and tpu.v2alpha1, revision 20240208,
 * ../shared/api/) do not have.  The fields of later revisions that
 * gcloud's flags set (../shared/api/README.md) are sent on v2alpha1
 * instead (queued_resources.c, create.c).
 */
#define REV "the tpu.v2/v2alpha1 revision tpuctl speaks (20240208)"
static const char no_field_host[] =
    "not supported: a QueuedResource's reservationName in " REV
    " is projects/P/locations/Z/reservations/R, with no folder or "
    "organization host; pass that full name with --reservation";
static const char no_field_disk[] =
    "not supported: nodes.patch in " REV " updates description, tags, "
    "labels, metadata and network_config.enable_external_ips only; data "
    "disks are set at create (--data-disk)";

static const struct {
	const char *cmd;  /* "tpuctl create" */
	const char *flag; /* "--range" */
	const char *why;
} refused[] = {
	{ "tpuctl queued-resources create", "--reservation-host-folder",
	    no_field_host },
	{ "tpuctl queued-resources create", "--reservation-host-organization",
	    no_field_host },
	{ "tpuctl queued-resources create", "--reservation-host-project",
	    no_field_host },
	{ "tpuctl ssh", "--tunnel-through-iap",
	    "IAP tunnelling is not implemented: tpuctl connects to the "
	    "workers' addresses directly" },
	{ "tpuctl scp", "--tunnel-through-iap",
	    "IAP tunnelling is not implemented: tpuctl connects to the "
	    "workers' addresses directly" },
	{ "tpuctl update", "--attach-disk", no_field_disk },
	{ "tpuctl update", "--detach-disk", no_field_disk },
	{ "tpuctl update", "--worker", no_field_disk },
};

static const struct {
	const char *cmd; /* "tpuctl queued-resources ssh" */
	const char *why;
} missing[] = {
	{ "tpuctl queued-resources ssh",
	    "not implemented in tpuctl yet (issue 17): run 'tpuctl ssh NODE' "
	    "on each node the queued resource made ('tpuctl "
	    "queued-resources describe' names them)" },
};

const char *
cmd_gcloud_refusal(const char *cmd, const char *arg)
{
	size_t i, len = strcspn(arg, "=");

	for (i = 0; i < nitems(refused); i++)
		if (strcmp(refused[i].cmd, cmd) == 0 &&
		    strlen(refused[i].flag) == len &&
		    strncmp(refused[i].flag, arg, len) == 0)
			return refused[i].why;
	return NULL;
}

const char *
cmd_gcloud_missing(const char *cmd)
{
	size_t i;

	for (i = 0; i < nitems(missing); i++)
		if (strcmp(missing[i].cmd, cmd) == 0)
			return missing[i].why;
	return NULL;
}
