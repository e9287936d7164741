/*
 * INTERIM (foundation helper replaces this): flag layer and environment only.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "xmalloc.h"

struct config_ent {
	char *key;
	char *value;
	char *source;
};

struct config {
	struct config_ent *v;
	size_t n;
	char *envsrc;
};

struct config *
config_new(void)
{
	return xcalloc(1, sizeof(struct config));
}

void
config_free(struct config *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++) {
		free(c->v[i].key);
		free(c->v[i].value);
		free(c->v[i].source);
	}
	free(c->v);
	free(c->envsrc);
	free(c);
}

void
config_set_flag(struct config *c, const char *key, const char *value)
{
	c->v = xreallocarray(c->v, c->n + 1, sizeof *c->v);
	c->v[c->n].key = xstrdup(key);
	c->v[c->n].value = xstrdup(value);
	c->v[c->n].source = xstrdup("flag");
	c->n++;
}

int
config_load(struct config *c, struct tpu_err *err)
{
	(void)c;
	(void)err;
	return 0;
}

static const char *
env_for(const struct config *c, const char *key, const char **src)
{
	static char name[128];
	const char *pfx[] = { "TPUCTL_", "CLOUDSDK_" };
	size_t i, j, n;
	const char *v;

	(void)c;
	for (i = 0; i < 2; i++) {
		n = strlen(pfx[i]);
		memcpy(name, pfx[i], n);
		for (j = 0; key[j] != '\0' && n < sizeof name - 1; j++)
			name[n++] = key[j] == '/' ? '_' :
			    (char)toupper((unsigned char)key[j]);
		name[n] = '\0';
		if ((v = getenv(name)) != NULL && *v != '\0') {
			*src = name;
			return v;
		}
	}
	return NULL;
}

const char *
config_get(const struct config *c, const char *key)
{
	const char *src;
	size_t i;

	for (i = c->n; i-- > 0;)
		if (strcmp(c->v[i].key, key) == 0)
			return c->v[i].value;
	return env_for(c, key, &src);
}

const char *
config_source(const struct config *c, const char *key)
{
	const char *src;
	size_t i;

	for (i = c->n; i-- > 0;)
		if (strcmp(c->v[i].key, key) == 0)
			return c->v[i].source;
	return env_for(c, key, &src) != NULL ? src : NULL;
}
