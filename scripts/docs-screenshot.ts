/**
 * `npm run docs:screenshot [-- file.png]`: opens /docs in headless Chromium (Debian's `chromium`, or
 * CHROMIUM=/path) against a local server and saves a screenshot, so a person can see the page
 * without a browser. Chromium runs with a fresh profile and no background network traffic: the page
 * must render from this server alone.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startDocumentServer } from './openapi-document.js';

const output = path.resolve(process.argv[2] ?? path.join(tmpdir(), 'voice-agent-api-docs.png'));
const chromium = process.env.CHROMIUM ?? 'chromium';
const profile = mkdtempSync(path.join(tmpdir(), 'docs-chromium-'));
const server = await startDocumentServer();
try {
  // Asynchronous: the server answering Chromium runs in this very process.
  await promisify(execFile)(
    chromium,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--hide-scrollbars',
      `--user-data-dir=${profile}`,
      '--window-size=1280,1600',
      // Lets the page fetch the document and render before the picture is taken.
      '--virtual-time-budget=15000',
      `--screenshot=${output}`,
      `${server.url}/docs`,
    ],
    { timeout: 120_000 },
  );
  process.stdout.write(`docs screenshot: ${output} (${statSync(output).size} bytes)\n`);
} finally {
  await server.close();
  rmSync(profile, { recursive: true, force: true });
}
