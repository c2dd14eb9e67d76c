/**
 * The request steps (request.ts: id, logger, access line, the guard's check) run inside each route's own
 * handler instead of as a Hono middleware in front of every route. A route with one handler then takes Hono's
 * direct dispatch: no compose, none of its per-request closures and async steps (one async step here instead
 * of four; bench scenario 9). Every handler is wrapped as it is added to the app's router, and the not-found
 * answer is too, so every request is entered and checked exactly as the `*` middleware did: matched or not,
 * whatever route group registered it, before or after createApp. With tracing on, `wrap` (trace.ts) puts each
 * request's span around the steps and the route, made once per route: an unsampled request takes the same path.
 */
import type { Context, ErrorHandler, MiddlewareHandler, Next, NotFoundHandler } from 'hono';
import type { Router } from 'hono/router';
import type { RequestSteps } from './request.js';

type Handler = (c: Context, next: Next) => Response | void | Promise<Response | void>;

/** What is wrapped: the app's router (what Hono adds every handler to) and its not-found answer. */
interface RoutedApp {
  router: Router<[Handler, unknown]>;
  notFound(handler: NotFoundHandler): unknown;
}

export function runAroundRoutes(
  app: RoutedApp,
  steps: RequestSteps,
  onError: ErrorHandler,
  notFound: NotFoundHandler,
  wrap?: (inner: MiddlewareHandler) => MiddlewareHandler,
): void {
  const { enter, leave } = steps;
  /** One request through the steps and the route, as the middleware did it (compose's rules for the answer). */
  const entered = async (c: Context, handler: Handler, next: Next): Promise<Response> => {
    let res: Response | void;
    let isError = false;
    try {
      let refused = enter(c);
      if (refused instanceof Promise) refused = await refused;
      res = refused ?? (await handler(c, next));
    } catch (err) {
      if (!(err instanceof Error)) throw err;
      res = await onError(err, c);
      isError = true;
    }
    if (res && (!c.finalized || isError)) c.res = res;
    else if (!c.finalized) c.res = await notFound(c);
    leave(c);
    return c.res;
  };
  const around = (handler: Handler): MiddlewareHandler => {
    const enterWith: MiddlewareHandler = (c, next) => entered(c, handler, next);
    const first = wrap ? wrap(enterWith) : enterWith;
    return (c, next) =>
      // Entered already: a second handler the request matched (several on one path), or not-found after a route.
      c.get('requestId') === undefined ? first(c, next) : (handler(c, next) as Promise<Response | void>);
  };

  const router = app.router;
  const add = router.add.bind(router);
  router.add = (method, path, [handler, route]) => add(method, path, [around(handler) as Handler, route]);
  app.notFound(around(notFound as Handler) as NotFoundHandler);
}
