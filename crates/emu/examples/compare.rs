//! Investigation helper: compares one kernel of a PTX file with its ptxas cubin through the
//! harness. Usage: cargo run --release -p emu --example compare -- FILE.ptx FILE.cubin KERNEL
//! (`KILN_EMU_TRACE=1` traces warp 0 of CTA 0).
fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let ptx = std::fs::read_to_string(&a[0]).expect("ptx");
    let cubin = std::fs::read(&a[1]).expect("cubin");
    let cfg = harness::Config::default();
    println!("{:?}", harness::compare(&ptx, &cubin, &a[2], &cfg));
}
