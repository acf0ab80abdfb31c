//! "My events" (`Viewer.myEvents`): each event the viewer holds a role in, with what the
//! client needs to say their next thing to do, read in a constant number of statements
//! ([`crate::domain::my_events`]).

use async_graphql::Object;

use super::checklist::SetupStepKey;
use super::event::Event;
use super::user::Role;
use crate::domain::my_events::MyEvent as Row;
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("MyEvent.event", Rule::OwnUser),
    ("MyEvent.roles", Rule::OwnUser),
    ("MyEvent.toScore", Rule::OwnUser),
    ("MyEvent.drafts", Rule::OwnUser),
    ("MyEvent.submitted", Rule::OwnUser),
    ("MyEvent.setupStep", Rule::OwnUser),
];

/// One of the viewer's events and their next thing to do in it.
pub struct MyEvent {
    pub user_id: i64,
    pub row: Row,
}

/// One of the viewer's events and their next thing to do in it.
#[Object(
    guard = "FieldGuard::new(\"MyEvent\", Scope { user: Some(self.user_id), ..Scope::none() })"
)]
impl MyEvent {
    /// The event.
    async fn event(&self) -> Event {
        Event::new(self.row.event.clone())
    }
    /// The viewer's roles in it.
    async fn roles(&self) -> Vec<Role> {
        self.row.roles.iter().map(|r| (*r).into()).collect()
    }
    /// A judge's assignments still to score; null when not a judge.
    async fn to_score(&self) -> Option<i32> {
        self.row
            .to_score
            .map(|n| i32::try_from(n).unwrap_or(i32::MAX))
    }
    /// The viewer's team's draft (unsubmitted) projects; null when not on a team.
    async fn drafts(&self) -> Option<i32> {
        self.row
            .drafts
            .map(|n| i32::try_from(n).unwrap_or(i32::MAX))
    }
    /// The viewer's team's submitted projects; null when not on a team.
    async fn submitted(&self) -> Option<i32> {
        self.row
            .submitted
            .map(|n| i32::try_from(n).unwrap_or(i32::MAX))
    }
    /// An organizer's next setup step (`Event.setupSteps`); null once all are done, or
    /// when not an organizer.
    async fn setup_step(&self) -> Option<SetupStepKey> {
        self.row.setup_step.map(Into::into)
    }
}
