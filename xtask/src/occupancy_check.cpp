// The other half of `cargo xtask occupancy-check` (xtask/src/occupancy_check.rs): NVIDIA's
// occupancy calculator (CUDA 13.0's include/cuda_occupancy.h) as a host program, built with
// g++; no GPU and no driver are used.
//
//   occ rules   < devices   per device, the header's own per-compute-capability values
//   occ grid    < queries   per launch of each query, the header's active blocks and
//                           limiting factors, two bytes (255 255: the header returned an error)
//
// Input lines: `dev MAJOR MINOR maxThreadsPerBlock maxThreadsPerMultiprocessor regsPerBlock
// regsPerMultiprocessor warpSize sharedMemPerBlock sharedMemPerMultiprocessor
// sharedMemPerBlockOptin reservedSharedMemPerBlock numSms` (numbered from 0 in order), then
// `q DEV REGS_FROM REGS_TO THREADS_FROM THREADS_TO THREADS_STEP STATIC DYN_FROM DYN_TO DYN_STEP
// CARVEOUT BARRIERS` (nested loops: registers, threads, dynamic shared memory).
#include <cuda_occupancy.h>

#include <cstdio>
#include <cstring>
#include <vector>

static std::vector<cudaOccDeviceProp> devices;

static bool read_device(FILE *in) {
    cudaOccDeviceProp p;
    long long v[12];
    for (long long &x : v) {
        if (fscanf(in, "%lld", &x) != 1) return false;
    }
    p.computeMajor = (int)v[0];
    p.computeMinor = (int)v[1];
    p.maxThreadsPerBlock = (int)v[2];
    p.maxThreadsPerMultiprocessor = (int)v[3];
    p.regsPerBlock = (int)v[4];
    p.regsPerMultiprocessor = (int)v[5];
    p.warpSize = (int)v[6];
    p.sharedMemPerBlock = (size_t)v[7];
    p.sharedMemPerMultiprocessor = (size_t)v[8];
    p.sharedMemPerBlockOptin = (size_t)v[9];
    p.reservedSharedMemPerBlock = (size_t)v[10];
    p.numSms = (int)v[11];
    devices.push_back(p);
    return true;
}

static void rules(const cudaOccDeviceProp &p) {
    int smem_unit = 0, reg_unit = 0, reg_max = 0, subs = 0, blocks = 0;
    cudaOccSMemAllocationGranularity(&smem_unit, &p);
    cudaOccRegAllocationGranularity(&reg_unit, &p);
    cudaOccRegAllocationMaxPerThread(&reg_max, &p);
    cudaOccSubPartitionsPerMultiprocessor(&subs, &p);
    cudaOccMaxBlocksPerMultiprocessor(&blocks, &p);
    printf("shared_allocation_unit %d\n", smem_unit);
    printf("register_allocation_unit %d\n", reg_unit);
    printf("register_max_per_thread_check %d\n", reg_max);
    printf("register_sub_partitions %d\n", subs);
    printf("max_blocks_per_sm %d\n", blocks);
    // The carveouts: every size the SM's shared memory is aligned up to, KiB by KiB.
    printf("shared_carveout_kib");
    size_t last = (size_t)-1;
    const char *sep = " ";
    for (size_t k = 0; k <= 512; k++) {
        size_t size = k * 1024;
        if (cudaOccAlignUpShmemSizeVoltaPlus(&size, &p) != CUDA_OCC_SUCCESS) break;
        if (size != last) {
            printf("%s%zu", sep, size / 1024);
            sep = ",";
            last = size;
        }
    }
    printf("\n");
    // Barriers: cudaOccMaxActiveBlocksPerMultiprocessor applies them from 9.0; the factor is
    // the barriers available for one block slot, used by one barrier.
    if (p.computeMajor >= 9) {
        cudaOccFuncAttributes a;
        a.numBlockBarriers = 1;
        int limit = 0;
        cudaOccMaxBlocksPerSMBlockBarrierLimit(&limit, 1, &p, &a);
        printf("barrier_factor %d\n", limit);
    } else {
        printf("barrier_factor -\n");
    }
}

int main(int argc, char **argv) {
    if (argc != 2 || (strcmp(argv[1], "rules") && strcmp(argv[1], "grid"))) {
        fprintf(stderr, "usage: occ rules|grid < input\n");
        return 2;
    }
    bool grid = !strcmp(argv[1], "grid");
    char kind[8];
    std::vector<unsigned char> out;
    while (scanf("%7s", kind) == 1) {
        if (!strcmp(kind, "dev")) {
            if (!read_device(stdin)) return 3;
            if (!grid) {
                printf("device %zu\n", devices.size() - 1);
                rules(devices.back());
            }
            continue;
        }
        if (strcmp(kind, "q")) return 4;
        long long q[12];
        for (long long &x : q) {
            if (scanf("%lld", &x) != 1) return 5;
        }
        const cudaOccDeviceProp &p = devices.at((size_t)q[0]);
        cudaOccDeviceState state;
        state.carveoutConfig = (int)q[10];
        for (long long regs = q[1]; regs <= q[2]; regs++) {
            for (long long threads = q[3]; threads <= q[4]; threads += q[5]) {
                for (long long dyn = q[7]; dyn <= q[8]; dyn += q[9]) {
                    cudaOccFuncAttributes a;
                    a.maxThreadsPerBlock = p.maxThreadsPerBlock;
                    a.numRegs = (int)regs;
                    a.sharedSizeBytes = (size_t)q[6];
                    a.partitionedGCConfig = PARTITIONED_GC_OFF;
                    a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
                    a.maxDynamicSharedSizeBytes = p.sharedMemPerBlockOptin > (size_t)q[6]
                        ? p.sharedMemPerBlockOptin - (size_t)q[6] : 0;
                    a.numBlockBarriers = (int)q[11];
                    a.virtualResourceCount = 0;
                    cudaOccResult r;
                    memset(&r, 0, sizeof r);
                    cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(
                        &r, &p, &a, &state, (int)threads, (size_t)dyn);
                    if (e != CUDA_OCC_SUCCESS || r.activeBlocksPerMultiprocessor > 254) {
                        out.push_back(255);
                        out.push_back(255);
                    } else {
                        out.push_back((unsigned char)r.activeBlocksPerMultiprocessor);
                        out.push_back((unsigned char)r.limitingFactors);
                    }
                }
            }
        }
    }
    if (grid) fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}
