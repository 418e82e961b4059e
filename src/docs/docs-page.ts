import { createRequire } from 'node:module';
import path from 'node:path';
import { Router } from 'express';

/*
 * The API reference page: Swagger UI from the swagger-ui-dist package's own files, served by this
 * server (no CDN, so it works offline and behind a firewall), rendering the live /v1/openapi.json.
 * The initializer is a file rather than an inline script, so a strict Content-Security-Policy
 * (script-src 'self') still allows it.
 */

const ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png'];

const swaggerUiDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Voice Agent Management API reference</title>
    <link rel="stylesheet" href="/docs/assets/swagger-ui.css" />
    <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png" sizes="32x32" />
    <link rel="icon" type="image/png" href="/docs/assets/favicon-16x16.png" sizes="16x16" />
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/assets/swagger-ui-bundle.js"></script>
    <script src="/docs/assets/init.js"></script>
  </body>
</html>
`;

// validatorUrl: null keeps Swagger UI from sending the document to validator.swagger.io.
const INIT = `window.ui = SwaggerUIBundle({
  url: new URL('/v1/openapi.json', window.location.href).toString(),
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  displayOperationId: true,
  defaultModelsExpandDepth: 0,
  docExpansion: 'list',
  tryItOutEnabled: false,
  persistAuthorization: false,
});
`;

/** GET /docs and its assets; public, like the document it renders. */
export function docsRouter(): Router {
  const router = Router();
  router.get('/', (_req, res) => {
    res.type('html').set('Cache-Control', 'no-cache').send(PAGE);
  });
  router.get('/assets/init.js', (_req, res) => {
    res.type('application/javascript').set('Cache-Control', 'no-cache').send(INIT);
  });
  for (const asset of ASSETS) {
    router.get(`/assets/${asset}`, (_req, res, next) => {
      res.sendFile(asset, { root: swaggerUiDir, maxAge: '1h' }, (error) => error && next(error));
    });
  }
  return router;
}
