/**
 * `npm run lint:openapi`: writes the document the app serves to a temporary file and lints it with
 * Redocly's recommended rules (redocly.yaml). Warnings fail as errors do: the contract stays clean.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fetchOpenApiDocument } from './openapi-document.js';

type LintReport = {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
};

const dir = mkdtempSync(path.join(tmpdir(), 'openapi-lint-'));
try {
  const file = path.join(dir, 'openapi.json');
  writeFileSync(file, await fetchOpenApiDocument());
  let output: string;
  try {
    output = execFileSync('redocly', ['lint', file, '--format=json'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      // No telemetry, no update check: the lint runs offline and sends nothing anywhere.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    // redocly exits non-zero on errors but still prints its JSON report.
    output = (error as { stdout?: string }).stdout ?? '';
  }
  const report = JSON.parse(output.slice(output.indexOf('{'))) as LintReport;
  for (const p of report.problems) {
    process.stdout.write(`${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}\n`);
  }
  const { errors, warnings } = report.totals;
  process.stdout.write(`openapi lint: ${errors} errors, ${warnings} warnings\n`);
  process.exitCode = errors + warnings > 0 ? 1 : 0;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
