/* registry.h — the one list of attention variants, and lookups over it. */
#ifndef ATTN_REGISTRY_H
#define ATTN_REGISTRY_H

#include "attn.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

size_t registry_count(void);
const struct attn_variant *registry_get(size_t i);
/* NULL when no variant has that name. */
const struct attn_variant *registry_find(const char *name);
/* ATTN_OK when the table is well formed: non-empty, names valid ([a-z0-9_]+,
 * no longer than the results reader takes back) and unique, every required
 * op present; else ATTN_ERR naming the first fault. */
int registry_check(void);
/* Adds a variant defined at run time (a PyTorch peer) after the others;
 * refused, naming the fault, when the table would not pass registry_check. */
int registry_add(const struct attn_variant *v);
/* The table as --list prints it: a header, then each variant's name and
 * summary, one a line. */
void registry_print(FILE *);
/* The Python peers --list names after the table: each module dir/MODULE_peers.py
 * (tools/peers/; MODULE [a-z0-9_]+), the variants it defines and how to run
 * them (make bench PEERS=MODULE), one a line; or one line saying there is
 * none. The variants are read from the module's text, not imported (PyTorch
 * need not be there): each indented `name = "X"` or `name, ... = "X", ...`
 * line, a class attribute of a peer, names one. */
void registry_print_peers(FILE *, const char *dir);
/* The path of the peer module of dir (dir/MODULE_peers.py, read as
 * registry_print_peers reads it) that names variant `name`, into path[len]:
 * ATTN_OK, or ATTN_ERR_INPUT (no message) when none does. */
int registry_find_peer(const char *dir, const char *name, char *path, size_t len);

#ifdef __cplusplus
}
#endif
#endif
