import { Router, type Response } from 'express';
import type { Client } from '@temporalio/client';
import type { CallDocument } from '../../db/models/call';
import { callerOf, workspaceAccessOf } from '../auth/context';
import { HttpError } from '../../domain/shared/http-error';
import { callTimelineOf, findCallOf, hangUpCallAs, listCallsOf, placeCallAs, type CallQuery, type NewCallBody } from '../../domain/calls/call-actions';
import { callView } from '../../domain/calls/views';
import { findRecording, recordingChunks } from '../../domain/calls/recording-store';
import { apiRouter } from './router';
import { eraseCallAs } from '../../domain/privacy/erase-call';
import { clientIp } from '../auth/sessions';

/**
 * Placing outbound calls, reading calls and their timelines, and hanging up. A call's state
 * after creation is written by its workflow (`call-<id>`); the API reads it, and asks the
 * workflow to hang up. Every lookup is scoped by the workspace.
 */
export function callRoutes({ temporal, now }: { temporal: Client; now: () => Date }): Router {
  const router = apiRouter();

  router.post('/calls', async (req, res) => {
    res.status(201).json(await placeCallAs(temporal, callerOf(res), req.body as NewCallBody, now()));
  });

  router.get('/calls', async (req, res) => {
    res.json(await listCallsOf(workspaceAccessOf(res).workspace.id, req.query as unknown as CallQuery));
  });

  router.get('/calls/:call_id', async (req, res) => {
    res.json(callView(await callOf(res, req.params.call_id)));
  });

  router.get('/calls/:call_id/events', async (req, res) => {
    res.json(await callTimelineOf(await callOf(res, req.params.call_id)));
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

  router.delete('/calls/:call_id', async (req, res) => {
    const { call } = await eraseCallAs(temporal, callerOf(res), req.params.call_id, now(), clientIp(req));
    res.json(callView(call));
  });

  router.post('/calls/:call_id/hangup', async (req, res) => {
    res.json(await hangUpCallAs(temporal, callerOf(res), req.params.call_id));
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

function callOf(res: Response, callId: string): Promise<CallDocument> {
  return findCallOf(workspaceAccessOf(res).workspace.id, callId);
}
