/* PLACEHOLDER: replaced by the emulator GCS helper. */
#include "emu.h"

const struct emu_route gcs_routes[] = { { NULL, 0, NULL, NULL } };

int
gcs_init(struct emu *e)
{
	(void)e;
	return 0;
}

void
gcs_fini(struct emu *e)
{
	(void)e;
}
