//! Judge-assignment planner behind `autoAssign(event, k, maxLoad, seed, apply)`.
//!
//! A pure function of its inputs: no I/O, no clock, no global randomness. The caller
//! gathers the event's submitted, non-duplicate projects and its judges, calls [`plan`],
//! and either shows the [`Plan`] (dry run) or writes its `edges` as new assignments.
//!
//! # Algorithm
//!
//! The problem is a bipartite b-matching: every project wants `k` reviews (existing ones
//! count), every judge has a capacity `max_load - load`, and a (judge, project) pair is
//! usable once if the judge is eligible (track covered, not on the team, not recused,
//! not already assigned). Existing assignments are fixed; only new ones are ever moved.
//! The planner runs six phases:
//!
//! 1. **Level fill.** Passes over the projects, most constrained first (fewest eligible
//!    judges, then id); each pass gives one more review to every project at the lowest
//!    review count, so when capacity is scarce every project gets its first review
//!    before any gets its second. A review goes to the eligible judge with room that
//!    has the lowest load; ties go to the judge who has co-reviewed least with the
//!    project's current reviewers (spread), then to the seeded judge order.
//! 2. **Augmenting paths.** When no eligible judge has room, a BFS over alternating
//!    paths (project → eligible judge → a project that judge was newly given → another
//!    eligible judge → …) looks for a judge with room and shifts assignments along the
//!    path (counts change only at the ends). A project whose search fails can never be
//!    helped later, and neither can any judge its search reached (all full, and closed
//!    under the search), so those judges are pruned from later searches. The result is
//!    a maximum flow: no project is short if any set of assignments could fix it.
//! 3. **Load balancing.** Top load level first, a multi-source BFS from the judges at
//!    level `L` looks for an alternating path to a judge with load `≤ L - 2` and room,
//!    and moves one review along it (loads change only at the ends). When no such path
//!    exists for any level the loads are an optimal semi-matching: the maximum load is
//!    minimal and two judges who could take each other's work differ by at most one.
//! 4. **Spread.** A local search that keeps every project's count and the multiset of
//!    loads (so the balance) unchanged: swap the judges of two new edges, or hand a
//!    review to a judge exactly one below. It lowers the sum of cubed co-review counts
//!    over judge pairs, hottest pairs first, within a fixed work budget.
//! 5. **Connectivity.** While the judge–project graph (existing + new edges) has several
//!    components: swap the judges of two new edges in different components, at least
//!    one of them not a bridge (loads unchanged); else redirect a new edge to a judge
//!    of another component who is less loaded (then: equally loaded, ending at most one
//!    above the balanced maximum); else, if an eligible judge of another component has
//!    room under `max_load`, add one bridging review by the least-loaded such judge
//!    (that project gets more than `k`). Every change is verified to lower the
//!    component count; whatever is left is reported honestly in [`Plan::components`].
//! 6. **Report.** Coverage per project with a reason for every shortfall, loads, and the
//!    component count.
//!
//! Determinism: inputs are sorted and de-duplicated by id first, so input order never
//! matters; the seed only shuffles the judge order once (SplitMix64), which breaks ties.
//! Idempotence: planning again with the plan applied (existing = old + new, loads
//! updated) adds nothing: the fill leaves no augmenting path, only new edges are ever
//! moved, and a bridge is only added while one exists, which depends only on loads and
//! edges that are then the same.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use serde::{Deserialize, Serialize};

/// A project to be reviewed: one submitted, non-duplicate project of the event.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanProject {
    /// Project id.
    pub id: String,
    /// Id of the track the project is entered in.
    pub track: String,
    /// Id of the team that submitted the project.
    pub team: String,
    /// Judge ids already assigned to this project (any status except recused). They count
    /// toward `k` and are never assigned again.
    #[serde(default)]
    pub existing: Vec<String>,
}

/// A judge of the event.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanJudge {
    /// Judge (user) id.
    pub id: String,
    /// Track ids the judge covers; empty means any track.
    #[serde(default)]
    pub tracks: Vec<String>,
    /// Teams the judge is a member of (normally empty); never assigned to their projects.
    #[serde(default)]
    pub team_ids: Vec<String>,
    /// Teams the judge is recused from; never assigned to their projects.
    #[serde(default)]
    pub recused_teams: Vec<String>,
    /// Current assignment count (existing assignments included).
    #[serde(default)]
    pub load: usize,
}

/// How well one project is covered after the plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectCoverage {
    /// Project id.
    pub project: String,
    /// Reviews after the plan: existing plus new.
    pub assigned: usize,
    /// The requested reviews per project (`k`).
    pub target: usize,
    /// How many reviews short of `target` the project is (0 when reached).
    pub shortfall: usize,
    /// Why the target could not be reached; `None` when there is no shortfall.
    pub reason: Option<String>,
}

/// The result of [`plan`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// New assignments only, as `(judge_id, project_id)`, sorted by project then judge.
    pub edges: Vec<(String, String)>,
    /// One entry per project, sorted by project id.
    pub coverage: Vec<ProjectCoverage>,
    /// `(judge_id, total load after the plan)` for every judge, sorted by judge id.
    pub loads: Vec<(String, usize)>,
    /// Connected components of the judge–project graph (existing + new edges), counting
    /// only projects with at least one review and judges with at least one assignment.
    pub components: usize,
    /// `components <= 1`: every judge's severity can be compared with every other's.
    pub connected: bool,
}

impl Plan {
    /// Total reviews still missing over all projects.
    pub fn total_shortfall(&self) -> usize {
        self.coverage
            .iter()
            .fold(0usize, |acc, c| acc.saturating_add(c.shortfall))
    }
}

/// Plans new judge assignments for one event.
///
/// * `projects`: the event's submitted, non-duplicate projects with their existing judges.
/// * `judges`: the event's judges with their tracks, conflicts and current loads.
/// * `k`: target reviews per project (existing reviews count).
/// * `max_load`: maximum total assignments per judge (existing ones count), if any.
/// * `seed`: breaks ties only; the same inputs and seed always give the same plan.
///
/// Never fails and never panics: what cannot be reached is reported per project in
/// [`Plan::coverage`]. Duplicate ids are merged (projects: smallest track/team, union of
/// existing; judges: union of tracks and conflicts, any-track if one entry says so,
/// largest load). Existing judge ids that are not in `judges` still count toward `k` and
/// toward the component count.
pub fn plan(
    projects: &[PlanProject],
    judges: &[PlanJudge],
    k: usize,
    max_load: Option<usize>,
    seed: u64,
) -> Plan {
    let mut planner = Planner::new(projects, judges, k, max_load, seed);
    planner.fill();
    planner.balance();
    planner.spread();
    planner.connect();
    planner.finish()
}

