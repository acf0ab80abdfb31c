//! Talking to the server over HTTP: raw requests, GraphQL requests (with or without a
//! bearer token), and the two ways in (sign up, log in).

use serde_json::{Value, json};

use super::{App, PASSWORD, data, op, str_at};

/// An HTTP response, read whole.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
}

impl Resp {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| {
            panic!(
                "response is not JSON ({e}); status {}: {}",
                self.status, self.text
            )
        })
    }

    pub fn try_json(&self) -> Option<Value> {
        serde_json::from_str(&self.text).ok()
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    }

    pub fn headers_all(&self, name: &str) -> Vec<String> {
        self.headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_string)
            .collect()
    }
}

async fn read(resp: reqwest::Response) -> Resp {
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let text = resp.text().await.unwrap_or_default();
    Resp {
        status,
        headers,
        text,
    }
}

impl App {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.get_with(path, &[]).await
    }

    pub async fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Resp {
        let mut req = self.http.get(self.url(path));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        read(req.send().await.expect("GET")).await
    }

    /// POST /graphql with any body, content type and headers.
    pub async fn post_raw(
        &self,
        body: impl Into<reqwest::Body>,
        content_type: &str,
        headers: &[(&str, &str)],
    ) -> Resp {
        let mut req = self
            .http
            .post(self.url("/graphql"))
            .header("content-type", content_type)
            .body(body);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        read(req.send().await.expect("POST /graphql")).await
    }

    /// POST a GraphQL request as JSON; the whole response.
    pub async fn gql_resp(&self, token: Option<&str>, query: &str, vars: Value) -> Resp {
        let body = json!({ "query": query, "variables": vars }).to_string();
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers: Vec<(&str, &str)> = vec![];
        if let Some(a) = &auth {
            headers.push(("authorization", a.as_str()));
        }
        self.post_raw(body, "application/json", &headers).await
    }

    /// An anonymous GraphQL request; the whole response body.
    pub async fn gql(&self, query: &str, vars: Value) -> Value {
        self.gql_opt(None, query, vars).await
    }

    /// A GraphQL request with `Authorization: Bearer TOKEN`; the whole response body.
    pub async fn gql_as(&self, token: &str, query: &str, vars: Value) -> Value {
        self.gql_opt(Some(token), query, vars).await
    }

    pub async fn gql_opt(&self, token: Option<&str>, query: &str, vars: Value) -> Value {
        let resp = self.gql_resp(token, query, vars).await;
        assert!(
            resp.status < 500,
            "HTTP {} for {query}: {}",
            resp.status,
            resp.text
        );
        resp.json()
    }

    /// A GraphQL request that must succeed; returns `data`.
    pub async fn ok(&self, token: Option<&str>, query: &str, vars: Value) -> Value {
        let resp = self.gql_opt(token, query, vars.clone()).await;
        data(&resp).clone()
    }

    // ---- signing in --------------------------------------------------------------

    pub async fn log_in(&self, email: &str, password: &str) -> String {
        self.session(
            op("LogIn"),
            json!({ "email": email, "password": password }),
            "logIn",
        )
        .await
        .0
    }

    /// Sign up a new user (password [`PASSWORD`]); returns the session token.
    pub async fn sign_up(&self, email: &str) -> String {
        self.sign_up_full(email).await.0
    }

    /// Sign up and confirm the address (as clicking the mailed link would); returns
    /// (token, user id). Tests of confirmation itself sign up with the bare mutation.
    pub async fn sign_up_full(&self, email: &str) -> (String, String) {
        let name = email.split('@').next().unwrap_or(email);
        let signed_up = self
            .session(
                op("SignUp"),
                json!({ "email": email, "password": PASSWORD, "displayName": name }),
                "signUp",
            )
            .await;
        self.db.confirm_email(email).await;
        signed_up
    }

    /// Run signUp or logIn; (token, user id) from the returned Session.
    async fn session(&self, query: &str, vars: Value, field: &str) -> (String, String) {
        let resp = self.gql_opt(None, query, vars).await;
        let d = data(&resp);
        (
            str_at(d, &format!("/{field}/token")),
            str_at(d, &format!("/{field}/user/id")),
        )
    }
}
