//! Emulator throughput: a loop of integer, float and shared-memory instructions run by 4 warps;
//! prints warp instructions and thread instructions per second.
//! `cargo bench -p emu --bench throughput`

use std::time::Instant;

use emu::{Launch, load::program_from_text};

fn main() {
    // R4 = loop counter; body of 8 instructions; BRA back while R4 != 0.
    let lines = [
        "S2R R10, SR_TID.X",
        "IMAD.MOV.U32 R4, RZ, RZ, 0x4e20",
        "IMAD.SHL.U32 R6, R10, 0x4, RZ",
        "FFMA R5, R5, 1.0001, 0.5",
        "IADD3 R7, R7, R10, RZ",
        "LOP3.LUT R8, R7, R5, R8, 0x96, !PT",
        "STS [R6], R8",
        "LDS R9, [R6]",
        "IADD3 R4, R4, -0x1, RZ",
        "ISETP.NE.AND P0, PT, R4, RZ, PT",
        "@P0 BRA `(@0x30)",
        "EXIT",
    ];
    let mut prog = program_from_text(80, &lines, 0).expect("parses");
    prog.kernels[0].shared_static = 4096;
    let launch = Launch {
        grid: [1, 1, 1],
        block: [128, 1, 1],
        dynamic_shared: 0,
        params: Vec::new(),
        step_limit: u64::MAX,
    };
    let mut mem = interp::Memory::new();
    let t = Instant::now();
    let stats = emu::run(&prog, &mut mem, "k", &launch).expect("runs");
    let s = t.elapsed().as_secs_f64();
    println!(
        "emu throughput: {} warp instructions in {s:.2} s = {:.2} M warp instr/s ({:.1} M thread instr/s)",
        stats.warp_steps,
        stats.warp_steps as f64 / s / 1e6,
        stats.thread_steps as f64 / s / 1e6
    );
}
