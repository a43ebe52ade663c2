#!/usr/bin/env python3
"""Runs the jobs `cargo xtask gpu-check prepare` wrote, on an NVIDIA GPU (cuda-python).

usage: launch.py JOBS_DIR RESULTS_DIR [--deadline-s S] [--reps N]

For each job (JOBS_DIR/jobs/<n>/): loads ptxas's cubin and kiln's with cuModuleLoadData,
allocates the job's buffers once (both cubins see the same addresses), and for each variant
restores the buffers, launches the kernel, reads the buffers back and records their CRC-32
(zlib.crc32), then times the kernel alone over --reps launches (buffers restored before each,
outside the timed region; median). ptxas's cubin runs twice ("ptxas", "ptxas2") so that
nondeterministic kernels can be told apart from miscompiled ones.

Each job runs in a child process: a kernel that faults leaves the CUDA context unusable, so the
child stops there and the remaining variants run in a fresh child. RESULTS_DIR/<n>.txt gets one
line per variant: `<variant> status=<ok|error:NAME|timeout> crc=<hex,...> time_us=<f>`.
Jobs that already have a complete results file are skipped, so a run can be resumed.
"""

import ctypes
import os
import statistics
import subprocess
import sys
import time
import zlib

VARIANTS = ["ptxas", "ptxas2", "kiln"]


def driver():
    try:
        from cuda.bindings import driver as cu  # cuda-python >= 12.6
    except ImportError:
        from cuda import cuda as cu  # older cuda-python
    return cu


class CudaError(Exception):
    pass


def call(cu, what, res):
    """Checks a cuda-python result tuple `(err, *values)` and returns the values."""
    if not isinstance(res, tuple):
        res = (res,)
    err, values = res[0], res[1:]
    if int(err) != 0:
        name = cu.cuGetErrorName(err)
        text = name[1].decode() if int(name[0]) == 0 else str(int(err))
        raise CudaError(f"{what}:{text}")
    if len(values) == 1:
        return values[0]
    return values


def read_launch(job):
    spec = {}
    with open(os.path.join(job, "launch.txt")) as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition("=")
            spec[key] = value
    ints = lambda s: [int(x) for x in s.split(",") if x]
    slots = []
    for s in spec["slots"].split(","):
        if s:
            off, size = s.split(":")
            slots.append((int(off), int(size)))
    return {
        "kernel": spec["kernel"],
        "grid": ints(spec["grid"]),
        "block": ints(spec["block"]),
        "shared": int(spec["dynamic_shared"]),
        "slots": slots,
        "buffers": ints(spec["buffers"]),
    }


