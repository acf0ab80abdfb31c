//! The in-process broadcast bus that subscriptions read from. Mutations publish after their
//! commit; on PostgreSQL, where several processes may share the database, the
//! LISTEN/NOTIFY relay ([`super::relay`]) publishes what the other processes committed.

use std::sync::Arc;

use entity::project;
use tokio::sync::broadcast;

use crate::domain::accounts::Credential;

#[derive(Clone, Debug)]
pub enum BusEvent {
    /// The project as committed: every subscriber sends it without reading it again.
    ProjectSubmitted {
        event_id: i64,
        project: Arc<project::Model>,
    },
    /// A review, assignment or recusal changed: progress and the live leaderboard moved.
    JudgingChanged {
        event_id: i64,
    },
    ResultsPublished {
        event_id: i64,
        publication_id: i64,
    },
    /// A calibration job of the event ended (its run stored, or failed).
    CalibrationEnded {
        event_id: i64,
    },
    /// A credential was revoked (`credential`: that one) or a role taken away (`None`: any
    /// of the user's): the websockets it names are closed (`http::ws`).
    AccessRevoked {
        user_id: i64,
        credential: Option<Credential>,
    },
    /// Every session of the user but `except` ended (a password change): the websockets
    /// signed in with those sessions are closed; API tokens stay.
    SessionsEnded {
        user_id: i64,
        except: Option<Credential>,
    },
}

impl BusEvent {
    /// The event the change belongs to; `None` for changes of a person's access.
    pub fn event_id(&self) -> Option<i64> {
        match self {
            BusEvent::ProjectSubmitted { event_id, .. }
            | BusEvent::JudgingChanged { event_id }
            | BusEvent::ResultsPublished { event_id, .. }
            | BusEvent::CalibrationEnded { event_id } => Some(*event_id),
            BusEvent::AccessRevoked { .. } | BusEvent::SessionsEnded { .. } => None,
        }
    }
}

#[derive(Clone)]
pub struct Bus {
    tx: broadcast::Sender<BusEvent>,
}

impl Bus {
    pub fn new() -> Bus {
        let (tx, _) = broadcast::channel(1024);
        Bus { tx }
    }
    /// Publishes to every current subscriber; having none is fine.
    pub fn publish(&self, e: BusEvent) {
        let _ = self.tx.send(e);
    }
    pub fn subscribe(&self) -> broadcast::Receiver<BusEvent> {
        self.tx.subscribe()
    }
}

impl Default for Bus {
    fn default() -> Self {
        Bus::new()
    }
}
