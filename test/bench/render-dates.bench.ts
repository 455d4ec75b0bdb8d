import { renderDates } from '../../domain/shared/time';

/**
 * Cost of rendering every date field in the caller's zone, relative to serialising the same
 * body: a 200-item page of ledger-like records (the largest page the contract allows).
 * Target: rendering + serialising takes at most 3x plain serialising.
 */
export function renderDatesBench(): { name: string; ratio: number; target: number } {
  const page = {
    total: 5000,
    items: Array.from({ length: 200 }, (_, i) => ({
      id: i.toString(16).padStart(32, '0'),
      at: new Date(Date.UTC(2026, 0, 1) + i * 60_000),
      kind: 'call',
      amount_paise: -400,
      balance_after_paise: 50_000 - i * 400,
      note: 'call charge',
      call: { created_at: new Date(), ended_at: new Date(), duration_seconds: 60 },
    })),
  };
  const plain = timePerOp(() => JSON.stringify(page));
  const rendered = timePerOp(() => JSON.stringify(renderDates(page, 'Asia/Kolkata')));
  return { name: 'render dates in zone (200-item page) vs JSON.stringify', ratio: rendered / plain, target: 3 };
}

function timePerOp(fn: () => unknown): number {
  for (let i = 0; i < 200; i++) fn(); // warm-up
  const rounds = 1000;
  const started = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) fn();
  return Number(process.hrtime.bigint() - started) / rounds;
}
