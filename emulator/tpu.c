/* PLACEHOLDER: replaced by the emulator TPU helper. */
#include "emu.h"

const struct emu_route tpu_routes[] = { { NULL, 0, NULL, NULL } };

int
tpu_init(struct emu *e)
{
	(void)e;
	return 0;
}

void
tpu_tick(struct emu *e)
{
	(void)e;
}

void
tpu_fini(struct emu *e)
{
	(void)e;
}

int
tpu_event(struct emu *e, const cJSON *ev, char *errbuf, size_t errlen)
{
	(void)e;
	(void)ev;
	(void)errbuf;
	(void)errlen;
	return -1;
}
