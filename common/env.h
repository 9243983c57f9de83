/* env.h — the environment a run was measured in, written beside its CSV as
 * `key=value` lines (RUN_ID.env): device, driver and library versions,
 * clocks, the code's revision, the host and the full command line. */
#ifndef ATTN_ENV_H
#define ATTN_ENV_H

#include "attn.h"
#include "peak.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The revision the binary was built from, "abc1234" or "abc1234-dirty". */
const char *env_git_rev(void);
/* peaks may be NULL (not measured); seed 0: none for the whole run;
 * cold_flush: how cold mode flushed the L2 (l2_flush_name). */
int env_write(const char *path, const struct device_info *, const struct peaks *,
              const char *run_id, const char *timestamp, unsigned long long seed, const char *cold_flush,
              int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
