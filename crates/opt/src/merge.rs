//! Straight-line blocks joined: a block that only falls through into the next one, which
//! nothing else enters, becomes one block with it.
//!
//! If-conversion (`ifconv`) leaves the blocks of a converted branch in place, each ending
//! without a branch and entered only from the one before: a reduction's `if (tid < s) {...};
//! __syncthreads();` steps stay one block each. Scheduling works per block (`crates/sched`),
//! so a step's predicate could not be computed before the previous step's barrier, as ptxas
//! computes it. Joined, they are one block.

use ir::Func;

/// Joins every such pair, in layout order. Returns whether any block was joined.
pub fn merge_fallthrough(f: &mut Func) -> bool {
    let preds = ir::cfg::predecessors(&ir::cfg::successors(f));
    // Blocks an operand names (branch targets, a system call's return point) keep their
    // address.
    let named: Vec<ir::Block> = f
        .insts()
        .flat_map(|i| i.operands.iter())
        .filter_map(|o| match o {
            ir::Operand::Label(b) => Some(*b),
            _ => None,
        })
        .collect();
    // Block positions (in the current layout) that survive, and where each merged one goes.
    let mut keep: Vec<usize> = Vec::with_capacity(f.order.len());
    let mut merged = false;
    for (pos, block_preds) in preds.iter().enumerate() {
        // The block the previous one now belongs to (itself, or the one it was joined to).
        let into = keep.last().map(|&p| f.order[p]);
        let joins = *block_preds == [pos.wrapping_sub(1)]
            && !named.contains(&f.order[pos])
            && into.is_some_and(|b| {
                // It falls through and does nothing else at its end.
                f.blocks[b].insts.last().is_none_or(|i| !i.is_terminator())
            });
        if let (true, Some(into)) = (joins, into) {
            let b = f.order[pos];
            let moved = std::mem::take(&mut f.blocks[b].insts);
            f.blocks[into].insts.extend(moved);
            merged = true;
        } else {
            keep.push(pos);
        }
    }
    if merged {
        f.order = keep.iter().map(|&p| f.order[p]).collect();
    }
    merged
}
