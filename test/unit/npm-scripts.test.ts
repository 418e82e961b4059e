import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const { scripts } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>;
};

/** Scripts that start the server or another process an operator stops with a signal. */
const LONG_RUNNING = ['start', 'start:prod', 'dev', 'test', 'test:cluster', 'cli', 'migrate', 'bench', 'fuzz', 'mcp'];

describe('npm scripts', () => {
  it('hand signals to node: every long-running one replaces the shell with exec', () => {
    for (const name of LONG_RUNNING) {
      // `exec env NAME=value node ...`: env sets the variables and hands its process to node in turn.
      expect(scripts[name], name).toMatch(/^exec (env ([A-Z_]+=\S+ )+)?(node|tsx|vitest) /);
      expect(scripts[name], name).not.toMatch(/&&|;|\|/); // one command: nothing left for the shell
    }
  });
});
