//! An organizer's setup checklist on an event's overview (`Event.setupSteps`): each step
//! checked from the data, batched through [`EventChecklists`](crate::graphql::loaders::EventChecklists).

use async_graphql::{Context, Enum, Object};

use crate::domain::checklist::Step;
use crate::graphql::cost;
use crate::graphql::loaders::{EventId, LoadersExt, maybe};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("SetupStep.key", Rule::Organizer),
    ("SetupStep.done", Rule::Organizer),
    ("SetupStep.count", Rule::Organizer),
    ("Event.setupSteps", Rule::Organizer),
];

/// The organizers' setup checklist: a part of [`Event`](super::event::Event), merged into the one GraphQL type.
pub struct EventChecklist(pub(super) super::event::EventRow);

/// The organizers' setup checklist: a part of [`Event`](super::event::Event).
#[Object(guard = "FieldGuard::new(\"Event\", Scope::event(self.0.id))")]
impl EventChecklist {
    /// The setup checklist (organizers only): tracks, rubric, judging windows, judges
    /// invited, assignments, judging, calibration, publication, in order, each checked from
    /// the data.
    #[graphql(complexity = "cost::load(child_complexity)")]
    async fn setup_steps(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Vec<super::checklist::SetupStep>> {
        let steps = maybe(ctx, ctx.loaders().checklists(), EventId(self.0.id))
            .await?
            .unwrap_or_default();
        Ok(steps
            .into_iter()
            .map(|step| super::checklist::SetupStep {
                event_id: self.0.id,
                step,
            })
            .collect())
    }
}

/// The steps from a new event to published results, in order.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
#[graphql(remote = "crate::domain::checklist::StepKey")]
pub enum SetupStepKey {
    /// At least one track.
    Tracks,
    /// At least one rubric criterion.
    Rubric,
    /// Both judging times set (the submission window is set when the event is made).
    Windows,
    /// At least one judge, or a judge's invitation out.
    InviteJudges,
    /// At least one assignment.
    Assign,
    /// Reviews are in and the judging window has closed.
    Judging,
    /// At least one calibration run.
    Calibrate,
    /// Results published.
    Publish,
}

/// One step of an organizer's setup checklist.
pub struct SetupStep {
    pub event_id: i64,
    pub step: Step,
}

/// One step of an organizer's setup checklist.
#[Object(guard = "FieldGuard::new(\"SetupStep\", Scope::event(self.event_id))")]
impl SetupStep {
    /// Which step.
    async fn key(&self) -> SetupStepKey {
        self.step.key.into()
    }
    /// Whether the data shows the step taken.
    async fn done(&self) -> bool {
        self.step.done
    }
    /// How many rows decided it: tracks, criteria, judges (and invited judges),
    /// assignments, submitted reviews, calibration runs, publications; for `WINDOWS`, how
    /// many of the two judging times are set.
    async fn count(&self) -> i32 {
        i32::try_from(self.step.count).unwrap_or(i32::MAX)
    }
}
