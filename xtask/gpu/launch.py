#!/usr/bin/env python3
"""Runs the jobs of `cargo xtask gpu-check prepare` on an NVIDIA GPU (cuda-python driver API).

usage: launch.py DIR RESULTS [--hang-s S] [--reps N] [--deadline-s S] [--driver cuda|fake]

DIR/jobs/jobs.jsonl lists the jobs (one JSON object a line), DIR/jobs/blobs/<name> holds each
cubin, parameter block and buffer once. For each job, in one worker process: the buffers are
allocated once (every variant sees the same addresses) and restored before every launch;
ptxas's cubin runs twice ("ptxas", "ptxas2": a kernel whose own result varies is
nondeterministic, not miscompiled), kiln's once; the CRC-32 of each buffer after the run is
recorded, and where kiln's bytes differ from ptxas's, the first differing 32-bit words; then
each cubin is timed over --reps launches (median).

RESULTS/<id>.txt: `<variant> status=<ok|error:NAME|timeout|skipped> crc=<hex,...> time_us=<f>`
and `diff buffer=<i> words=<n> first=<byte>:<ptxas>:<kiln>;...` lines, which
`cargo xtask gpu-check compare` reads.

Faults and hangs: the worker writes a heartbeat before and after every launch. A CUDA error
can leave the context unusable, so the worker stops after one; a launch still running after
--hang-s seconds (default 5) is a hang, and the watchdog kills the worker. Either way a fresh
worker resumes after the variant that failed, and when that variant was ptxas's first run the
job's launch itself is bad: its other variants are skipped. A results file that is already
complete is not run again, so a run can be resumed.

--driver fake simulates a GPU for the launcher's own tests (xtask/gpu/test_launch.py); a
kernel named `fault*`, `hang*` or `ptxas_fault*` misbehaves as its name says.
"""

import ctypes
import json
import os
import statistics
import subprocess
import sys
import time
import zlib

VARIANTS = ["ptxas", "ptxas2", "kiln"]
MAX_DIFF_WORDS = 8
STARTUP_S = 60.0


class DriverError(Exception):
    """A CUDA error; the worker's context may be unusable afterwards."""


