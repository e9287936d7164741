/* PLACEHOLDER: replaced by the emulator core/auth helper. */
#include <stdio.h>

#include "emu.h"

const struct emu_route auth_routes[] = { { NULL, 0, NULL, NULL } };

int
auth_init(struct emu *e)
{
	(void)e;
	return 0;
}

void
auth_fini(struct emu *e)
{
	(void)e;
}

int
auth_check(struct emu *e, struct emu_req *r)
{
	(void)e;
	(void)r;
	return 0;
}

void
auth_env(struct emu *e, FILE *fp)
{
	(void)e;
	(void)fp;
}
