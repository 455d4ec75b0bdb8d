import type { RequestHandler } from 'express';
import { HttpError } from '../http-error';
import { canonicalTimeZone, renderDates } from '../time';

/**
 * Picks the zone for dates in the response: query `timezone`, else header `X-Timezone`,
 * else the default. Answers 400 for a zone that does not exist. `X-Timezone` on the
 * response always names the zone used.
 */
export function timezone(defaultZone: string): RequestHandler {
  return (req, res, next) => {
    res.setHeader('X-Timezone', defaultZone);
    res.locals.timezone = defaultZone;
    const fromQuery = req.query.timezone;
    const asked = typeof fromQuery === 'string' ? fromQuery : req.get('X-Timezone');
    if (asked === undefined || asked === '') return next();
    const zone = canonicalTimeZone(asked);
    if (!zone) {
      return next(new HttpError(400, `unknown time zone "${asked}"; use an IANA name such as Asia/Kolkata or Europe/London`));
    }
    res.locals.timezone = zone;
    res.setHeader('X-Timezone', zone);
    next();
  };
}

/**
 * Renders date fields of every JSON body in the request's zone. Installed after the
 * OpenAPI validator so that response validation sees the rendered strings.
 */
export function renderDatesInZone(): RequestHandler {
  return (_req, res, next) => {
    const send = res.json.bind(res);
    res.json = (body?: unknown) => send(renderDates(body, res.locals.timezone as string));
    next();
  };
}
