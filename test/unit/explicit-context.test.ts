import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

function sourceFiles(): { file: string; text: string }[] {
  return (readdirSync(src, { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts'))
    .map((file) => ({ file: file.split(path.sep).join('/'), text: readFileSync(path.join(src, file), 'utf8') }));
}

describe('no hidden context (docs/architecture.md, "Wiring")', () => {
  it('AsyncLocalStorage carries only the request context (src/audit/request-context.ts)', () => {
    const users = sourceFiles().filter(({ text }) => /new AsyncLocalStorage\b/.test(text));
    expect(users.map(({ file }) => file)).toEqual(['audit/request-context.ts']);
    // Besides it, only Node's fence reads async_hooks: keepTickObjectShape asks for one tick object.
    const hooks = sourceFiles().filter(({ text }) => text.includes('node:async_hooks'));
    expect(hooks.map(({ file }) => file).sort()).toEqual(['audit/request-context.ts', 'platform/node.ts']);
  });

  it('no database handle is wrapped: a service names its audited transactions in its constructor', () => {
    const proxies = sourceFiles().filter(({ text }) => /new Proxy\(/.test(text));
    expect(proxies.map(({ file }) => file)).toEqual([]);
  });
});