/// SplitMix64: a tiny, well-mixed, seedable generator (Steele, Lea & Flood, 2014).
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform-enough integer in `0..n` (`n > 0`), by multiply-shift.
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// Marker for "no parent" in the BFS trees.
const NONE: usize = usize::MAX;
/// Candidate changes verified (by recounting components) per connectivity attempt.
const MAX_VERIFY: usize = 256;
/// Inner-loop work budget per connectivity attempt.
const MAX_SCAN: usize = 4_000_000;
/// Pair-count look-ups the spread phase may spend.
const SPREAD_WORK: usize = 24_000_000;
/// Judge counts up to this use a dense co-review matrix.
const DENSE_PAIRS: usize = 2048;

/// A judge after merging duplicates.
struct NormJudge {
    id: String,
    any: bool,
    tracks: Vec<String>,
    /// Teams the judge may not review: member of or recused from, sorted.
    blocked: Vec<String>,
    load: usize,
}

/// A project after merging duplicates.
struct NormProject {
    id: String,
    track: String,
    team: String,
    existing: Vec<String>,
}

fn sort_dedup(v: &mut Vec<String>) {
    v.sort();
    v.dedup();
}

fn normalize_projects(projects: &[PlanProject]) -> Vec<NormProject> {
    let mut map: BTreeMap<&str, NormProject> = BTreeMap::new();
    for p in projects {
        match map.get_mut(p.id.as_str()) {
            Some(n) => {
                if (p.track.as_str(), p.team.as_str()) < (n.track.as_str(), n.team.as_str()) {
                    n.track = p.track.clone();
                    n.team = p.team.clone();
                }
                n.existing.extend(p.existing.iter().cloned());
            }
            None => {
                map.insert(
                    p.id.as_str(),
                    NormProject {
                        id: p.id.clone(),
                        track: p.track.clone(),
                        team: p.team.clone(),
                        existing: p.existing.clone(),
                    },
                );
            }
        }
    }
    let mut out: Vec<NormProject> = map.into_values().collect();
    for p in &mut out {
        sort_dedup(&mut p.existing);
    }
    out
}

fn normalize_judges(judges: &[PlanJudge]) -> Vec<NormJudge> {
    let mut map: BTreeMap<&str, NormJudge> = BTreeMap::new();
    for j in judges {
        let n = map.entry(j.id.as_str()).or_insert_with(|| NormJudge {
            id: j.id.clone(),
            any: false,
            tracks: Vec::new(),
            blocked: Vec::new(),
            load: 0,
        });
        n.any |= j.tracks.is_empty();
        n.tracks.extend(j.tracks.iter().cloned());
        n.blocked.extend(j.team_ids.iter().cloned());
        n.blocked.extend(j.recused_teams.iter().cloned());
        n.load = n.load.max(j.load);
    }
    let mut out: Vec<NormJudge> = map.into_values().collect();
    for j in &mut out {
        sort_dedup(&mut j.tracks);
        sort_dedup(&mut j.blocked);
    }
    out
}

/// How many projects each pair of judges shares (existing + planned), kept exact.
enum Pairs {
    Dense { n: usize, counts: Vec<u32> },
    Sparse(HashMap<(usize, usize), u32>),
}

impl Pairs {
    fn new(n: usize) -> Self {
        if n <= DENSE_PAIRS {
            Pairs::Dense {
                n,
                counts: vec![0; n * n],
            }
        } else {
            Pairs::Sparse(HashMap::new())
        }
    }

    fn get(&self, a: usize, b: usize) -> u32 {
        match self {
            Pairs::Dense { n, counts } => counts.get(a * n + b).copied().unwrap_or(0),
            Pairs::Sparse(m) => m.get(&(a.min(b), a.max(b))).copied().unwrap_or(0),
        }
    }

