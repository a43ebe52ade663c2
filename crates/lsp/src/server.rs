//! The main loop: one thread owns the database; requests run on snapshots in a pool.

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender, select};
use db::{RootDatabase, SourceFile, TextRange, TextSize};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{self as notif, Notification as _};
use lsp_types::request::{self as req, Request as _};
use lsp_types::{
    CodeLens, Command, DocumentSymbol, DocumentSymbolResponse, PublishDiagnosticsParams,
    ServerCapabilities, SymbolKind, TextDocumentSyncCapability, TextDocumentSyncKind, Uri,
};

use crate::analysis::{self, Config};
use crate::line_index::LineIndex;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Serves the client on standard input and output until it exits.
pub fn run_stdio() -> Result<(), Error> {
    let (connection, io) = Connection::stdio();
    main_loop(connection)?;
    io.join()?;
    Ok(())
}

/// Runs the protocol on `connection`: initialization, then messages until `exit` (or the
/// client going away).
pub fn main_loop(connection: Connection) -> Result<(), Error> {
    let (id, params) = connection.initialize_start()?;
    let init: lsp_types::InitializeParams = serde_json::from_value(params)?;
    let config = init
        .initialization_options
        .and_then(|o| serde_json::from_value::<Config>(o).ok())
        .unwrap_or_default();
    let result = lsp_types::InitializeResult {
        capabilities: capabilities(),
        server_info: Some(lsp_types::ServerInfo {
            name: "kiln".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
    };
    connection.initialize_finish(id, serde_json::to_value(result)?)?;
    Server::new(connection.sender.clone(), config).run(&connection)
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Kind(
            TextDocumentSyncKind::INCREMENTAL,
        )),
        code_lens_provider: Some(lsp_types::CodeLensOptions {
            resolve_provider: Some(false),
        }),
        document_symbol_provider: Some(lsp_types::OneOf::Left(true)),
        workspace_symbol_provider: Some(lsp_types::OneOf::Left(true)),
        inlay_hint_provider: Some(lsp_types::OneOf::Left(true)),
        definition_provider: Some(lsp_types::OneOf::Left(true)),
        references_provider: Some(lsp_types::OneOf::Left(true)),
        rename_provider: Some(lsp_types::OneOf::Left(true)),
        hover_provider: Some(lsp_types::HoverProviderCapability::Simple(true)),
        folding_range_provider: Some(lsp_types::FoldingRangeProviderCapability::Simple(true)),
        semantic_tokens_provider: Some(
            lsp_types::SemanticTokensOptions {
                legend: lsp_types::SemanticTokensLegend {
                    token_types: TOKEN_TYPES.to_vec(),
                    token_modifiers: TOKEN_MODIFIERS.to_vec(),
                },
                full: Some(lsp_types::SemanticTokensFullOptions::Bool(true)),
                range: None,
                ..lsp_types::SemanticTokensOptions::default()
            }
            .into(),
        ),
        ..ServerCapabilities::default()
    }
}

/// An open document.
struct Document {
    file: SourceFile,
    text: String,
    version: i32,
    index: Arc<LineIndex>,
}

/// What a worker sends back to the main loop.
enum Task {
    Respond(Response),
    Publish {
        uri: Uri,
        version: i32,
        diagnostics: Vec<lsp_types::Diagnostic>,
    },
}

/// A snapshot of one document for a worker.
#[derive(Clone)]
struct Snapshot {
    uri: Uri,
    db: RootDatabase,
    file: SourceFile,
    index: Arc<LineIndex>,
    config: Arc<Config>,
}

struct Server {
    sender: Sender<Message>,
    db: RootDatabase,
    docs: HashMap<Uri, Document>,
    config: Arc<Config>,
    pool: Sender<Box<dyn FnOnce() + Send>>,
    tasks: (Sender<Task>, Receiver<Task>),
    /// Requests received and not answered yet (answers to cancelled ones are dropped).
    pending: HashSet<RequestId>,
}

