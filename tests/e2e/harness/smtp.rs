//! A mail receiver on 127.0.0.1 that speaks enough SMTP for the server's worker to deliver
//! to it: the tests read what Verdict actually sent over the wire.

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// One message as the receiver got it.
#[derive(Debug, Clone)]
pub struct Mail {
    pub from: String,
    pub to: Vec<String>,
    /// The message as sent after DATA (headers and body, dot-unstuffed).
    pub data: String,
}

impl Mail {
    /// The data with quoted-printable soft line breaks joined, for searching.
    pub fn text(&self) -> String {
        self.data.replace("=\r\n", "")
    }
}

/// The receiver: `url` is what `--smtp-url` takes.
pub struct SmtpSink {
    pub url: String,
    rx: mpsc::UnboundedReceiver<Mail>,
}

impl SmtpSink {
    pub async fn start() -> SmtpSink {
        SmtpSink::answering(None).await
    }

    /// A receiver that refuses every message with this reply to `MAIL FROM` (say, a
    /// temporary `451`): what a mail server that is down for a while does.
    #[allow(dead_code, reason = "used by some test modules only")]
    pub async fn refusing(reply: &'static str) -> SmtpSink {
        SmtpSink::answering(Some(reply)).await
    }

    async fn answering(refusal: Option<&'static str>) -> SmtpSink {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind SMTP sink");
        let port = listener.local_addr().expect("addr").port();
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(session(stream, tx.clone(), refusal));
            }
        });
        SmtpSink {
            url: format!("smtp://127.0.0.1:{port}"),
            rx,
        }
    }

    /// The next message, waiting at most `within`.
    pub async fn next(&mut self, within: Duration) -> Mail {
        tokio::time::timeout(within, self.rx.recv())
            .await
            .unwrap_or_else(|_| panic!("no mail arrived within {within:?}"))
            .expect("the receiver is running")
    }

    /// Whether a message arrives within `within`.
    pub async fn any_within(&mut self, within: Duration) -> Option<Mail> {
        tokio::time::timeout(within, self.rx.recv())
            .await
            .ok()
            .flatten()
    }
}

async fn session(
    stream: TcpStream,
    tx: mpsc::UnboundedSender<Mail>,
    refusal: Option<&'static str>,
) {
    let (r, mut w) = stream.into_split();
    let mut lines = BufReader::new(r).lines();
    let mut from = String::new();
    let mut to = Vec::new();
    if w.write_all(b"220 sink ESMTP\r\n").await.is_err() {
        return;
    }
    while let Ok(Some(line)) = lines.next_line().await {
        let verb = line
            .split([' ', ':'])
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        let reply: &[u8] = match verb.as_str() {
            "EHLO" => b"250-sink\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n",
            "HELO" | "RSET" | "NOOP" => b"250 OK\r\n",
            "MAIL" if refusal.is_some() => {
                let reply = format!("{}\r\n", refusal.unwrap_or_default());
                if w.write_all(reply.as_bytes()).await.is_err() {
                    return;
                }
                continue;
            }
            "MAIL" => {
                from = line[line.find(':').map_or(0, |i| i + 1)..]
                    .trim()
                    .to_owned();
                to.clear();
                b"250 OK\r\n"
            }
            "RCPT" => {
                to.push(
                    line[line.find(':').map_or(0, |i| i + 1)..]
                        .trim()
                        .to_owned(),
                );
                b"250 OK\r\n"
            }
            "DATA" => {
                if w.write_all(b"354 end with .\r\n").await.is_err() {
                    return;
                }
                let mut data = String::new();
                while let Ok(Some(l)) = lines.next_line().await {
                    if l == "." {
                        break;
                    }
                    data.push_str(l.strip_prefix('.').unwrap_or(&l));
                    data.push_str("\r\n");
                }
                let _ = tx.send(Mail {
                    from: from.clone(),
                    to: to.clone(),
                    data,
                });
                b"250 OK queued\r\n"
            }
            "QUIT" => {
                let _ = w.write_all(b"221 bye\r\n").await;
                return;
            }
            _ => b"502 not implemented\r\n",
        };
        if w.write_all(reply).await.is_err() {
            return;
        }
    }
}
