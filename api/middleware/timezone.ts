import type { RequestHandler } from 'express';
import { HttpError } from '../../domain/shared/http-error';
import { canonicalTimeZone, renderDates } from '../../domain/shared/time';

/**
 * Picks the zone for dates in the response: query `timezone`, else header `X-Timezone`,
 * else the default. Either one that names no zone (empty, repeated, unknown, too long) is the
 * contract's 400, before the validator could call it a 422: the served document lists the
 * zones (api/openapi-document.ts), and this is where that list is enforced. `X-Timezone` on
 * the response always names the zone used.
 */
export function timezone(defaultZone: string): RequestHandler {
  return (req, res, next) => {
    res.setHeader('X-Timezone', defaultZone);
    res.locals.timezone = defaultZone;
    const fromQuery = req.query.timezone;
    const fromHeader = req.get('X-Timezone');
    if (fromQuery !== undefined && typeof fromQuery !== 'string') {
      return next(new HttpError(400, 'give one timezone query parameter, an IANA name such as Asia/Kolkata'));
    }
    let chosen: string | undefined;
    for (const asked of [fromQuery, fromHeader]) {
      if (asked === undefined) continue;
      const zone = canonicalTimeZone(asked);
      if (!zone) return next(new HttpError(400, unknownZoneDetail(asked)));
      chosen ??= zone;
    }
    if (chosen) {
      res.locals.timezone = chosen;
      res.setHeader('X-Timezone', chosen);
    }
    next();
  };
}

function unknownZoneDetail(asked: string): string {
  const named = asked === '' ? 'an empty time zone' : `unknown time zone "${asked.length > 64 ? `${asked.slice(0, 64)}...` : asked}"`;
  return `${named}; use an IANA name such as Asia/Kolkata or Europe/London`;
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
