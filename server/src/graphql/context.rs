//! The per-request context: who is calling, how, and a cache of what they may access.

use std::sync::Arc;

use async_graphql::Context;
use entity::user;
use tokio::sync::Mutex;

use super::bus::Bus;
use super::error::to_graphql;
use crate::config::Limits;
use crate::db::Db;
use crate::domain::accounts::{self, Credential};
use crate::domain::{Access, Actor};
use crate::error::{AppError, AppResult};

/// Built once per HTTP request or websocket connection by the authentication extractor.
pub struct RequestCtx {
    pub request_id: String,
    pub client: String,
    pub caller: Option<(user::Model, Credential)>,
    /// A websocket connection's context, which outlives the moment its credential was
    /// checked: each operation and subscription message re-checks it ([`Self::recheck`]).
    long_lived: bool,
    access: Mutex<Option<Arc<Access>>>,
}

impl RequestCtx {
    pub fn new(
        request_id: String,
        client: String,
        caller: Option<(user::Model, Credential)>,
    ) -> Self {
        RequestCtx {
            request_id,
            client,
            caller,
            long_lived: false,
            access: Mutex::new(None),
        }
    }

    /// Marks the context as a websocket connection's (see [`Self::recheck`]).
    pub fn long_lived(self) -> Self {
        RequestCtx {
            long_lived: true,
            ..self
        }
    }

    pub fn is_long_lived(&self) -> bool {
        self.long_lived
    }

    /// The judge membership the caller's session acts as, and only as, when a judge's
    /// standing sign-in started it (`domain::judge_sign_in`).
    pub fn judge_link(&self) -> Option<i64> {
        match &self.caller {
            Some((_, Credential::JudgeLink { membership, .. })) => Some(*membership),
            _ => None,
        }
    }

    pub fn user(&self) -> Option<&user::Model> {
        self.caller.as_ref().map(|(u, _)| u)
    }

    /// The caller's memberships, loaded on first use and cached for the request.
    pub async fn access(&self, db: &Db) -> AppResult<Arc<Access>> {
        let mut slot = self.access.lock().await;
        if let Some(a) = slot.as_ref() {
            return Ok(a.clone());
        }
        let a = match &self.caller {
            // A judge's standing sign-in acts only as that judge (`domain::judge_sign_in`).
            Some((u, Credential::JudgeLink { membership, .. })) => Arc::new(
                crate::domain::judge_sign_in::judge_access(&db.conn, u, *membership).await?,
            ),
            Some((u, _)) => Arc::new(Access::load(&db.conn, u).await?),
            None => Arc::new(Access::default()),
        };
        *slot = Some(a.clone());
        Ok(a)
    }

    /// Forgets the cached access after a mutation changed memberships.
    pub async fn refresh(&self) {
        *self.access.lock().await = None;
    }

    /// For a long-lived context: UNAUTHENTICATED if its credential was revoked or expired
    /// since it was checked, and otherwise forgets the cached access so that it is loaded
    /// fresh. An anonymous caller has nothing to re-check.
    pub async fn recheck(&self, db: &Db) -> AppResult<()> {
        if let Some((_, credential)) = &self.caller
            && !accounts::still_valid(&db.conn, credential).await?
        {
            return Err(AppError::Unauthenticated);
        }
        self.refresh().await;
        Ok(())
    }
}

/// Shared, read-only state every resolver reaches through the schema's data.
#[derive(Clone)]
pub struct Services {
    pub db: Db,
    pub bus: Bus,
    pub limits: Limits,
    /// Served over TLS: session cookies carry `Secure` and responses
    /// `Strict-Transport-Security`.
    pub served_over_tls: bool,
    /// The deployment's signing key (runs, publications, checkpoints).
    pub signer: Arc<crate::crypto::signing::Signer25519>,
    /// Parsed results of stored runs: immutable, so shared by every request.
    pub parsed_runs: Arc<crate::domain::results::ParsedRuns>,
    /// The organizers' live leaderboards and the judging progress: each computed once per
    /// event and change of its data, for every request and feed that asks.
    pub previews: Arc<crate::memo::PerHead<crate::domain::results::Preview>>,
    pub progress: Arc<crate::memo::PerHead<crate::domain::judging::Progress>>,
    /// The live feeds the subscriptions follow: one computation per event and change,
    /// shared by its subscribers (`graphql::feed`).
    pub feeds: super::feed::Live,
    /// Where the links in messages point (`--public-url`).
    pub links: crate::domain::outbox::Links,
    /// Wakes the mail worker after a commit that wrote to the outbox.
    pub mail: crate::mail::Wake,
    /// Wakes the webhook worker after a commit (the audit append may have written
    /// deliveries).
    pub webhook_wake: crate::webhooks::Wake,
    /// What webhook receivers may be (the loopback flag for tests).
    pub webhooks: crate::webhooks::Settings,
    /// The calibration jobs this process computes (`startCalibration`).
    pub calibrations: Arc<super::jobs::Calibrations>,
}

/// Conveniences on async-graphql's context.
pub trait CtxExt {
    fn rc(&self) -> &RequestCtx;
    fn services(&self) -> &Services;
    fn db(&self) -> &Db {
        &self.services().db
    }
    /// The signed-in user, or UNAUTHENTICATED.
    fn actor(&self) -> async_graphql::Result<Actor>;
    fn err(&self, e: AppError) -> async_graphql::Error {
        to_graphql(e, &self.rc().request_id)
    }
    /// Checks a page size against the configured maximum.
    fn page_size(&self, first: Option<i32>) -> async_graphql::Result<u64>;
}

static ANONYMOUS: std::sync::LazyLock<RequestCtx> =
    std::sync::LazyLock::new(|| RequestCtx::new("-".into(), "-".into(), None));

impl CtxExt for Context<'_> {
    fn rc(&self) -> &RequestCtx {
        self.data_opt::<Arc<RequestCtx>>()
            .map(|a| a.as_ref())
            .unwrap_or(&ANONYMOUS)
    }
    fn services(&self) -> &Services {
        // The schema is always built with its services (see `graphql::schema`).
        self.data_unchecked::<Services>()
    }
    fn actor(&self) -> async_graphql::Result<Actor> {
        match self.rc().user() {
            Some(u) => Ok(Actor { user: u.clone() }),
            None => Err(self.err(AppError::Unauthenticated)),
        }
    }
    fn page_size(&self, first: Option<i32>) -> async_graphql::Result<u64> {
        let max = self.services().limits.max_page;
        match first {
            None => Ok(20.min(max) as u64),
            Some(n) if n >= 0 && (n as usize) <= max => Ok(n as u64),
            Some(_) => Err(self.err(AppError::bad_input(
                "first",
                format!("must be between 0 and {max}"),
            ))),
        }
    }
}

/// `?` for domain results inside resolvers.
pub trait ResultExt<T> {
    fn gql(self, ctx: &Context<'_>) -> async_graphql::Result<T>;
}

impl<T, E: Into<AppError>> ResultExt<T> for Result<T, E> {
    fn gql(self, ctx: &Context<'_>) -> async_graphql::Result<T> {
        self.map_err(|e| ctx.err(e.into()))
    }
}