    /// Records one more (`up`) or one fewer shared project for `a` and `b`.
    fn change(&mut self, a: usize, b: usize, up: bool) {
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
struct Comps {
    count: usize,
    /// Component of each judge, `NONE` when the judge has no edge.
    judge: Vec<usize>,
    /// Component of each project, `NONE` when the project has no edge.
    project: Vec<usize>,
    /// New edges `(judge, project)` whose removal would split their component.
    bridges: HashSet<(usize, usize)>,
    /// Edges (existing + new) of each judge.
    degree: Vec<usize>,
}

/// Union–find with path halving and union by size.
struct Dsu {
    parent: Vec<usize>,
    size: Vec<usize>,
}

impl Dsu {
    fn new(n: usize) -> Self {
        Dsu {
            parent: (0..n).collect(),
            size: vec![1; n],
        }
    }

    fn find(&mut self, mut x: usize) -> usize {
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

    fn union(&mut self, a: usize, b: usize) {
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

/// Reusable BFS bookkeeping; `stamp` avoids clearing the arrays between searches.
struct Scratch {
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
    fn new(nj: usize, np: usize) -> Self {
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

struct Planner {
    k: usize,
    max_load: Option<usize>,
    // Projects, in id order.
    p_id: Vec<String>,
    p_track: Vec<String>,
    /// Distinct existing judge ids per project (known or not).
    p_existing: Vec<usize>,
    /// Existing judges that are in the judge list, sorted by internal index.
    p_exist_known: Vec<Vec<usize>>,
    /// Existing judges that are not in the judge list (indices into an id table).
    p_exist_unknown: Vec<Vec<usize>>,
    n_unknown: usize,
    /// Judges eligible for a new assignment, ascending internal index.
    elig: Vec<Vec<usize>>,
    /// New reviews each project still wants.
    need: Vec<usize>,
    /// Visiting order: most constrained first.
    order: Vec<usize>,
    // Judges, in seeded order (the internal index is the tie-break rank).
    j_id: Vec<String>,
    load: Vec<usize>,
    cap: Vec<usize>,
    /// Projects each judge is eligible for, ascending.
    j_elig: Vec<Vec<usize>>,
    // The plan being built.
    new_on: Vec<Vec<usize>>,
    judge_new: Vec<Vec<usize>>,
    pairs: Pairs,
    /// Judges that no augmenting path can pass usefully.
    dead: Vec<bool>,
    /// Reviews placed by an augmenting path rather than directly (for tests).
    augmented: usize,
    scratch: Scratch,
}

impl Planner {
    fn new(
        projects: &[PlanProject],
        judges: &[PlanJudge],
        k: usize,
        max_load: Option<usize>,
        seed: u64,
    ) -> Self {
        let projects = normalize_projects(projects);
        let mut judges = normalize_judges(judges);

        // Seeded judge order: sorted by id, then one Fisher–Yates shuffle.
        let mut rng = SplitMix64(seed);
        for i in (1..judges.len()).rev() {
            let r = rng.below(i + 1);
            judges.swap(i, r);
        }
        let nj = judges.len();
        let np = projects.len();
        let index: HashMap<&str, usize> = judges
            .iter()
            .enumerate()
            .map(|(i, j)| (j.id.as_str(), i))
            .collect();

        // Judges covering each project track, ascending index.
        let mut by_track: BTreeMap<&str, Vec<usize>> = projects
            .iter()
            .map(|p| (p.track.as_str(), Vec::new()))
            .collect();
        for (i, j) in judges.iter().enumerate() {
            if j.any {
                for list in by_track.values_mut() {
                    list.push(i);
                }
            } else {
                for t in &j.tracks {
                    if let Some(list) = by_track.get_mut(t.as_str()) {
                        list.push(i);
                    }
                }
            }
        }

        let mut unknown: BTreeMap<&str, usize> = BTreeMap::new();
        let mut p_existing = Vec::with_capacity(np);
        let mut p_exist_known = Vec::with_capacity(np);
        let mut p_exist_unknown = Vec::with_capacity(np);
        let mut elig = Vec::with_capacity(np);
        let mut j_elig = vec![Vec::new(); nj];
        for (pi, p) in projects.iter().enumerate() {
            let mut known = Vec::new();
            let mut unk = Vec::new();
            for e in &p.existing {
                match index.get(e.as_str()) {
                    Some(&j) => known.push(j),
                    None => {
                        let next = unknown.len();
                        unk.push(*unknown.entry(e.as_str()).or_insert(next));
                    }
                }
            }
            known.sort_unstable();
            let candidates = by_track.get(p.track.as_str()).map_or(&[][..], |v| v);
            let list: Vec<usize> = candidates
                .iter()
                .copied()
                .filter(|&j| {
                    known.binary_search(&j).is_err()
                        && judges.get(j).is_some_and(|jd| {
                            jd.blocked
                                .binary_search_by(|b| b.as_str().cmp(p.team.as_str()))
                                .is_err()
                        })
                })
                .collect();
            for &j in &list {
                j_elig[j].push(pi);
            }
            p_existing.push(p.existing.len());
            p_exist_known.push(known);
            p_exist_unknown.push(unk);
            elig.push(list);
        }

        let n_unknown = unknown.len();
        let need: Vec<usize> = p_existing.iter().map(|&e| k.saturating_sub(e)).collect();
        let mut order: Vec<usize> = (0..np).collect();
        order.sort_by_key(|&p| (elig[p].len(), p));

        let load: Vec<usize> = judges.iter().map(|j| j.load).collect();
        let cap = vec![max_load.unwrap_or(usize::MAX); nj];
        let mut pairs = Pairs::new(nj);
        for known in &p_exist_known {
            for (a, &x) in known.iter().enumerate() {
                for &y in &known[a + 1..] {
                    pairs.change(x, y, true);
                }
            }
        }

        Planner {
            k,
            max_load,
            p_id: projects.iter().map(|p| p.id.clone()).collect(),
            p_track: projects.into_iter().map(|p| p.track).collect(),
            p_existing,
            p_exist_known,
            p_exist_unknown,
            n_unknown,
            elig,
            need,
            order,
            j_id: judges.into_iter().map(|j| j.id).collect(),
            load,
            cap,
            j_elig,
            new_on: vec![Vec::new(); np],
            judge_new: vec![Vec::new(); nj],
            pairs,
            dead: vec![false; nj],
            augmented: 0,
            scratch: Scratch::new(nj, np),
        }
    }

    fn room(&self, j: usize) -> bool {
        self.load[j] < self.cap[j]
    }

    fn is_new(&self, j: usize, p: usize) -> bool {
        self.new_on[p].contains(&j)
    }

    fn eligible(&self, j: usize, p: usize) -> bool {
        self.elig[p].binary_search(&j).is_ok()
    }

    fn add(&mut self, j: usize, p: usize) {
        for &r in self.p_exist_known[p].iter().chain(&self.new_on[p]) {
            self.pairs.change(j, r, true);
        }
        self.new_on[p].push(j);
        self.judge_new[j].push(p);
        self.load[j] = self.load[j].saturating_add(1);
    }

    fn remove(&mut self, j: usize, p: usize) {
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
    fn co_sum(&self, j: usize, p: usize) -> u64 {
        self.p_exist_known[p]
            .iter()
            .chain(&self.new_on[p])
            .map(|&o| u64::from(self.pairs.get(j, o)))
            .sum()
    }

    fn assigned(&self, p: usize) -> usize {
        self.p_existing[p].saturating_add(self.new_on[p].len())
    }

    /// Phases 1–2: fill level by level. Each pass gives one more review to every project
    /// at the lowest review count (most constrained first), so scarce capacity is shared
    /// evenly; a project that no augmenting path can help is done for good.
    fn fill(&mut self) {
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
    fn balance(&mut self) {
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

    /// Reviewers of `p` the planner knows (existing known judges and new ones).
    fn reviewers(&self, p: usize) -> impl Iterator<Item = usize> + '_ {
        self.p_exist_known[p].iter().chain(&self.new_on[p]).copied()
    }

    /// Phase 4: spread. Load-neutral local search lowering the sum of cubed co-review
    /// counts (cubes weigh the most-shared pairs far above the rest): swap the judges of two new edges, or hand a review to a judge exactly one
    /// below (the multiset of loads, and so the balance, is unchanged). The most shared
    /// pairs are worked on first; first improvement, within a work budget.
    fn spread(&mut self) {
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

    fn components(&self) -> Comps {
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
    fn analyze(&self) -> Comps {
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

    /// Phase 5: join components without losing coverage.
    fn connect(&mut self) {
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

    fn shortfall_reason(&self, p: usize, shortfall: usize) -> Option<String> {
        if shortfall == 0 {
            return None;
        }
        let possible = self.p_existing[p].saturating_add(self.elig[p].len());
        let blocked = self.elig[p].len().saturating_sub(self.new_on[p].len());
        let judges = |n: usize| if n == 1 { "judge" } else { "judges" };
        let at_max = match self.max_load {
            Some(m) => format!("at max load ({m})"),
            None => "unavailable".to_string(),
        };
        let mut reason = if possible == 0 {
            format!("no eligible judges for track \"{}\"", self.p_track[p])
        } else if possible < self.k {
            format!("only {possible} eligible {}", judges(possible))
        } else {
            format!("{blocked} eligible {} {at_max}", judges(blocked))
        };
        if possible > 0 && possible < self.k && blocked > 0 {
            reason.push_str(&format!(", {blocked} of them {at_max}"));
        }
        Some(reason)
    }

    /// Phase 6: the report.
    fn finish(self) -> Plan {
        let mut edges = Vec::new();
        let mut coverage = Vec::with_capacity(self.p_id.len());
        for p in 0..self.p_id.len() {
            let mut js: Vec<&String> = self.new_on[p].iter().map(|&j| &self.j_id[j]).collect();
            js.sort();
            for j in js {
                edges.push((j.clone(), self.p_id[p].clone()));
            }
            let assigned = self.p_existing[p].saturating_add(self.new_on[p].len());
            let shortfall = self.k.saturating_sub(assigned);
            coverage.push(ProjectCoverage {
                project: self.p_id[p].clone(),
                assigned,
                target: self.k,
                shortfall,
                reason: self.shortfall_reason(p, shortfall),
            });
        }
        let mut loads: Vec<(String, usize)> = self
            .j_id
            .iter()
            .cloned()
            .zip(self.load.iter().copied())
            .collect();
        loads.sort();
        let components = self.components().count;
        Plan {
            edges,
            coverage,
            loads,
            components,
            connected: components <= 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeSet, HashSet};
    use std::time::Instant;

    fn strs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn proj(id: &str, track: &str, team: &str, existing: &[&str]) -> PlanProject {
        PlanProject {
            id: id.into(),
            track: track.into(),
            team: team.into(),
            existing: strs(existing),
        }
    }

    fn judge(id: &str, tracks: &[&str], load: usize) -> PlanJudge {
        PlanJudge {
            id: id.into(),
            tracks: strs(tracks),
            team_ids: vec![],
            recused_teams: vec![],
            load,
        }
    }

    /// The inputs as they would be after writing the plan's edges.
    fn apply(
        projects: &[PlanProject],
        judges: &[PlanJudge],
        plan: &Plan,
    ) -> (Vec<PlanProject>, Vec<PlanJudge>) {
        let mut projects = projects.to_vec();
        let mut judges = judges.to_vec();
        for (j, p) in &plan.edges {
            if let Some(pp) = projects.iter_mut().find(|x| &x.id == p) {
                pp.existing.push(j.clone());
            }
            if let Some(jj) = judges.iter_mut().find(|x| &x.id == j) {
                jj.load += 1;
            }
        }
        (projects, judges)
    }

    /// Reference eligibility, written independently of the planner (unique ids assumed).
    fn eligible_ref(j: &PlanJudge, p: &PlanProject) -> bool {
        (j.tracks.is_empty() || j.tracks.contains(&p.track))
            && !j.team_ids.contains(&p.team)
            && !j.recused_teams.contains(&p.team)
            && !p.existing.contains(&j.id)
    }

    fn distinct_existing(p: &PlanProject) -> usize {
        p.existing.iter().collect::<BTreeSet<_>>().len()
    }

    /// Maximum number of useful new reviews (Edmonds–Karp on a dense matrix).
    fn max_new_reviews(
        projects: &[PlanProject],
        judges: &[PlanJudge],
        k: usize,
        max_load: Option<usize>,
    ) -> usize {
        let (np, nj) = (projects.len(), judges.len());
        let n = np + nj + 2;
        let (s, t) = (0, n - 1);
        let mut cap = vec![vec![0i64; n]; n];
        let big = (np * k.min(1000) + 1) as i64;
        for (pi, p) in projects.iter().enumerate() {
            cap[s][1 + pi] = k.saturating_sub(distinct_existing(p)).min(1000) as i64;
            for (ji, j) in judges.iter().enumerate() {
                if eligible_ref(j, p) {
                    cap[1 + pi][1 + np + ji] = 1;
                }
            }
        }
        for (ji, j) in judges.iter().enumerate() {
            cap[1 + np + ji][t] = max_load.map_or(big, |m| m.saturating_sub(j.load) as i64);
        }
        let mut flow = 0;
        loop {
            let mut prev = vec![usize::MAX; n];
            prev[s] = s;
            let mut q = VecDeque::from([s]);
            while let Some(u) = q.pop_front() {
                for v in 0..n {
                    if prev[v] == usize::MAX && cap[u][v] > 0 {
                        prev[v] = u;
                        q.push_back(v);
                    }
                }
            }
            if prev[t] == usize::MAX {
                return flow;
            }
            let mut v = t;
            while v != s {
                let u = prev[v];
                cap[u][v] -= 1;
                cap[v][u] += 1;
                v = u;
            }
            flow += 1;
        }
    }

    fn components_ref(projects: &[PlanProject], plan: &Plan) -> usize {
        let mut edges: Vec<(String, String)> = plan.edges.clone();
        for p in projects {
            for j in &p.existing {
                edges.push((j.clone(), p.id.clone()));
            }
        }
        let mut adj: HashMap<String, Vec<String>> = HashMap::new();
        for (j, p) in &edges {
            let (j, p) = (format!("j:{j}"), format!("p:{p}"));
            adj.entry(j.clone()).or_default().push(p.clone());
            adj.entry(p).or_default().push(j);
        }
        let mut seen = HashSet::new();
        let mut count = 0;
        let mut nodes: Vec<&String> = adj.keys().collect();
        nodes.sort();
        for start in nodes {
            if !seen.insert(start.clone()) {
                continue;
            }
            count += 1;
            let mut stack = vec![start.clone()];
            while let Some(u) = stack.pop() {
                for v in &adj[&u] {
                    if seen.insert(v.clone()) {
                        stack.push(v.clone());
                    }
                }
            }
        }
        count
    }

    /// Most projects any one pair of judges shares (existing + new).
    fn max_pair_overlap(projects: &[PlanProject], plan: &Plan) -> usize {
        let mut on: HashMap<&str, Vec<&str>> = HashMap::new();
        for p in projects {
            for j in &p.existing {
                on.entry(p.id.as_str()).or_default().push(j.as_str());
            }
        }
        for (j, p) in &plan.edges {
            on.entry(p.as_str()).or_default().push(j.as_str());
        }
        let mut pairs: HashMap<(&str, &str), usize> = HashMap::new();
        for js in on.values() {
            for a in js {
                for b in js {
                    if a < b {
                        *pairs.entry((*a, *b)).or_default() += 1;
                    }
                }
            }
        }
        pairs.values().copied().max().unwrap_or(0)
    }

    /// Every invariant of a plan, checked against the inputs (unique ids assumed).
    fn check(
        projects: &[PlanProject],
        judges: &[PlanJudge],
        k: usize,
        max_load: Option<usize>,
        plan: &Plan,
        check_max_flow: bool,
    ) {
        // Edges: sorted by (project, judge), unique, eligible, new.
        let mut sorted = plan.edges.clone();
        sorted.sort_by(|a, b| (&a.1, &a.0).cmp(&(&b.1, &b.0)));
        sorted.dedup();
        assert_eq!(
            sorted, plan.edges,
            "edges sorted by (project, judge), unique"
        );
        let pj: HashMap<&str, &PlanProject> = projects.iter().map(|p| (p.id.as_str(), p)).collect();
        let jj: HashMap<&str, &PlanJudge> = judges.iter().map(|j| (j.id.as_str(), j)).collect();
        let mut new_per_judge: HashMap<&str, usize> = HashMap::new();
        let mut new_per_project: HashMap<&str, usize> = HashMap::new();
        for (j, p) in &plan.edges {
            let (jd, pd) = (jj[j.as_str()], pj[p.as_str()]);
            assert!(eligible_ref(jd, pd), "{j} is not eligible for {p}");
            *new_per_judge.entry(j).or_default() += 1;
            *new_per_project.entry(p).or_default() += 1;
        }
        // Loads.
        let mut expect_loads: Vec<(String, usize)> = judges
            .iter()
            .map(|j| {
                let n = new_per_judge.get(j.id.as_str()).copied().unwrap_or(0);
                (j.id.clone(), j.load + n)
            })
            .collect();
        expect_loads.sort();
        assert_eq!(plan.loads, expect_loads);
        if let Some(m) = max_load {
            for j in judges {
                if new_per_judge.contains_key(j.id.as_str()) {
                    assert!(
                        j.load + new_per_judge[j.id.as_str()] <= m,
                        "{} over max",
                        j.id
                    );
                }
            }
        }
        // Coverage.
        let mut ids: Vec<&str> = projects.iter().map(|p| p.id.as_str()).collect();
        ids.sort();
        assert_eq!(
            plan.coverage
                .iter()
                .map(|c| c.project.as_str())
                .collect::<Vec<_>>(),
            ids
        );
        let mut useful = 0;
        for c in &plan.coverage {
            let p = pj[c.project.as_str()];
            let new = new_per_project.get(p.id.as_str()).copied().unwrap_or(0);
            assert_eq!(c.assigned, distinct_existing(p) + new);
            assert_eq!(c.target, k);
            assert_eq!(c.shortfall, k.saturating_sub(c.assigned));
            assert_eq!(c.reason.is_some(), c.shortfall > 0, "{c:?}");
            useful += new.min(k.saturating_sub(distinct_existing(p)));
        }
        if check_max_flow {
            assert_eq!(
                useful,
                max_new_reviews(projects, judges, k, max_load),
                "coverage is a maximum flow"
            );
        }
        assert_eq!(plan.components, components_ref(projects, plan));
        assert_eq!(plan.connected, plan.components <= 1);
    }

    fn replan_adds_nothing(
        projects: &[PlanProject],
        judges: &[PlanJudge],
        k: usize,
        max_load: Option<usize>,
        seed: u64,
        first: &Plan,
    ) {
        let (p2, j2) = apply(projects, judges, first);
        for s in [seed, seed ^ 0xDEAD_BEEF] {
            let again = plan(&p2, &j2, k, max_load, s);
            assert!(again.edges.is_empty(), "re-plan added {:?}", again.edges);
            assert_eq!(again.loads, first.loads);
            assert_eq!(again.components, first.components);
            assert_eq!(
                again
                    .coverage
                    .iter()
                    .map(|c| c.assigned)
                    .collect::<Vec<_>>(),
                first
                    .coverage
                    .iter()
                    .map(|c| c.assigned)
                    .collect::<Vec<_>>()
            );
        }
    }

    /// The event from the brief: 60 projects over 6 tracks; 24 judges, half covering two
    /// tracks, half any track.
    fn realistic() -> (Vec<PlanProject>, Vec<PlanJudge>) {
        let projects = (0..60)
            .map(|i| {
                proj(
                    &format!("p{i:02}"),
                    &format!("t{}", i % 6),
                    &format!("team{i}"),
                    &[],
                )
            })
            .collect();
        let mut judges: Vec<PlanJudge> = (0..24)
            .map(|i| {
                if i < 12 {
                    let (a, b) = (format!("t{}", i % 6), format!("t{}", (i + 1) % 6));
                    judge(&format!("j{i:02}"), &[&a, &b], 0)
                } else {
                    judge(&format!("j{i:02}"), &[], 0)
                }
            })
            .collect();
        // A mentor who is also on a team, and two recusals.
        judges[3].team_ids = strs(&["team7"]);
        judges[15].recused_teams = strs(&["team8", "team20"]);
        (projects, judges)
    }

    fn shuffle<T>(rng: &mut SplitMix64, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let r = rng.below(i + 1);
            v.swap(i, r);
        }
    }

    fn load_of(plan: &Plan, id: &str) -> usize {
        plan.loads
            .iter()
            .find(|(j, _)| j == id)
            .map_or(usize::MAX, |(_, l)| *l)
    }

    #[test]
    fn realistic_event_is_covered_balanced_and_connected() {
        let (projects, judges) = realistic();
        let plan = plan(&projects, &judges, 4, None, 42);
        check(&projects, &judges, 4, None, &plan, true);
        assert!(
            plan.coverage
                .iter()
                .all(|c| c.assigned == 4 && c.reason.is_none())
        );
        assert_eq!(plan.edges.len(), 240);
        let any: Vec<usize> = (12..24)
            .map(|i| load_of(&plan, &format!("j{i:02}")))
            .collect();
        let all: Vec<usize> = plan.loads.iter().map(|(_, l)| *l).collect();
        let (amin, amax) = (any.iter().min(), any.iter().max());
        assert!(amax.zip(amin).is_some_and(|(a, b)| a - b <= 1), "{any:?}");
        // 240 reviews over 24 judges: the whole event balances to 10 each.
        assert!(all.iter().all(|&l| l == 10), "{all:?}");
        assert_eq!(plan.components, 1);
        assert!(plan.connected);
        let overlap = max_pair_overlap(&projects, &plan);
        println!("realistic: loads {all:?}, max pair overlap {overlap}");
        // 60 projects x 6 pairs = 360 pair slots over 276 pairs: an even spread is 1–2;
        // clumping (the same four judges on a track) would give 10.
        assert!(overlap <= 3, "max pair overlap {overlap}");
        replan_adds_nothing(&projects, &judges, 4, None, 42, &plan);
    }

    #[test]
    fn own_team_and_recused_judges_are_never_assigned() {
        let projects = vec![
            proj("a1", "t", "alpha", &[]),
            proj("a2", "t", "alpha", &[]),
            proj("b1", "t", "beta", &[]),
            proj("c1", "t", "gamma", &[]),
            proj("c2", "t", "gamma", &[]),
        ];
        let mut judges = vec![
            judge("member", &[], 0),
            judge("recused", &[], 0),
            judge("j1", &[], 0),
            judge("j2", &[], 0),
        ];
        judges[0].team_ids = strs(&["alpha"]);
        judges[1].recused_teams = strs(&["alpha", "beta"]);
        for seed in 0..20 {
            let plan = plan(&projects, &judges, 3, None, seed);
            check(&projects, &judges, 3, None, &plan, true);
            for (j, p) in &plan.edges {
                assert!(
                    !(j == "member" && p.starts_with('a')),
                    "{j} on own team {p}"
                );
                assert!(
                    !(j == "recused" && (p.starts_with('a') || p == "b1")),
                    "{j} {p}"
                );
            }
            // They still judge what they may judge, and the gap is explained.
            assert!(plan.edges.contains(&("member".into(), "c1".into())));
            assert!(plan.edges.contains(&("recused".into(), "c1".into())));
            let a1 = &plan.coverage[0];
            assert_eq!((a1.assigned, a1.shortfall), (2, 1));
            assert_eq!(a1.reason.as_deref(), Some("only 2 eligible judges"));
            let b1 = &plan.coverage[2];
            assert_eq!((b1.assigned, b1.shortfall), (3, 0));
        }
    }

    #[test]
    fn max_load_too_small_reports_shortfall_and_is_never_exceeded() {
        let projects: Vec<PlanProject> = (0..10)
            .map(|i| proj(&format!("p{i}"), "t", &format!("team{i}"), &[]))
            .collect();
        let mut judges = vec![judge("a", &[], 0), judge("b", &[], 1), judge("c", &[], 0)];
        judges.push(judge("busy", &[], 7)); // already over the limit
        let plan = plan(&projects, &judges, 3, Some(4), 9);
        check(&projects, &judges, 3, Some(4), &plan, true);
        // Capacity 4 + 3 + 4 = 11 of 30 wanted reviews.
        assert_eq!(plan.edges.len(), 11);
        assert_eq!(plan.total_shortfall(), 19);
        for (j, l) in &plan.loads {
            if j != "busy" {
                assert_eq!(*l, 4, "{j} filled to the limit");
            }
        }
        assert_eq!(load_of(&plan, "busy"), 7);
        for c in plan.coverage.iter().filter(|c| c.shortfall > 0) {
            let reason = c.reason.as_deref().unwrap_or("");
            assert!(reason.contains("at max load (4)"), "{reason}");
        }
        // Spread evenly: nobody gets 3 while someone gets 0 if it can be avoided.
        let assigned: Vec<usize> = plan.coverage.iter().map(|c| c.assigned).collect();
        assert!(assigned.iter().all(|&a| a >= 1), "{assigned:?}");
        replan_adds_nothing(&projects, &judges, 3, Some(4), 9, &plan);
    }

    #[test]
    fn thin_track_reports_shortfall_with_reason() {
        let mut projects: Vec<PlanProject> = (0..6)
            .map(|i| proj(&format!("web{i}"), "web", &format!("w{i}"), &[]))
            .collect();
        projects.extend((0..4).map(|i| proj(&format!("hw{i}"), "hw", &format!("h{i}"), &[])));
        let judges = vec![
            judge("hw-a", &["hw"], 0),
            judge("hw-b", &["hw", "web"], 0),
            judge("web-a", &["web"], 0),
            judge("web-b", &["web"], 0),
            judge("web-c", &["web"], 0),
        ];
        let plan = plan(&projects, &judges, 3, None, 1);
        check(&projects, &judges, 3, None, &plan, true);
        for c in &plan.coverage {
            if c.project.starts_with("hw") {
                assert_eq!((c.assigned, c.shortfall), (2, 1));
                assert_eq!(c.reason.as_deref(), Some("only 2 eligible judges"));
            } else {
                assert_eq!((c.assigned, c.shortfall, c.reason.as_deref()), (3, 0, None));
            }
        }
        // No judge covers a track at all.
        let lonely = vec![proj("x", "bio", "t", &[])];
        let p = super::plan(&lonely, &judges, 2, None, 1);
        assert_eq!(
            p.coverage[0].reason.as_deref(),
            Some("no eligible judges for track \"bio\"")
        );
        assert_eq!(p.components, 0);
        assert!(p.connected);
    }

    #[test]
    fn replanning_an_applied_plan_adds_nothing() {
        let (projects, judges) = realistic();
        for (k, max_load) in [(4, None), (4, Some(8)), (6, Some(11)), (30, None)] {
            let first = plan(&projects, &judges, k, max_load, 5);
            check(&projects, &judges, k, max_load, &first, true);
            replan_adds_nothing(&projects, &judges, k, max_load, 5, &first);
        }
    }

    #[test]
    fn deterministic_for_seed_and_independent_of_input_order() {
        let (projects, judges) = realistic();
        let a = plan(&projects, &judges, 4, Some(11), 77);
        let b = plan(&projects, &judges, 4, Some(11), 77);
        assert_eq!(a, b);
        // Shuffle every list with a different seed and plan again.
        let mut rng = SplitMix64(12345);
        let mut ps = projects.clone();
        shuffle(&mut rng, &mut ps);
        let mut js = judges.clone();
        shuffle(&mut rng, &mut js);
        for j in &mut js {
            j.tracks.reverse();
        }
        let c = plan(&ps, &js, 4, Some(11), 77);
        assert_eq!(a, c);
        // Another seed: a different but equally valid plan.
        let d = plan(&projects, &judges, 4, Some(11), 78);
        check(&projects, &judges, 4, Some(11), &d, true);
        assert_ne!(a.edges, d.edges, "the seed breaks ties");
        assert_eq!(a.total_shortfall(), d.total_shortfall());
        assert_eq!(d.components, 1);
    }

    /// Two tracks with their own judges; the only any-track judge is busier than all of
    /// them, so a greedy by load never gives it a review and the graph falls in two.
    #[test]
    fn planner_joins_components_that_greedy_leaves_apart() {
        let mut projects: Vec<PlanProject> = (0..4)
            .map(|i| proj(&format!("a{i}"), "A", &format!("ta{i}"), &[]))
            .collect();
        projects.extend((0..4).map(|i| proj(&format!("b{i}"), "B", &format!("tb{i}"), &[])));
        projects[0].existing = strs(&["x"]);
        let mut judges: Vec<PlanJudge> = ["a1", "a2", "a3"]
            .iter()
            .map(|id| judge(id, &["A"], 0))
            .collect();
        judges.extend(["b1", "b2", "b3"].iter().map(|id| judge(id, &["B"], 0)));
        // Equally loaded: a redirect (no extra review) joins the two halves.
        judges.push(judge("x", &[], 3));
        // Greedy alone really leaves two components.
        let mut greedy = Planner::new(&projects, &judges, 2, None, 3);
        greedy.fill();
        greedy.balance();
        assert_eq!(greedy.components().count, 2);

        let plan = plan(&projects, &judges, 2, None, 3);
        check(&projects, &judges, 2, None, &plan, true);
        assert_eq!(plan.components, 1);
        assert!(plan.coverage.iter().all(|c| c.assigned == 2));
        assert!(
            plan.edges
                .iter()
                .any(|(j, p)| j == "x" && p.starts_with('b'))
        );
        replan_adds_nothing(&projects, &judges, 2, None, 3, &plan);

        // Much busier: only an extra (bridging) review joins them, within max_load.
        judges.last_mut().into_iter().for_each(|x| x.load = 6);
        let plan = super::plan(&projects, &judges, 2, Some(7), 3);
        check(&projects, &judges, 2, Some(7), &plan, true);
        assert_eq!(plan.components, 1);
        assert_eq!(plan.coverage.iter().filter(|c| c.assigned == 3).count(), 1);
        assert_eq!(load_of(&plan, "x"), 7);
        replan_adds_nothing(&projects, &judges, 2, Some(7), 3, &plan);

        // At max load it cannot be joined: reported, not hidden.
        let plan = super::plan(&projects, &judges, 2, Some(6), 3);
        check(&projects, &judges, 2, Some(6), &plan, true);
        assert_eq!(plan.components, 2);
        assert!(!plan.connected);
        replan_adds_nothing(&projects, &judges, 2, Some(6), 3, &plan);
    }

    #[test]
    fn swaps_and_bridges_join_components_when_possible() {
        // k = 1: p3 can only take j1, p4 only j2, so j1-p1-p3 and j2-p2-p4 are apart.
        let projects = vec![
            proj("p1", "t", "A", &["j1"]),
            proj("p2", "t", "B", &["j2"]),
            proj("p3", "t", "C", &[]),
            proj("p4", "t", "D", &[]),
        ];
        let mut judges = vec![judge("j1", &[], 1), judge("j2", &[], 1)];
        judges[0].recused_teams = strs(&["D"]);
        judges[1].recused_teams = strs(&["C"]);
        // Both judges full: nothing can join them; said so.
        let plan1 = plan(&projects, &judges, 1, Some(2), 0);
        check(&projects, &judges, 1, Some(2), &plan1, true);
        assert_eq!(plan1.components, 2);
        replan_adds_nothing(&projects, &judges, 1, Some(2), 0, &plan1);
        // Room for one more: a bridging review joins them.
        let plan2 = plan(&projects, &judges, 1, Some(3), 0);
        check(&projects, &judges, 1, Some(3), &plan2, true);
        assert_eq!(plan2.components, 1);
        assert_eq!(plan2.edges.len(), 3);
        replan_adds_nothing(&projects, &judges, 1, Some(3), 0, &plan2);

        // Every judge full after one new review each; q1 ⊆ {j1,j2,j3}, q2 ⊆ {j2,j3,j4}.
        let projects = vec![
            proj("p1", "t", "A", &["j1", "j2"]),
            proj("p2", "t", "B", &["j3", "j4"]),
            proj("q1", "t", "C", &[]),
            proj("q2", "t", "D", &[]),
        ];
        let mut judges: Vec<PlanJudge> = ["j1", "j2", "j3", "j4"]
            .iter()
            .map(|j| judge(j, &[], 1))
            .collect();
        judges[0].recused_teams = strs(&["D"]);
        judges[3].recused_teams = strs(&["C"]);
        // Start from the split assignment and let the connect phase work: only a swap
        // (j2 to q2, j3 to q1) can join, since nobody has room for a redirect or bridge.
        let mut pl = Planner::new(&projects, &judges, 2, Some(2), 0);
        let idx = |pl: &Planner, id: &str| pl.j_id.iter().position(|j| j == id).unwrap_or(NONE);
        let (j1, j2, j3, j4) = (
            idx(&pl, "j1"),
            idx(&pl, "j2"),
            idx(&pl, "j3"),
            idx(&pl, "j4"),
        );
        pl.add(j1, 2);
        pl.add(j2, 2);
        pl.add(j3, 3);
        pl.add(j4, 3);
        assert_eq!(pl.analyze().count, 2);
        pl.connect();
        assert_eq!(pl.components().count, 1);
        assert!(pl.load.iter().all(|&l| l == 2));
        assert_eq!((pl.new_on[2].len(), pl.new_on[3].len()), (2, 2));
        // The full planner gets there too.
        let out = plan(&projects, &judges, 2, Some(2), 0);
        check(&projects, &judges, 2, Some(2), &out, true);
        assert_eq!(out.components, 1);
        // With q1 only for {j1,j2} and q2 only for {j3,j4}, no swap exists: honest 2.
        judges[1].recused_teams = strs(&["D"]);
        judges[2].recused_teams = strs(&["C"]);
        let out = plan(&projects, &judges, 2, Some(2), 0);
        check(&projects, &judges, 2, Some(2), &out, true);
        assert_eq!(out.components, 2);
    }

    #[test]
    fn existing_assignments_count_toward_k_and_load() {
        let projects = vec![
            proj("p1", "t", "A", &["j1", "ghost"]), // ghost: not a judge any more
            proj("p2", "t", "B", &["j1", "j2", "j3"]),
            proj("p3", "t", "C", &["j2", "j2"]),
        ];
        let judges = vec![
            judge("j1", &[], 2),
            judge("j2", &[], 2),
            judge("j3", &[], 1),
            judge("j4", &[], 0),
        ];
        let plan = plan(&projects, &judges, 3, None, 4);
        check(&projects, &judges, 3, None, &plan, true);
        let new_on = |p: &str| plan.edges.iter().filter(|(_, q)| q == p).count();
        assert_eq!(new_on("p1"), 1);
        assert_eq!(new_on("p2"), 0);
        assert_eq!(new_on("p3"), 2);
        assert!(!plan.edges.contains(&("j1".into(), "p1".into())));
        assert!(plan.coverage.iter().all(|c| c.assigned == 3));
        // 3 new reviews go to the least loaded: j4 (0) and j3 (1) first.
        assert_eq!(load_of(&plan, "j4"), 2);
        assert_eq!(load_of(&plan, "j3"), 2);
        assert_eq!(load_of(&plan, "j1"), 2);
        // The ghost reviewer is a node of the graph too; everything is one component.
        assert_eq!(plan.components, 1);
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        let none = plan(&[], &[], 3, None, 0);
        assert_eq!((none.components, none.connected), (0, true));
        let p = vec![proj("p", "", "", &[]), proj("p", "", "", &["j"])];
        let j = vec![
            judge("j", &["x"], usize::MAX),
            judge("j", &[], 0),
            judge("", &[], 0),
        ];
        for k in [0, 1, 5, usize::MAX] {
            for m in [None, Some(0), Some(1), Some(usize::MAX)] {
                let out = plan(&p, &j, k, m, u64::MAX);
                assert_eq!(out.coverage.len(), 1);
                assert_eq!(out.loads.len(), 2);
                if k == 0 {
                    assert!(out.edges.is_empty());
                }
            }
        }
        // Duplicates merge: p has existing j, so only "" can be added.
        let out = plan(&p, &j, 2, None, 0);
        assert_eq!(out.edges, vec![(String::new(), "p".to_string())]);
        assert_eq!(load_of(&out, "j"), usize::MAX);
    }

    fn random_instance(
        rng: &mut SplitMix64,
    ) -> (Vec<PlanProject>, Vec<PlanJudge>, usize, Option<usize>) {
        let tracks = 1 + rng.below(4);
        let teams = 1 + rng.below(8);
        let nj = rng.below(10);
        let np = rng.below(20);
        let mut judges = Vec::new();
        for i in 0..nj {
            let mut j = judge(&format!("j{i}"), &[], rng.below(4));
            if rng.below(2) == 0 {
                for t in 0..tracks {
                    if rng.below(3) == 0 {
                        j.tracks.push(format!("t{t}"));
                    }
                }
            }
            if rng.below(6) == 0 {
                j.team_ids.push(format!("team{}", rng.below(teams)));
            }
            if rng.below(3) == 0 {
                j.recused_teams.push(format!("team{}", rng.below(teams)));
            }
            judges.push(j);
        }
        let mut projects = Vec::new();
        for i in 0..np {
            let mut p = proj(
                &format!("p{i}"),
                &format!("t{}", rng.below(tracks)),
                &format!("team{}", rng.below(teams)),
                &[],
            );
            for _ in 0..rng.below(3) {
                let e = rng.below(nj + 2);
                let id = if e < nj {
                    format!("j{e}")
                } else {
                    format!("gone{e}")
                };
                if !p.existing.contains(&id) {
                    p.existing.push(id);
                }
            }
            projects.push(p);
        }
        let k = rng.below(6);
        let max_load = if rng.below(2) == 0 {
            None
        } else {
            Some(rng.below(9))
        };
        (projects, judges, k, max_load)
    }

    /// Random small events: every invariant, maximum coverage against an independent
    /// max-flow, optimal balance (no improving move), idempotence, order independence.
    #[test]
    fn random_events_satisfy_all_invariants() {
        let mut rng = SplitMix64(2024);
        let mut greedy_short = 0;
        for case in 0..1500 {
            let (projects, judges, k, max_load) = random_instance(&mut rng);
            let seed = rng.next_u64();
            let out = plan(&projects, &judges, k, max_load, seed);
            check(&projects, &judges, k, max_load, &out, true);
            replan_adds_nothing(&projects, &judges, k, max_load, seed, &out);
            let mut rev_p = projects.clone();
            rev_p.reverse();
            let mut rev_j = judges.clone();
            rev_j.reverse();
            assert_eq!(out, plan(&rev_p, &rev_j, k, max_load, seed), "case {case}");

            // Phases 1-4 alone: no judge could hand a review to one two below it.
            let mut pl = Planner::new(&projects, &judges, k, max_load, seed);
            pl.fill();
            if pl.augmented > 0 {
                greedy_short += 1;
            }
            pl.balance();
            let mut before: Vec<usize> = pl.load.clone();
            let counts: Vec<usize> = pl.new_on.iter().map(Vec::len).collect();
            pl.spread();
            let mut after: Vec<usize> = pl.load.clone();
            before.sort_unstable();
            after.sort_unstable();
            assert_eq!(before, after, "case {case}: spread keeps the load multiset");
            assert_eq!(counts, pl.new_on.iter().map(Vec::len).collect::<Vec<_>>());
            for a in 0..pl.j_id.len() {
                for &q in &pl.judge_new[a] {
                    for &b in &pl.elig[q] {
                        if !pl.is_new(b, q) && pl.room(b) {
                            assert!(pl.load[a] <= pl.load[b] + 1, "case {case}: unbalanced");
                        }
                    }
                }
            }
            // Bridges agree with brute force: removing the edge disconnects its ends.
            let comps = pl.analyze();
            for p in 0..pl.p_id.len() {
                for x in pl.new_on[p].clone() {
                    pl.remove(x, p);
                    let after = pl.analyze();
                    let apart = after.judge[x] == NONE || after.judge[x] != after.project[p];
                    pl.add(x, p);
                    assert_eq!(comps.bridges.contains(&(x, p)), apart, "case {case}");
                }
            }
            // The connect phase never loses coverage or adds components.
            let counts: Vec<usize> = pl.new_on.iter().map(Vec::len).collect();
            pl.connect();
            assert!(pl.components().count <= comps.count);
            assert!(
                counts
                    .iter()
                    .zip(&pl.new_on)
                    .all(|(&c, now)| now.len() >= c)
            );
        }
        println!("cases where a direct pick was impossible and a path filled: {greedy_short}");
        assert!(greedy_short > 0, "augmenting paths are exercised");
    }

    fn scale_instance() -> (Vec<PlanProject>, Vec<PlanJudge>) {
        let mut rng = SplitMix64(7);
        let tracks = 12;
        let projects = (0..2000)
            .map(|i| {
                proj(
                    &format!("p{i:04}"),
                    &format!("t{}", rng.below(tracks)),
                    &format!("team{i}"),
                    &[],
                )
            })
            .collect();
        let judges = (0..300)
            .map(|i| {
                let mut j = judge(&format!("j{i:03}"), &[], 0);
                if i % 3 != 0 {
                    for _ in 0..1 + rng.below(3) {
                        j.tracks.push(format!("t{}", rng.below(tracks)));
                    }
                }
                if i % 10 == 0 {
                    j.recused_teams.push(format!("team{}", rng.below(2000)));
                }
                j
            })
            .collect();
        (projects, judges)
    }

    #[test]
    fn mid_scale_is_valid() {
        let (projects, judges) = scale_instance();
        let (projects, judges) = (&projects[..400], &judges[..60]);
        let out = plan(projects, judges, 5, None, 1);
        check(projects, judges, 5, None, &out, false);
        assert!(out.coverage.iter().all(|c| c.assigned == 5));
        assert_eq!(out.components, 1);
    }

    /// `cargo test --release -- --ignored --nocapture scale`
    #[test]
    #[ignore]
    fn scale_2000_projects_300_judges() {
        let (projects, judges) = scale_instance();
        for (label, max_load) in [("no max_load", None), ("max_load 30", Some(30))] {
            let start = Instant::now();
            let out = plan(&projects, &judges, 5, max_load, 99);
            let took = start.elapsed();
            check(&projects, &judges, 5, max_load, &out, false);
            let loads: Vec<usize> = out.loads.iter().map(|(_, l)| *l).collect();
            let any: Vec<usize> = judges
                .iter()
                .zip(&loads)
                .filter(|(j, _)| j.tracks.is_empty())
                .map(|(_, l)| *l)
                .collect();
            println!(
                "{label}: {took:?}, {} edges, shortfall {}, loads {}..{} (any-track {}..{}), \
                 components {}, max pair overlap {}",
                out.edges.len(),
                out.total_shortfall(),
                loads.iter().min().unwrap_or(&0),
                loads.iter().max().unwrap_or(&0),
                any.iter().min().unwrap_or(&0),
                any.iter().max().unwrap_or(&0),
                out.components,
                max_pair_overlap(&projects, &out),
            );
            assert!(took.as_secs_f64() < 1.0);
            let start = Instant::now();
            let (p2, j2) = apply(&projects, &judges, &out);
            let again = plan(&p2, &j2, 5, max_load, 99);
            println!(
                "  re-plan: {:?}, {} new edges",
                start.elapsed(),
                again.edges.len()
            );
            assert!(again.edges.is_empty());
        }
        // Worst case for the connect phase: 12 tracks, every judge dedicated to one.
        let projects: Vec<PlanProject> = (0..2000)
            .map(|i| {
                proj(
                    &format!("p{i:04}"),
                    &format!("t{}", i % 12),
                    &format!("team{i}"),
                    &[],
                )
            })
            .collect();
        let judges: Vec<PlanJudge> = (0..300)
            .map(|i| judge(&format!("j{i:03}"), &[&format!("t{}", i % 12)], 0))
            .collect();
        let start = Instant::now();
        let out = plan(&projects, &judges, 5, None, 99);
        let took = start.elapsed();
        println!(
            "dedicated judges only: {took:?}, shortfall {}, components {} (honest)",
            out.total_shortfall(),
            out.components
        );
        assert_eq!(out.components, 12);
        assert!(took.as_secs_f64() < 1.0);
    }
}
