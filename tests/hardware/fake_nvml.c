/*
 * A fake libnvidia-ml.so.1 for GPUDesk's tests, loaded by the real nvidia-ml-py.
 *
 * Built by tests/fake_nvml_lib.py with -fvisibility=hidden: only functions
 * marked EXPORT exist as symbols, and the -D flags below remove the ones an
 * older driver lacks, so the binding meets NVML_ERROR_FUNCTION_NOT_FOUND (or
 * its NVMLLibraryMismatchError) exactly as it would on such a driver.
 *
 * Compile-time flags (symbols left out):
 *   NO_PROCESSES_V3  nvmlDevice{Compute,Graphics}RunningProcesses_v3 (pre-R510)
 *   NO_PROCESSES_V2  the _v2 process queries (pre-R470)
 *   NO_PROCESSES_V1  the unversioned process queries
 *   NO_MEMORY_V2     nvmlDeviceGetMemoryInfo_v2 (pre-R515)
 *   NO_NEW_QUERIES   nvmlDeviceGetNumGpuCores, nvmlDeviceGetMemoryBusWidth,
 *                    nvmlDeviceGetCurrentClocksEventReasons, nvmlSystemGetCudaDriverVersion_v2
 *   NO_INIT_FLAGS    nvmlInitWithFlags (what nvidia-ml-py 12+ calls for nvmlInit)
 *   NO_INIT_V2       nvmlInit_v2
 *   NO_INIT_V1       the unversioned nvmlInit
 *
 * Run-time scenario (read at init from the environment):
 *   FAKE_NVML_SCENARIO  two_gpus (default) | mig | zero | driver_not_loaded |
 *                       rm_mismatch | no_permission (every GPU) | no_permission_first |
 *                       one_h100 | two_h100 (a second H100 at 00000000:2A:00.0) |
 *                       eight_h100 (eight H100s, buses 0x10..0x17: the exporter's benchmark)
 *   FAKE_NVML_LOSE_AFTER  GPU 0 answers this many device queries, then is lost
 *   FAKE_NVML_PCIE        "gen_cur,gen_max,width_cur,width_max" for GPU 0
 *   FAKE_NVML_THROTTLE    clock-event reason mask of GPU 0
 *   FAKE_NVML_ECC_VOLATILE / FAKE_NVML_ECC_AGGREGATE  uncorrected ECC counts of GPU 0
 *   FAKE_NVML_RETIRED_PENDING, FAKE_NVML_REMAP_PENDING  1 = pending on GPU 0
 *   FAKE_NVML_COMPUTE_MODE  0 default, 2 prohibited, 3 exclusive process (GPU 0)
 *   FAKE_NVML_MEMORY_TOTAL_MIB  GPU 0's total memory
 *   FAKE_NVML_GPU_COUNT   at most this many GPUs of the scenario (1: the H100 alone)
 *   FAKE_NVML_HANG_S      nvmlDeviceGetCount_v2 sleeps this many seconds first (a GPU
 *                         that fell off the bus leaves NVML calls stuck in the driver)
 *   FAKE_NVML_XID         "79,48": XID critical-error events of GPU 0, one per
 *                         nvmlEventSetWait_v2 call once registered, then NVML_ERROR_TIMEOUT
 *   FAKE_NVML_PCIE_REPLAYS  GPU 0's PCIe replay counter
 *
 * nvmlDeviceGetProcessUtilization gives each compute process 40 % SM and 10 % memory
 * utilisation (NOT_FOUND on a GPU without processes, as NVML does with no samples).
 *
 * The H100 reports an energy counter (nvmlDeviceGetTotalEnergyConsumption); the
 * RTX 4090 does not (NOT_SUPPORTED), nor a fan on the H100: fields one GPU lacks.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int nvmlReturn_t;
enum {
    OK = 0, UNINITIALIZED = 1, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3, NO_PERMISSION = 4,
    NOT_FOUND = 6, INSUFFICIENT_SIZE = 7, DRIVER_NOT_LOADED = 9, GPU_IS_LOST = 15,
    RM_MISMATCH = 18, ARGUMENT_VERSION_MISMATCH = 25, TIMEOUT = 10,
};

/* Layouts as in nvml.h (checked against the binding's ctypes structures by the tests). */
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; } nvmlProcessInfo_v1_t;
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct {
    unsigned int multiprocessorCount, sharedCopyEngineCount, sharedDecoderCount,
        sharedEncoderCount, sharedJpegCount, sharedOfaCount, gpuInstanceSliceCount,
        computeInstanceSliceCount;
    unsigned long long memorySizeMB;
} nvmlDeviceAttributes_t;

