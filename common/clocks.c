/* clocks.c — NVML through dlopen (clocks.h). Only the handful of entry
 * points we call are declared here, with NVML's stable C ABI: int return
 * codes (0 = success), opaque device handles. */
#include "clocks.h"
#include "errors.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <math.h>
#include <string.h>

#define NVML_CLOCK_SM 1
#define NVML_TEMPERATURE_GPU 0

typedef void *nvml_device;

static struct {
    void *lib;
    nvml_device dev;
    char driver[96];
    int (*get_clock)(nvml_device, int, unsigned *);
    int (*get_temperature)(nvml_device, int, unsigned *);
    int (*get_power_mw)(nvml_device, unsigned *);
    int (*get_energy_mj)(nvml_device, unsigned long long *);
    int (*get_throttle)(nvml_device, unsigned long long *);
    int (*shutdown)(void);
} nvml;

bool clocks_ready(void) { return nvml.lib != NULL; }

const char *clocks_driver_version(void) { return nvml.driver; }

int clocks_open(int ordinal)
{
    if (nvml.lib) return ATTN_OK;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return ATTN_FAIL(ATTN_ERR, "NVML not available: %s", dlerror());
    int (*init)(void) = (int (*)(void))dlsym(lib, "nvmlInit_v2");
    int (*by_bus)(const char *, nvml_device *) =
        (int (*)(const char *, nvml_device *))dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    int (*driver)(char *, unsigned) = (int (*)(char *, unsigned))dlsym(lib, "nvmlSystemGetDriverVersion");
    nvml.get_clock = (int (*)(nvml_device, int, unsigned *))dlsym(lib, "nvmlDeviceGetClockInfo");
    nvml.get_temperature = (int (*)(nvml_device, int, unsigned *))dlsym(lib, "nvmlDeviceGetTemperature");
    nvml.get_power_mw = (int (*)(nvml_device, unsigned *))dlsym(lib, "nvmlDeviceGetPowerUsage");
    nvml.get_energy_mj = (int (*)(nvml_device, unsigned long long *))dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption");
    /* the newer name first; the older stays exported by every driver since */
    nvml.get_throttle = (int (*)(nvml_device, unsigned long long *))dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!nvml.get_throttle)
        nvml.get_throttle = (int (*)(nvml_device, unsigned long long *))dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    nvml.shutdown = (int (*)(void))dlsym(lib, "nvmlShutdown");
    if (!init || !by_bus || !nvml.get_clock || !nvml.shutdown) {
        dlclose(lib);
        return ATTN_FAIL(ATTN_ERR, "NVML lacks the entry points attnbench needs");
    }
    char bus[32];
    CUDA_TRY(cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal));
    int rc = init();
    if (rc != 0) {
        dlclose(lib);
        return ATTN_FAIL(ATTN_ERR, "nvmlInit failed (NVML error %d)", rc);
    }
    if ((rc = by_bus(bus, &nvml.dev)) != 0) {
        nvml.shutdown();
        dlclose(lib);
        return ATTN_FAIL(ATTN_ERR, "NVML does not know device %s (NVML error %d)", bus, rc);
    }
    if (!driver || driver(nvml.driver, sizeof nvml.driver) != 0) nvml.driver[0] = '\0';
    nvml.lib = lib;
    return ATTN_OK;
}

int clocks_read(struct gpu_clocks *c)
{
    memset(c, 0, sizeof *c);
    c->power_w = NAN;
    c->energy_mj = NAN;
    if (!nvml.lib) return ATTN_FAIL(ATTN_ERR, "NVML is not open");
    int rc = nvml.get_clock(nvml.dev, NVML_CLOCK_SM, &c->sm_mhz);
    if (rc != 0) return ATTN_FAIL(ATTN_ERR, "nvmlDeviceGetClockInfo failed (NVML error %d)", rc);
    unsigned v;
    if (nvml.get_temperature && nvml.get_temperature(nvml.dev, NVML_TEMPERATURE_GPU, &v) == 0)
        c->temperature_c = v;
    if (nvml.get_power_mw && nvml.get_power_mw(nvml.dev, &v) == 0) c->power_w = v / 1000.0;
    unsigned long long u;
    if (nvml.get_energy_mj && nvml.get_energy_mj(nvml.dev, &u) == 0) c->energy_mj = (double)u;
    if (nvml.get_throttle && nvml.get_throttle(nvml.dev, &u) == 0) {
        c->throttle = u;
        c->throttle_known = true;
    }
    return ATTN_OK;
}

double clocks_energy_mj(void)
{
    unsigned long long u;
    if (!nvml.lib || !nvml.get_energy_mj || nvml.get_energy_mj(nvml.dev, &u) != 0) return NAN;
    return (double)u;
}

void clocks_close(void)
{
    if (!nvml.lib) return;
    nvml.shutdown();
    dlclose(nvml.lib);
    memset(&nvml, 0, sizeof nvml);
}
