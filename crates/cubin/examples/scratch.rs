//! `cargo run -p cubin --example scratch -- SM OUT [shared] [global]`: writes a from-scratch
//! cubin with one hand-written kernel (EXIT; BRA self; NOP; NOP) for manual checks.
use cubin::builder::{Builder, Global, Kernel, Param};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let sm: u32 = a[1].parse().unwrap();
    let words: [[u32; 4]; 4] = [
        [0x0000794d, 0, 0x03800000, 0x000fea00],
        [0x00fc7947, 0xfffffffc, 0x0383ffff, 0x000fc000],
        [0x00007918, 0, 0, 0x000fc000],
        [0x00007918, 0, 0, 0x000fc000],
    ];
    let mut b = Builder::new(sm);
    b.kernels.push(Kernel {
        name: "k".into(),
        code: words
            .iter()
            .flatten()
            .flat_map(|w| w.to_le_bytes())
            .collect(),
        params: vec![Param { size: 8, align: 8 }],
        registers: 8,
        shared_size: if a.iter().any(|x| x == "shared") {
            256
        } else {
            0
        },
        exit_offsets: vec![0],
        ..Kernel::default()
    });
    if a.iter().any(|x| x == "global") {
        b.globals.push(Global {
            name: "g".into(),
            size: 4,
            align: 4,
            init: Some(vec![1, 2, 3, 4]),
        });
    }
    std::fs::write(&a[2], cubin::write(&b.build().unwrap())).unwrap();
}