#define MEMORY_V2_VERSION ((unsigned int)(sizeof(nvmlMemory_v2_t) | (2u << 24)))
#define MIB (1024ull * 1024ull)
#define MAX_PROCS 4
#define MAX_MIG 2

typedef struct device {
    const char *name, *uuid, *bus_id;
    unsigned int pci_device_id; /* device id << 16 | vendor id */
    unsigned long long total_mib, used_mib, reserved_mib;
    unsigned int bus_width, cores, cc_major, cc_minor;
    unsigned int sm_clock, sm_clock_max, mem_clock, mem_clock_max;
    unsigned int power_limit_mw, power_default_mw, power_draw_mw, temperature, fan;
    int has_fan, has_ecc, ecc_enabled, has_mig, mig_enabled;
    unsigned int util_gpu, util_mem;
    unsigned int pcie[4]; /* gen cur, gen max, width cur, width max */
    unsigned long long reasons;
    unsigned int compute_pids[MAX_PROCS], compute_count;
    unsigned int graphics_pids[MAX_PROCS], graphics_count;
    unsigned long long ecc_volatile, ecc_aggregate;
    int retired_pending, remap_pending, compute_mode;
    /* MIG instances (physical GPUs) or the slice's identity (MIG devices). */
    struct device *mig[MAX_MIG];
    unsigned int mig_count;
    struct device *parent;
    unsigned int gi, ci, sm_count;
    int is_mig;
    long calls_left; /* < 0: never lost */
    int has_energy;
    unsigned long long energy_mj, pcie_replays;
} device_t;

#define MAX_GPUS 8
static device_t gpus[MAX_GPUS];
static char eight_uuids[MAX_GPUS][48], eight_buses[MAX_GPUS][24];
static device_t migs[MAX_MIG];
static unsigned int gpu_count;
static int initialised;
static nvmlReturn_t open_error;

static const char *env(const char *name) { return getenv(name); }
static unsigned long long env_number(const char *name, unsigned long long fallback) {
    const char *text = env(name);
    return text && *text ? strtoull(text, NULL, 0) : fallback;
}

static void h100(device_t *d) {
    memset(d, 0, sizeof *d);
    d->name = "NVIDIA H100 80GB HBM3";
    d->uuid = "GPU-h100aaaa-1111-2222-3333-444455556666";
    d->bus_id = "00000000:1B:00.0";
    d->pci_device_id = 0x233010DE;
    d->total_mib = 81559; d->used_mib = 1024; d->reserved_mib = 512;
    d->bus_width = 5120; d->cores = 16896; d->cc_major = 9; d->cc_minor = 0;
    d->sm_clock = 345; d->sm_clock_max = 1980; d->mem_clock = 2619; d->mem_clock_max = 2619;
    d->power_limit_mw = 700000; d->power_default_mw = 700000; d->power_draw_mw = 72000;
    d->temperature = 33; d->has_ecc = 1; d->ecc_enabled = 1; d->has_mig = 1;
    d->util_gpu = 0; d->util_mem = 0;
    d->pcie[0] = 5; d->pcie[1] = 5; d->pcie[2] = 16; d->pcie[3] = 16;
    d->reasons = 0x1; /* gpu_idle */
    d->compute_pids[0] = 4242; d->compute_pids[1] = 4343; d->compute_count = 2;
    d->graphics_pids[0] = 4242; d->graphics_count = 1;
    d->calls_left = -1;
    d->has_energy = 1; d->energy_mj = 123456789ull;
}