class CudaDriver:
    """The CUDA driver through cuda-python."""

    def __init__(self):
        try:
            from cuda.bindings import driver as cu
        except ImportError:
            from cuda import cuda as cu
        self.cu = cu
        self.check("cuInit", cu.cuInit(0))
        dev = self.check("cuDeviceGet", cu.cuDeviceGet(0))
        self.ctx = self.check("cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain(dev))
        self.check("cuCtxSetCurrent", cu.cuCtxSetCurrent(self.ctx))
        self.start = self.check("cuEventCreate", cu.cuEventCreate(0))
        self.stop = self.check("cuEventCreate", cu.cuEventCreate(0))

    def check(self, what, res):
        res = res if isinstance(res, tuple) else (res,)
        err, rest = res[0], res[1:]
        if int(err) != 0:
            ok, name = self.cu.cuGetErrorName(err)
            raise DriverError(name.decode() if int(ok) == 0 else f"{what}:{int(err)}")
        return rest[0] if len(rest) == 1 else rest

    def load(self, image):
        return self.check("cuModuleLoadData", self.cu.cuModuleLoadData(image))

    def function(self, module, name, shared):
        f = self.check("cuModuleGetFunction", self.cu.cuModuleGetFunction(module, name.encode()))
        if shared > 48 * 1024:
            attr = self.cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            self.check("cuFuncSetAttribute", self.cu.cuFuncSetAttribute(f, attr, shared))
        return f

    def alloc(self, size):
        return int(self.check("cuMemAlloc", self.cu.cuMemAlloc(max(size, 1))))

    def free(self, ptr):
        self.cu.cuMemFree(ptr)

    def upload(self, ptr, data):
        host = (ctypes.c_char * max(len(data), 1)).from_buffer_copy(data or b"\0")
        self.check("cuMemcpyHtoD", self.cu.cuMemcpyHtoD(ptr, ctypes.addressof(host), len(data)))

    def download(self, ptr, size):
        host = (ctypes.c_char * max(size, 1))()
        self.check("cuMemcpyDtoH", self.cu.cuMemcpyDtoH(ctypes.addressof(host), ptr, size))
        return bytes(host)[:size]

    def launch(self, f, job, params):
        block = (ctypes.c_char * max(len(params), 1)).from_buffer(params or bytearray(1))
        base = ctypes.addressof(block)
        slots = job["slots"]
        argv = (ctypes.c_void_p * max(len(slots), 1))(*[base + off for off, _ in slots])
        (gx, gy, gz), (bx, by, bz) = job["grid"], job["block"]
        self.check("cuLaunchKernel", self.cu.cuLaunchKernel(
            f, gx, gy, gz, bx, by, bz, job["shared"], 0, ctypes.addressof(argv), 0))
        self.keep = (block, argv)

    def sync(self):
        self.check("cuCtxSynchronize", self.cu.cuCtxSynchronize())

    def timed(self, run):
        cu = self.cu
        self.check("cuEventRecord", cu.cuEventRecord(self.start, 0))
        run()
        self.check("cuEventRecord", cu.cuEventRecord(self.stop, 0))
        self.check("cuEventSynchronize", cu.cuEventSynchronize(self.stop))
        return self.check("cuEventElapsedTime", cu.cuEventElapsedTime(self.start, self.stop)) * 1000.0


class FakeDriver:
    """A simulated GPU: a kernel writes the CRC-32 of its name over each buffer's first word,
    or, from a cubin that contains `WRONG`, the cubin's first word; `fault*` kernels fault on
    kiln's cubin (a cubin that starts with `KILN`), `ptxas_fault*` on ptxas's, `hang*` never
    finish on kiln's."""

    def __init__(self):
        self.memory = {}
        self.next = 0x1000
        self.pending = None

    def load(self, image):
        return image

    def function(self, module, name, shared):
        return (module, name)

    def alloc(self, size):
        ptr = self.next
        self.next += (max(size, 1) + 255) // 256 * 256
        self.memory[ptr] = bytearray(size)
        return ptr

    def free(self, ptr):
        self.memory.pop(ptr, None)

    def upload(self, ptr, data):
        self.memory[ptr][:] = data

    def download(self, ptr, size):
        return bytes(self.memory[ptr][:size])

    def launch(self, f, job, params):
        self.pending = (f, [int.from_bytes(params[at:at + 8], "little") for at in job["buffers"]])

    def sync(self):
        (image, name), ptrs = self.pending
        is_kiln = image.startswith(b"KILN")
        if name.startswith("ptxas_fault") and not is_kiln:
            raise DriverError("CUDA_ERROR_ILLEGAL_ADDRESS")
        if name.startswith("fault") and is_kiln:
            raise DriverError("CUDA_ERROR_MISALIGNED_ADDRESS")
        if name.startswith("hang") and is_kiln:
            time.sleep(3600)
        word = image[0:4] if b"WRONG" in image else zlib.crc32(name.encode()).to_bytes(4, "little")
        for p in ptrs:
            if len(self.memory[p]) >= 4:
                self.memory[p][0:4] = word

    def timed(self, run):
        t = time.perf_counter()
        run()
        self.sync()
        return (time.perf_counter() - t) * 1e6


def crc(data):
    return "%08x" % (zlib.crc32(data) & 0xFFFFFFFF)


def word_diffs(theirs, ours):
    """`buffer=<i> words=<n> first=<byte>:<ptxas>:<kiln>;...` for each differing buffer."""
    lines = []
    for i, (a, b) in enumerate(zip(theirs, ours)):
        if a == b:
            continue
        words = [(o, a[o:o + 4], b[o:o + 4]) for o in range(0, len(a), 4) if a[o:o + 4] != b[o:o + 4]]
        first = ";".join(f"{o}:{x[::-1].hex()}:{y[::-1].hex()}" for o, x, y in words[:MAX_DIFF_WORDS])
        lines.append(f"buffer={i} words={len(words)} first={first}")
    return lines


def worker(pack, results, jobs, start_job, start_variant, reps, beat, driver_name):
    """Runs jobs from (start_job, start_variant) until the end or the first CUDA error."""
    drv = FakeDriver() if driver_name == "fake" else CudaDriver()
    blob = lambda name: open(os.path.join(pack, "jobs", "blobs", name), "rb").read()
    modules = {}

    def heartbeat(*words):
        beat.write(" ".join(map(str, words)) + "\n")
        beat.flush()

    for ji in range(start_job, len(jobs)):
        job = jobs[ji]
        out = open(os.path.join(results, job["id"] + ".txt"), "a")
        inputs = [blob(b) for b in job["bufs"]]
        params = bytearray(blob(job["params"]))
        ptrs = [drv.alloc(len(b)) for b in inputs]
        for at, p in zip(job["buffers"], ptrs):
            params[at:at + 8] = p.to_bytes(8, "little")
        reference = None
        for vi in range(start_variant if ji == start_job else 0, len(VARIANTS)):
            variant = VARIANTS[vi]
            image = job["kiln"] if variant == "kiln" else job["ptxas"]
            heartbeat(ji, vi, "start")
            try:
                if image not in modules:
                    modules[image] = drv.load(blob(image))
                f = drv.function(modules[image], job["kernel"], job["shared"])

                def restore_and_launch():
                    for p, data in zip(ptrs, inputs):
                        drv.upload(p, data)
                    drv.launch(f, job, params)

                restore_and_launch()
                drv.sync()
                heartbeat(ji, vi, "ran")
                after = [drv.download(p, len(data)) for p, data in zip(ptrs, inputs)]
                line = f"{variant} status=ok crc={','.join(crc(b) for b in after)}"
                if variant != "ptxas2":
                    times = []
                    for _ in range(reps):
                        times.append(drv.timed(restore_and_launch))
                        heartbeat(ji, vi, "timed")
                    line += f" time_us={statistics.median(times):.3f}"
                out.write(line + "\n")
                if variant == "ptxas":
                    reference = after
                elif variant == "kiln" and reference is not None:
                    for d in word_diffs(reference, after):
                        out.write(f"diff {d}\n")
                out.flush()
            except DriverError as e:
                out.write(f"{variant} status=error:{str(e).replace(' ', '_')}\n")
                if variant == "ptxas":
                    for v in VARIANTS[1:]:
                        out.write(f"{v} status=skipped\n")
                out.close()
                heartbeat(ji, vi, "error")
                return
        out.close()
        for p in ptrs:
            drv.free(p)
        heartbeat(ji, len(VARIANTS) - 1, "job-done")
    heartbeat("end")


def complete(results, job):
    path = os.path.join(results, job["id"] + ".txt")
    if not os.path.exists(path):
        return False
    seen = {l.split()[0] for l in open(path) if l.strip()}
    return all(v in seen for v in VARIANTS)


def main(argv):
    if argv[1] == "--worker":
        pack, results, sj, sv, reps, beat_path, driver_name = argv[2:9]
        jobs = [json.loads(l) for l in open(os.path.join(pack, "jobs", "jobs.jsonl")) if l.strip()]
        with open(beat_path, "a") as beat:
            worker(pack, results, jobs, int(sj), int(sv), int(reps), beat, driver_name)
        return 0
    pack, results = argv[1], argv[2]
    opts = {"--hang-s": 5.0, "--reps": 3, "--deadline-s": None, "--driver": "cuda"}
    rest = argv[3:]
    while rest:
        flag = rest.pop(0)
        if flag not in opts or not rest:
            print(__doc__, file=sys.stderr)
            return 2
        value = rest.pop(0)
        opts[flag] = value if flag == "--driver" else float(value)
    os.makedirs(results, exist_ok=True)
    jobs = [json.loads(l) for l in open(os.path.join(pack, "jobs", "jobs.jsonl")) if l.strip()]
    began = time.monotonic()
    beat_path = os.path.join(results, ".heartbeat")
    ji, vi, workers, hangs = 0, 0, 0, 0
    while ji < len(jobs):
        while ji < len(jobs) and vi == 0 and complete(results, jobs[ji]):
            ji += 1
        if ji >= len(jobs):
            break
        if opts["--deadline-s"] and time.monotonic() - began > opts["--deadline-s"]:
            print(f"launch: deadline reached before job {ji} of {len(jobs)}", file=sys.stderr)
            break
        open(beat_path, "w").close()
        proc = subprocess.Popen([sys.executable, __file__, "--worker", pack, results, str(ji), str(vi),
                                 str(int(opts["--reps"])), beat_path, opts["--driver"]])
        workers += 1
        last, since, killed, out_of_time = None, time.monotonic(), False, False
        while proc.poll() is None:
            time.sleep(0.05)
            lines = open(beat_path).read().split("\n")
            now = [l for l in lines if l][-1:] or [None]
            if now[0] != last:
                last, since = now[0], time.monotonic()
            # A worker gets STARTUP_S to bring up CUDA; then every step (a launch, a timed
            # launch, reading buffers back) must finish within --hang-s.
            limit = STARTUP_S if last is None else opts["--hang-s"]
            if time.monotonic() - since > limit:
                proc.kill()
                proc.wait()
                killed = True
            elif opts["--deadline-s"] and time.monotonic() - began > opts["--deadline-s"]:
                proc.kill()
                proc.wait()
                out_of_time = True
        if out_of_time:
            print(f"launch: deadline reached in job {ji} of {len(jobs)}", file=sys.stderr)
            break
        beats = [l.split() for l in open(beat_path).read().split("\n") if l]
        if not beats:
            print("launch: a worker made no progress at all", file=sys.stderr)
            return 1
        last = beats[-1]
        if last == ["end"]:
            ji = len(jobs)
            break
        bj, bv, what = int(last[0]), int(last[1]), last[2]
        if what == "job-done":
            ji, vi = bj + 1, 0
            continue
        if what != "error":
            # Killed by the watchdog (a hang) or died without a CUDA error (a crash).
            status = "timeout" if killed else "error:worker_died"
            hangs += killed
            with open(os.path.join(results, jobs[bj]["id"] + ".txt"), "a") as out:
                out.write(f"{VARIANTS[bv]} status={status}\n")
                if bv == 0:
                    for v in VARIANTS[1:]:
                        out.write(f"{v} status=skipped\n")
        if bv == 0 or bv + 1 == len(VARIANTS):
            ji, vi = bj + 1, 0
        else:
            ji, vi = bj, bv + 1
    if os.path.exists(beat_path):
        os.remove(beat_path)
    print(f"launch: {len(jobs)} jobs, {workers} worker process(es), {hangs} hang(s), "
          f"{time.monotonic() - began:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
