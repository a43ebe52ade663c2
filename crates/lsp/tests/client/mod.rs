//! An in-process client: the server's main loop on a thread, talking over a memory
//! connection (rust-analyzer's test style).

use std::time::{Duration, Instant};

use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use serde_json::{Value, json};

pub struct Client {
    conn: Connection,
    thread: Option<std::thread::JoinHandle<()>>,
    next_id: i32,
    /// Notifications received while waiting for something else.
    pub notifications: Vec<Notification>,
}

pub const TIMEOUT: Duration = Duration::from_secs(120);

impl Client {
    pub fn start(options: Value) -> Client {
        let (server, conn) = Connection::memory();
        let thread = std::thread::spawn(move || lsp::main_loop(server).expect("server loop"));
        let mut c = Client {
            conn,
            thread: Some(thread),
            next_id: 0,
            notifications: Vec::new(),
        };
        let init = c.request(
            "initialize",
            json!({ "capabilities": {}, "initializationOptions": options }),
        );
        assert!(init.response_result.is_ok(), "{init:?}");
        c.notify("initialized", json!({}));
        c
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.conn
            .sender
            .send(Notification::new(method.into(), params).into())
            .unwrap();
    }

    pub fn send_request(&mut self, method: &str, params: Value) -> RequestId {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.conn
            .sender
            .send(Request::new(id.clone(), method.into(), params).into())
            .unwrap();
        id
    }

    pub fn response(&mut self, id: &RequestId) -> Response {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let msg = self
                .conn
                .receiver
                .recv_deadline(deadline)
                .expect("the server answers in time");
            match msg {
                Message::Response(r) if &r.id == id => return r,
                Message::Notification(n) => self.notifications.push(n),
                _ => {}
            }
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Response {
        let id = self.send_request(method, params);
        self.response(&id)
    }

    /// The result of a request, retried while the server answers `ContentModified`.
    pub fn ok(&mut self, method: &str, params: Value) -> Value {
        loop {
            let r = self.request(method, params.clone());
            match r.response_result {
                Err(e) if e.code == lsp_server::ErrorCode::ContentModified as i32 => continue,
                Err(e) => panic!("{method}: {e:?}"),
                Ok(v) => return v,
            }
        }
    }

    /// The diagnostics published for `uri` at `version` (earlier publications skipped).
    pub fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(i) = self.notifications.iter().position(|n| {
                n.method == "textDocument/publishDiagnostics"
                    && n.params["uri"] == uri
                    && n.params["version"] == version
            }) {
                let n = self.notifications.remove(i);
                return n.params["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
            }
            match self
                .conn
                .receiver
                .recv_deadline(deadline)
                .expect("diagnostics in time")
            {
                Message::Notification(n) => self.notifications.push(n),
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    pub fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "ptx", "version": 0, "text": text } }),
        );
    }

    pub fn shutdown(mut self) {
        let r = self.request("shutdown", Value::Null);
        assert!(r.response_result.is_ok());
        self.notify("exit", Value::Null);
        self.thread.take().unwrap().join().expect("server thread");
    }
}