static void rtx4090(device_t *d) {
    memset(d, 0, sizeof *d);
    d->name = "NVIDIA GeForce RTX 4090";
    d->uuid = "GPU-4090bbbb-1111-2222-3333-444455556666";
    d->bus_id = "00000000:41:00.0";
    d->pci_device_id = 0x268410DE;
    d->total_mib = 24564; d->used_mib = 700; d->reserved_mib = 330;
    d->bus_width = 384; d->cores = 16384; d->cc_major = 8; d->cc_minor = 9;
    d->sm_clock = 210; d->sm_clock_max = 3120; d->mem_clock = 405; d->mem_clock_max = 10501;
    d->power_limit_mw = 450000; d->power_default_mw = 450000; d->power_draw_mw = 25500;
    d->temperature = 35; d->fan = 30; d->has_fan = 1;
    d->util_gpu = 3; d->util_mem = 1;
    d->pcie[0] = 1; d->pcie[1] = 4; d->pcie[2] = 16; d->pcie[3] = 16; /* idle downclock */
    d->reasons = 0x4 | 0x20;
    d->calls_left = -1;
}

static void a100_mig(void) {
    device_t *d = &gpus[0];
    memset(d, 0, sizeof *d);
    d->name = "NVIDIA A100-SXM4-40GB";
    d->uuid = "GPU-a100cccc-1111-2222-3333-444455556666";
    d->bus_id = "00000000:07:00.0";
    d->pci_device_id = 0x20B010DE;
    d->total_mib = 40960; d->used_mib = 2000; d->reserved_mib = 600;
    d->bus_width = 5120; d->cores = 6912; d->cc_major = 8; d->cc_minor = 0;
    d->sm_clock = 1410; d->sm_clock_max = 1410; d->mem_clock = 1215; d->mem_clock_max = 1215;
    d->power_limit_mw = 400000; d->power_default_mw = 400000; d->power_draw_mw = 60000;
    d->temperature = 30; d->has_ecc = 1; d->ecc_enabled = 1;
    d->has_mig = 1; d->mig_enabled = 1;
    d->pcie[0] = 4; d->pcie[1] = 4; d->pcie[2] = 16; d->pcie[3] = 16;
    d->calls_left = -1;
    for (unsigned int i = 0; i < MAX_MIG; i++) {
        device_t *m = &migs[i];
        memset(m, 0, sizeof *m);
        m->name = "NVIDIA A100-SXM4-40GB MIG 3g.20gb";
        m->uuid = i == 0 ? "MIG-11111111-aaaa-bbbb-cccc-000000000001"
                         : "MIG-22222222-aaaa-bbbb-cccc-000000000002";
        m->total_mib = 19968; m->used_mib = i == 0 ? 13 : 1500; m->reserved_mib = 0;
        m->is_mig = 1; m->parent = d; m->gi = i + 1; m->ci = 0; m->sm_count = 42;
        m->calls_left = -1;
        d->mig[i] = m;
    }
    d->mig_count = MAX_MIG;
}

static void configure(void) {
    const char *scenario = env("FAKE_NVML_SCENARIO");
    if (!scenario || !*scenario) scenario = "two_gpus";
    open_error = OK;
    memset(gpus, 0, sizeof gpus);
    if (strcmp(scenario, "mig") == 0) {
        a100_mig();
        gpu_count = 1;
    } else if (strcmp(scenario, "zero") == 0) {
        gpu_count = 0;
    } else if (strcmp(scenario, "one_h100") == 0) {
        h100(&gpus[0]);
        gpu_count = 1;
    } else if (strcmp(scenario, "two_h100") == 0) {
        h100(&gpus[0]);
        h100(&gpus[1]);
        gpus[1].uuid = "GPU-h100eeee-1111-2222-3333-444455556666";
        gpus[1].bus_id = "00000000:2A:00.0";
        gpu_count = 2;
    } else if (strcmp(scenario, "eight_h100") == 0) {
        for (unsigned int i = 0; i < MAX_GPUS; i++) {
            h100(&gpus[i]);
            snprintf(eight_uuids[i], sizeof eight_uuids[i],
                     "GPU-h1008888-1111-2222-3333-%012u", i);
            snprintf(eight_buses[i], sizeof eight_buses[i], "00000000:%02X:00.0", 0x10 + i);
            gpus[i].uuid = eight_uuids[i];
            gpus[i].bus_id = eight_buses[i];
        }
        gpu_count = MAX_GPUS;
    } else {
        h100(&gpus[0]);
        rtx4090(&gpus[1]);
        gpu_count = 2;
        if (strcmp(scenario, "no_permission") == 0) open_error = NO_PERMISSION;
        if (strcmp(scenario, "no_permission_first") == 0) open_error = -NO_PERMISSION;
    }
    device_t *first = &gpus[0];
    const char *pcie = env("FAKE_NVML_PCIE");
    if (pcie && *pcie) {
        sscanf(pcie, "%u,%u,%u,%u", &first->pcie[0], &first->pcie[1], &first->pcie[2],
               &first->pcie[3]);
    }
    first->reasons = env_number("FAKE_NVML_THROTTLE", first->reasons);
    first->ecc_volatile = env_number("FAKE_NVML_ECC_VOLATILE", 0);
    first->ecc_aggregate = env_number("FAKE_NVML_ECC_AGGREGATE", 0);
    first->retired_pending = (int)env_number("FAKE_NVML_RETIRED_PENDING", 0);
    first->remap_pending = (int)env_number("FAKE_NVML_REMAP_PENDING", 0);
    first->compute_mode = (int)env_number("FAKE_NVML_COMPUTE_MODE", 0);
    first->total_mib = env_number("FAKE_NVML_MEMORY_TOTAL_MIB", first->total_mib);
    first->pcie_replays = env_number("FAKE_NVML_PCIE_REPLAYS", 0);
    const char *lose = env("FAKE_NVML_LOSE_AFTER");
    if (lose && *lose) first->calls_left = strtol(lose, NULL, 10);
    const char *count = env("FAKE_NVML_GPU_COUNT");
    if (count && *count) {
        long wanted = strtol(count, NULL, 10);
        if (wanted >= 0 && wanted < gpu_count) gpu_count = (unsigned int)wanted;
    }
}

