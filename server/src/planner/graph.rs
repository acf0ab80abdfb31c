//! The judge–project graph being planned: new edges added and removed with loads and
//! co-review counts kept exact, eligibility look-ups, and what the connect phase needs:
//! components (with the union–find shared with calibration) and the bridges among new
//! edges.

use std::collections::{HashMap, HashSet};

use super::{NONE, Planner};
use crate::calibrate::dsu::Dsu;

/// Judge counts up to this use a dense co-review matrix.
const DENSE_PAIRS: usize = 2048;

/// How many projects each pair of judges shares (existing + planned), kept exact.
pub(super) enum Pairs {
    Dense { n: usize, counts: Vec<u32> },
    Sparse(HashMap<(usize, usize), u32>),
}

impl Pairs {
    pub(super) fn new(n: usize) -> Self {
        if n <= DENSE_PAIRS {
            Pairs::Dense {
                n,
                counts: vec![0; n * n],
            }
        } else {
            Pairs::Sparse(HashMap::new())
        }
    }

    pub(super) fn get(&self, a: usize, b: usize) -> u32 {
        match self {
            Pairs::Dense { n, counts } => counts.get(a * n + b).copied().unwrap_or(0),
            Pairs::Sparse(m) => m.get(&(a.min(b), a.max(b))).copied().unwrap_or(0),
        }
    }

    /// Records one more (`up`) or one fewer shared project for `a` and `b`.
    pub(super) fn change(&mut self, a: usize, b: usize, up: bool) {
        let step = |c: &mut u32| {
            *c = if up {
                c.saturating_add(1)
            } else {
                c.saturating_sub(1)
            }
        };
        match self {
            Pairs::Dense { n, counts } => {
                for i in [a * *n + b, b * *n + a] {
                    if let Some(c) = counts.get_mut(i) {
                        step(c);
                    }
                }
            }
            Pairs::Sparse(m) => {
                let c = m.entry((a.min(b), a.max(b))).or_insert(0);
                step(c);
            }
        }
    }
}

/// Component labels of the judge–project graph.
pub(super) struct Comps {
    pub(super) count: usize,
    /// Component of each judge, `NONE` when the judge has no edge.
    pub(super) judge: Vec<usize>,
    /// Component of each project, `NONE` when the project has no edge.
    pub(super) project: Vec<usize>,
    /// New edges `(judge, project)` whose removal would split their component.
    pub(super) bridges: HashSet<(usize, usize)>,
    /// Edges (existing + new) of each judge.
    pub(super) degree: Vec<usize>,
}

impl Planner {
    pub(super) fn room(&self, j: usize) -> bool {
        self.load[j] < self.cap[j]
    }

    pub(super) fn is_new(&self, j: usize, p: usize) -> bool {
        self.new_on[p].contains(&j)
    }

    pub(super) fn eligible(&self, j: usize, p: usize) -> bool {
        self.elig[p].binary_search(&j).is_ok()
    }

    pub(super) fn add(&mut self, j: usize, p: usize) {
        for &r in self.p_exist_known[p].iter().chain(&self.new_on[p]) {
            self.pairs.change(j, r, true);
        }
        self.new_on[p].push(j);
        self.judge_new[j].push(p);
        self.load[j] = self.load[j].saturating_add(1);
    }

    pub(super) fn remove(&mut self, j: usize, p: usize) {
        if let Some(pos) = self.new_on[p].iter().position(|&x| x == j) {
            self.new_on[p].remove(pos);
            if let Some(pos) = self.judge_new[j].iter().position(|&x| x == p) {
                self.judge_new[j].remove(pos);
            }
            self.load[j] = self.load[j].saturating_sub(1);
            for &r in self.p_exist_known[p].iter().chain(&self.new_on[p]) {
                self.pairs.change(j, r, false);
            }
        }
    }

    /// Co-reviews of `j` with the judges already on `p`.
    pub(super) fn co_sum(&self, j: usize, p: usize) -> u64 {
        self.p_exist_known[p]
            .iter()
            .chain(&self.new_on[p])
            .map(|&o| u64::from(self.pairs.get(j, o)))
            .sum()
    }

