//! The subscription root: streams fed by the in-process bus, after commits.

use async_graphql::{Context, Subscription};
use entity::project;
use futures_util::Stream;
use sea_orm::EntityTrait;
use tokio::sync::broadcast::error::RecvError;

use super::bus::BusEvent;
use super::context::CtxExt;
use super::error::to_graphql;
use super::objects::Project;
use super::policy::{FieldGuard, Scope};
use crate::error::AppError;

#[derive(Default)]
pub struct Subscription;

#[Subscription]
impl Subscription {
    /// Every project submitted to the event from now on (public).
    #[graphql(guard = "FieldGuard::new(\"Subscription\", Scope::none())")]
    async fn project_submitted(
        &self,
        ctx: &Context<'_>,
        event: String,
    ) -> async_graphql::Result<impl Stream<Item = async_graphql::Result<Project>> + use<>> {
        let services = ctx.services().clone();
        let e = crate::domain::event_by_slug(&services.db.conn, &event)
            .await
            .map_err(|e| ctx.err(e))?;
        let rx = services.bus.subscribe();
        Ok(futures_util::stream::unfold(
            (rx, services, e.id),
            |(mut rx, services, wanted)| async move {
                loop {
                    let item = match rx.recv().await {
                        Ok(BusEvent::ProjectSubmitted {
                            event_id,
                            project_id,
                        }) if event_id == wanted => {
                            match project::Entity::find_by_id(project_id)
                                .one(&services.db.conn)
                                .await
                            {
                                Ok(Some(p)) => Ok(Project(p)),
                                Ok(None) => continue,
                                Err(err) => Err(to_graphql(AppError::Db(err), "subscription")),
                            }
                        }
                        Ok(_) => continue,
                        // A lagging subscriber is told, not silently skipped.
                        Err(RecvError::Lagged(n)) => Err(async_graphql::Error::new(format!(
                            "this subscriber fell behind and missed {n} messages; resubscribe"
                        ))),
                        Err(RecvError::Closed) => return None,
                    };
                    return Some((item, (rx, services, wanted)));
                }
            },
        ))
    }
}