__attribute__((unused)) static nvmlReturn_t init_common(void) {
    const char *scenario = env("FAKE_NVML_SCENARIO");
    if (scenario && strcmp(scenario, "driver_not_loaded") == 0) return DRIVER_NOT_LOADED;
    if (scenario && strcmp(scenario, "rm_mismatch") == 0) return RM_MISMATCH;
    configure();
    initialised++;
    return OK;
}

#ifndef NO_INIT_FLAGS
EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { (void)flags; return init_common(); }
#endif
#ifndef NO_INIT_V2
EXPORT nvmlReturn_t nvmlInit_v2(void) { return init_common(); }
#endif
#ifndef NO_INIT_V1
EXPORT nvmlReturn_t nvmlInit(void) { return init_common(); }
#endif

EXPORT nvmlReturn_t nvmlShutdown(void) {
    if (!initialised) return UNINITIALIZED;
    initialised--;
    return OK;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t result) {
    switch (result) {
    case OK: return "Success";
    case NOT_SUPPORTED: return "Not Supported";
    case NO_PERMISSION: return "Insufficient Permissions";
    case GPU_IS_LOST: return "GPU is lost";
    default: return "Unknown Error";
    }
}

static nvmlReturn_t put_text(char *out, unsigned int size, const char *text) {
    if (!out) return INVALID_ARGUMENT;
    if (strlen(text) + 1 > size) return INSUFFICIENT_SIZE;
    strcpy(out, text);
    return OK;
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *out, unsigned int size) {
    return initialised ? put_text(out, size, "535.288.01") : UNINITIALIZED;
}
EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char *out, unsigned int size) {
    return initialised ? put_text(out, size, "12.535.288.01") : UNINITIALIZED;
}
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *version) {
    if (!initialised) return UNINITIALIZED;
    *version = 12020;
    return OK;
}
#ifndef NO_NEW_QUERIES
EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version) {
    return nvmlSystemGetCudaDriverVersion(version);
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    if (!initialised) return UNINITIALIZED;
    unsigned long long hang_s = env_number("FAKE_NVML_HANG_S", 0);
    if (hang_s) sleep((unsigned int)hang_s);
    *count = gpu_count;
    return OK;
}

