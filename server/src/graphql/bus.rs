//! The in-process broadcast bus that subscriptions read from. Mutations publish after their
//! commit; on PostgreSQL, where several processes may share the database, the
//! LISTEN/NOTIFY relay ([`super::relay`]) publishes what the other processes committed.
//!
//! The bus holds at most [`CAPACITY`] events, however many subscribers fall behind and by
//! how much: publishing never waits, and an event is let go once every subscriber has
//! read it or [`CAPACITY`] newer ones have replaced it. A subscriber that fell further
//! behind is told how many it missed at its next read (`RecvError::Lagged`), which
//! `graphql::subscription` turns into an error message for the client. A websocket client
//! that stops reading therefore costs the bus nothing more than its place in this ring
//! (and `http::ws` closes it after `--ws-send-timeout`).

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
    /// A review, comparison, assignment or recusal changed: progress and the live
    /// leaderboard moved.
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

/// Events the bus holds for its slowest subscriber, at most.
pub const CAPACITY: usize = 1024;

impl Bus {
    pub fn new() -> Bus {
        let (tx, _) = broadcast::channel(CAPACITY);
        Bus { tx }
    }
    /// Events held now for subscribers that have not read them (at most [`CAPACITY`]).
    pub fn held(&self) -> usize {
        self.tx.len()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subscriber_that_never_reads_holds_at_most_the_capacity_and_learns_what_it_missed() {
        let bus = Bus::new();
        let mut stalled = bus.subscribe();
        let published = 10 * CAPACITY;
        for event_id in 0..published {
            bus.publish(BusEvent::JudgingChanged {
                event_id: event_id as i64,
            });
            assert!(bus.held() <= CAPACITY, "{} held", bus.held());
        }
        assert_eq!(bus.held(), CAPACITY);
        assert!(matches!(
            stalled.try_recv(),
            Err(broadcast::error::TryRecvError::Lagged(n)) if n as usize == published - CAPACITY
        ));
        // Then the newest CAPACITY events, in order, and the ring empties as it reads them.
        let first = stalled.try_recv().ok().and_then(|e| e.event_id());
        assert_eq!(first, Some((published - CAPACITY) as i64));
        while stalled.try_recv().is_ok() {}
        assert_eq!(bus.held(), 0);
    }
}
