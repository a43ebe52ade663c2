//! Web renaming (`opt::webs`): a register reused for unrelated values becomes one register per
//! web; definitions that keep the old value (guarded, partial) and values that meet at a join
//! stay one web.

use ir::{Class, Func, Guard, Inst, Operand, Reg, VReg, op};

fn mov(d: Reg, s: Operand) -> Inst {
    Inst::new(op!("MOV"), vec![Operand::r(d), s], vec![0])
}

fn store(v: Reg, offset: i32) -> Inst {
    Inst::new(
        op!("STG.E"),
        vec![
            Operand::Mem {
                base: Reg::Phys {
                    class: Class::R,
                    index: 2,
                    width: 2,
                },
                offset,
                desc: None,
            },
            Operand::r(v),
        ],
        vec![],
    )
}

/// The virtual register each instruction of `f` (layout order) writes or reads first.
fn regs_of(f: &Func) -> Vec<Option<VReg>> {
    f.insts()
        .map(|i| {
            i.def_regs().chain(i.use_regs()).find_map(|r| match r {
                Reg::Virt { vreg, .. } => Some(vreg),
                _ => None,
            })
        })
        .collect()
}

#[test]
fn a_reused_register_splits_into_its_values() {
    let mut f = Func::new("k");
    let b = f.new_block();
    f.order.push(b);
    let v = f.new_vreg(Class::R, 1, "v");
    f.blocks[b].insts = vec![
        mov(Reg::v(v, 1), Operand::Imm(1)),
        store(Reg::v(v, 1), 0),
        mov(Reg::v(v, 1), Operand::Imm(2)),
        store(Reg::v(v, 1), 4),
    ];
    assert!(opt::webs::rename_webs(&mut f));
    let r = regs_of(&f);
    assert_eq!(r[0], r[1]);
    assert_eq!(r[2], r[3]);
    assert_ne!(r[0], r[2]);
    ir::verify(&f).unwrap();
}

#[test]
fn guarded_and_partial_writes_keep_one_web() {
    let mut f = Func::new("k");
    let b = f.new_block();
    f.order.push(b);
    let v = f.new_vreg(Class::R, 1, "v");
    let w = f.new_vreg(Class::R, 2, "w");
    let p = f.new_vreg(Class::P, 1, "p");
    let mut guarded = mov(Reg::v(v, 1), Operand::Imm(2));
    guarded.guard = Some(Guard {
        pred: Reg::v(p, 1),
        negated: false,
    });
    f.blocks[b].insts = vec![
        mov(Reg::v(p, 1), Operand::pt()),
        mov(Reg::v(v, 1), Operand::Imm(1)),
        guarded,
        store(Reg::v(v, 1), 0),
        mov(Reg::part(w, 0), Operand::Imm(3)),
        mov(Reg::part(w, 1), Operand::Imm(4)),
        store(Reg::v(w, 2), 8),
    ];
    assert!(!opt::webs::rename_webs(&mut f), "nothing to split");
}

#[test]
fn values_meeting_at_a_join_stay_one_web() {
    // bb0: @p BRA bb2 ; bb1: v = 1 ; BRA bb3 ; bb2: v = 2 ; bb3: store v ; v = 3 ; store v
    let mut f = Func::new("k");
    let blocks: Vec<_> = (0..4).map(|_| f.new_block()).collect();
    f.order = blocks.clone();
    let v = f.new_vreg(Class::R, 1, "v");
    let p = f.new_vreg(Class::P, 1, "p");
    let mut bra = Inst::new(op!("BRA"), vec![Operand::Label(blocks[2])], vec![]);
    bra.guard = Some(Guard {
        pred: Reg::v(p, 1),
        negated: false,
    });
    f.blocks[blocks[0]].insts = vec![mov(Reg::v(p, 1), Operand::pt()), bra];
    f.blocks[blocks[1]].insts = vec![
        mov(Reg::v(v, 1), Operand::Imm(1)),
        Inst::new(op!("BRA"), vec![Operand::Label(blocks[3])], vec![]),
    ];
    f.blocks[blocks[2]].insts = vec![mov(Reg::v(v, 1), Operand::Imm(2))];
    f.blocks[blocks[3]].insts = vec![
        store(Reg::v(v, 1), 0),
        mov(Reg::v(v, 1), Operand::Imm(3)),
        store(Reg::v(v, 1), 4),
    ];
    assert!(opt::webs::rename_webs(&mut f));
    let r = regs_of(&f);
    // Instructions: 0 mov p, 1 bra, 2 v=1, 3 bra, 4 v=2, 5 store, 6 v=3, 7 store.
    assert_eq!(r[2], r[4], "both definitions reach the store");
    assert_eq!(r[2], r[5]);
    assert_eq!(r[6], r[7]);
    assert_ne!(r[5], r[6]);
    ir::verify(&f).unwrap();
}
