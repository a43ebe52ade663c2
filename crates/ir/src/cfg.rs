//! Graph analyses over a control-flow graph given as successor lists (node `i`'s successors
//! `succs[i]`): immediate dominators, immediate post-dominators with a virtual exit, and natural
//! loops. The graph is plain indices so that a pass can analyse the graph it is about to build
//! (explicit fall-through edges, blocks not yet laid out) as well as [`Func`]'s layout.
//!
//! Dominators are computed with the iterative algorithm of Cooper, Harvey and Kennedy ("A
//! Simple, Fast Dominance Algorithm"): reverse post-order, then intersect the dominators of a
//! node's processed predecessors until nothing changes.

use crate::Func;

/// Successor lists of `f`'s blocks by layout position ([`Func::successors`]).
pub fn successors(f: &Func) -> Vec<Vec<usize>> {
    (0..f.order.len()).map(|p| f.successors(p)).collect()
}

/// Predecessor lists of a graph.
pub fn predecessors(succs: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let mut preds = vec![Vec::new(); succs.len()];
    for (n, ss) in succs.iter().enumerate() {
        for &s in ss {
            if !preds[s].contains(&n) {
                preds[s].push(n);
            }
        }
    }
    preds
}

/// Nodes reachable from `root` in reverse post-order.
fn reverse_post_order(succs: &[Vec<usize>], root: usize) -> Vec<usize> {
    let mut seen = vec![false; succs.len()];
    let mut post = Vec::with_capacity(succs.len());
    // Iterative depth-first search: (node, next successor to visit).
    let mut stack = vec![(root, 0usize)];
    seen[root] = true;
    while let Some((n, k)) = stack.last_mut() {
        if let Some(&s) = succs[*n].get(*k) {
            *k += 1;
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(*n);
            stack.pop();
        }
    }
    post.reverse();
    post
}

