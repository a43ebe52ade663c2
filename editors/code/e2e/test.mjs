// The extension in a real VS Code: code-server with the packaged .vsix, driven by Debian's
// Chromium through playwright-core, checking what a user sees. run.sh installs everything and
// passes KILN, CODE_SERVER (its entry.js), VSIX, OUT (a folder under target/) and PTX (the
// test file, two kernels for the file's .target).
//
// The expected values come from kiln itself, outside the editor: `kiln build -v` for the
// CodeLens numbers, `kiln sass` for the SASS, `kiln check` for the error's position, and the
// same `kiln lsp` spoken to over stdio for the exact CodeLens titles and SASS views.

import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { chromium } from "playwright-core";

const env = (k) => {
  if (!process.env[k]) {
    console.error(`test.mjs: ${k} is not set (run it through run.sh)`);
    process.exit(2);
  }
  return process.env[k];
};
const KILN = env("KILN");
const CODE_SERVER = env("CODE_SERVER");
const VSIX = env("VSIX");
const OUT = env("OUT");
const PTX = env("PTX");
// Milliseconds between typed keys (0: as fast as the browser takes them).
const TYPE_DELAY = +(process.env.TYPE_DELAY ?? 0);
const TARGET = "sm_80"; // the test file's .target (kiln.targets is left empty)
const FILE = path.basename(PTX);

const run = path.join(OUT, "run");
fs.rmSync(run, { recursive: true, force: true });
for (const f of fs.readdirSync(OUT)) {
  if (f.endsWith(".png")) fs.rmSync(path.join(OUT, f)); // screenshots of an earlier run
}
const dirs = {
  userData: path.join(run, "user-data"),
  extensions: path.join(run, "extensions"),
  workspace: path.join(run, "workspace"),
  chromium: path.join(run, "chromium-profile"),
  scratch: path.join(run, "scratch"),
};
for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
const ptxPath = path.join(dirs.workspace, FILE);
fs.copyFileSync(PTX, ptxPath);
const original = fs.readFileSync(PTX, "utf8");
const lines = original.split("\n");

// ---------------------------------------------------------------------------------------
// Expected values, from kiln outside the editor.

/** `kiln build -v` of a text: kernel -> { regs, spills, stack, occupancy }. */
function buildReport(text) {
  const f = path.join(dirs.scratch, "report.ptx");
  fs.writeFileSync(f, text);
  const r = spawnSync(KILN, ["build", "--arch", TARGET, "-v", f, "-o", f + ".cubin"], {
    encoding: "utf8",
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`kiln build -v failed: ${r.stderr}`);
  const out = {};
  let kernel = null;
  let props = null;
  let last = null;
  for (const l of (r.stdout + r.stderr).split("\n")) {
    let m;
    if ((m = l.match(/Occupancy (\d+% at \d+ threads)/)) && last) out[last].occupancy = m[1];
    else if ((m = l.match(/Function properties for (\S+)/))) kernel = m[1];
    else if ((m = l.match(/(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads/)))
      props = { stack: +m[1], spills: +m[2] + +m[3] };
    else if ((m = l.match(/Used (\d+) registers/)) && kernel && props) {
      out[kernel] = { regs: +m[1], ...props };
      last = kernel;
      kernel = props = null;
    }
  }
  return out;
}

/** `kiln sass` of a text, whole. */
function kilnSass(text) {
  const f = path.join(dirs.scratch, "sass.ptx");
  fs.writeFileSync(f, text);
  const r = spawnSync(KILN, ["sass", "--arch", TARGET, f], { encoding: "utf8", timeout: 60_000 });
  if (r.status !== 0) throw new Error(`kiln sass failed: ${r.stderr}`);
  return r.stdout;
}

/** A minimal LSP client over stdio: the same server, asked outside the editor. */
async function askServer(text, kernels) {
  const p = spawn(KILN, ["lsp"], { stdio: ["pipe", "pipe", "ignore"] });
  let buf = Buffer.alloc(0);
  const pending = new Map();
  p.stdout.on("data", (d) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      const head = buf.indexOf("\r\n\r\n");
      if (head < 0) return;
      const len = +buf.subarray(0, head).toString().match(/Content-Length: (\d+)/i)[1];
      if (buf.length < head + 4 + len) return;
      const msg = JSON.parse(buf.subarray(head + 4, head + 4 + len).toString());
      buf = buf.subarray(head + 4 + len);
      if (msg.id !== undefined && pending.has(msg.id)) {
        pending.get(msg.id)(msg);
        pending.delete(msg.id);
      }
    }
  });
  const send = (m) => {
    const s = JSON.stringify({ jsonrpc: "2.0", ...m });
    p.stdin.write(`Content-Length: ${Buffer.byteLength(s)}\r\n\r\n${s}`);
  };
  let next = 1;
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => reject(new Error(`kiln lsp: ${method} timed out`)), 30_000);
      pending.set(id, (msg) => {
        clearTimeout(timer);
        msg.error ? reject(new Error(JSON.stringify(msg.error))) : resolve(msg.result);
      });
      send({ id, method, params });
    });
  try {
    await request("initialize", {
      processId: null,
      rootUri: null,
      capabilities: {},
      initializationOptions: { targets: [], optLevel: 3, maxrregcount: null, fmad: true },
    });
    send({ method: "initialized", params: {} });
    const uri = "file:///e2e/" + FILE;
    send({
      method: "textDocument/didOpen",
      params: { textDocument: { uri, languageId: "ptx", version: 1, text } },
    });
    const lenses = await request("textDocument/codeLens", { textDocument: { uri } });
    const views = {};
    for (const k of kernels) {
      views[k] = await request("kiln/viewSass", { textDocument: { uri }, kernel: k, target: TARGET });
    }
    await request("shutdown", null);
    send({ method: "exit" });
    return { lenses: lenses.map((l) => ({ line: l.range.start.line, title: l.command.title })), views };
  } finally {
    setTimeout(() => p.kill("SIGKILL"), 2000).unref();
  }
}

