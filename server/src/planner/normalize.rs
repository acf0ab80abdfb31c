//! From the caller's lists to the planner's index space: duplicate ids merged, judges
//! put in the seeded order, and for every project the judges eligible for a new
//! assignment (track covered, not on or recused from the team, not already assigned).

use std::collections::{BTreeMap, HashMap};

use super::fill::Scratch;
use super::graph::Pairs;
use super::{PlanJudge, PlanProject, Planner};
use crate::calibrate::rng::SplitMix64;

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

impl Planner {
    pub(super) fn new(
        projects: &[PlanProject],
        judges: &[PlanJudge],
        k: usize,
        max_load: Option<usize>,
        seed: u64,
    ) -> Self {
        let projects = normalize_projects(projects);
        let mut judges = normalize_judges(judges);

        // Seeded judge order: sorted by id, then one Fisher–Yates shuffle.
        SplitMix64::new(seed).shuffle(&mut judges);
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
}
