import { randomBytes } from 'node:crypto';
import { Router } from 'express';
import type { Client } from '@temporalio/client';
import { Probe } from '../../db/models/probe';
import type { operations } from '../../schemas/api-types';
import { TASK_QUEUES } from '../../contracts/task-queues';
import { HttpError } from '../../domain/shared/http-error';
import { resultWithin } from '../../domain/shared/temporal';
import { startRoundTripProbe } from '../../domain/health/temporal';
import { pingMongo, pingTemporal } from '../health-checks';
import { apiRouter } from './router';

type Health = operations['getHealth']['responses']['200']['content']['application/json'];
type RoundTripBody = NonNullable<operations['runRoundTrip']['requestBody']>['content']['application/json'];
type RoundTrip = operations['runRoundTrip']['responses']['200']['content']['application/json'];

/** `roundTripWaitMs`: how long to wait for the probe before answering 503 (the workflow goes on). */
export function healthRoutes({ temporal, roundTripWaitMs }: { temporal: Client; roundTripWaitMs: number }): Router {
  const router = apiRouter();

  router.get('/health', async (_req, res) => {
    const [mongodb, temporalHealth] = await Promise.all([pingMongo(), pingTemporal(temporal)]);
    const ok = mongodb.ok && temporalHealth.ok;
    const body: Health = { status: ok ? 'ok' : 'degraded', mongodb, temporal: temporalHealth, checked_at: new Date().toISOString() };
    res.status(ok ? 200 : 503).json(body);
  });

  router.post('/health/roundtrip', async (req, res) => {
    const input = (req.body ?? {}) as RoundTripBody;
    const probeId = randomBytes(16).toString('hex');
    const started = performance.now();
    const handle = await startRoundTripProbe(temporal, { probeId, note: input.note ?? '', delaySeconds: input.delay_seconds ?? 0 });
    const result = await resultWithin(temporal, () => handle.result(), roundTripWaitMs);
    if (!result) {
      throw new HttpError(503, `the round trip did not finish within ${roundTripWaitMs / 1000} s; is a worker polling the "${TASK_QUEUES.ops}" task queue?`);
    }
    const probe = await Probe.findById(probeId).lean();
    if (!probe) throw new Error(`probe ${probeId} finished its workflow but is not in MongoDB`);
    const body: RoundTrip = {
      probe_id: probeId,
      workflow_id: handle.workflowId,
      run_id: handle.firstExecutionRunId,
      note: probe.note ?? '',
      written_at: probe.written_at.toISOString(),
      timer_fired_at: result.timerFiredAt,
      round_trip_ms: Math.round(performance.now() - started),
    };
    res.json(body);
  });

  return router;
}
