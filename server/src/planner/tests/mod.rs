//! Planner tests: every invariant of a plan checked against independent references
//! (Edmonds–Karp max-flow, a plain component count), on hand-made events
//! (`hand_made.rs`), random ones (`random.rs`) and large ones (`scale.rs`). The
//! references, the checker and the event builders are here.

mod hand_made;
mod random;
mod scale;

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::time::Instant;

use super::*;
use crate::calibrate::rng::SplitMix64;

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

fn load_of(plan: &Plan, id: &str) -> usize {
    plan.loads
        .iter()
        .find(|(j, _)| j == id)
        .map_or(usize::MAX, |(_, l)| *l)
}
