import express, { type Router } from 'express';

/**
 * What the API's two HTML pages (the reference page, the chart page) share: a Content-Security-Policy
 * that lets in nothing but this origin (no inline script, no framing), and a router that puts it on
 * every answer under the page's path and answers the path itself with the page.
 */

/** The policy; `inlineStyles` for a page whose library writes `<style>`-level styles (Swagger UI). */
export function pageCsp(opts: { inlineStyles: boolean }): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    opts.inlineStyles ? "style-src 'self' 'unsafe-inline'" : "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** A router for the page at `routePath`: `csp` on every answer, `html` at its root (five minutes' cache). */
export function pageRouter(routePath: string, csp: string, html: string): Router {
  const router = express.Router({ strict: false });
  router.use((_req, res, next) => {
    res.locals['route'] = routePath;
    res.setHeader('Content-Security-Policy', csp);
    next();
  });
  router.get('/', (_req, res) => {
    res.setHeader('cache-control', 'public, max-age=300');
    res.type('html').send(html);
  });
  return router;
}