/* Every device query starts here: initialised, a real handle, and not lost. */
static nvmlReturn_t enter(device_t *d) {
    if (!initialised) return UNINITIALIZED;
    if (!d) return INVALID_ARGUMENT;
    device_t *counted = d->is_mig ? d->parent : d;
    if (counted->calls_left == 0) return GPU_IS_LOST;
    if (counted->calls_left > 0) counted->calls_left--;
    return OK;
}
#define ENTER(d) do { nvmlReturn_t r_ = enter(d); if (r_ != OK) return r_; } while (0)
#define PHYSICAL_ONLY(d) do { if ((d)->is_mig) return NOT_SUPPORTED; } while (0)

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, device_t **out) {
    if (!initialised) return UNINITIALIZED;
    if (index >= gpu_count) return INVALID_ARGUMENT;
    if (open_error > 0) return open_error;              /* every GPU */
    if (open_error < 0 && index == 0) return -open_error; /* only the first */
    if (gpus[index].calls_left == 0) return GPU_IS_LOST;
    *out = &gpus[index];
    return OK;
}

/* Physical and MIG UUIDs both resolve, as on R470+ drivers. */
EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, device_t **out) {
    if (!initialised) return UNINITIALIZED;
    if (!uuid) return INVALID_ARGUMENT;
    for (unsigned int i = 0; i < gpu_count; i++) {
        if (strcmp(gpus[i].uuid, uuid) == 0) {
            if (gpus[i].calls_left == 0) return GPU_IS_LOST;
            *out = &gpus[i];
            return OK;
        }
        for (unsigned int m = 0; m < gpus[i].mig_count; m++) {
            if (gpus[i].mig_enabled && strcmp(gpus[i].mig[m]->uuid, uuid) == 0) {
                *out = gpus[i].mig[m];
                return OK;
            }
        }
    }
    return NOT_FOUND;
}

EXPORT nvmlReturn_t nvmlDeviceGetName(device_t *d, char *out, unsigned int size) {
    ENTER(d);
    return put_text(out, size, d->name);
}
EXPORT nvmlReturn_t nvmlDeviceGetUUID(device_t *d, char *out, unsigned int size) {
    ENTER(d);
    return put_text(out, size, d->uuid);
}
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(device_t *d, nvmlPciInfo_t *pci) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    memset(pci, 0, sizeof *pci);
    strncpy(pci->busIdLegacy, d->bus_id + 4, sizeof pci->busIdLegacy - 1);
    strncpy(pci->busId, d->bus_id, sizeof pci->busId - 1);
    pci->pciDeviceId = d->pci_device_id;
    pci->pciSubSystemId = 0x16F110DE;
    return OK;
}

/* v1 "used" counts driver-reserved memory as used; v2 reports it apart. */
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(device_t *d, nvmlMemory_t *memory) {
    ENTER(d);
    memory->total = d->total_mib * MIB;
    memory->used = (d->used_mib + d->reserved_mib) * MIB;
    memory->free = memory->total - memory->used;
    return OK;
}
#ifndef NO_MEMORY_V2
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(device_t *d, nvmlMemory_v2_t *memory) {
    ENTER(d);
    if (memory->version != MEMORY_V2_VERSION) return ARGUMENT_VERSION_MISMATCH;
    memory->total = d->total_mib * MIB;
    memory->reserved = d->reserved_mib * MIB;
    memory->used = d->used_mib * MIB;
    memory->free = memory->total - memory->reserved - memory->used;
    return OK;
}
#endif

#ifndef NO_NEW_QUERIES
EXPORT nvmlReturn_t nvmlDeviceGetMemoryBusWidth(device_t *d, unsigned int *width) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    *width = d->bus_width;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetNumGpuCores(device_t *d, unsigned int *cores) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    *cores = d->cores;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(device_t *d, unsigned long long *r) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    *r = d->reasons;
    return OK;
}
#endif
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(device_t *d, unsigned long long *r) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    *r = d->reasons;
    return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(device_t *d, int *major, int *minor) {
    ENTER(d);
    device_t *p = d->is_mig ? d->parent : d;
    *major = (int)p->cc_major;
    *minor = (int)p->cc_minor;
    return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(device_t *d, int type, unsigned int *clock) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    if (type == 1) *clock = d->sm_clock;
    else if (type == 2) *clock = d->mem_clock;
    else if (type == 0) *clock = d->sm_clock;
    else return INVALID_ARGUMENT;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(device_t *d, int type, unsigned int *clock) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    if (type == 1 || type == 0) *clock = d->sm_clock_max;
    else if (type == 2) *clock = d->mem_clock_max;
    else return INVALID_ARGUMENT;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(device_t *d, nvmlUtilization_t *u) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    u->gpu = d->util_gpu;
    u->memory = d->util_mem;
    return OK;
}

