// The browser harness of the editor tests, the screenshots and the benchmark: starts the
// real `marionette editor` binary on a temporary project (with a temporary HOME), reads the
// URL from its first line, and launches Debian's Chromium (headless, SwiftShader WebGL)
// through playwright-core. Everything it starts is stopped and every folder it makes is
// removed by close(), also after a failure.
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const root = resolve(here, '../..');
export const BINARY = process.env.MN_CLI ?? resolve(root, 'build/marionette');
export const ASSETS = process.env.MN_EDITOR_ASSETS ?? resolve(root, 'web/editor/dist');
const CHROMIUM = process.env.MN_CHROMIUM ?? '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
  '--ignore-gpu-blocklist',
];

/** A scratch folder holding the project, HOME and the browser's profile and temporaries. */
export function makeScratch(prefix = 'mn_editor_') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const paths = { dir, project: join(dir, 'project'), home: join(dir, 'home'), profile: join(dir, 'profile'), tmp: join(dir, 'tmp') };
  for (const p of [paths.project, paths.home, paths.profile, paths.tmp]) mkdirSync(p);
  return paths;
}

/** Starts the server on a project folder; resolves with {proc, url, stop()}. */
export function startServer(project, scratch) {
  return new Promise((res, rej) => {
    const proc = spawn(BINARY, ['editor', project, '--port', '0', '--assets', ASSETS], {
      env: { ...process.env, HOME: scratch.home, XDG_DATA_HOME: join(scratch.home, '.local/share'), TMPDIR: scratch.tmp },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '',
      err = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      rej(new Error(`no URL from the server: ${err}`));
    }, 20000);
    proc.stdout.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0 && !proc._url) {
        proc._url = out.slice(0, nl).trim();
        clearTimeout(timer);
        res({
          proc,
          url: proc._url,
          log: () => out + err,
          stop(signal = 'SIGTERM') {
            return new Promise((done) => {
              if (proc.exitCode !== null || proc.signalCode !== null) {
                done();
                return;
              }
              proc.once('exit', () => done());
              proc.kill(signal);
            });
          },
        });
      }
    });
    proc.stderr.on('data', (d) => {
      err += d;
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      if (!proc._url) rej(new Error(`the server exited (${code}): ${err}`));
    });
  });
}

/** Chromium through playwright-core, with the scratch profile. */
export async function launchBrowser(scratch, viewport = { width: 1440, height: 900 }) {
  const before = process.env.TMPDIR;
  process.env.TMPDIR = scratch.tmp;
  try {
    const context = await chromium.launchPersistentContext(scratch.profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
      viewport,
      deviceScaleFactor: 1,
    });
    return context;
  } finally {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
  }
}

/** Opens the editor in a new page and waits for window.marionette.ready. */
export async function openEditor(context, url, errors = []) {
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.goto(url);
  await page.waitForFunction(() => window.marionette && window.marionette.state, null, { timeout: 30000 });
  await page.evaluate(() => window.marionette.ready);
  return page;
}

/** Waits until the page's save indicator reads Saved. */
export async function waitSaved(page, timeout = 10000) {
  await page.waitForFunction(
    () => window.marionette.state().saveStatus === 'saved' && document.getElementById('save-status').textContent === 'Saved',
    null,
    { timeout },
  );
}

/** A smooth mouse drag from a joint's screen position by (dx, dy) pixels in n steps. */
export async function dragJoint(page, joint, view, dx, dy, steps = 20) {
  const p = await page.evaluate(([j, v]) => window.marionette.screen(j, v), [joint, view]);
  await page.mouse.move(p.x, p.y);
  await page.mouse.down();
  for (let i = 1; i <= steps; i++) await page.mouse.move(p.x + (dx * i) / steps, p.y + (dy * i) / steps);
  await page.mouse.up();
  return p;
}

/** Hides the status line's passing message (a screenshot shows the page, not the toast). */
export async function hideStatus(page) {
  await page.evaluate(() => document.getElementById('status-line')?.classList.remove('show'));
  await page.waitForTimeout(350);
}

export function removeScratch(scratch) {
  if (scratch) rmSync(scratch.dir, { recursive: true, force: true });
}
