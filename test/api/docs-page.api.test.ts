import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

/** Every `src="..."` and `href="..."` of a page. */
function references(html: string): string[] {
  return [...html.matchAll(/\s(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
}

describe('GET /docs', () => {
  it('serves the reference page without credentials, every asset from this server', async () => {
    const res = await ctx.http.get('/docs').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    const refs = references(res.text);
    expect(refs).toEqual(
      expect.arrayContaining([
        '/docs/assets/swagger-ui.css',
        '/docs/assets/swagger-ui-bundle.js',
        '/docs/assets/init.js',
      ]),
    );
    for (const ref of refs) {
      expect(ref, 'no CDN, no other host').toMatch(/^\/docs\//);
      const asset = await ctx.http.get(ref).expect(200);
      expect(Number(asset.headers['content-length'] ?? asset.text?.length ?? 0), ref).toBeGreaterThan(0);
    }
  });

  it('renders the live document of this server and never calls the public validator', async () => {
    const init = await ctx.http.get('/docs/assets/init.js').expect(200);
    expect(init.headers['content-type']).toMatch(/javascript/);
    expect(init.text).toContain("'/v1/openapi.json'");
    expect(init.text).toContain('validatorUrl: null');
    await ctx.http.get('/v1/openapi.json').expect(200);
  });

  it('loads no stylesheet resource from another host', async () => {
    const css = await ctx.http.get('/docs/assets/swagger-ui.css').expect(200);
    expect(css.headers['content-type']).toMatch(/^text\/css/);
    const urls = [...css.text.matchAll(/url\(([^)]*)\)/g)].map((m) => m[1]!.replace(/["']/g, ''));
    expect(urls.filter((u) => !u.startsWith('data:'))).toEqual([]);
  });

  it('serves only the listed assets of the package', async () => {
    await ctx.http.get('/docs/assets/index.html').expect(404);
    await ctx.http.get('/docs/assets/swagger-initializer.js').expect(404);
  });
});
