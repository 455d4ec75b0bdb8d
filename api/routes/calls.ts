import { Router, type Response } from 'express';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { findByIdOwned } from '../../activities/db/by-id';
import { newId } from '../../activities/db/ids';
import { Call, FINAL_CALL_STATUSES, type CallDocument } from '../../activities/db/models/call';
import { createQueuedCall } from '../../activities/calls/place-call';
import { CallEvent } from '../../activities/db/models/call-event';
import type { operations } from '../../schemas/api-types';
import { callWorkflowId, hangupUpdate } from '../../workflows/shared/calls';
import { creatorOf, workspaceAccessOf } from '../auth/context';
import { HttpError } from '../http-error';
import { callEventView, callView, type StoredCallEvent } from '../calls/views';
import { startCallWorkflow } from '../calls/start-call-workflow';
import { outboundCaller } from '../calls/outbound-caller';
import { findRecording, recordingChunks } from '../../media/audio/recording-store';

type NewCallBody = operations['placeCall']['requestBody']['content']['application/json'];
type CallQuery = NonNullable<operations['listCalls']['parameters']['query']>;

const callNotFound = () => new HttpError(404, 'call not found');

/**
 * Placing outbound calls, reading calls and their timelines, and hanging up. A call's state
 * after creation is written by its workflow (`call-<id>`); the API reads it, and asks the
 * workflow to hang up. Every lookup is scoped by the workspace.
 */
export function callRoutes({ temporal, now }: { temporal: Client; now: () => Date }): Router {
  const router = Router();

  router.post('/calls', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const body = req.body as NewCallBody;
    const { agent, fromNumber } = await outboundCaller(workspace.id, body.agent_id, body.from_number);

    const { record, input } = await createQueuedCall({
      callId: newId(),
      workspaceId: workspace.id,
      agent,
      toNumber: body.to_number,
      fromNumber,
      userData: body.user_data ?? {},
      placedBy: creatorOf(res).name,
      at: now(),
    });
    await startCallWorkflow(temporal, input, 'queued');
    // The record as created (defaults filled in): the workflow has not changed it yet.
    res.status(201).json(callView(record));
  });

  router.get('/calls', async (req, res) => {
    const { workspace } = workspaceAccessOf(res);
    const query = req.query as unknown as CallQuery;
    const filter: Record<string, unknown> = { workspace_id: workspace.id };
    if (query.status) filter.status = { $in: [...new Set(query.status.split(','))] };
    if (query.agent_id) filter.agent_id = query.agent_id;
    if (query.direction) filter.direction = query.direction;
    if (query.number) filter.$or = [{ to_number: query.number }, { from_number: query.number }];
    if (query.from || query.to) {
      filter.created_at = { ...(query.from ? { $gte: new Date(query.from) } : {}), ...(query.to ? { $lt: new Date(query.to) } : {}) };
    }
    const [items, total] = await Promise.all([
      Call.find(filter, { transcript: 0 }).sort({ created_at: -1, _id: -1 }).skip(query.skip ?? 0).limit(query.limit ?? 50).lean<CallDocument[]>(),
      Call.countDocuments(filter),
    ]);
    res.json({ items: items.map(callView), total });
  });

  router.get('/calls/:call_id', async (req, res) => {
    res.json(callView(await callOf(res, req.params.call_id)));
  });

  router.get('/calls/:call_id/events', async (req, res) => {
    const call = await callOf(res, req.params.call_id);
    const events = await CallEvent.find({ call_id: call._id }).sort({ sequence: 1 }).lean<StoredCallEvent[]>();
    res.json(events.map(callEventView));
  });

  router.get('/calls/:call_id/recording', async (req, res) => {
    const call = await callOf(res, req.params.call_id);
    const recording = await findRecording(call._id, call.workspace_id);
    if (!recording) throw new HttpError(404, 'the call has no recording');
    const headers = {
      'Content-Type': recording.contentType,
      'Content-Length': String(recording.bytes),
      'Content-Disposition': `attachment; filename="call-${call._id}.wav"`,
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'private, no-store',
    };
    res.set(headers);
    // Chunk by chunk (a long call's file is many megabytes), each written when the client has taken the one before.
    try {
      for await (const chunk of recordingChunks(recording)) {
        if (res.destroyed) return;
        if (!res.write(chunk)) await drained(res);
      }
      res.end();
    } catch (error) {
      if (!res.headersSent) {
        // Nothing went out yet: the error handler answers, as JSON.
        for (const name of Object.keys(headers)) res.removeHeader(name);
        throw error;
      }
      // The headers are out: the only honest answer left is a cut connection (Content-Length then says it is short).
      res.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  });

  router.post('/calls/:call_id/hangup', async (req, res) => {
    const call = await callOf(res, req.params.call_id);
    if (FINAL_CALL_STATUSES.includes(call.status)) throw new HttpError(409, `the call has already ended (${call.status})`);
    try {
      await temporal.workflow.getHandle(callWorkflowId(call._id)).executeUpdate(hangupUpdate, { args: [{ by: creatorOf(res).name }] });
    } catch (error) {
      // The workflow ended between the read and the update: answer what it left.
      if (!(error instanceof WorkflowNotFoundError || error instanceof WorkflowUpdateFailedError)) throw error;
    }
    res.json(callView(await callOf(res, call._id)));
  });

  return router;
}

/** Resolves when the response can take more, or has closed. */
function drained(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

async function callOf(res: Response, callId: string): Promise<CallDocument> {
  const { workspace } = workspaceAccessOf(res);
  const call = await findByIdOwned<CallDocument>(Call, callId, { workspace_id: workspace.id });
  if (!call) throw callNotFound();
  return call;
}