/* The two-call protocol of the process queries: ask the count, then fill. */
#define PROCESS_QUERY(NAME, TYPE, FIELD_PIDS, FIELD_COUNT, EXTRA)                           \
    EXPORT nvmlReturn_t NAME(device_t *d, unsigned int *count, TYPE *infos) {               \
        ENTER(d);                                                                         \
        PHYSICAL_ONLY(d);                                                                 \
        unsigned int n = d->FIELD_COUNT;                                                  \
        if (n == 0) { *count = 0; return OK; }                                            \
        if (!infos || *count < n) { *count = n; return INSUFFICIENT_SIZE; }               \
        for (unsigned int i = 0; i < n; i++) {                                            \
            memset(&infos[i], 0, sizeof infos[i]);                                        \
            infos[i].pid = d->FIELD_PIDS[i];                                              \
            infos[i].usedGpuMemory = 512 * MIB;                                           \
            EXTRA                                                                         \
        }                                                                                 \
        *count = n;                                                                       \
        return OK;                                                                        \
    }
#define V2_EXTRA infos[i].gpuInstanceId = 0xFFFFFFFF; infos[i].computeInstanceId = 0xFFFFFFFF;

#ifndef NO_PROCESSES_V3
PROCESS_QUERY(nvmlDeviceGetComputeRunningProcesses_v3, nvmlProcessInfo_t, compute_pids,
              compute_count, V2_EXTRA)
PROCESS_QUERY(nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlProcessInfo_t, graphics_pids,
              graphics_count, V2_EXTRA)
#endif
#ifndef NO_PROCESSES_V2
PROCESS_QUERY(nvmlDeviceGetComputeRunningProcesses_v2, nvmlProcessInfo_t, compute_pids,
              compute_count, V2_EXTRA)
PROCESS_QUERY(nvmlDeviceGetGraphicsRunningProcesses_v2, nvmlProcessInfo_t, graphics_pids,
              graphics_count, V2_EXTRA)
#endif
#ifndef NO_PROCESSES_V1
PROCESS_QUERY(nvmlDeviceGetComputeRunningProcesses, nvmlProcessInfo_v1_t, compute_pids,
              compute_count, )
PROCESS_QUERY(nvmlDeviceGetGraphicsRunningProcesses, nvmlProcessInfo_v1_t, graphics_pids,
              graphics_count, )
#endif

EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(device_t *d, unsigned int *mw) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    *mw = d->power_limit_mw;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(device_t *d, unsigned int *mw) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    *mw = d->power_default_mw;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(device_t *d, unsigned int *mw) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    *mw = d->power_draw_mw;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetTemperature(device_t *d, int sensor, unsigned int *t) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    if (sensor != 0) return INVALID_ARGUMENT;
    *t = d->temperature;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(device_t *d, unsigned int *fan) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    if (!d->has_fan) return NOT_SUPPORTED; /* passively cooled datacenter card */
    *fan = d->fan;
    return OK;
}

#define PCIE_QUERY(NAME, SLOT)                                  \
    EXPORT nvmlReturn_t NAME(device_t *d, unsigned int *value) { \
        ENTER(d);                                              \
        PHYSICAL_ONLY(d);                                      \
        *value = d->pcie[SLOT];                                \
        return OK;                                             \
    }
PCIE_QUERY(nvmlDeviceGetCurrPcieLinkGeneration, 0)
PCIE_QUERY(nvmlDeviceGetMaxPcieLinkGeneration, 1)
PCIE_QUERY(nvmlDeviceGetCurrPcieLinkWidth, 2)
PCIE_QUERY(nvmlDeviceGetMaxPcieLinkWidth, 3)

