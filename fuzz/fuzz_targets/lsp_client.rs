//! The Lean LSP message parser: what the client makes of whatever `lake serve` writes.
//!
//! Input: the server's whole output. The client has three requests pending (ids 0, 1, 2) when
//! it arrives; then the output ends. Checked: nothing panics; every pending request resolves
//! (answered, or failed once the stream ends: none waits forever); a request made afterwards
//! fails at once; and once the client and its requests are dropped, the client lets go of the
//! server's stdin (its writer ends), so a dead server leaves nothing of the client behind.

#![no_main]

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use lean_beam_mcp::fuzzing::{Inbox, LspClient, LspError};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader, duplex};

struct Ignore;

impl Inbox for Ignore {
    fn notification(&self, _: &str, _: Value) {}
}

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
});

const PATIENCE: Duration = Duration::from_secs(10);

fuzz_target!(|data: &[u8]| {
    RUNTIME.block_on(async {
        let (client_out, mut server_in) = duplex(1 << 16);
        let (mut server_out, client_in) = duplex(1 << 16);
        let client = LspClient::start(
            BufReader::new(client_in),
            client_out,
            Arc::new(Ignore),
            None,
        );
        // The server's stdin, drained until the client lets go of it.
        let stdin = tokio::spawn(async move {
            let mut sink = Vec::new();
            let _ = server_in.read_to_end(&mut sink).await;
        });
        let mut pending = Vec::new();
        for _ in 0..3 {
            pending.push(client.request("textDocument/hover", json!({})).await);
        }
        server_out.write_all(data).await.unwrap();
        drop(server_out);
        for request in pending {
            let answered = tokio::time::timeout(PATIENCE, request).await;
            assert!(answered.is_ok(), "a pending request waits forever");
        }
        let later = tokio::time::timeout(PATIENCE, async {
            client.request("x", json!({})).await.await
        })
        .await;
        assert!(
            matches!(later, Ok(Err(LspError::Closed(_)))),
            "a request after the end: {later:?}"
        );
        drop(client);
        let released = tokio::time::timeout(PATIENCE, stdin).await;
        assert!(released.is_ok(), "the client keeps the server's stdin open");
    });
});