def run_child(job, variants, reps, out_path):
    """Runs `variants` of one job in this process, appending a line per variant."""
    cu = driver()
    spec = read_launch(job)
    call(cu, "cuInit", cu.cuInit(0))
    dev = call(cu, "cuDeviceGet", cu.cuDeviceGet(0))
    ctx = call(cu, "cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain(dev))
    call(cu, "cuCtxSetCurrent", cu.cuCtxSetCurrent(ctx))

    params = bytearray(open(os.path.join(job, "params.bin"), "rb").read())
    initial = []
    i = 0
    while os.path.exists(os.path.join(job, f"buf{i}.bin")):
        initial.append(open(os.path.join(job, f"buf{i}.bin"), "rb").read())
        i += 1
    hosts = [(ctypes.c_char * len(b)).from_buffer_copy(b) for b in initial]
    dptrs = [call(cu, "cuMemAlloc", cu.cuMemAlloc(len(b))) for b in initial]
    for at, d in zip(spec["buffers"], dptrs):
        params[at : at + 8] = int(d).to_bytes(8, "little")
    cparams = (ctypes.c_char * max(len(params), 1)).from_buffer(params if params else bytearray(1))
    base = ctypes.addressof(cparams)
    arg_ptrs = (ctypes.c_void_p * max(len(spec["slots"]), 1))(
        *[base + off for off, _ in spec["slots"]]
    )
    gx, gy, gz = spec["grid"]
    bx, by, bz = spec["block"]

    def restore():
        for h, d in zip(hosts, dptrs):
            call(cu, "cuMemcpyHtoD", cu.cuMemcpyHtoD(d, ctypes.addressof(h), len(h)))

    def launch(fn):
        call(
            cu,
            "cuLaunchKernel",
            cu.cuLaunchKernel(
                fn, gx, gy, gz, bx, by, bz, spec["shared"], 0, ctypes.addressof(arg_ptrs), 0
            ),
        )

    start = call(cu, "cuEventCreate", cu.cuEventCreate(0))
    end = call(cu, "cuEventCreate", cu.cuEventCreate(0))
    with open(out_path, "a") as out:
        for variant in variants:
            cubin_name = "kiln.cubin" if variant == "kiln" else "ptxas.cubin"
            image = open(os.path.join(job, cubin_name), "rb").read()
            try:
                module = call(cu, "cuModuleLoadData", cu.cuModuleLoadData(image))
                fn = call(
                    cu,
                    "cuModuleGetFunction",
                    cu.cuModuleGetFunction(module, spec["kernel"].encode()),
                )
                if spec["shared"] > 48 * 1024:
                    attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
                    call(cu, "cuFuncSetAttribute", cu.cuFuncSetAttribute(fn, attr, spec["shared"]))
                restore()
                launch(fn)
                call(cu, "cuCtxSynchronize", cu.cuCtxSynchronize())
                crcs = []
                for h, d in zip(hosts, dptrs):
                    back = (ctypes.c_char * len(h))()
                    call(cu, "cuMemcpyDtoH", cu.cuMemcpyDtoH(ctypes.addressof(back), d, len(h)))
                    crcs.append("%08x" % (zlib.crc32(bytes(back)) & 0xFFFFFFFF))
                times = []
                if variant != "ptxas2":
                    for _ in range(reps):
                        restore()
                        call(cu, "cuEventRecord", cu.cuEventRecord(start, 0))
                        launch(fn)
                        call(cu, "cuEventRecord", cu.cuEventRecord(end, 0))
                        call(cu, "cuEventSynchronize", cu.cuEventSynchronize(end))
                        ms = call(cu, "cuEventElapsedTime", cu.cuEventElapsedTime(start, end))
                        times.append(ms * 1000.0)
                call(cu, "cuModuleUnload", cu.cuModuleUnload(module))
                t = f" time_us={statistics.median(times):.3f}" if times else ""
                out.write(f"{variant} status=ok crc={','.join(crcs)}{t}\n")
                out.flush()
            except CudaError as e:
                out.write(f"{variant} status=error:{str(e).replace(' ', '_')}\n")
                out.flush()
                # The context may be unusable now: the parent runs what is left in a new child.
                return 3
    return 0


def done_variants(path):
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {line.split()[0] for line in f if line.strip()}


def main(argv):
    if len(argv) < 3 or argv[1] == "--child":
        if len(argv) >= 6 and argv[1] == "--child":
            return run_child(argv[2], argv[3].split(","), int(argv[4]), argv[5])
        print(__doc__, file=sys.stderr)
        return 2
    jobs_dir, results = argv[1], argv[2]
    deadline_s, reps = None, 5
    rest = argv[3:]
    while rest:
        flag = rest.pop(0)
        if flag == "--deadline-s":
            deadline_s = float(rest.pop(0))
        elif flag == "--reps":
            reps = int(rest.pop(0))
        else:
            print(f"unknown argument {flag}", file=sys.stderr)
            return 2
    os.makedirs(results, exist_ok=True)
    began = time.monotonic()
    with open(os.path.join(jobs_dir, "jobs.tsv")) as f:
        ids = [line.split("\t")[0] for line in f if line.strip()]
    ran = 0
    for n in ids:
        if deadline_s is not None and time.monotonic() - began > deadline_s:
            print(f"launch.py: deadline reached after {ran} jobs", file=sys.stderr)
            break
        job = os.path.join(jobs_dir, "jobs", n)
        out_path = os.path.join(results, f"{n}.txt")
        for _attempt in range(len(VARIANTS)):
            missing = [v for v in VARIANTS if v not in done_variants(out_path)]
            if not missing:
                break
            try:
                subprocess.run(
                    [sys.executable, __file__, "--child", job, ",".join(missing), str(reps), out_path],
                    timeout=60,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                with open(out_path, "a") as out:
                    out.write(f"{missing[0]} status=timeout\n")
        ran += 1
    print(f"launch.py: {ran} jobs run, results in {results}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
