//! Loop nesting of a code section from its control-flow graph, not from its layout.
//!
//! Counting the backward branches whose span covers an instruction ranks layouts, not code:
//! a block placed after its loop's exit but jumped back from, or a chain of blocks that each
//! branch back to a shared tail, makes every instruction in between look several loops deep
//! (one corpus kernel came out 45 loops deep that way). Here a loop is a natural loop: a
//! retreating edge `u -> h` of a depth-first walk from the entry (and from every instruction
//! the walk did not reach, in address order: subroutines, targets of indirect branches)
//! whose target `h` is still on the walk's stack; its body is `h` and every instruction of
//! `h`'s depth-first subtree that reaches `u` without passing `h`. Edges into one header form
//! one loop. An instruction's depth is the number of loops whose body holds it.

use hazard::{Flow, Node};

/// The instructions control may pass to after `i` (within `0..n`).
fn successors(nodes: &[Node], i: usize, out: &mut Vec<usize>) {
    out.clear();
    let n = nodes.len();
    let next = |out: &mut Vec<usize>| {
        if i + 1 < n {
            out.push(i + 1);
        }
    };
    match nodes[i].effects.as_ref().map_or(Flow::Next, |e| e.flow) {
        Flow::Next | Flow::Call { .. } => next(out),
        Flow::Branch {
            target,
            conditional,
        } => {
            let t = (target / 16) as usize;
            if t < n {
                out.push(t);
            }
            if conditional || nodes[i].guard.is_some() {
                next(out);
            }
        }
        Flow::Return { conditional } | Flow::Exit { conditional } => {
            if conditional || nodes[i].guard.is_some() {
                next(out);
            }
        }
        Flow::Indirect => {}
    }
}

/// Per instruction, how many loops hold it; and how many loops there are.
pub(crate) fn loop_depths(nodes: &[Node]) -> (Vec<u32>, usize) {
    let n = nodes.len();
    let mut succ: Vec<Vec<usize>> = Vec::with_capacity(n);
    let mut buf = Vec::new();
    for i in 0..n {
        successors(nodes, i, &mut buf);
        succ.push(buf.clone());
    }
    let mut pred: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, s) in succ.iter().enumerate() {
        for &t in s {
            pred[t].push(i);
        }
    }
    // Depth-first walk: preorder number, last preorder number of the subtree, and the
    // retreating edges (source, header) met while the header was on the stack.
    const UNSEEN: usize = usize::MAX;
    let mut pre = vec![UNSEEN; n];
    let mut last = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut back: Vec<(usize, usize)> = Vec::new();
    let mut counter = 0;
    for root in 0..n {
        if pre[root] != UNSEEN {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        pre[root] = counter;
        counter += 1;
        on_stack[root] = true;
        while let Some(&mut (v, ref mut k)) = stack.last_mut() {
            if let Some(&w) = succ[v].get(*k) {
                *k += 1;
                if pre[w] == UNSEEN {
                    pre[w] = counter;
                    counter += 1;
                    on_stack[w] = true;
                    stack.push((w, 0));
                } else if on_stack[w] {
                    back.push((v, w));
                }
            } else {
                last[v] = counter - 1;
                on_stack[v] = false;
                stack.pop();
            }
        }
    }
    // One loop per header: the union of its retreating edges' bodies.
    back.sort_by_key(|&(_, h)| h);
    let mut depth = vec![0u32; n];
    let mut in_body = vec![usize::MAX; n];
    let mut loops = 0;
    let mut work = Vec::new();
    for (k, group) in back.chunk_by(|a, b| a.1 == b.1).enumerate() {
        let h = group[0].1;
        let inside = |x: usize| pre[x] >= pre[h] && pre[x] <= last[h];
        loops += 1;
        in_body[h] = k;
        depth[h] += 1;
        work.clear();
        for &(u, _) in group {
            if in_body[u] != k {
                in_body[u] = k;
                depth[u] += 1;
                work.push(u);
            }
        }
        while let Some(x) = work.pop() {
            for &p in &pred[x] {
                if in_body[p] != k && inside(p) {
                    in_body[p] = k;
                    depth[p] += 1;
                    work.push(p);
                }
            }
        }
    }
    (depth, loops)
}
