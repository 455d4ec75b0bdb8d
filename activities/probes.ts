import type { Clock } from './clock';
import { Probe } from '../db/models/probe';

/** Probes older than this are removed when a new one is written (FerretDB has no TTL index). */
const PROBE_RETENTION_MS = 24 * 60 * 60 * 1000;

export function createProbeActivities({ clock }: { clock: Clock }) {
  return {
    /** Idempotent: the probe id is the document id, so a retried attempt rewrites the same row. */
    async recordProbe(input: { probeId: string; note: string; workflowId: string }): Promise<{ writtenAt: string }> {
      const now = clock.now();
      const saved = await Probe.findOneAndUpdate(
        { _id: input.probeId },
        { $setOnInsert: { note: input.note, workflow_id: input.workflowId, written_at: now } },
        { upsert: true, returnDocument: 'after' },
      ).lean();
      await Probe.deleteMany({ written_at: { $lt: new Date(now.getTime() - PROBE_RETENTION_MS) } });
      return { writtenAt: saved.written_at.toISOString() };
    },
  };
}
