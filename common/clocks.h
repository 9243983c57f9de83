/* clocks.h — the GPU's SM clock, power, energy counter, temperature and the
 * reasons its clocks are held down, read through NVML, which is loaded at
 * run time (dlopen) so that attnbench still starts where the driver is
 * missing. Without NVML every read fails with a reason and the runner leaves
 * the clock and power columns empty. */
#ifndef ATTN_CLOCKS_H
#define ATTN_CLOCKS_H

#include "attn.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gpu_clocks {
    unsigned sm_mhz;         /* current SM clock */
    unsigned temperature_c;  /* 0 when unknown */
    double power_w;          /* NaN when unknown */
    double energy_mj;        /* the board's energy counter (mJ since the driver loaded); NaN when
                                the device has none */
    unsigned long long throttle; /* NVML's clock event reasons now (THROTTLE_REASONS, schema.h) */
    bool throttle_known;     /* whether NVML said */
};



/* Opens NVML for the CUDA device `ordinal`; ATTN_ERR with why not. */
int clocks_open(int ordinal);
bool clocks_ready(void);
int clocks_read(struct gpu_clocks *);
/* The energy counter alone (cheaper than clocks_read); NaN without one. */
double clocks_energy_mj(void);
/* The driver version NVML reports, "" when NVML is not open. */
const char *clocks_driver_version(void);
void clocks_close(void);

#ifdef __cplusplus
}
#endif
#endif