/** What the editor must show for a text: per kernel, its lens title and SASS view text. */
async function expected(text) {
  const report = buildReport(text);
  const kernels = Object.keys(report);
  const server = await askServer(text, kernels);
  const sass = kilnSass(text);
  const textLines = text.split("\n");
  const want = {};
  for (const k of kernels) {
    const line = textLines.findIndex((l) => new RegExp(`\\.entry\\s+${k}\\b`).test(l));
    const lens = server.lenses.find((l) => l.line === line);
    const r = report[k];
    const prefix = `${TARGET} · ${r.regs} regs · ${r.spills} B spills · ${r.stack} B stack`;
    // kiln build -v's `Occupancy N% at T threads` line ends the lens (with `(.reqntid)` or
    // `(.maxntid)` after it where the kernel declares its block size).
    const occupancy = ` · occupancy ${r.occupancy}`;
    if (
      !lens ||
      !lens.title.startsWith(prefix) ||
      !r.occupancy ||
      !new RegExp(` · \\d+ instrs${occupancy.replace(/[.%]/g, "\\$&")}( \\(\\.(reqntid|maxntid)\\))?$`).test(lens.title)
    ) {
      throw new Error(
        `kiln lsp's lens for ${k} (${lens?.title}) is not kiln build -v's ${prefix} ... ${occupancy}`,
      );
    }
    const view = server.views[k];
    if (view.error || !sass.includes(view.text)) {
      throw new Error(`kiln lsp's SASS view of ${k} is not kiln sass's listing`);
    }
    // The extension shows the summary as a comment line above the listing.
    // `lines`: the PTX line (0-based) of each line of the view, as the extension keeps it.
    want[k] = {
      line,
      lens: lens.title,
      sass: `// ${view.summary}\n${view.text}`,
      lines: [null, ...view.lines],
    };
  }
  return want;
}

// ---------------------------------------------------------------------------------------
// code-server.

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const csArgs = [
  "--user-data-dir", dirs.userData,
  "--extensions-dir", dirs.extensions,
  "--config", path.join(run, "code-server.yaml"),
  "--disable-telemetry",
  "--disable-update-check",
];
fs.writeFileSync(path.join(run, "code-server.yaml"), "auth: none\ncert: false\n");
// Its logs and state under run/, not in the user's home.
const csEnv = {
  ...process.env,
  XDG_DATA_HOME: path.join(run, "xdg", "data"),
  XDG_CONFIG_HOME: path.join(run, "xdg", "config"),
  XDG_CACHE_HOME: path.join(run, "xdg", "cache"),
};

