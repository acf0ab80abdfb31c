//! Phase 4: spread the co-reviews, keeping coverage and balance unchanged.

use std::collections::HashSet;

use super::Planner;

/// Pair-count look-ups the spread phase may spend.
const SPREAD_WORK: usize = 24_000_000;

impl Planner {
    /// Phase 4: spread. Load-neutral local search lowering the sum of cubed co-review
    /// counts (cubes weigh the most-shared pairs far above the rest): swap the judges of two new edges, or hand a review to a judge exactly one
    /// below (the multiset of loads, and so the balance, is unchanged). The most shared
    /// pairs are worked on first; first improvement, within a work budget.
    pub(super) fn spread(&mut self) {
        let mut work = SPREAD_WORK;
        let mut threshold = (0..self.p_id.len())
            .flat_map(|p| self.new_on[p].iter().map(move |&x| (x, p)))
            .map(|(x, p)| self.hottest(x, p))
            .max()
            .unwrap_or(0);
        // Edges with no improving move at this threshold; not retried until it drops.
        let mut stuck: HashSet<(usize, usize)> = HashSet::new();
        while threshold >= 2 && work > 0 {
            let mut improved = false;
            for p in 0..self.p_id.len() {
                for x in self.new_on[p].clone() {
                    if work == 0 {
                        return;
                    }
                    if !self.is_new(x, p)
                        || stuck.contains(&(x, p))
                        || self.hottest(x, p) < threshold
                    {
                        continue;
                    }
                    if self.improve_edge(x, p, &mut work) {
                        improved = true;
                    } else {
                        stuck.insert((x, p));
                    }
                }
            }
            if !improved {
                threshold -= 1;
                stuck.clear();
            }
        }
    }

    /// The most projects `x` shares with any other reviewer of `p`.
    fn hottest(&self, x: usize, p: usize) -> u32 {
        self.reviewers(p)
            .filter(|&r| r != x)
            .map(|r| self.pairs.get(x, r))
            .max()
            .unwrap_or(0)
    }

    /// Change in the sum of cubed pair counts if `x` stopped and `y` started sharing a
    /// project with each reviewer of `p` other than `x`, except those also on `q`.
    fn move_delta(&self, x: usize, y: usize, p: usize, q: Option<usize>) -> i64 {
        let shared = |r: usize| q.is_some_and(|q| r == y || self.reviewers(q).any(|s| s == r));
        self.reviewers(p)
            .filter(|&r| r != x && !shared(r))
            .map(|r| {
                let cx = i64::from(self.pairs.get(x, r));
                let cy = i64::from(self.pairs.get(y, r));
                -(3 * cx * cx - 3 * cx + 1) + (3 * cy * cy + 3 * cy + 1)
            })
            .sum()
    }

    /// Applies the first spread-improving move of `x` off `p`; false if none is found.
    fn improve_edge(&mut self, x: usize, p: usize, work: &mut usize) -> bool {
        let size = self.p_exist_known[p].len() + self.new_on[p].len();
        // Hand over to a judge one below (their loads trade places).
        for yi in 0..self.elig[p].len() {
            let y = self.elig[p][yi];
            *work = work.saturating_sub(1);
            if self.load[y].saturating_add(1) != self.load[x] || !self.room(y) || self.is_new(y, p)
            {
                continue;
            }
            *work = work.saturating_sub(size);
            if self.move_delta(x, y, p, None) < 0 {
                self.remove(x, p);
                self.add(y, p);
                return true;
            }
        }
        // Swap with another new edge (x2, p2): x takes p2, x2 takes p. Pairs with a
        // reviewer of both projects change twice and cancel out.
        for pi in 0..self.j_elig[x].len() {
            if *work == 0 {
                return false;
            }
            let p2 = self.j_elig[x][pi];
            *work = work.saturating_sub(1);
            if p2 == p || self.is_new(x, p2) {
                continue;
            }
            let size2 = self.p_exist_known[p2].len() + self.new_on[p2].len();
            for x2i in 0..self.new_on[p2].len() {
                let x2 = self.new_on[p2][x2i];
                if x2 == x || !self.eligible(x2, p) || self.is_new(x2, p) {
                    continue;
                }
                *work = work.saturating_sub(size * size2 + 1);
                let delta =
                    self.move_delta(x, x2, p, Some(p2)) + self.move_delta(x2, x, p2, Some(p));
                if delta < 0 {
                    self.remove(x, p);
                    self.remove(x2, p2);
                    self.add(x2, p);
                    self.add(x, p2);
                    return true;
                }
            }
        }
        false
    }
}
