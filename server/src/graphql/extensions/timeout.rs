//! The per-request time budget (`--request-timeout`): a query or mutation that takes
//! longer is cut off with QUERY_TOO_COMPLEX. It covers the whole request, parsing and
//! validation included; subscriptions are long-lived streams and have no budget.

use std::sync::Arc;
use std::time::Duration;

use async_graphql::Response;
use async_graphql::extensions::{Extension, ExtensionContext, ExtensionFactory, NextRequest};

use super::too_complex;

/// The extension factory, built once with the schema.
pub struct RequestTimeout(Arc<Budget>);

struct Budget(Duration);

impl RequestTimeout {
    pub fn new(limit: Duration) -> Self {
        RequestTimeout(Arc::new(Budget(limit)))
    }
}

impl ExtensionFactory for RequestTimeout {
    fn create(&self) -> Arc<dyn Extension> {
        self.0.clone()
    }
}

#[async_graphql::async_trait::async_trait]
impl Extension for Budget {
    async fn request(&self, ctx: &ExtensionContext<'_>, next: NextRequest<'_>) -> Response {
        let limit = self.0;
        match tokio::time::timeout(limit, next.run(ctx)).await {
            Ok(resp) => resp,
            Err(_) => Response::from_errors(vec![too_complex(
                format!("the request took longer than {} s", limit.as_secs()),
                None,
            )]),
        }
    }
}

#[cfg(test)]
mod tests {
    use async_graphql::{EmptyMutation, EmptySubscription, Object, Schema};

    use super::*;

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
        let schema = |limit| {
            Schema::build(Root, EmptyMutation, EmptySubscription)
                .extension(RequestTimeout::new(limit))
                .finish()
        };
        let resp = schema(Duration::from_secs(5)).execute("{ slow }").await;
        assert!(resp.errors.is_empty(), "{:?}", resp.errors);
        let resp = schema(Duration::ZERO).execute("{ slow }").await;
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
