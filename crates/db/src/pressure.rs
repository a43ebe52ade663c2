//! "Why N registers": where a kernel's register pressure peaks and which values are live
//! there, for the editor.
//!
//! After allocation, each instruction of the final code (spill code included) has a set of
//! live virtual registers (`ir::liveness`); the general registers (`R`) they occupy are
//! counted (a value of width 2 takes two). Each count is attributed to the PTX the
//! instruction came from, and a PTX line keeps its largest count.

use ir::Class;
use ir::liveness::{Liveness, VSet, walk_block_backward};
use syntax::TextRange;

use crate::codegen::{CodegenError, allocated, final_code, kernel_node, optimized};
use crate::{Db, KernelTarget};

/// The register pressure at one PTX construct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinePressure {
    /// The PTX construct (an instruction, or the `call` of inlined code) in the file.
    pub range: TextRange,
    /// General registers live across it (the largest count over its machine instructions).
    pub live: u32,
    /// The PTX registers among the live values, in name order (temporaries unnamed).
    pub values: Vec<String>,
}

/// The pressure at every PTX construct of the kernel that produced machine code, in file
/// order.
pub fn register_pressure(
    db: &dyn Db,
    kt: KernelTarget<'_>,
) -> Result<Vec<LinePressure>, CodegenError> {
    let f = optimized(db, kt).as_ref().map_err(Clone::clone)?;
    let a = allocated(db, kt).as_ref().map_err(Clone::clone)?;
    let code = final_code(f, a);
    let live = Liveness::compute(code);
    // (origin, live registers, live named values) per instruction.
    let mut per_inst: Vec<((u32, u32), u32, Vec<String>)> = Vec::new();
    let mut cover = vec![ir::liveness::Cover::default(); code.vregs.len()];
    for (k, &b) in code.order.iter().enumerate() {
        let insts = &code.blocks[b].insts;
        let mut set = live.live_out[k].clone();
        walk_block_backward(code, insts, &mut set, &mut cover, |index, after| {
            if let Some(origin) = insts[index].origin {
                let (count, names) = occupancy(code, a, after);
                per_inst.push((origin, count, names));
            }
        });
    }
    let function = kt.function(db);
    let Some(node) = kernel_node(db, kt) else {
        return Ok(Vec::new());
    };
    let relative: Vec<TextRange> = per_inst
        .iter()
        .map(|((a, b), _, _)| TextRange::new((*a).into(), (*b).max(*a).into()))
        .collect();
    let mapped = function.syntax(db).map_ranges(&relative, &node);
    let mut out: Vec<LinePressure> = Vec::new();
    for (range, (_, live, values)) in mapped.into_iter().zip(per_inst) {
        match out.iter_mut().find(|p| p.range == range) {
            Some(p) if p.live >= live => {}
            Some(p) => {
                p.live = live;
                p.values = values;
            }
            None => out.push(LinePressure {
                range,
                live,
                values,
            }),
        }
    }
    out.sort_by_key(|p| p.range.start());
    Ok(out)
}

/// General registers the live values occupy, and the PTX names among them.
fn occupancy(code: &ir::Func, a: &regalloc::Allocation, live: &VSet) -> (u32, Vec<String>) {
    let mut regs = std::collections::BTreeSet::new();
    let mut names = std::collections::BTreeSet::new();
    for (v, data) in code.vregs.iter() {
        if data.class != Class::R || !live.contains(ir::liveness::vindex(v)) {
            continue;
        }
        let base = a.get(v);
        for k in 0..data.width {
            regs.insert(base.wrapping_add(k));
        }
        if !data.name.is_empty() {
            names.insert(data.name.clone());
        }
    }
    (regs.len() as u32, names.into_iter().collect())
}
