import { isIPv4, isIPv6 } from 'node:net';
import type { Request, RequestHandler } from 'express';
import { HttpError } from '../../domain/shared/http-error';

/** An allowance: `limit` attempts per `windowSeconds`, in fixed windows. */
export interface Allowance {
  limit: number;
  windowSeconds: number;
}

/** What is limited by the caller's address (and, for sign-up, by the email it names). */
export type LimitedAction = 'signup' | 'signup_email' | 'login' | 'login_2fa' | 'invite_accept' | 'oauth_register';

/**
 * The allowances (decision 0172): generous enough for an office behind one address, tight
 * enough that one address cannot make the service hash passwords (128 MiB and ~0.2 s of CPU
 * each) or create accounts and apps without bound. Failed sign-ins per email stay as the
 * contract says (5 in 5 minutes, api/auth/sign-in-throttle.ts).
 */
export const ADDRESS_LIMITS: Record<LimitedAction, Allowance> = {
  signup: { limit: 10, windowSeconds: 600 },
  signup_email: { limit: 3, windowSeconds: 600 },
  login: { limit: 30, windowSeconds: 300 },
  login_2fa: { limit: 30, windowSeconds: 300 },
  invite_accept: { limit: 10, windowSeconds: 300 },
  oauth_register: { limit: 10, windowSeconds: 3600 },
};

const WHAT: Record<LimitedAction, string> = {
  signup: 'sign-ups from this address',
  signup_email: 'sign-ups for this email',
  login: 'sign-ins from this address',
  login_2fa: 'two-factor sign-ins from this address',
  invite_accept: 'invite acceptances from this address',
  oauth_register: 'app registrations from this address',
};

/** How many counters one process keeps at most; the oldest go first beyond it. */
const MAX_COUNTERS = 100_000;

/**
 * Counts attempts per action and key in this process's memory. Each API process counts its
 * own: behind a balancer spreading requests over N processes, an address gets up to N times
 * the allowance, which still bounds the work each process does for it.
 */
export class AddressLimiter {
  private readonly counters = new Map<string, { windowStart: number; count: number }>();

  constructor(
    private readonly allowances: Record<LimitedAction, Allowance>,
    private readonly now: () => Date,
  ) {}

  /** Counts one attempt; 429 with `Retry-After` (contract shape) once the allowance is spent. */
  take(action: LimitedAction, key: string): void {
    const { limit, windowSeconds } = this.allowances[action];
    const nowSeconds = Math.floor(this.now().getTime() / 1000);
    const windowStart = nowSeconds - (nowSeconds % windowSeconds);
    const id = `${action}|${key}`;
    let counter = this.counters.get(id);
    if (!counter || counter.windowStart !== windowStart) {
      this.counters.delete(id);
      if (this.counters.size >= MAX_COUNTERS) this.counters.delete(this.counters.keys().next().value as string);
      counter = { windowStart, count: 0 };
      this.counters.set(id, counter);
    }
    counter.count += 1;
    if (counter.count <= limit) return;
    const retryAfter = Math.max(1, windowStart + windowSeconds - nowSeconds);
    throw new HttpError(429, `too many ${WHAT[action]}; try again in ${retryAfter} seconds`, {}, { 'Retry-After': String(retryAfter) });
  }
}

/**
 * The caller's address as limits count it: `req.ip`, which is the proxy's client address only
 * behind a trusted proxy (`TRUST_PROXY`). An IPv4-mapped IPv6 address counts as its IPv4
 * address, and an IPv6 address by its /64 network: one subscriber usually holds a whole /64.
 */
export function sourceAddress(req: Request): string {
  const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  if (isIPv4(ip) || !isIPv6(ip)) return ip;
  return `${expandIPv6(ip).slice(0, 4).join(':')}::/64`;
}

function expandIPv6(ip: string): string[] {
  const [head, tail] = ip.split('%')[0].split('::');
  const left = head ? head.split(':') : [];
  const right = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const missing = tail === undefined ? [] : Array.from({ length: 8 - left.length - right.length }, () => '0');
  return [...left, ...missing, ...right].map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''));
}

/** The operations limited by address before their body is read, by operationId. */
const LIMITED_OPERATIONS: Record<string, LimitedAction> = {
  signup: 'signup',
  login: 'login',
  loginTwoFactor: 'login_2fa',
  acceptInvite: 'invite_accept',
};

/**
 * After the access step, before the body is parsed or a password hashed: counts the request
 * of a limited operation (`res.locals.operation`) against its caller's address.
 */
export function limitOperationsByAddress(limiter: AddressLimiter): RequestHandler {
  return (req, res, next) => {
    const action = LIMITED_OPERATIONS[(res.locals.operation as { operationId?: string } | undefined)?.operationId ?? ''];
    if (!action) return next();
    try {
      limiter.take(action, sourceAddress(req));
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** The same, for a route outside the document (the OAuth server's registration). */
export function limitByAddress(limiter: AddressLimiter, action: LimitedAction): RequestHandler {
  return (req, _res, next) => {
    try {
      limiter.take(action, sourceAddress(req));
      next();
    } catch (err) {
      next(err);
    }
  };
}
