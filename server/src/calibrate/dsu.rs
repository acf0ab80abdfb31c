//! Union–find (disjoint sets) over dense indices, shared by the calibration engine
//! (`prep::components`: which projects are comparable) and the assignment planner
//! (`crate::planner`: how many components its judge–project graph has).
//!
//! Path halving and union by size. Total: an index out of range is its own set and
//! is never merged, so a caller's off-by-one cannot panic here.

/// Disjoint sets of `0..n`.
pub(crate) struct Dsu {
    parent: Vec<usize>,
    size: Vec<usize>,
}

impl Dsu {
    /// `n` singleton sets.
    pub(crate) fn new(n: usize) -> Self {
        Dsu {
            parent: (0..n).collect(),
            size: vec![1; n],
        }
    }

    /// The representative of `x`'s set.
    pub(crate) fn find(&mut self, mut x: usize) -> usize {
        while let Some(&p) = self.parent.get(x) {
            if p == x {
                break;
            }
            let gp = self.parent.get(p).copied().unwrap_or(p);
            if let Some(slot) = self.parent.get_mut(x) {
                *slot = gp;
            }
            x = gp;
        }
        x
    }

    /// Merges the sets of `a` and `b` (the larger set's root stays the root).
    pub(crate) fn union(&mut self, a: usize, b: usize) {
        let (mut a, mut b) = (self.find(a), self.find(b));
        if a == b || a >= self.parent.len() || b >= self.parent.len() {
            return;
        }
        if self.size[a] < self.size[b] {
            std::mem::swap(&mut a, &mut b);
        }
        self.parent[b] = a;
        self.size[a] += self.size[b];
    }
}

#[cfg(test)]
mod tests {
    use super::Dsu;

    #[test]
    fn unions_merge_and_out_of_range_is_inert() {
        let mut d = Dsu::new(5);
        d.union(0, 1);
        d.union(3, 4);
        d.union(1, 4);
        assert_eq!(d.find(0), d.find(3));
        assert_ne!(d.find(0), d.find(2));
        d.union(2, 99);
        assert_eq!(d.find(99), 99);
        assert_eq!(d.find(2), 2);
    }
}
