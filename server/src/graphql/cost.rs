//! What a field costs, for the complexity budgets (`--max-complexity` for signed-in
//! callers, `--max-complexity-anonymous` for anonymous ones; see [`crate::config::Limits`]).
//!
//! The cost is static: validation measures it before anything runs, from the document and
//! its variables alone, so a list's length is `first` where it has one and an assumed
//! length where it has not. A field without a `#[graphql(complexity = ...)]` attribute
//! costs 1 plus what it selects: fields that read what their parent already holds, and
//! single objects loaded through a DataLoader (batched across the whole request).
//!
//! The units are relative, measured on the demo: one unit is roughly the work of resolving
//! one plain field (a few microseconds); a field that runs its own database query costs
//! [`LOAD`]; a published ranking (the run's result parsed, the event's projects and judges
//! loaded) is about 1 ms on the demo and costs about 300 units with a small selection; a
//! calibration is a fixed [`CALIBRATION`] (it is far slower than its units suggest, but it
//! stays within a signed-in budget so that organizers can read the leaderboard with its
//! projects and judges in one request).
//!
//! Every cost saturates at [`MAX`], so that a document of many huge fields cannot overflow
//! the sum that validation adds up (it would wrap around to a small number).

/// A field that runs its own database query (not batched with its siblings).
pub const LOAD: usize = 10;

/// Assumed length of a list that grows with one team, project or person and has no
/// `first`: an event's tracks and rubric, a team's members and projects, a project's
/// reviews, a judge's assignments, a caller's memberships and tokens, an event's runs and
/// publications. The default page size of a connection.
pub const SHORT_LIST: usize = 20;

/// Assumed length of a list as long as an event's projects or judges, which has no
/// `first`: a ranking (published, in a run, on the leaderboard), a run's or the
/// leaderboard's judges, the recusals. The largest page of a connection.
pub const EVENT_LIST: usize = 100;

/// A full calibration on current data (the leaderboard, `runCalibration`) or a full run
/// of the assignment planner (`autoAssign`).
pub const CALIBRATION: usize = 1000;

/// A password hashed or verified (Argon2, tens of milliseconds by design): `signUp`,
/// `logIn`. An anonymous budget allows a few per request, not hundreds.
pub const PASSWORD: usize = 500;

/// An export: every row of one kind in the event read and written out as CSV, costed as
/// [`EVENT_LIST`] queries.
pub const EXPORT: usize = EVENT_LIST * LOAD;

/// The most a single field is charged.
pub const MAX: usize = 1 << 32;

/// A connection: one query (and a count), plus `first` (20 if omitted) nodes of what is
/// selected.
pub fn page(first: Option<i32>, child: usize) -> usize {
    list(first.unwrap_or(20).max(0) as usize, child)
}

/// A list of [`SHORT_LIST`] items.
pub fn short_list(child: usize) -> usize {
    list(SHORT_LIST, child)
}

/// A list of [`EVENT_LIST`] items.
pub fn event_list(child: usize) -> usize {
    list(EVENT_LIST, child)
}

/// A field that runs its own query, plus what is selected.
pub fn load(child: usize) -> usize {
    once(LOAD, child)
}

/// A calibration (or a planner run), plus what is selected.
pub fn calibration(child: usize) -> usize {
    once(CALIBRATION, child)
}

/// A password hashed or verified, plus what is selected.
pub fn password(child: usize) -> usize {
    once(PASSWORD, child)
}

/// An export, plus what is selected.
pub fn export(child: usize) -> usize {
    once(EXPORT, child)
}

/// A list of assumed length `len` that runs its own query, plus `len` items of what is
/// selected.
fn list(len: usize, child: usize) -> usize {
    len.saturating_mul(child).saturating_add(LOAD).min(MAX)
}

/// Work of `cost` done once, plus what is selected.
fn once(cost: usize, child: usize) -> usize {
    cost.saturating_add(child).min(MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_saturate_instead_of_wrapping() {
        assert_eq!(page(Some(i32::MAX), MAX), MAX);
        assert_eq!(event_list(MAX), MAX);
        assert_eq!(load(usize::MAX), MAX);
        assert_eq!(page(Some(-5), 7), LOAD, "a negative first is refused later");
        assert_eq!(page(None, 3), LOAD + 60);
    }
}
