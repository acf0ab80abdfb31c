//! The in-process broadcast bus that subscriptions read from. Mutations publish after their
//! commit. It is one `tokio::sync::broadcast` channel so that a PostgreSQL LISTEN/NOTIFY
//! relay can later feed the same channel when several processes share one database.

use tokio::sync::broadcast;

#[derive(Clone, Debug)]
pub enum BusEvent {
    ProjectSubmitted {
        event_id: i64,
        project_id: i64,
    },
    /// A review, assignment or recusal changed: progress and the live leaderboard moved.
    JudgingChanged {
        event_id: i64,
    },
    ResultsPublished {
        event_id: i64,
        publication_id: i64,
    },
}

impl BusEvent {
    pub fn event_id(&self) -> i64 {
        match self {
            BusEvent::ProjectSubmitted { event_id, .. }
            | BusEvent::JudgingChanged { event_id }
            | BusEvent::ResultsPublished { event_id, .. } => *event_id,
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
