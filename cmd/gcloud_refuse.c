/*
 * gcloud's flags and commands (../shared/gcloud/help-*.txt) that tpuctl
 * does not implement: each is refused with one line saying why, never
 * with "unknown option" (t012 reads the help texts and checks every flag).
 * Remove a row when the flag is implemented.
 */
#include <string.h>

#include "cmd.h"
#include "util.h"

static const char not_yet[] = "not implemented in tpuctl yet (issue 17)";

/* Flags whose fields tpu.v2.json and tpu.v2alpha1.json do not have. */
static const char no_field_create_reservation[] =
    "not supported: a Node in tpu.v2 and v2alpha1 has no reservation "
    "name (schedulingConfig.reserved only); use --reserved, or "
    "'tpuctl queued-resources create --reserved --reservation NAME'";
static const char no_field_host[] =
    "not supported: tpu.v2 and v2alpha1 (the API tpuctl speaks) have no "
    "reservation host field; pass the full name with --reservation "
    "projects/P/locations/Z/reservations/R";

static const struct {
	const char *cmd;  /* "tpuctl create" */
	const char *flag; /* "--range" */
	const char *why;
} refused[] = {
	{ "tpuctl create", "--reservation", no_field_create_reservation },
	{ "tpuctl queued-resources create", "--max-run-duration",
	    "not supported: tpu.v2 and v2alpha1 (the API tpuctl speaks) "
	    "have no maximum run duration field; use "
	    "--valid-until-duration for how long the request may wait" },
	{ "tpuctl queued-resources create", "--reservation-host-folder",
	    no_field_host },
	{ "tpuctl queued-resources create", "--reservation-host-organization",
	    no_field_host },
	{ "tpuctl queued-resources create", "--reservation-host-project",
	    no_field_host },
	{ "tpuctl queued-resources create", "--workload-type",
	    "not supported: tpu.v2 and v2alpha1 (the API tpuctl speaks) "
	    "have no workload type field in a multislice's parameters" },
	{ "tpuctl ssh", "--tunnel-through-iap",
	    "IAP tunnelling is not implemented: tpuctl connects to the "
	    "workers' addresses directly" },
	{ "tpuctl scp", "--tunnel-through-iap",
	    "IAP tunnelling is not implemented: tpuctl connects to the "
	    "workers' addresses directly" },
	{ "tpuctl update", "--add-tags", not_yet },
	{ "tpuctl update", "--remove-tags", not_yet },
	{ "tpuctl update", "--clear-tags", not_yet },
	{ "tpuctl update", "--clear-metadata", not_yet },
	{ "tpuctl update", "--attach-disk", not_yet },
	{ "tpuctl update", "--detach-disk", not_yet },
	{ "tpuctl update", "--worker",
	    "not implemented in tpuctl yet (issue 17): it goes with "
	    "--attach-disk and --detach-disk" },
	{ "tpuctl update", "--internal-ips",
	    "not implemented for update yet (issue 17): set it at create" },
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
