//! Phases 1–3: the level fill, augmenting paths (so coverage is a maximum flow), and
//! load balancing along alternating paths.

use std::collections::VecDeque;

use super::{NONE, Planner};

/// Reusable BFS bookkeeping; `stamp` avoids clearing the arrays between searches.
pub(super) struct Scratch {
    stamp: u64,
    seen_j: Vec<u64>,
    seen_p: Vec<u64>,
    /// Project through which a judge was reached (`NONE` for a search source).
    par_j: Vec<usize>,
    /// Judge through which a project was reached.
    par_p: Vec<usize>,
    queue: VecDeque<usize>,
}

impl Scratch {
    pub(super) fn new(nj: usize, np: usize) -> Self {
        Scratch {
            stamp: 0,
            seen_j: vec![0; nj],
            seen_p: vec![0; np],
            par_j: vec![NONE; nj],
            par_p: vec![NONE; np],
            queue: VecDeque::new(),
        }
    }

    fn next(&mut self) -> u64 {
        self.stamp += 1;
        self.queue.clear();
        self.stamp
    }
}

impl Planner {
    /// Phases 1–2: fill level by level. Each pass gives one more review to every project
    /// at the lowest review count (most constrained first), so scarce capacity is shared
    /// evenly; a project that no augmenting path can help is done for good.
    pub(super) fn fill(&mut self) {
        let order = std::mem::take(&mut self.order);
        let mut done = vec![false; self.p_id.len()];
        loop {
            let level = order
                .iter()
                .filter(|&&p| !done[p] && self.new_on[p].len() < self.need[p])
                .map(|&p| self.assigned(p))
                .min();
            let Some(level) = level else { break };
            for &p in &order {
                let open = !done[p] && self.new_on[p].len() < self.need[p];
                if open && self.assigned(p) == level && !self.give_one(p) {
                    done[p] = true;
                }
            }
        }
        self.order = order;
    }

    /// One more review for `p`: the least-loaded eligible judge with room (ties: fewest
    /// co-reviews with `p`'s reviewers, then seeded order), else an augmenting path.
    fn give_one(&mut self, p: usize) -> bool {
        let mut best: Option<(usize, u64, usize)> = None;
        for &j in &self.elig[p] {
            if !self.room(j) || self.is_new(j, p) {
                continue;
            }
            if best.is_some_and(|b| self.load[j] > b.0) {
                continue;
            }
            let key = (self.load[j], self.co_sum(j, p), j);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        let Some((_, _, j)) = best else {
            let ok = self.augment(p);
            self.augmented += usize::from(ok);
            return ok;
        };
        self.add(j, p);
        true
    }

    /// One more review for `p` along an alternating path; false (and prunes) if none.
    fn augment(&mut self, root: usize) -> bool {
        let st = self.scratch.next();
        self.scratch.seen_p[root] = st;
        let mut target = NONE;
        for &j in &self.elig[root] {
            if self.dead[j] || self.scratch.seen_j[j] == st || self.new_on[root].contains(&j) {
                continue;
            }
            self.scratch.seen_j[j] = st;
            self.scratch.par_j[j] = root;
            if self.load[j] < self.cap[j] {
                target = j;
                break;
            }
            self.scratch.queue.push_back(j);
        }
        'search: while target == NONE {
            let Some(j) = self.scratch.queue.pop_front() else {
                break;
            };
            for &q in &self.judge_new[j] {
                if self.scratch.seen_p[q] == st {
                    continue;
                }
                self.scratch.seen_p[q] = st;
                self.scratch.par_p[q] = j;
                for &z in &self.elig[q] {
                    if self.dead[z] || self.scratch.seen_j[z] == st || self.new_on[q].contains(&z) {
                        continue;
                    }
                    self.scratch.seen_j[z] = st;
                    self.scratch.par_j[z] = q;
                    if self.load[z] < self.cap[z] {
                        target = z;
                        break 'search;
                    }
                    self.scratch.queue.push_back(z);
                }
            }
        }
        if target == NONE {
            // Everything reached is full and closed under the search: prune it for good.
            for j in 0..self.dead.len() {
                if self.scratch.seen_j[j] == st {
                    self.dead[j] = true;
                }
            }
            return false;
        }
        // Walk back: the target takes its project, each judge on the path hands its
        // project over and takes the previous one, the root gains one review.
        let mut cur = target;
        for _ in 0..=self.j_id.len() {
            let q = self.scratch.par_j[cur];
            if q >= self.p_id.len() {
                break;
            }
            self.add(cur, q);
            if q == root {
                break;
            }
            let prev = self.scratch.par_p[q];
            if prev >= self.j_id.len() {
                break;
            }
            self.remove(prev, q);
            cur = prev;
        }
        true
    }

    /// Highest load among judges with a new (movable) assignment, below `below`.
    fn source_level(&self, below: usize) -> Option<usize> {
        (0..self.j_id.len())
            .filter(|&j| !self.judge_new[j].is_empty() && self.load[j] < below)
            .map(|j| self.load[j])
            .max()
    }

    /// Phase 3: move reviews from judges at level `L` to judges at `≤ L - 2`, top down.
    pub(super) fn balance(&mut self) {
        let mut level = self.source_level(usize::MAX);
        while let Some(l) = level {
            if l < 2 {
                break;
            }
            while self.balance_step(l) {}
            level = self.source_level(l);
        }
    }

    /// One improving path from a judge at load `level`; false if there is none.
    fn balance_step(&mut self, level: usize) -> bool {
        let st = self.scratch.next();
        for j in 0..self.j_id.len() {
            if self.load[j] == level && !self.judge_new[j].is_empty() {
                self.scratch.seen_j[j] = st;
                self.scratch.par_j[j] = NONE;
                self.scratch.queue.push_back(j);
            }
        }
        let mut target = NONE;
        'search: while let Some(j) = self.scratch.queue.pop_front() {
            for &q in &self.judge_new[j] {
                if self.scratch.seen_p[q] == st {
                    continue;
                }
                self.scratch.seen_p[q] = st;
                self.scratch.par_p[q] = j;
                for &z in &self.elig[q] {
                    if self.scratch.seen_j[z] == st || self.new_on[q].contains(&z) {
                        continue;
                    }
                    self.scratch.seen_j[z] = st;
                    self.scratch.par_j[z] = q;
                    if self.load[z].saturating_add(2) <= level && self.load[z] < self.cap[z] {
                        target = z;
                        break 'search;
                    }
                    self.scratch.queue.push_back(z);
                }
            }
        }
        if target == NONE {
            return false;
        }
        let mut cur = target;
        for _ in 0..=self.j_id.len() {
            let q = self.scratch.par_j[cur];
            if q >= self.p_id.len() {
                break;
            }
            let prev = self.scratch.par_p[q];
            if prev >= self.j_id.len() {
                break;
            }
            self.remove(prev, q);
            self.add(cur, q);
            if self.scratch.par_j[prev] == NONE {
                break;
            }
            cur = prev;
        }
        true
    }
}