    pub(super) fn assigned(&self, p: usize) -> usize {
        self.p_existing[p].saturating_add(self.new_on[p].len())
    }

    /// Reviewers of `p` the planner knows (existing known judges and new ones).
    pub(super) fn reviewers(&self, p: usize) -> impl Iterator<Item = usize> + '_ {
        self.p_exist_known[p].iter().chain(&self.new_on[p]).copied()
    }

    pub(super) fn components(&self) -> Comps {
        let nj = self.j_id.len();
        let base_p = nj + self.n_unknown;
        let mut dsu = Dsu::new(base_p + self.p_id.len());
        let mut has_edge = vec![false; base_p + self.p_id.len()];
        for p in 0..self.p_id.len() {
            let pn = base_p + p;
            let judges = self.p_exist_known[p]
                .iter()
                .chain(&self.new_on[p])
                .copied()
                .chain(self.p_exist_unknown[p].iter().map(|&u| nj + u));
            for jn in judges {
                dsu.union(jn, pn);
                has_edge[jn] = true;
                has_edge[pn] = true;
            }
        }
        let mut label: HashMap<usize, usize> = HashMap::new();
        let mut node_comp = vec![NONE; has_edge.len()];
        for (n, &h) in has_edge.iter().enumerate() {
            if h {
                let root = dsu.find(n);
                let next = label.len();
                node_comp[n] = *label.entry(root).or_insert(next);
            }
        }
        Comps {
            count: label.len(),
            judge: node_comp[..nj].to_vec(),
            project: node_comp[base_p..].to_vec(),
            bridges: HashSet::new(),
            degree: Vec::new(),
        }
    }

    /// Components plus the bridges among new edges (iterative Tarjan) and judge degrees.
    pub(super) fn analyze(&self) -> Comps {
        let mut comps = self.components();
        let nj = self.j_id.len();
        let base_p = nj + self.n_unknown;
        let n = base_p + self.p_id.len();
        // Edge list: (judge node, project, is new).
        let mut edges: Vec<(usize, usize, bool)> = Vec::new();
        for p in 0..self.p_id.len() {
            edges.extend(self.p_exist_known[p].iter().map(|&j| (j, p, false)));
            edges.extend(self.p_exist_unknown[p].iter().map(|&u| (nj + u, p, false)));
            edges.extend(self.new_on[p].iter().map(|&j| (j, p, true)));
        }
        let mut adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
        for (e, &(j, p, _)) in edges.iter().enumerate() {
            adj[j].push((base_p + p, e));
            adj[base_p + p].push((j, e));
        }
        comps.degree = adj[..nj].iter().map(Vec::len).collect();
        let mut disc = vec![0usize; n];
        let mut low = vec![0usize; n];
        let mut timer = 1;
        let mut stack: Vec<(usize, usize, usize)> = Vec::new();
        for s in 0..n {
            if disc[s] != 0 || adj[s].is_empty() {
                continue;
            }
            disc[s] = timer;
            low[s] = timer;
            timer += 1;
            stack.push((s, NONE, 0));
            while let Some(top) = stack.last_mut() {
                let (u, parent_edge, i) = *top;
                if let Some(&(v, e)) = adj[u].get(i) {
                    top.2 += 1;
                    if e == parent_edge {
                        continue;
                    }
                    if disc[v] == 0 {
                        disc[v] = timer;
                        low[v] = timer;
                        timer += 1;
                        stack.push((v, e, 0));
                    } else {
                        low[u] = low[u].min(disc[v]);
                    }
                } else {
                    stack.pop();
                    if let Some(&(parent, _, _)) = stack.last() {
                        low[parent] = low[parent].min(low[u]);
                        if low[u] > disc[parent]
                            && let Some(&(j, p, true)) = edges.get(parent_edge)
                        {
                            comps.bridges.insert((j, p));
                        }
                    }
                }
            }
        }
        comps
    }
}
