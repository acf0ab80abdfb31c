//! The per-request time budget (`--request-timeout`): a query or mutation that takes
//! longer is cut off with QUERY_TOO_COMPLEX. It covers the whole request, parsing and
//! validation included; subscriptions are long-lived streams and have no budget.

use std::future::Future;
use std::time::Duration;

use async_graphql::Response;

use super::too_complex;

/// `request`: the answer of `run`, or QUERY_TOO_COMPLEX when it takes longer than `limit`.
pub(super) async fn within(limit: Duration, run: impl Future<Output = Response>) -> Response {
    match tokio::time::timeout(limit, run).await {
        Ok(resp) => resp,
        Err(_) => Response::from_errors(vec![too_complex(
            format!("the request took longer than {} s", limit.as_secs()),
            None,
        )]),
    }
}

#[cfg(test)]
mod tests {
    use async_graphql::{EmptyMutation, EmptySubscription, Object, Schema};

    use std::time::Duration;

    use super::super::Edge;
    use crate::config::Limits;

    struct Root;

    #[Object]
    impl Root {
        async fn slow(&self) -> bool {
            tokio::time::sleep(Duration::from_millis(200)).await;
            true
        }
    }

    #[tokio::test]
    async fn a_request_over_budget_is_cut_off_with_its_code() {
        let schema = |secs| {
            let limits = Limits {
                request_timeout_secs: secs,
                ..Limits::default()
            };
            Schema::build(Root, EmptyMutation, EmptySubscription)
                .extension(Edge::new(&limits, false))
                .finish()
        };
        let resp = schema(5).execute("{ slow }").await;
        assert!(resp.errors.is_empty(), "{:?}", resp.errors);
        let resp = schema(0).execute("{ slow }").await;
        let e = &resp.errors[0];
        assert_eq!(e.message, "the request took longer than 0 s");
        let code = e.extensions.as_ref().and_then(|x| x.get("code"));
        assert_eq!(
            code.map(|c| c.to_string()),
            Some("\"QUERY_TOO_COMPLEX\"".into())
        );
        assert!(resp.data == async_graphql::Value::Null);
    }
}