impl Server {
    fn new(sender: Sender<Message>, config: Config) -> Server {
        let (pool, jobs) = crossbeam_channel::unbounded::<Box<dyn FnOnce() + Send>>();
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4));
        for i in 0..threads {
            let jobs = jobs.clone();
            std::thread::Builder::new()
                .name(format!("kiln-lsp-worker-{i}"))
                .spawn(move || {
                    for job in jobs {
                        job();
                    }
                })
                .expect("spawning a worker thread");
        }
        Server {
            sender,
            db: RootDatabase::default(),
            docs: HashMap::new(),
            config: Arc::new(config),
            pool,
            tasks: crossbeam_channel::unbounded(),
            pending: HashSet::new(),
        }
    }

    fn run(mut self, connection: &Connection) -> Result<(), Error> {
        loop {
            let task_rx = self.tasks.1.clone();
            select! {
                recv(connection.receiver) -> msg => {
                    let Ok(msg) = msg else { return Ok(()) };
                    match msg {
                        Message::Request(r) => {
                            if connection.handle_shutdown(&r)? {
                                return Ok(());
                            }
                            self.on_request(r);
                        }
                        Message::Notification(n) => self.on_notification(n)?,
                        Message::Response(_) => {}
                    }
                }
                recv(task_rx) -> task => {
                    if let Ok(task) = task {
                        self.on_task(task)?;
                    }
                }
            }
        }
    }

    fn send(&self, msg: impl Into<Message>) -> Result<(), Error> {
        self.sender.send(msg.into())?;
        Ok(())
    }

    fn on_task(&mut self, task: Task) -> Result<(), Error> {
        match task {
            Task::Respond(r) => {
                if self.pending.remove(&r.id) {
                    self.send(r)?;
                }
            }
            Task::Publish {
                uri,
                version,
                diagnostics,
            } => {
                if self.docs.get(&uri).is_some_and(|d| d.version == version) {
                    let params = PublishDiagnosticsParams {
                        uri,
                        diagnostics,
                        version: Some(version),
                    };
                    self.send(Notification::new(
                        notif::PublishDiagnostics::METHOD.into(),
                        params,
                    ))?;
                }
            }
        }
        Ok(())
    }

    fn snapshot(&self, uri: &Uri) -> Option<Snapshot> {
        let d = self.docs.get(uri)?;
        Some(Snapshot {
            uri: uri.clone(),
            db: self.db.clone(),
            file: d.file,
            index: d.index.clone(),
            config: self.config.clone(),
        })
    }

    /// Runs `job` on a worker with a snapshot; a cancelled job (an edit arrived) becomes
    /// `on_cancel`, a panicking one `on_panic` — the server stays up either way.
    fn spawn<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
        done: impl FnOnce(Result<T, Failure>) -> Option<Task> + Send + 'static,
    ) {
        let tasks = self.tasks.0.clone();
        let _ = self.pool.send(Box::new(move || {
            let result = std::panic::catch_unwind(AssertUnwindSafe(job)).map_err(|payload| {
                if payload.downcast_ref::<salsa::Cancelled>().is_some() {
                    Failure::Cancelled
                } else {
                    let message = payload
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "panic".into());
                    Failure::Panic(message)
                }
            });
            if let Some(task) = done(result) {
                let _ = tasks.send(task);
            }
        }));
    }

    fn on_request(&mut self, r: Request) {
        self.pending.insert(r.id.clone());
        let id = r.id.clone();
        let respond = move |result: Result<Result<serde_json::Value, String>, Failure>| {
            Some(Task::Respond(match result {
                Ok(Ok(v)) => Response::new_ok(id, v),
                Ok(Err(m)) => Response::new_err(id, ErrorCode::RequestFailed as i32, m),
                Err(Failure::Cancelled) => Response::new_err(
                    id,
                    ErrorCode::ContentModified as i32,
                    "content modified".into(),
                ),
                Err(Failure::Panic(m)) => Response::new_err(id, ErrorCode::InternalError as i32, m),
            }))
        };
        match r.method.as_str() {
            req::CodeLensRequest::METHOD => {
                let Some((s, _)) = self
                    .document_request::<lsp_types::CodeLensParams>(&r, |p| &p.text_document.uri)
                else {
                    return;
                };
                self.spawn(move || Ok(code_lens(&s)), respond);
            }
            req::DocumentSymbolRequest::METHOD => {
                let Some((s, _)) = self
                    .document_request::<lsp_types::DocumentSymbolParams>(&r, |p| {
                        &p.text_document.uri
                    })
                else {
                    return;
                };
                self.spawn(move || Ok(document_symbols(&s)), respond);
            }
            crate::view_sass::METHOD => {
                let Some((s, p)) =
                    self.document_request::<crate::view_sass::Params>(&r, |p| &p.text_document.uri)
                else {
                    return;
                };
                self.spawn(move || view_sass(&s, &p), respond);
            }
            req::GotoDefinition::METHOD => {
                let Some((s, p)) = self
                    .document_request::<lsp_types::GotoDefinitionParams>(&r, |p| {
                        &p.text_document_position_params.text_document.uri
                    })
                else {
                    return;
                };
                let pos = p.text_document_position_params.position;
                self.spawn(move || Ok(definition(&s, pos)), respond);
            }
            req::References::METHOD => {
                let Some((s, p)) = self.document_request::<lsp_types::ReferenceParams>(&r, |p| {
                    &p.text_document_position.text_document.uri
                }) else {
                    return;
                };
                let pos = p.text_document_position.position;
                let decl = p.context.include_declaration;
                self.spawn(move || Ok(references(&s, pos, decl)), respond);
            }
            req::Rename::METHOD => {
                let Some((s, p)) = self.document_request::<lsp_types::RenameParams>(&r, |p| {
                    &p.text_document_position.text_document.uri
                }) else {
                    return;
                };
                let pos = p.text_document_position.position;
                self.spawn(move || rename(&s, pos, &p.new_name), respond);
            }
            req::HoverRequest::METHOD => {
                let Some((s, p)) = self.document_request::<lsp_types::HoverParams>(&r, |p| {
                    &p.text_document_position_params.text_document.uri
                }) else {
                    return;
                };
                let pos = p.text_document_position_params.position;
                self.spawn(move || Ok(hover(&s, pos)), respond);
            }
            req::InlayHintRequest::METHOD => {
                let Some((s, _)) = self
                    .document_request::<lsp_types::InlayHintParams>(&r, |p| &p.text_document.uri)
                else {
                    return;
                };
                self.spawn(move || Ok(inlay_hints(&s)), respond);
            }
            req::WorkspaceSymbolRequest::METHOD => {
                let query = match serde_json::from_value::<lsp_types::WorkspaceSymbolParams>(
                    r.params.clone(),
                ) {
                    Ok(p) => p.query,
                    Err(e) => {
                        self.reply_error(&r.id, ErrorCode::InvalidParams, &e.to_string());
                        return;
                    }
                };
                let snapshots: Vec<Snapshot> =
                    self.docs.keys().filter_map(|u| self.snapshot(u)).collect();
                self.spawn(move || Ok(workspace_symbols(&snapshots, &query)), respond);
            }
            req::SemanticTokensFullRequest::METHOD => {
                let Some((s, _)) = self
                    .document_request::<lsp_types::SemanticTokensParams>(&r, |p| {
                        &p.text_document.uri
                    })
                else {
                    return;
                };
                self.spawn(move || Ok(semantic_tokens(&s)), respond);
            }
            req::FoldingRangeRequest::METHOD => {
                let Some((s, _)) = self
                    .document_request::<lsp_types::FoldingRangeParams>(&r, |p| {
                        &p.text_document.uri
                    })
                else {
                    return;
                };
                self.spawn(move || Ok(folding_ranges(&s)), respond);
            }
            _ => self.reply_error(&r.id, ErrorCode::MethodNotFound, "unknown request"),
        }
    }

    /// Decodes a request's parameters and snapshots its document; answers an error itself
    /// (and returns `None`) when either fails.
    fn document_request<P: serde::de::DeserializeOwned>(
        &mut self,
        r: &Request,
        uri: impl Fn(&P) -> &Uri,
    ) -> Option<(Snapshot, P)> {
        let p: P = match serde_json::from_value(r.params.clone()) {
            Ok(p) => p,
            Err(e) => {
                self.reply_error(&r.id, ErrorCode::InvalidParams, &e.to_string());
                return None;
            }
        };
        match self.snapshot(uri(&p)) {
            Some(s) => Some((s, p)),
            None => {
                self.reply_error(&r.id, ErrorCode::InvalidParams, "document is not open");
                None
            }
        }
    }

    fn reply_error(&mut self, id: &RequestId, code: ErrorCode, message: &str) {
        self.pending.remove(id);
        let _ = self
            .sender
            .send(Response::new_err(id.clone(), code as i32, message.into()).into());
    }

    fn on_notification(&mut self, n: Notification) -> Result<(), Error> {
        match n.method.as_str() {
            notif::DidOpenTextDocument::METHOD => {
                let p: lsp_types::DidOpenTextDocumentParams = serde_json::from_value(n.params)?;
                let doc = p.text_document;
                let file = self.db.add_file(doc.uri.as_str(), doc.text.as_bytes());
                self.docs.insert(
                    doc.uri.clone(),
                    Document {
                        file,
                        index: Arc::new(LineIndex::new(&doc.text)),
                        text: doc.text,
                        version: doc.version,
                    },
                );
                self.changed(&doc.uri)?;
            }
            notif::DidChangeTextDocument::METHOD => {
                let p: lsp_types::DidChangeTextDocumentParams = serde_json::from_value(n.params)?;
                let uri = p.text_document.uri;
                let Some(doc) = self.docs.get_mut(&uri) else {
                    return Ok(());
                };
                for change in p.content_changes {
                    match change.range {
                        Some(range) => {
                            let index = LineIndex::new(&doc.text);
                            let (Some(start), Some(end)) =
                                (index.offset(range.start), index.offset(range.end))
                            else {
                                // Out of sync: keep the text; the next full sync repairs it.
                                continue;
                            };
                            let (start, end) = (usize::from(start), usize::from(end));
                            doc.text
                                .replace_range(start.min(end)..end.max(start), &change.text);
                        }
                        None => doc.text = change.text,
                    }
                }
                doc.version = p.text_document.version;
                doc.index = Arc::new(LineIndex::new(&doc.text));
                let (file, text) = (doc.file, doc.text.clone());
                // Cancels the work running on older snapshots and waits for it to unwind.
                self.db.set_text(file, &text);
                self.changed(&uri)?;
            }
            notif::DidCloseTextDocument::METHOD => {
                let p: lsp_types::DidCloseTextDocumentParams = serde_json::from_value(n.params)?;
                if self.docs.remove(&p.text_document.uri).is_some() {
                    let params = PublishDiagnosticsParams {
                        uri: p.text_document.uri,
                        diagnostics: Vec::new(),
                        version: None,
                    };
                    self.send(Notification::new(
                        notif::PublishDiagnostics::METHOD.into(),
                        params,
                    ))?;
                }
            }
            notif::DidChangeConfiguration::METHOD => {
                let p: lsp_types::DidChangeConfigurationParams = serde_json::from_value(n.params)?;
                let settings = p.settings.get("kiln").cloned().unwrap_or(p.settings);
                if let Ok(config) = serde_json::from_value::<Config>(settings) {
                    self.config = Arc::new(config);
                    let uris: Vec<Uri> = self.docs.keys().cloned().collect();
                    for uri in uris {
                        self.changed(&uri)?;
                    }
                }
            }
            notif::Cancel::METHOD => {
                let p: lsp_types::CancelParams = serde_json::from_value(n.params)?;
                let id = match p.id {
                    lsp_types::NumberOrString::Number(n) => RequestId::from(n),
                    lsp_types::NumberOrString::String(s) => RequestId::from(s),
                };
                if self.pending.contains(&id) {
                    self.reply_error(&id, ErrorCode::RequestCanceled, "cancelled");
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// After a document changed: its diagnostics are recomputed on a snapshot, and open SASS
    /// views of it are told to refresh.
    fn changed(&mut self, uri: &Uri) -> Result<(), Error> {
        let Some(s) = self.snapshot(uri) else {
            return Ok(());
        };
        let version = self.docs[uri].version;
        let for_task = uri.clone();
        self.spawn(
            move || file_diagnostics(&s),
            move |result| match result {
                Ok(diagnostics) => Some(Task::Publish {
                    uri: for_task,
                    version,
                    diagnostics,
                }),
                // A newer edit scheduled its own diagnostics.
                Err(Failure::Cancelled) => None,
                Err(Failure::Panic(m)) => Some(Task::Publish {
                    uri: for_task,
                    version,
                    diagnostics: vec![lsp_types::Diagnostic {
                        severity: Some(lsp_types::DiagnosticSeverity::ERROR),
                        message: format!("kiln: internal error: {m}"),
                        source: Some("kiln".into()),
                        ..lsp_types::Diagnostic::default()
                    }],
                }),
            },
        );
        self.send(Notification::new(
            crate::view_sass::CHANGED.into(),
            serde_json::json!({ "uri": uri }),
        ))
    }
}

/// Why a job produced no value.
enum Failure {
    Cancelled,
    Panic(String),
}

fn lsp_diagnostic(index: &LineIndex, d: &db::Diagnostic) -> lsp_types::Diagnostic {
    lsp_types::Diagnostic {
        range: index.range(d.range),
        severity: Some(match d.severity {
            db::Severity::Error => lsp_types::DiagnosticSeverity::ERROR,
            db::Severity::Warning => lsp_types::DiagnosticSeverity::WARNING,
        }),
        source: Some("kiln".into()),
        message: d.message.clone(),
        ..lsp_types::Diagnostic::default()
    }
}

fn file_diagnostics(s: &Snapshot) -> Vec<lsp_types::Diagnostic> {
    let mut out: Vec<lsp_types::Diagnostic> = analysis::diagnostics(&s.db, s.file, &s.config)
        .iter()
        .map(|d| lsp_diagnostic(&s.index, d))
        .collect();
    let bad = s.config.bad_targets();
    if !bad.is_empty() {
        out.push(lsp_diagnostic(
            &s.index,
            &db::Diagnostic {
                severity: db::Severity::Warning,
                message: format!(
                    "kiln: no code generation for the configured target(s) {} (kiln generates code for {})",
                    bad.join(", "),
                    db::codegen_sms()
                ),
                range: TextRange::empty(TextSize::from(0)),
            },
        ));
    }
    out
}

fn code_lens(s: &Snapshot) -> serde_json::Value {
    let lenses: Vec<CodeLens> = analysis::code_lenses(&s.db, s.file, &s.config)
        .into_iter()
        .map(|(range, title)| CodeLens {
            range: s.index.range(range),
            command: Some(Command {
                title,
                command: String::new(),
                arguments: None,
            }),
            data: None,
        })
        .collect();
    serde_json::to_value(lenses).unwrap_or_default()
}

fn document_symbols(s: &Snapshot) -> serde_json::Value {
    let items = &db::module_items(&s.db, s.file).items;
    #[allow(deprecated)]
    let symbols: Vec<DocumentSymbol> = items
        .iter()
        .filter_map(|i| {
            let kind = match i.kind {
                db::ItemKind::Kernel => SymbolKind::FUNCTION,
                db::ItemKind::DeviceFunction => SymbolKind::METHOD,
                db::ItemKind::Global => SymbolKind::VARIABLE,
                _ => return None,
            };
            Some(DocumentSymbol {
                name: i.name.clone()?,
                detail: Some(
                    match i.kind {
                        db::ItemKind::Kernel => ".entry",
                        db::ItemKind::DeviceFunction => ".func",
                        _ => "variable",
                    }
                    .into(),
                ),
                kind,
                tags: None,
                deprecated: None,
                range: s.index.range(i.range),
                selection_range: s.index.range(i.name_range.unwrap_or(i.range)),
                children: None,
            })
        })
        .collect();
    serde_json::to_value(DocumentSymbolResponse::Nested(symbols)).unwrap_or_default()
}

fn view_sass(s: &Snapshot, p: &crate::view_sass::Params) -> Result<serde_json::Value, String> {
    let at = p.position.and_then(|pos| s.index.offset(pos));
    let view = analysis::sass_view(
        &s.db,
        s.file,
        &s.config,
        p.kernel.as_deref(),
        at,
        p.target.as_deref(),
        p.control_codes,
    )?;
    serde_json::to_value(view).map_err(|e| e.to_string())
}

fn symbol(s: &Snapshot, pos: lsp_types::Position) -> Option<db::navigate::Symbol> {
    let offset = s.index.offset(pos)?;
    db::navigate::symbol_at(&s.db, s.file, offset)
}

fn location(s: &Snapshot, range: TextRange) -> lsp_types::Location {
    lsp_types::Location {
        uri: s.uri.clone(),
        range: s.index.range(range),
    }
}

fn definition(s: &Snapshot, pos: lsp_types::Position) -> serde_json::Value {
    match symbol(s, pos) {
        Some(sym) => serde_json::to_value(location(s, sym.definition())).unwrap_or_default(),
        None => serde_json::Value::Null,
    }
}

fn references(
    s: &Snapshot,
    pos: lsp_types::Position,
    include_declaration: bool,
) -> serde_json::Value {
    let Some(sym) = symbol(s, pos) else {
        return serde_json::Value::Null;
    };
    let ranges = db::navigate::references(&s.db, s.file, &sym);
    let skip = usize::from(!include_declaration);
    let locations: Vec<lsp_types::Location> = ranges
        .into_iter()
        .skip(skip)
        .map(|r| location(s, r))
        .collect();
    serde_json::to_value(locations).unwrap_or_default()
}

fn rename(
    s: &Snapshot,
    pos: lsp_types::Position,
    new_name: &str,
) -> Result<serde_json::Value, String> {
    let sym = symbol(s, pos).ok_or("no symbol to rename here")?;
    let ranges = db::navigate::rename(&s.db, s.file, &sym, new_name)?;
    let edits: Vec<lsp_types::TextEdit> = ranges
        .into_iter()
        .map(|r| lsp_types::TextEdit {
            range: s.index.range(r),
            new_text: new_name.to_string(),
        })
        .collect();
    let edit = lsp_types::WorkspaceEdit {
        changes: Some(HashMap::from([(s.uri.clone(), edits)])),
        ..lsp_types::WorkspaceEdit::default()
    };
    serde_json::to_value(edit).map_err(|e| e.to_string())
}

fn hover(s: &Snapshot, pos: lsp_types::Position) -> serde_json::Value {
    let Some(offset) = s.index.offset(pos) else {
        return serde_json::Value::Null;
    };
    match analysis::hover(&s.db, s.file, &s.config, offset) {
        Some((range, markdown)) => serde_json::to_value(lsp_types::Hover {
            contents: lsp_types::HoverContents::Markup(lsp_types::MarkupContent {
                kind: lsp_types::MarkupKind::Markdown,
                value: markdown,
            }),
            range: Some(s.index.range(range)),
        })
        .unwrap_or_default(),
        None => serde_json::Value::Null,
    }
}

/// The semantic token types the server uses, in legend order.
const TOKEN_TYPES: &[lsp_types::SemanticTokenType] = &[
    lsp_types::SemanticTokenType::KEYWORD,
    lsp_types::SemanticTokenType::MODIFIER,
    lsp_types::SemanticTokenType::MACRO,
    lsp_types::SemanticTokenType::VARIABLE,
    lsp_types::SemanticTokenType::PARAMETER,
    lsp_types::SemanticTokenType::new("label"),
    lsp_types::SemanticTokenType::FUNCTION,
    lsp_types::SemanticTokenType::NUMBER,
    lsp_types::SemanticTokenType::STRING,
    lsp_types::SemanticTokenType::COMMENT,
];

const TOKEN_MODIFIERS: &[lsp_types::SemanticTokenModifier] = &[
    lsp_types::SemanticTokenModifier::DEFAULT_LIBRARY,
    lsp_types::SemanticTokenModifier::STATIC,
];

/// (legend index, modifier bits) of a token class.
fn token_kind(c: db::highlight::TokenClass) -> (u32, u32) {
    use db::highlight::TokenClass as C;
    match c {
        C::Opcode => (0, 0),
        C::Modifier => (1, 0),
        C::Directive => (2, 0),
        C::Register => (3, 0),
        C::SpecialRegister => (3, 1),
        C::Variable => (3, 2),
        C::Parameter => (4, 0),
        C::Label => (5, 0),
        C::Function => (6, 0),
        C::Number => (7, 0),
        C::String => (8, 0),
        C::Comment => (9, 0),
    }
}

fn semantic_tokens(s: &Snapshot) -> serde_json::Value {
    let text = s.file.text(&s.db).clone();
    let mut data = Vec::new();
    let (mut line, mut col) = (0u32, 0u32);
    for (range, class) in db::highlight::semantic_tokens(&s.db, s.file) {
        let (ty, mods) = token_kind(class);
        // One token per line of a token spanning several (a block comment).
        let mut start = usize::from(range.start());
        for piece in text[range].split('\n') {
            let r = TextRange::at(
                TextSize::from(start as u32),
                TextSize::from(piece.len() as u32),
            );
            start += piece.len() + 1;
            if piece.is_empty() {
                continue;
            }
            let p = s.index.position(r.start());
            let length = piece.encode_utf16().count() as u32;
            let delta_line = p.line - line;
            let delta_start = if delta_line == 0 {
                p.character - col
            } else {
                p.character
            };
            data.push(lsp_types::SemanticToken {
                delta_line,
                delta_start,
                length,
                token_type: ty,
                token_modifiers_bitset: mods,
            });
            (line, col) = (p.line, p.character);
        }
    }
    serde_json::to_value(lsp_types::SemanticTokens {
        result_id: None,
        data,
    })
    .unwrap_or_default()
}

fn folding_ranges(s: &Snapshot) -> serde_json::Value {
    let ranges: Vec<lsp_types::FoldingRange> = db::highlight::folding_ranges(&s.db, s.file)
        .into_iter()
        .filter_map(|r| {
            let (a, b) = (s.index.position(r.start()), s.index.position(r.end()));
            (b.line > a.line).then(|| lsp_types::FoldingRange {
                start_line: a.line,
                end_line: b.line,
                ..lsp_types::FoldingRange::default()
            })
        })
        .collect();
    serde_json::to_value(ranges).unwrap_or_default()
}

/// Kernels, device functions and module variables of every open file whose name contains
/// `query` (case-insensitive).
fn workspace_symbols(snapshots: &[Snapshot], query: &str) -> serde_json::Value {
    let query = query.to_lowercase();
    let mut out = Vec::new();
    for s in snapshots {
        for i in &db::module_items(&s.db, s.file).items {
            let Some(name) = &i.name else { continue };
            let kind = match i.kind {
                db::ItemKind::Kernel => SymbolKind::FUNCTION,
                db::ItemKind::DeviceFunction => SymbolKind::METHOD,
                db::ItemKind::Global => SymbolKind::VARIABLE,
                _ => continue,
            };
            if !name.to_lowercase().contains(&query) {
                continue;
            }
            #[allow(deprecated)]
            out.push(lsp_types::SymbolInformation {
                name: name.clone(),
                kind,
                tags: None,
                deprecated: None,
                location: location(s, i.name_range.unwrap_or(i.range)),
                container_name: None,
            });
        }
    }
    serde_json::to_value(out).unwrap_or_default()
}

/// Register-pressure peaks as hints at the end of their lines.
fn inlay_hints(s: &Snapshot) -> serde_json::Value {
    let text = s.file.text(&s.db).clone();
    let hints: Vec<lsp_types::InlayHint> = analysis::pressure_peaks(&s.db, s.file, &s.config)
        .into_iter()
        .map(|(range, label)| {
            let start = usize::from(range.start());
            let eol = text[start..].find('\n').map_or(text.len(), |i| start + i);
            let eol = text[..eol].trim_end_matches('\r').len();
            lsp_types::InlayHint {
                position: s.index.position(TextSize::from(eol as u32)),
                label: lsp_types::InlayHintLabel::String(format!("  {label}")),
                kind: None,
                text_edits: None,
                tooltip: Some(lsp_types::InlayHintTooltip::String(
                    "register pressure peaks here: the general registers live across this \
                     instruction, and the PTX registers among them"
                        .into(),
                )),
                padding_left: Some(true),
                padding_right: None,
                data: None,
            }
        })
        .collect();
    serde_json::to_value(hints).unwrap_or_default()
}
