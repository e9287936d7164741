/* PLACEHOLDER: replaced by the emulator fleet helper. */
#include <stdio.h>

#include "fleet.h"

int
fleet_init(struct emu *e)
{
	(void)e;
	return 0;
}

void
fleet_fini(struct emu *e)
{
	(void)e;
}

void
fleet_env(struct emu *e, FILE *fp)
{
	(void)e;
	(void)fp;
}