EXPORT nvmlReturn_t nvmlDeviceGetEccMode(device_t *d, int *current, int *pending) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    if (!d->has_ecc) return NOT_SUPPORTED;
    *current = *pending = d->ecc_enabled;
    return OK;
}
/* error type 1 = uncorrected; counter type 0 = volatile, 1 = aggregate */
EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(device_t *d, int error_type, int counter,
                                                unsigned long long *count) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    if (!d->has_ecc) return NOT_SUPPORTED;
    if (error_type != 1) { *count = 0; return OK; }
    *count = counter == 0 ? d->ecc_volatile : d->ecc_aggregate;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(device_t *d, int *pending) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    /* Ampere and later remap rows instead of retiring pages. */
    if (!d->has_ecc || d->cc_major >= 8) return NOT_SUPPORTED;
    *pending = d->retired_pending;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(device_t *d, unsigned int *corr, unsigned int *unc,
                                              unsigned int *pending, unsigned int *failure) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    if (!d->has_ecc) return NOT_SUPPORTED;
    *corr = 0;
    *unc = d->remap_pending ? 1 : 0;
    *pending = (unsigned int)d->remap_pending;
    *failure = 0;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(device_t *d, int *mode) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    *mode = d->compute_mode;
    return OK;
}

EXPORT nvmlReturn_t nvmlDeviceGetMigMode(device_t *d, unsigned int *current, unsigned int *pending) {
    ENTER(d);
    if (d->is_mig || !d->has_mig) return NOT_SUPPORTED;
    *current = *pending = (unsigned int)d->mig_enabled;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(device_t *d, unsigned int *count) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    if (!d->has_mig) return NOT_SUPPORTED;
    *count = 7;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(device_t *d, unsigned int index,
                                                        device_t **out) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    if (!d->mig_enabled) return INVALID_ARGUMENT;
    if (index >= d->mig_count) return NOT_FOUND; /* an empty slot */
    *out = d->mig[index];
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceIsMigDeviceHandle(device_t *d, unsigned int *is_mig) {
    ENTER(d);
    *is_mig = (unsigned int)d->is_mig;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(device_t *d, device_t **out) {
    ENTER(d);
    if (!d->is_mig) return INVALID_ARGUMENT;
    *out = d->parent;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(device_t *d, unsigned int *id) {
    ENTER(d);
    if (!d->is_mig) return NOT_SUPPORTED;
    *id = d->gi;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(device_t *d, unsigned int *id) {
    ENTER(d);
    if (!d->is_mig) return NOT_SUPPORTED;
    *id = d->ci;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetAttributes_v2(device_t *d, nvmlDeviceAttributes_t *a) {
    ENTER(d);
    if (!d->is_mig) return NOT_SUPPORTED;
    memset(a, 0, sizeof *a);
    a->multiprocessorCount = d->sm_count;
    a->gpuInstanceSliceCount = 3;
    a->computeInstanceSliceCount = 3;
    a->memorySizeMB = d->total_mib;
    return OK;
}

/* For the tests: the layouts this library was compiled with. */
#define LAYOUT(T, F) if (strcmp(type, #T) == 0 && strcmp(field, #F) == 0) return (long)offsetof(T, F);
#define SIZE(T) if (strcmp(type, #T) == 0 && strcmp(field, "") == 0) return (long)sizeof(T);
EXPORT long fake_nvml_layout(const char *type, const char *field) {
    SIZE(nvmlMemory_t) LAYOUT(nvmlMemory_t, total) LAYOUT(nvmlMemory_t, free)
    LAYOUT(nvmlMemory_t, used)
    SIZE(nvmlMemory_v2_t) LAYOUT(nvmlMemory_v2_t, version) LAYOUT(nvmlMemory_v2_t, total)
    LAYOUT(nvmlMemory_v2_t, reserved) LAYOUT(nvmlMemory_v2_t, free) LAYOUT(nvmlMemory_v2_t, used)
    SIZE(nvmlPciInfo_t) LAYOUT(nvmlPciInfo_t, busIdLegacy) LAYOUT(nvmlPciInfo_t, domain)
    LAYOUT(nvmlPciInfo_t, bus) LAYOUT(nvmlPciInfo_t, device) LAYOUT(nvmlPciInfo_t, pciDeviceId)
    LAYOUT(nvmlPciInfo_t, pciSubSystemId) LAYOUT(nvmlPciInfo_t, busId)
    SIZE(nvmlProcessInfo_v1_t) LAYOUT(nvmlProcessInfo_v1_t, pid)
    LAYOUT(nvmlProcessInfo_v1_t, usedGpuMemory)
    SIZE(nvmlProcessInfo_t) LAYOUT(nvmlProcessInfo_t, pid) LAYOUT(nvmlProcessInfo_t, usedGpuMemory)
    LAYOUT(nvmlProcessInfo_t, gpuInstanceId) LAYOUT(nvmlProcessInfo_t, computeInstanceId)
    SIZE(nvmlUtilization_t) LAYOUT(nvmlUtilization_t, gpu) LAYOUT(nvmlUtilization_t, memory)
    SIZE(nvmlDeviceAttributes_t) LAYOUT(nvmlDeviceAttributes_t, multiprocessorCount)
    LAYOUT(nvmlDeviceAttributes_t, memorySizeMB)
    if (strcmp(type, "memory_v2_version") == 0) return (long)MEMORY_V2_VERSION;
    return -1;
}

EXPORT nvmlReturn_t nvmlDeviceGetIndex(device_t *d, unsigned int *index) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    *index = (unsigned int)(d - gpus);
    return OK;
}

/* Energy since the driver loaded, in millijoules (Volta and later; not the RTX 4090 here). */
EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(device_t *d, unsigned long long *mj) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    if (!d->has_energy) return NOT_SUPPORTED;
    d->energy_mj += 72000; /* about 72 W between two reads a second apart */
    *mj = d->energy_mj;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceGetPcieReplayCounter(device_t *d, unsigned int *count) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    *count = (unsigned int)d->pcie_replays;
    return OK;
}

/* Events: one set, XID critical errors of GPU 0 from FAKE_NVML_XID, one per wait. */
typedef struct {
    device_t *device;
    unsigned long long eventType, eventData;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;
typedef struct { int registered; unsigned int delivered; } event_set_t;
static event_set_t the_event_set;
#define XID_CRITICAL_ERROR 8ull

EXPORT nvmlReturn_t nvmlEventSetCreate(event_set_t **set) {
    if (!initialised) return UNINITIALIZED;
    memset(&the_event_set, 0, sizeof the_event_set);
    *set = &the_event_set;
    return OK;
}
EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(device_t *d, unsigned long long types,
                                             event_set_t *set) {
    ENTER(d);
    PHYSICAL_ONLY(d);
    if (!set) return INVALID_ARGUMENT;
    if (d == &gpus[0] && (types & XID_CRITICAL_ERROR)) set->registered = 1;
    return OK;
}
EXPORT nvmlReturn_t nvmlEventSetWait_v2(event_set_t *set, nvmlEventData_t *data,
                                        unsigned int timeout_ms) {
    (void)timeout_ms;
    if (!initialised) return UNINITIALIZED;
    if (!set || !data) return INVALID_ARGUMENT;
    const char *xids = env("FAKE_NVML_XID");
    if (!set->registered || !xids || !*xids) return TIMEOUT;
    const char *cursor = xids;
    for (unsigned int skipped = 0; skipped < set->delivered && cursor; skipped++) {
        cursor = strchr(cursor, ',');
        if (cursor) cursor++;
    }
    if (!cursor || !*cursor) return TIMEOUT;
    memset(data, 0, sizeof *data);
    data->device = &gpus[0];
    data->eventType = XID_CRITICAL_ERROR;
    data->eventData = strtoull(cursor, NULL, 10);
    data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFF;
    set->delivered++;
    return OK;
}
EXPORT nvmlReturn_t nvmlEventSetFree(event_set_t *set) {
    if (!set) return INVALID_ARGUMENT;
    set->registered = 0;
    return OK;
}

typedef struct {
    unsigned int pid;
    unsigned long long timeStamp;
    unsigned int smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;

EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(device_t *d,
                                                    nvmlProcessUtilizationSample_t *samples,
                                                    unsigned int *count,
                                                    unsigned long long last_seen) {
    (void)last_seen;
    ENTER(d);
    PHYSICAL_ONLY(d);
    unsigned int n = d->compute_count;
    if (n == 0) return NOT_FOUND;
    if (!samples || *count < n) { *count = n; return INSUFFICIENT_SIZE; }
    for (unsigned int i = 0; i < n; i++) {
        memset(&samples[i], 0, sizeof samples[i]);
        samples[i].pid = d->compute_pids[i];
        samples[i].timeStamp = 1000000ull + i;
        samples[i].smUtil = 40;
        samples[i].memUtil = 10;
    }
    *count = n;
    return OK;
}
