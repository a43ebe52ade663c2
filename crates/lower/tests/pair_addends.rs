//! `IMAD.HI` and `IMAD.WIDE` read their addend as a register pair. The math sequences copy
//! ptxas's listings, which name the pair by its low word (`IMAD.HI.U32 R10, P1, R9, R13,
//! R10`); the IR must say the pair is read, or liveness frees its high word early. (It did:
//! with each web of a register allocated on its own, `opt::narrow` made a live pair 32-bit and
//! `div.s64` computed other quotients for sm_75.)

use ir::{Mnemonic, Operand, Reg};
use syntax::SyntaxKind;

/// Every `IMAD.HI`/`IMAD.WIDE` addend (third source) of `op d, a, b` lowered for `sm`: its
/// width in the IR when it is a virtual register.
fn addend_widths(op: &str, sm: u32) -> Vec<u8> {
    let text = format!(
        ".version 8.0\n.target sm_{sm}\n.address_size 64\n\
         .visible .entry k(.param .u64 p)\n{{\n  .reg .b64 %rd<4>;\n\
         ld.param.u64 %rd1, [p];\n  ld.global.u64 %rd2, [%rd1];\n  ld.global.u64 %rd3, [%rd1+8];\n\
         {op} %rd2, %rd2, %rd3;\n  st.global.u64 [%rd1], %rd2;\n  ret;\n}}\n"
    );
    let parse = syntax::parse(&text);
    let function = parse
        .syntax_node()
        .children()
        .find(|n| n.kind() == SyntaxKind::FUNCTION)
        .unwrap();
    let l = lower::lower_kernel(
        &function,
        lower::LowerTarget::for_sm(sm, true),
        &lower::ModuleVars::default(),
        &lower::Functions::default(),
    )
    .unwrap();
    let mut widths = Vec::new();
    for i in l.func.insts() {
        let wide = i.op.has(ir::modifier!("HI")) || i.op.has(ir::modifier!("WIDE"));
        if i.mnemonic() != Mnemonic::IMAD || !wide {
            continue;
        }
        let c = (0..i.operands.len())
            .filter(|k| !i.defs.contains(k))
            .nth(2)
            .map(|k| &i.operands[k]);
        if let Some(Operand::Reg {
            reg: Reg::Virt { width, .. },
            ..
        }) = c
        {
            widths.push(*width);
        }
    }
    widths
}

#[test]
fn the_division_sequences_read_whole_addend_pairs() {
    for sm in [75, 80, 90] {
        for op in ["div.s64", "div.u64", "rem.s64", "rem.u64"] {
            let widths = addend_widths(op, sm);
            assert!(
                widths.contains(&2),
                "{op} sm_{sm}: the sequence has register addends ({widths:?})"
            );
            assert!(
                widths.iter().all(|w| *w == 2),
                "{op} sm_{sm}: an addend read as one word: {widths:?}"
            );
        }
    }
}