/// Immediate dominators from `root`: `idom[root] = Some(root)`, `None` for nodes `root`
/// does not reach.
pub fn immediate_dominators(succs: &[Vec<usize>], root: usize) -> Vec<Option<usize>> {
    let n = succs.len();
    let preds = predecessors(succs);
    let rpo = reverse_post_order(succs, root);
    let mut rank = vec![usize::MAX; n];
    for (k, &b) in rpo.iter().enumerate() {
        rank[b] = k;
    }
    let mut idom: Vec<Option<usize>> = vec![None; n];
    idom[root] = Some(root);
    let intersect = |idom: &[Option<usize>], mut a: usize, mut b: usize| {
        while a != b {
            while rank[a] > rank[b] {
                a = idom[a].unwrap_or(root);
            }
            while rank[b] > rank[a] {
                b = idom[b].unwrap_or(root);
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo.iter().skip(1) {
            let mut new: Option<usize> = None;
            for &p in &preds[b] {
                if idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(q) => intersect(&idom, p, q),
                });
            }
            if new != idom[b] {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom
}

/// Whether `a` dominates `b` under `idom` (every node dominates itself).
pub fn dominates(idom: &[Option<usize>], a: usize, mut b: usize) -> bool {
    loop {
        if a == b {
            return true;
        }
        match idom[b] {
            Some(p) if p != b => b = p,
            _ => return false,
        }
    }
}

/// Post-dominators: the immediate post-dominator of each node, where [`PostDom::EXIT`] (a
/// virtual node after every node without successors) post-dominates everything that ends.
/// `None` for nodes from which no path ends (an endless loop).
#[derive(Clone, Debug)]
pub struct PostDom {
    ipdom: Vec<Option<usize>>,
}

impl PostDom {
    /// The virtual exit.
    pub const EXIT: usize = usize::MAX;

    pub fn new(succs: &[Vec<usize>]) -> PostDom {
        let n = succs.len();
        // The reversed graph, with the exit as node `n`.
        let mut rev: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
        for (b, ss) in succs.iter().enumerate() {
            if ss.is_empty() {
                rev[n].push(b);
            }
            for &s in ss {
                rev[s].push(b);
            }
        }
        let idom = immediate_dominators(&rev, n);
        let ipdom = idom[..n]
            .iter()
            .map(|d| d.map(|p| if p == n { PostDom::EXIT } else { p }))
            .collect();
        PostDom { ipdom }
    }

    /// The immediate post-dominator of `b` ([`PostDom::EXIT`] for the exit).
    pub fn ipdom(&self, b: usize) -> Option<usize> {
        self.ipdom[b]
    }
}

/// A natural loop: a header and every node that reaches one of its back edges' sources
/// without passing the header (nested loops' nodes included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loop {
    pub header: usize,
    /// Membership by node.
    pub body: Vec<bool>,
    pub size: usize,
}

/// The natural loops of a graph from `root` (one per header, back edges of one header
/// merged), and whether the graph is reducible: every edge to a node on the depth-first stack
/// goes to a dominator of its source. In an irreducible graph the loops found are those of
/// the reducible back edges only.
pub fn natural_loops(
    succs: &[Vec<usize>],
    root: usize,
    idom: &[Option<usize>],
) -> (Vec<Loop>, bool) {
    let n = succs.len();
    let preds = predecessors(succs);
    let mut reducible = true;
    let mut loops: Vec<Loop> = Vec::new();
    // Retreating edges: edges to a node on the depth-first stack.
    let mut on_stack = vec![false; n];
    let mut seen = vec![false; n];
    let mut stack = vec![(root, 0usize)];
    seen[root] = true;
    on_stack[root] = true;
    let mut back: Vec<(usize, usize)> = Vec::new();
    while let Some((b, k)) = stack.last_mut() {
        let b = *b;
        if let Some(&s) = succs[b].get(*k) {
            *k += 1;
            if on_stack[s] {
                if dominates(idom, s, b) {
                    back.push((b, s));
                } else {
                    reducible = false;
                }
            } else if !seen[s] {
                seen[s] = true;
                on_stack[s] = true;
                stack.push((s, 0));
            }
        } else {
            on_stack[b] = false;
            stack.pop();
        }
    }
    for (latch, header) in back {
        let k = match loops.iter().position(|l| l.header == header) {
            Some(k) => k,
            None => {
                let mut body = vec![false; n];
                body[header] = true;
                loops.push(Loop {
                    header,
                    body,
                    size: 1,
                });
                loops.len() - 1
            }
        };
        let l = &mut loops[k];
        let mut work = vec![latch];
        while let Some(x) = work.pop() {
            if l.body[x] {
                continue;
            }
            l.body[x] = true;
            l.size += 1;
            work.extend(preds[x].iter().copied());
        }
    }
    (loops, reducible)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0 → 1 → {2, 3} → 4 → (1 | 5); 5 exits.
    fn diamond_in_loop() -> Vec<Vec<usize>> {
        vec![vec![1], vec![2, 3], vec![4], vec![4], vec![1, 5], vec![]]
    }

    #[test]
    fn dominators_of_a_diamond_in_a_loop() {
        let g = diamond_in_loop();
        let idom = immediate_dominators(&g, 0);
        assert_eq!(
            idom,
            vec![Some(0), Some(0), Some(1), Some(1), Some(1), Some(4)]
        );
        assert!(dominates(&idom, 1, 4));
        assert!(!dominates(&idom, 2, 4));
    }

    #[test]
    fn post_dominators_end_at_the_virtual_exit() {
        let g = diamond_in_loop();
        let pd = PostDom::new(&g);
        let got: Vec<Option<usize>> = (0..g.len()).map(|b| pd.ipdom(b)).collect();
        assert_eq!(
            got,
            vec![
                Some(1),
                Some(4),
                Some(4),
                Some(4),
                Some(5),
                Some(PostDom::EXIT)
            ]
        );
        // An endless loop has no post-dominator.
        let spin = vec![vec![1], vec![1]];
        assert_eq!(PostDom::new(&spin).ipdom(1), None);
    }

    #[test]
    fn natural_loops_and_irreducible_graphs() {
        let g = diamond_in_loop();
        let idom = immediate_dominators(&g, 0);
        let (loops, reducible) = natural_loops(&g, 0, &idom);
        assert!(reducible);
        assert_eq!(loops.len(), 1);
        assert_eq!(loops[0].header, 1);
        assert_eq!(loops[0].size, 4);
        assert!(!loops[0].body[0] && !loops[0].body[5]);
        // 0 → {1, 2}, 1 ↔ 2: a cycle with two entries.
        let irr = vec![vec![1, 2], vec![2], vec![1, 3], vec![]];
        let idom = immediate_dominators(&irr, 0);
        assert!(!natural_loops(&irr, 0, &idom).1);
    }
}