let server = null;
function killServer() {
  if (server && server.exitCode === null && server.signalCode === null) {
    try {
      process.kill(-server.pid, "SIGKILL"); // its whole process group: extension host, kiln lsp
    } catch {
      /* already gone */
    }
  }
  fs.rmSync(path.join(OUT, "code-server.pid"), { force: true }); // run.sh's fallback, not needed
}
process.on("exit", killServer);
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, () => {
    killServer();
    process.exit(1);
  });
}

async function startServer(port) {
  const log = fs.openSync(path.join(OUT, "code-server.log"), "w");
  server = spawn(
    process.execPath,
    [CODE_SERVER, ...csArgs, "--auth", "none", "--bind-addr", `127.0.0.1:${port}`,
      "--disable-workspace-trust", "--disable-getting-started-override", dirs.workspace],
    {
      stdio: ["ignore", log, log],
      detached: true,
      env: csEnv,
    },
  );
  fs.writeFileSync(path.join(OUT, "code-server.pid"), String(server.pid));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error("code-server exited; see target/editor-e2e/code-server.log");
    try {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (r.ok) return;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error("code-server did not answer in 60 s");
}

// ---------------------------------------------------------------------------------------
// The checks.

const results = [];
let page = null;
async function check(name, fn) {
  const t = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`ok   ${name} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
    return true;
  } catch (e) {
    results.push({ name, ok: false });
    console.log(`FAIL ${name} (${((Date.now() - t) / 1000).toFixed(1)} s): ${e.message ?? e}`);
    if (page) {
      const shot = path.join(OUT, `failure-${results.length}.png`);
      await page.screenshot({ path: shot }).catch(() => {});
      console.log(`     screenshot: ${shot}`);
    }
    return false;
  }
}

/**
 * Polls `fn` until it returns `true` or `ms` pass; then throws `what` with the last thing `fn`
 * returned (a description of what it saw) or threw.
 */
async function until(what, fn, ms = 30_000) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last === true) return;
    } catch (e) {
      last = e.message ?? String(e);
    }
    if (Date.now() > deadline) {
      throw new Error(`waited ${ms / 1000} s for ${what}; saw: ${typeof last === "string" ? last : JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The first line where an editor's text differs from the wanted one. */
function difference(shown, want) {
  const a = shown.split("\n");
  const b = norm(want).split("\n").map(norm);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `line ${i + 1}: shown ${JSON.stringify(a[i])}, want ${JSON.stringify(b[i])} (${a.length} lines shown, ${b.length} wanted)`;
  }
  return "equal";
}

const norm = (s) => s.replace(/\u00a0/g, " ").replace(/\s+$/, "");

/** The text of an editor's rendered lines, in order (Monaco renders the visible lines only). */
async function editorText(editor) {
  return editor.evaluate((el) => {
    const rows = [...el.querySelectorAll(".view-lines .view-line")].map((l) => ({
      top: parseFloat(l.style.top),
      text: l.textContent.replace(/\u00a0/g, " ").replace(/\s+$/, ""),
    }));
    rows.sort((a, b) => a.top - b.top);
    return rows.map((r) => r.text).join("\n").replace(/\s+$/, "");
  });
}

/** The CodeLens titles shown in an editor, each with the text of the line below it. */
async function lensesShown(editor) {
  return editor.evaluate((el) => {
    const lines = [...el.querySelectorAll(".view-lines .view-line")].map((l) => ({
      top: l.getBoundingClientRect().top,
      text: l.textContent.replace(/\u00a0/g, " "),
    }));
    return [...el.querySelectorAll(".codelens-decoration")].map((d) => {
      const top = d.getBoundingClientRect().top;
      const below = lines.filter((l) => l.top > top).sort((a, b) => a.top - b.top)[0];
      return { title: d.textContent.replace(/\u00a0/g, " ").trim(), line: below ? below.text.trim() : null };
    });
  });
}

/**
 * The texts of an editor's lines that carry an extension's decoration (`ced-…` classes):
 * "background", a whole-line background (the highlight); "opacity", text drawn below full
 * opacity (dimmed).
 */
async function decorated(editor, kind) {
  return editor.evaluate((el, kind) => {
    const lineAt = new Map(
      [...el.querySelectorAll(".view-lines .view-line")].map((l) => [
        parseFloat(l.style.top),
        l.textContent.replace(/\u00a0/g, " ").trim(),
      ]),
    );
    const out = new Set();
    if (kind === "background") {
      for (const row of el.querySelectorAll(".view-overlays > div")) {
        const lit = [...row.querySelectorAll("[class*='ced-']")].some(
          (d) => !["rgba(0, 0, 0, 0)", "transparent"].includes(getComputedStyle(d).backgroundColor),
        );
        if (lit) out.add(parseFloat(row.style.top));
      }
    } else {
      for (const line of el.querySelectorAll(".view-lines .view-line")) {
        const dim = [...line.querySelectorAll("span[class*='ced-']")].some((s) => parseFloat(getComputedStyle(s).opacity) < 1);
        if (dim) out.add(parseFloat(line.style.top));
      }
    }
    return [...out].sort((a, b) => a - b).map((top) => lineAt.get(top) ?? `?top=${top}`);
  }, kind);
}

async function runCommand(title) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: 10_000 });
  await input.fill(">" + title);
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first();
  await row.waitFor({ state: "visible", timeout: 10_000 });
  await page.keyboard.press("Enter");
}

