//! Phase 6: the plan as the caller sees it, back in ids: new edges, coverage with the
//! reason for every shortfall, loads, and the component count.

use super::{Plan, Planner, ProjectCoverage};

impl Planner {
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
    pub(super) fn finish(self) -> Plan {
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
