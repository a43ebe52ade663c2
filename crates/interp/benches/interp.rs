//! Interpreter throughput: thread-instructions per second on a loop kernel (integer and fp32
//! arithmetic, a shared-memory barrier per iteration), 4 CTAs of 256 threads.
//! Run: `cargo bench -p interp --bench interp`.

use std::time::Instant;

const KERNEL: &str = ".version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 o)
{
  .shared .f32 s[256];
  .reg .u32 t, i, addr;
  .reg .f32 x, y;
  .reg .u64 a, off;
  .reg .pred p;
  ld.param.u64 a, [o];
  mov.u32 t, %tid.x;
  cvt.rn.f32.u32 x, t;
  shl.b32 addr, t, 2;
  mov.u32 i, 0;
LOOP:
  fma.rn.f32 x, x, 0f3F000000, 0f3F800000;
  st.shared.f32 [addr], x;
  bar.sync 0;
  ld.shared.f32 y, [addr];
  add.f32 x, x, y;
  add.u32 i, i, 1;
  setp.lt.u32 p, i, 200;
  @p bra LOOP;
  mul.wide.u32 off, t, 4;
  add.u64 a, a, off;
  mov.u32 i, %ctaid.x;
  mul.wide.u32 off, i, 1024;
  add.u64 a, a, off;
  st.global.f32 [a], x;
  ret;
}
";

fn main() {
    let mut p = interp::Program::from_text(KERNEL).expect("bench kernel lowers");
    let k = p.kernel("k").expect("kernel");
    let mut mem = interp::Memory::new();
    p.load(&mut mem);
    let out = mem.alloc("out", vec![0; 4 * 1024]);
    let launch = interp::Launch {
        grid: [4, 1, 1],
        block: [256, 1, 1],
        dynamic_shared: 0,
        params: out.to_le_bytes().to_vec(),
        step_limit: u64::MAX,
    };
    // One warm-up run, then the best of three.
    p.run(&mut mem, k, &launch).expect("runs");
    let mut best = f64::MAX;
    let mut steps = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let s = p.run(&mut mem, k, &launch).expect("runs");
        best = best.min(t.elapsed().as_secs_f64());
        steps = s.thread_steps;
    }
    println!(
        "interp: {steps} thread-instructions in {:.3} s = {:.1} M thread-instructions/s",
        best,
        steps as f64 / best / 1e6
    );
}
