/* registry.h — the one list of attention variants, and lookups over it. */
#ifndef ATTN_REGISTRY_H
#define ATTN_REGISTRY_H

#include "attn.h"

#ifdef __cplusplus
extern "C" {
#endif

size_t registry_count(void);
const struct attn_variant *registry_get(size_t i);
/* NULL when no variant has that name. */
const struct attn_variant *registry_find(const char *name);
/* ATTN_OK when the table is well formed: non-empty, names valid and unique,
 * every required op present; else ATTN_ERR naming the first fault. */
int registry_check(void);

#ifdef __cplusplus
}
#endif
#endif
