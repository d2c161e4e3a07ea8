//! Where lanes that diverge at a branch meet again: each instruction's reconvergence point, computed once
//! when the program is built.

use super::*;

/// For every instruction, the first instruction of the immediate post-dominator of its basic block (where
/// lanes that diverge at a branch meet again), or [`NEVER`].
///
/// Basic blocks start at branch targets and after branches and exits. Post-dominators come from the
/// iterative algorithm of Cooper, Harvey and Kennedy ("A Simple, Fast Dominance Algorithm") on the reversed
/// graph with one virtual exit that every exit, trap and fall-off-the-end reaches. Blocks that cannot reach
/// the exit (an endless loop) reconverge never.
pub(super) fn reconvergence(insts: &[Inst]) -> Vec<u32> {
    let n = insts.len();
    if n == 0 {
        return Vec::new();
    }
    let mut leader = vec![false; n + 1];
    leader[0] = true;
    leader[n] = true;
    for (i, inst) in insts.iter().enumerate() {
        match inst.op {
            Op::Bra { target } => {
                leader[(target as usize).min(n)] = true;
                leader[i + 1] = true;
            }
            Op::Exit | Op::Trap { .. } => leader[i + 1] = true,
            _ => {}
        }
    }
    // Blocks: [start, end). Block index of each instruction.
    let starts: Vec<usize> = (0..n).filter(|&i| leader[i]).collect();
    let nb = starts.len();
    let mut block_of = vec![0usize; n + 1];
    for (b, &s) in starts.iter().enumerate() {
        let e = starts.get(b + 1).copied().unwrap_or(n);
        for slot in &mut block_of[s..e] {
            *slot = b;
        }
    }
    let exit = nb; // the virtual exit node
    block_of[n] = exit;
    // Successors of each block.
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); nb];
    for (b, &s) in starts.iter().enumerate() {
        let e = starts.get(b + 1).copied().unwrap_or(n);
        let last = &insts[e - 1];
        let next = block_of[e];
        match last.op {
            Op::Bra { target } => {
                succ[b].push(block_of[(target as usize).min(n)]);
                if last.guard.is_some() {
                    succ[b].push(next);
                }
            }
            Op::Exit | Op::Trap { .. } => {
                succ[b].push(exit);
                if last.guard.is_some() {
                    succ[b].push(next);
                }
            }
            _ => succ[b].push(next),
        }
        let _ = s;
    }
    // Predecessors in the reversed graph are the successors in the forward graph.
    let mut pred_rev: Vec<Vec<usize>> = vec![Vec::new(); nb + 1];
    for (b, ss) in succ.iter().enumerate() {
        for &s in ss {
            pred_rev[s].push(b);
        }
    }
    // Reverse post-order of the reversed graph, from the exit.
    let mut order = Vec::with_capacity(nb + 1);
    let mut seen = vec![false; nb + 1];
    let mut stack: Vec<(usize, usize)> = vec![(exit, 0)];
    seen[exit] = true;
    while let Some(&mut (node, ref mut k)) = stack.last_mut() {
        if let Some(&p) = pred_rev[node].get(*k) {
            *k += 1;
            if !seen[p] {
                seen[p] = true;
                stack.push((p, 0));
            }
        } else {
            order.push(node);
            stack.pop();
        }
    }
    order.reverse();
    let mut rpo_index = vec![usize::MAX; nb + 1];
    for (i, &b) in order.iter().enumerate() {
        rpo_index[b] = i;
    }
    const UNDEF: usize = usize::MAX;
    let mut ipdom = vec![UNDEF; nb + 1];
    ipdom[exit] = exit;
    let intersect = |ipdom: &[usize], mut a: usize, mut b: usize| {
        while a != b {
            while rpo_index[a] > rpo_index[b] {
                a = ipdom[a];
            }
            while rpo_index[b] > rpo_index[a] {
                b = ipdom[b];
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().skip(1) {
            // In the reversed graph, b's predecessors are its forward successors.
            let mut new = UNDEF;
            for &s in &succ[b] {
                if ipdom[s] == UNDEF {
                    continue;
                }
                new = if new == UNDEF { s } else { intersect(&ipdom, s, new) };
            }
            if new != UNDEF && ipdom[b] != new {
                ipdom[b] = new;
                changed = true;
            }
        }
    }
    (0..n)
        .map(|i| {
            let b = block_of[i];
            match ipdom[b] {
                UNDEF => NEVER,
                d if d == exit => NEVER,
                d => starts[d] as u32,
            }
        })
        .collect()
}