async function gotoLine(n) {
  await page.keyboard.press("Control+G");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: 10_000 });
  await input.fill(`:${n}`);
  await page.keyboard.press("Enter");
  await input.waitFor({ state: "hidden", timeout: 10_000 });
}

async function main() {
  const want0 = await expected(original);
  const kernels = Object.keys(want0);
  if (kernels.length < 2) throw new Error(`${FILE}: want two kernels, kiln build -v reports ${kernels}`);

  // The user's settings: the kiln binary under test, and a quiet workbench. Suggestions and
  // auto-closing are off so that typed text lands as typed.
  fs.mkdirSync(path.join(dirs.userData, "User"), { recursive: true });
  fs.writeFileSync(
    path.join(dirs.userData, "User", "settings.json"),
    JSON.stringify(
      {
        "kiln.path": KILN,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": false,
        "workbench.enableExperiments": false,
        "telemetry.telemetryLevel": "off",
        "extensions.autoUpdate": false,
        "extensions.autoCheckUpdates": false,
        "extensions.ignoreRecommendations": true,
        "update.mode": "none",
        "security.workspace.trust.enabled": false,
        "chat.commandCenter.enabled": false,
        "editor.quickSuggestions": { other: false, comments: false, strings: false },
        "editor.suggestOnTriggerCharacters": false,
        "editor.wordBasedSuggestions": "off",
        "editor.autoClosingBrackets": "never",
        "editor.autoClosingQuotes": "never",
        "editor.minimap.enabled": false,
        "files.autoSave": "off",
        "git.enabled": false,
        "git.openRepositoryInParentFolders": "never",
      },
      null,
      2,
    ),
  );

  let t = Date.now();
  const inst = spawnSync(process.execPath, [CODE_SERVER, ...csArgs, "--install-extension", VSIX], {
    encoding: "utf8",
    timeout: 120_000,
    env: csEnv,
  });
  if (inst.status !== 0 || !fs.readdirSync(dirs.extensions).some((d) => d.startsWith("kiln.kiln-ptx-"))) {
    throw new Error(`installing ${VSIX} failed: ${inst.stdout}${inst.stderr}`);
  }
  console.log(`installed ${path.basename(VSIX)} into code-server (${((Date.now() - t) / 1000).toFixed(1)} s)`);

  const port = await freePort();
  t = Date.now();
  await startServer(port);
  console.log(`code-server on 127.0.0.1:${port} (${((Date.now() - t) / 1000).toFixed(1)} s)`);

  const context = await chromium.launchPersistentContext(dirs.chromium, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
    viewport: { width: 1600, height: 1000 },
    timeout: 60_000,
  });
  try {
    page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(30_000);
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(dirs.workspace)}`, {
      timeout: 60_000,
    });
    await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
    const ptxEditor = page.locator(".editor-group-container").first().locator(".monaco-editor").first();

    const opened = await check(`${FILE} opens as PTX (language id ptx, TextMate colouring)`, async () => {
      // A click in the Explorer, as a user would (Quick Open lists files with ripgrep, which
      // this install leaves out).
      await page.locator(".explorer-folders-view .monaco-list-row", { hasText: FILE }).first().dblclick();
      await page.locator(".tab", { hasText: FILE }).waitFor();
      await until("the status bar names the language PTX", async () =>
        (await page.locator('[id="status.editor.mode"]').innerText()).trim() === "PTX");
      // The TextMate grammar's tokens: `.entry` and the opcode get token classes (mtkN) other
      // than the plain text's, and at least four distinct ones are on screen.
      await until("coloured tokens", async () =>
        ptxEditor.evaluate((el) => {
          const spans = [...el.querySelectorAll(".view-line span span")];
          const cls = (text) => spans.find((s) => s.textContent.trim() === text)?.className;
          const classes = new Set(spans.map((s) => s.className));
          const plain = cls("first") ?? "";
          const opcode = cls("ld.param.u64") ?? cls("ld");
          return classes.size >= 4 && !!cls(".entry") && cls(".entry") !== plain && !!opcode && opcode !== plain
            ? true
            : `${classes.size} token classes; .entry: ${cls(".entry")}, ld: ${opcode}, plain: ${plain}`;
        }));
    });

    if (!opened) throw new Error(`${FILE} did not open: the other checks cannot run`);

    await check(`the status bar shows kiln's targets`, async () => {
      await until("a `kiln: .target` status item", async () =>
        (await page.locator(".statusbar-item", { hasText: "kiln: .target" }).count()) > 0);
    });

    await check(`a CodeLens above each kernel, equal to kiln lsp's (and kiln build -v's numbers)`, async () => {
      await until(
        `lenses ${kernels.map((k) => JSON.stringify(want0[k].lens)).join(", ")}`,
        async () => {
          const shown = await lensesShown(ptxEditor);
          return kernels.every((k) =>
            shown.some((s) => s.title === want0[k].lens && new RegExp(`\\.entry\\s+${k}\\b`).test(s.line)))
            ? true
            : JSON.stringify(shown);
        },
        60_000,
      );
    });

    // The error: a register that is not declared, typed on a new line after line 11.
    const errLine = lines.findIndex((l) => l.includes("mov.u32 %r1, %tid.x")) + 2; // 1-based, after it
    const errText = "add.u32 %r9, %r1, 1;";
    await check(`a typed error shows in the Problems panel at its line`, async () => {
      const bad = [...lines.slice(0, errLine - 1), "    " + errText, ...lines.slice(errLine - 1)].join("\n");
      const f = path.join(dirs.scratch, "bad.ptx");
      fs.writeFileSync(f, bad);
      const c = spawnSync(KILN, ["check", f], { encoding: "utf8", timeout: 60_000 });
      const m = (c.stdout + c.stderr).match(/bad\.ptx:(\d+):(\d+): error: (.*)/);
      if (!m) throw new Error(`kiln check finds no error in the edited text: ${c.stdout}${c.stderr}`);
      const [, wl, wc, msg] = m;
      await ptxEditor.locator(".view-lines").click();
      await gotoLine(errLine - 1);
      await page.keyboard.press("End");
      await page.keyboard.press("Enter");
      await page.keyboard.type(errText, { delay: TYPE_DELAY });
      await runCommand("Problems: Focus on Problems View");
      const panel = page.locator(".markers-panel");
      await until(`the Problems panel lists "${msg}" at [Ln ${wl}, Col ${wc}]`, async () => {
        const text = norm(await panel.innerText());
        return text.includes(msg) && text.includes(`[Ln ${wl}, Col ${wc}]`) ? true : text;
      });
      await until("a red squiggle in the editor", async () => (await ptxEditor.locator(".squiggly-error").count()) > 0);
      // Take it out again: the panel empties.
      await ptxEditor.locator(".view-lines").click();
      await gotoLine(errLine);
      await page.keyboard.press("Control+Shift+K");
      await until("the text back to the file's", async () => (await editorText(ptxEditor)).includes(errText) === false);
      await until("no problems left", async () => (await panel.innerText()).includes("No problems have been detected"));
    });

    const sassEditor = page.locator(".editor-group-container").nth(1).locator(".monaco-editor").first();
    const first = kernels[0];
    await check(`kiln: Show SASS opens the SASS of the kernel under the cursor (${first}), as kiln lsp/kiln sass give it`, async () => {
      await ptxEditor.locator(".view-lines").click();
      await gotoLine(errLine - 1);
      await runCommand("kiln: Show SASS");
      await page.locator(".tab", { hasText: `${first}.${TARGET}.sass` }).waitFor();
      await until("the SASS view's text", async () => {
        const text = await editorText(sassEditor);
        if (!text.includes("EXIT")) return false;
        return text === norm(want0[first].sass) ? true : difference(text, want0[first].sass);
      });
    });

    // An edit: two lines typed into the first kernel, a dead move (no SASS: dimmed) and an add
    // (one more instruction, an IADD3). The lens and the open view follow.
    const deadText = "mov.u32 %r3, 9;";
    const addText = "add.u32 %r1, %r1, 5;";
    const edited = [...lines.slice(0, errLine - 1), "    " + deadText, "    " + addText, ...lines.slice(errLine - 1)].join("\n");
    const want1 = await expected(edited);
    await check(`an edit changes ${first}'s CodeLens and its open SASS view`, async () => {
      if (want1[first].lens === want0[first].lens) throw new Error(`the edit does not change ${first}'s lens`);
      if (!want1[first].sass.includes("IADD3")) throw new Error("the edit makes no IADD3");
      await ptxEditor.locator(".view-lines").click();
      await gotoLine(errLine - 1);
      await page.keyboard.press("End");
      await page.keyboard.press("Enter");
      await page.keyboard.type(deadText, { delay: TYPE_DELAY });
      await page.keyboard.press("Enter");
      await page.keyboard.type(addText, { delay: TYPE_DELAY });
      await until(`${first}'s lens "${want1[first].lens}"`, async () => {
        const shown = await lensesShown(ptxEditor);
        return kernels.every((k) => shown.some((s) => s.title === want1[k].lens && s.line.includes(`entry ${k}`)))
          ? true
          : JSON.stringify(shown);
      });
      await until("the SASS view updated", async () => {
        const text = await editorText(sassEditor);
        return text === norm(want1[first].sass) ? true : difference(text, want1[first].sass);
      });
    });

    // The line map: with the cursor on the add in the PTX editor, the view highlights that
    // line's SASS (the IADD3), and the PTX lines of the kernel that became no SASS (the dead
    // move) are dimmed.
    await check(`the view highlights the SASS of the PTX line under the cursor`, async () => {
      const cursor = errLine; // 0-based: the add, the line typed last, where the cursor is
      const sassLines = norm(want1[first].sass).split("\n").map(norm);
      const wantLit = want1[first].lines.flatMap((l, i) => (l === cursor ? [sassLines[i].trim()] : []));
      const mapped = new Set(want1[first].lines.filter((l) => l !== null));
      const editedLines = edited.split("\n");
      const [lo, hi] = [Math.min(...mapped), Math.max(...mapped)];
      const wantDim = editedLines
        .map((t, n) => ({ t: t.trim(), n }))
        .filter(({ t, n }) => n >= lo && n <= hi && t && !t.startsWith("//") && !mapped.has(n))
        .map(({ t }) => t);
      if (!wantLit.some((l) => l.includes("IADD3"))) throw new Error(`kiln lsp maps no IADD3 to line ${cursor + 1}`);
      if (!wantDim.includes(deadText)) throw new Error(`kiln lsp maps SASS to the dead ${deadText}`);
      await until(`highlighted ${JSON.stringify(wantLit)}, dimmed ${JSON.stringify(wantDim)}`, async () => {
        const lit = await decorated(sassEditor, "background");
        const dim = await decorated(ptxEditor, "opacity");
        return JSON.stringify(lit) === JSON.stringify(wantLit) && JSON.stringify(dim) === JSON.stringify(wantDim)
          ? true
          : `highlighted ${JSON.stringify(lit)}, dimmed ${JSON.stringify(dim)}`;
      }, 10_000);
    });

    const shot = path.join(OUT, "editor-e2e.png");
    await page.screenshot({ path: shot });
    console.log(`screenshot: ${shot}`);
  } finally {
    await context.close().catch(() => {});
  }
}

const t0 = Date.now();
try {
  await main();
} catch (e) {
  console.log(`FAIL setup: ${e.stack ?? e}`);
  if (page) await page.screenshot({ path: path.join(OUT, "failure-setup.png") }).catch(() => {});
}
killServer();
// Every check counts, run or not (a setup failure leaves the later ones unrun).
const CHECKS = 7;
const passed = results.filter((r) => r.ok).length;
const failed = CHECKS - passed;
console.log(`editor-e2e: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
console.log(`RESULT editor-e2e checks=${CHECKS} passed=${passed} failed=${failed}`);
process.exit(failed === 0 ? 0 : 1);
