//! Phase 5: join the components of the judge–project graph without losing coverage.

use super::graph::Comps;
use super::{NONE, Planner};

/// Candidate changes verified (by recounting components) per connectivity attempt.
const MAX_VERIFY: usize = 256;
/// Inner-loop work budget per connectivity attempt.
const MAX_SCAN: usize = 4_000_000;

impl Planner {
    /// Phase 5: join components without losing coverage.
    pub(super) fn connect(&mut self) {
        let balanced_max = (0..self.j_id.len())
            .filter(|&j| !self.judge_new[j].is_empty())
            .map(|j| self.load[j])
            .max()
            .unwrap_or(0);
        let mut rounds = self.j_id.len() + self.n_unknown + self.p_id.len() + 1;
        while rounds > 0 {
            rounds -= 1;
            let comps = self.analyze();
            if comps.count <= 1 {
                return;
            }
            if self.try_swap(&comps)
                || self.try_redirect(&comps, None)
                || self.try_redirect(&comps, Some(balanced_max))
                || self.try_bridge(&comps)
            {
                continue;
            }
            return;
        }
    }

    /// Swap the judges of two new edges in different components (loads unchanged). Merges
    /// whenever at least one of the two edges is not a bridge.
    fn try_swap(&mut self, comps: &Comps) -> bool {
        let before = comps.count;
        let mut verified = 0;
        let mut scanned = 0usize;
        for p1 in 0..self.p_id.len() {
            let c1 = comps.project[p1];
            if c1 == NONE {
                continue;
            }
            for x1 in self.new_on[p1].clone() {
                for pi in 0..self.j_elig[x1].len() {
                    let p2 = self.j_elig[x1][pi];
                    scanned += 1;
                    if scanned > MAX_SCAN || verified >= MAX_VERIFY {
                        return false;
                    }
                    let c2 = comps.project[p2];
                    if c2 == NONE || c2 == c1 || self.is_new(x1, p2) {
                        continue;
                    }
                    for x2 in self.new_on[p2].clone() {
                        if x2 == x1 || !self.eligible(x2, p1) || self.is_new(x2, p1) {
                            continue;
                        }
                        // If neither edge is a bridge-free removal the swap cannot merge.
                        if comps.bridges.contains(&(x1, p1)) && comps.bridges.contains(&(x2, p2)) {
                            continue;
                        }
                        verified += 1;
                        self.remove(x1, p1);
                        self.remove(x2, p2);
                        self.add(x2, p1);
                        self.add(x1, p2);
                        if self.components().count < before {
                            return true;
                        }
                        self.remove(x2, p1);
                        self.remove(x1, p2);
                        self.add(x1, p1);
                        self.add(x2, p2);
                    }
                }
            }
        }
        false
    }

    /// Hand a new edge to a judge of another component. Strict (`limit == None`): the
    /// receiver ends no higher than the giver was. Loose: the receiver ends at most one
    /// above the giver and at most one above `limit`.
    fn try_redirect(&mut self, comps: &Comps, limit: Option<usize>) -> bool {
        let before = comps.count;
        let mut verified = 0;
        let mut scanned = 0usize;
        for p in 0..self.p_id.len() {
            let cp = comps.project[p];
            for x in self.new_on[p].clone() {
                for yi in 0..self.elig[p].len() {
                    scanned += 1;
                    if scanned > MAX_SCAN || verified >= MAX_VERIFY {
                        return false;
                    }
                    let y = self.elig[p][yi];
                    let cy = comps.judge[y];
                    if cy == NONE || cy == cp || !self.room(y) || self.is_new(y, p) {
                        continue;
                    }
                    let ok = match limit {
                        None => self.load[y] < self.load[x],
                        Some(l) => self.load[y] <= self.load[x] && self.load[y] <= l,
                    };
                    // Removing a bridge splits the component unless the giver is left
                    // without edges (and so stops counting).
                    if !ok || (comps.bridges.contains(&(x, p)) && comps.degree[x] > 1) {
                        continue;
                    }
                    verified += 1;
                    self.remove(x, p);
                    self.add(y, p);
                    if self.components().count < before {
                        return true;
                    }
                    self.remove(y, p);
                    self.add(x, p);
                }
            }
        }
        false
    }

    /// Add one review between two components, by the least-loaded judge with room
    /// (within `max_load`). Always merges two components.
    fn try_bridge(&mut self, comps: &Comps) -> bool {
        let mut best: Option<(usize, usize, usize, usize)> = None;
        for p in 0..self.p_id.len() {
            let cp = comps.project[p];
            if cp == NONE {
                continue;
            }
            let assigned = self.p_existing[p].saturating_add(self.new_on[p].len());
            for &y in &self.elig[p] {
                let cy = comps.judge[y];
                if cy == NONE || cy == cp || !self.room(y) || self.is_new(y, p) {
                    continue;
                }
                let key = (self.load[y], assigned, p, y);
                if best.is_none_or(|b| key < b) {
                    best = Some(key);
                }
            }
        }
        match best {
            Some((_, _, p, y)) => {
                self.add(y, p);
                true
            }
            None => false,
        }
    }
}
