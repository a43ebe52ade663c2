//! `opt::merge`: blocks that only fall through into a block nothing else enters are joined.

use ir::{Class, Func, Guard, Inst, Operand, Reg, op};

fn mov(d: Reg, v: i64) -> Inst {
    Inst::new(op!("MOV"), vec![Operand::r(d), Operand::Imm(v)], vec![0])
}

#[test]
fn fall_through_chains_join_and_branches_stay_block_ends() {
    // b0: x = 1 ; b1: @p BRA b4 ; b2: x = 2 ; b3: x = 3 ; b4: EXIT
    // b1 joins b0 (it is entered only by falling through), b2 cannot join b1 (b1 ends with
    // a branch), b3 joins b2, b4 is a branch target.
    let mut f = Func::new("k");
    let b: Vec<_> = (0..5).map(|_| f.new_block()).collect();
    f.order = b.clone();
    let x = Reg::v(f.new_vreg(Class::R, 1, "x"), 1);
    let p = Reg::v(f.new_vreg(Class::P, 1, "p"), 1);
    let mut bra = Inst::new(op!("BRA"), vec![Operand::Label(b[4])], vec![]);
    bra.guard = Some(Guard {
        pred: p,
        negated: false,
    });
    f.blocks[b[0]].insts = vec![mov(x, 1)];
    f.blocks[b[1]].insts = vec![bra];
    f.blocks[b[2]].insts = vec![mov(x, 2)];
    f.blocks[b[3]].insts = vec![mov(x, 3)];
    f.blocks[b[4]].insts = vec![Inst::new(op!("EXIT"), vec![], vec![])];
    assert!(opt::merge::merge_fallthrough(&mut f));
    assert_eq!(f.order, vec![b[0], b[2], b[4]]);
    assert_eq!(f.blocks[b[0]].insts.len(), 2, "x = 1; @p BRA");
    assert_eq!(f.blocks[b[2]].insts.len(), 2, "x = 2; x = 3");
    ir::verify(&f).unwrap();
    assert!(
        !opt::merge::merge_fallthrough(&mut f),
        "nothing left to join"
    );
}

#[test]
fn a_block_an_operand_names_keeps_its_address() {
    // b0: LEPC (return point b1) ; b1: EXIT — b1 is entered only by falling through, but a
    // system call's return distance names it.
    let mut f = Func::new("k");
    let b: Vec<_> = (0..2).map(|_| f.new_block()).collect();
    f.order = b.clone();
    let r = Reg::Phys {
        class: Class::R,
        index: 20,
        width: 2,
    };
    f.blocks[b[0]].insts = vec![Inst::new(
        op!("MOV"),
        vec![Operand::r(r), Operand::Label(b[1])],
        vec![0],
    )];
    f.blocks[b[1]].insts = vec![Inst::new(op!("EXIT"), vec![], vec![])];
    assert!(!opt::merge::merge_fallthrough(&mut f));
    assert_eq!(f.order, b);
}
